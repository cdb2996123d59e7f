/* SPDX-License-Identifier: BSD-2-Clause */
/* A minimal pcapng writer (one section, one interface, nanosecond time
 * stamps), for `live -w`: libpcap 1.10 writes classic pcap only. */
#ifndef GS_PCAPNG_WRITE_H
#define GS_PCAPNG_WRITE_H

#include <stdint.h>
#include <stdio.h>

/* Section header and interface description; 0 or the errno value of the failed write. */
int gs_pcapng_begin(FILE *f, int linktype, uint32_t snaplen, const char *ifname);
/* One enhanced packet block; 0 or the errno value of the failed write. */
int gs_pcapng_packet(FILE *f, int64_t ts_ns, const uint8_t *data, uint32_t caplen, uint32_t wirelen);

#endif
