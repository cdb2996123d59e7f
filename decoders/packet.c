#include "packet.h"

#include <string.h>

/* The common frame, Ethernet + IPv4 without options + TCP, in one pass.  It
 * takes only frames about which nothing is odd (no VLAN tag, no IP options,
 * no fragment, no length to clamp or to trust from the frame, the whole TCP
 * header captured and within the IP length) and gives them exactly what the
 * general path below gives (tests/fuzz/fuzz_packet.c checks it on every input);
 * anything else returns false and goes that way. */
static bool eth_ipv4_tcp(const uint8_t *data, uint32_t caplen, uint32_t wirelen, struct gs_packet *pk)
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

enum gs_dec gs_packet_decode(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
			     struct gs_packet *pk, enum gs_layer *layer)
{
	if (dlt == GS_DLT_EN10MB && eth_ipv4_tcp(data, caplen, wirelen, pk)) {
		*layer = GS_LAYER_TCP;
		return GS_DEC_OK;
	}
	return gs_packet_decode_general(dlt, data, caplen, wirelen, pk, layer);
}

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
