/* SPDX-License-Identifier: BSD-2-Clause */
/* IPv4 (options skipped) and IPv6 (extension headers walked). */
#ifndef GS_IP_H
#define GS_IP_H

#include <stdbool.h>
#include <stdint.h>
#include "bytes.h"
#include "decode.h"
#include "link.h"

/* Most IPv6 extension headers we walk before calling the chain hostile. */
#define GS_IPV6_MAX_EXT 16

struct gs_ip {
	uint8_t family;      /* 4 or 6 */
	uint8_t proto;       /* upper-layer protocol (6 for TCP) */
	bool fragment;       /* part of a fragmented datagram: not decoded further */
	bool len_clamped;    /* the header claimed more bytes than the frame had */
	uint8_t src[16], dst[16]; /* IPv4 in the first 4 bytes */
	size_t l4_off;       /* offset of the upper-layer header in the span */
	uint32_t l4_len;     /* its length on the wire, header included */
};

/* `wire_left` is how many bytes the packet had on the wire from the start of the
 * IP header (frame length minus link header): it bounds lengths the header claims
 * and stands in when IPv4 total length is 0 (TSO) or for IPv6 jumbograms. */
enum gs_dec gs_ip_decode(enum gs_net net, struct gs_span s, uint32_t wire_left, struct gs_ip *ip);

#endif
