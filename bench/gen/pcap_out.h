/* SPDX-License-Identifier: BSD-2-Clause */
/* Classic pcap with nanosecond time stamps (magic a1b23c4d), Ethernet frames
 * carrying IPv4 or IPv6 and TCP with correct checksums. */
#ifndef GEN_PCAP_OUT_H
#define GEN_PCAP_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct endpoint {
	bool v6;
	uint8_t ip[16];   /* IPv4 in the first 4 bytes */
	uint16_t port;
	uint8_t mac[6];
};

struct pcap_out {
	FILE *f;
	uint8_t *buf;
	size_t len, cap;
	uint64_t last_ts;
	uint64_t packets, bytes;
	uint16_t ipid;
};

enum { TH_FIN = 0x01, TH_SYN = 0x02, TH_RST = 0x04, TH_PSH = 0x08, TH_ACK = 0x10 };

void pcap_out_open(struct pcap_out *o, FILE *f);
/* mss != 0 adds the MSS option (SYN, SYN-ACK) */
void pcap_out_tcp(struct pcap_out *o, uint64_t ts_ns, const struct endpoint *src,
		  const struct endpoint *dst, uint32_t seq, uint32_t ack, uint8_t flags,
		  const uint8_t *payload, size_t len, uint16_t mss);
void pcap_out_close(struct pcap_out *o);

#endif
