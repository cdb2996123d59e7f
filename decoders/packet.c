/* SPDX-License-Identifier: BSD-2-Clause */
#include "packet.h"

#include <string.h>

enum gs_dec gs_packet_decode_general(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
				     struct gs_packet *pk, enum gs_layer *layer)
{
	struct gs_span s = { data, caplen };
	enum gs_net net;
	size_t off = 0;
	enum gs_dec r;
	uint32_t wire_left;

	pk->ip.fragment = false;
	if (wirelen < caplen) /* a broken file; the captured bytes are what we have */
		wirelen = caplen;
	*layer = GS_LAYER_LINK;
	r = gs_link_decode(dlt, s, &net, &off);
	if (r != GS_DEC_OK)
		return r;
	if (off > caplen)
		return GS_DEC_TRUNCATED;
	s.p += off;
	s.len -= off;
	wire_left = wirelen - (uint32_t)off;

	*layer = GS_LAYER_IP;
	r = gs_ip_decode(net, s, wire_left, &pk->ip);
	if (r != GS_DEC_OK)
		return r;
	if (pk->ip.proto != 6 || pk->ip.fragment)
		return GS_DEC_SKIP;
	/* l4_off <= s.len is not guaranteed for IPv6 (extension headers are checked
	 * against the payload length, which may exceed the capture). */
	if (pk->ip.l4_off > s.len)
		return GS_DEC_TRUNCATED;
	s.p += pk->ip.l4_off;
	s.len -= pk->ip.l4_off;

	*layer = GS_LAYER_TCP;
	r = gs_tcp_decode(s, &pk->tcp);
	/* a header running past bytes the capture does have is not cut: it lies */
	if (r == GS_DEC_TRUNCATED && s.len >= pk->ip.l4_len)
		return GS_DEC_INVALID;
	if (r != GS_DEC_OK)
		return r;
	if (pk->tcp.hdr_len > pk->ip.l4_len)
		return GS_DEC_INVALID;
	pk->payload = s.p + pk->tcp.hdr_len;
	pk->payload_len = pk->ip.l4_len - (uint32_t)pk->tcp.hdr_len;
	{
		size_t cap = s.len - pk->tcp.hdr_len;
		/* Ethernet pads short frames: the capture may hold more than the IP length. */
		pk->payload_cap = cap > pk->payload_len ? pk->payload_len : (uint32_t)cap;
	}
	return GS_DEC_OK;
}
