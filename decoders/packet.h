/* SPDX-License-Identifier: BSD-2-Clause */
/* One captured frame down to its TCP payload. */
#ifndef GS_PACKET_H
#define GS_PACKET_H

#include <stdint.h>
#include <string.h>
#include "ip.h"
#include "link.h"
#include "tcp.h"

/* Payload bytes of a segment of which only some were captured, on purpose (the
 * eBPF tap ships message heads): `len` bytes at offset `off` of the payload. */
struct gs_piece {
	uint32_t off, len;
	const uint8_t *data;
};

struct gs_packet {
	int64_t ts_ns;
	struct gs_ip ip;
	struct gs_tcp tcp;
	const uint8_t *payload;
	uint32_t payload_cap; /* bytes of payload in the capture */
	uint32_t payload_len; /* bytes of payload on the wire (>= payload_cap) */
};

/* Which layer a result came from, for the counters. */
enum gs_layer { GS_LAYER_LINK, GS_LAYER_IP, GS_LAYER_TCP };

/* gs_packet_decode without the one-pass path for Ethernet + IPv4 + TCP: every
 * layer through its own decoder.  gs_packet_decode must give what this gives;
 * the packet fuzzer compares the two. */
enum gs_dec gs_packet_decode_general(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
				     struct gs_packet *pk, enum gs_layer *layer);

/* The common frame, Ethernet + IPv4 without options + TCP, in one pass.  It
 * takes only frames about which nothing is odd (no VLAN tag, no IP options,
 * no fragment, no length to clamp or to trust from the frame, the whole TCP
 * header captured and within the IP length) and gives them exactly what the
 * general path gives (tests/fuzz/fuzz_packet.c checks it on every input);
 * anything else returns false and goes that way.  Inline with gs_packet_decode:
 * the engine runs it for every frame. */
static inline bool gs_eth_ipv4_tcp(const uint8_t *data, uint32_t caplen, uint32_t wirelen, struct gs_packet *pk)
{
	const uint8_t *ip = data + 14, *tcp = data + 34;
	struct gs_span s;
	uint32_t total, doff, l4_len;
	size_t cap;

	if (caplen < 54 || wirelen < caplen)
		return false;
	if (data[12] != 0x08 || data[13] != 0x00 || ip[0] != 0x45 || ip[9] != 6 ||
	    (gs_be16(ip + 6) & 0x3fff) != 0)
		return false;
	total = gs_be16(ip + 2);
	if (total < 20 || total > wirelen - 14)
		return false;
	l4_len = total - 20;
	doff = (uint32_t)(tcp[12] >> 4) * 4;
	if (doff < 20 || doff > caplen - 34 || doff > l4_len)
		return false;
	s.p = tcp;
	s.len = caplen - 34;
	if (gs_tcp_decode_inline(s, &pk->tcp) != GS_DEC_OK) /* cannot fail after the tests above */
		return false;
	pk->ip.family = 4;
	pk->ip.proto = 6;
	pk->ip.fragment = false;
	pk->ip.len_clamped = false;
	memcpy(pk->ip.src, ip + 12, 4);
	memcpy(pk->ip.dst, ip + 16, 4);
	memset(pk->ip.src + 4, 0, 12);
	memset(pk->ip.dst + 4, 0, 12);
	pk->ip.l4_off = 20;
	pk->ip.l4_len = l4_len;
	pk->payload = tcp + doff;
	pk->payload_len = l4_len - doff;
	cap = s.len - doff;
	pk->payload_cap = cap > pk->payload_len ? pk->payload_len : (uint32_t)cap;
	return true;
}

/* OK: a TCP segment (payload may be cut by the snaplen: payload_cap < payload_len).
 * SKIP: not TCP over IP, or an IP fragment.  TRUNCATED/INVALID: *layer says where. */
static inline enum gs_dec gs_packet_decode(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
					   struct gs_packet *pk, enum gs_layer *layer)
{
	if (dlt == GS_DLT_EN10MB && gs_eth_ipv4_tcp(data, caplen, wirelen, pk)) {
		*layer = GS_LAYER_TCP;
		return GS_DEC_OK;
	}
	return gs_packet_decode_general(dlt, data, caplen, wirelen, pk, layer);
}

#endif
