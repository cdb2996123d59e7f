/* SPDX-License-Identifier: BSD-2-Clause */
#include "ip.h"

#define IPPROTO_HOPOPTS_ 0
#define IPPROTO_ROUTING_ 43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_ESP_ 50
#define IPPROTO_AH_ 51
#define IPPROTO_NONE_ 59
#define IPPROTO_DSTOPTS_ 60
#define IPPROTO_MH_ 135
#define IPPROTO_HIP_ 139
#define IPPROTO_SHIM6_ 140

static enum gs_dec ipv4(struct gs_span s, uint32_t wire_left, struct gs_ip *ip)
{
	uint8_t vihl;
	uint16_t total, frag;
	size_t ihl;

	if (!gs_get_u8(s, 0, &vihl))
		return GS_DEC_TRUNCATED;
	if (vihl >> 4 != 4)
		return GS_DEC_INVALID;
	ihl = (size_t)(vihl & 0x0f) * 4;
	if (ihl < 20)
		return GS_DEC_INVALID;
	if (!gs_has(s.len, 0, ihl))
		return GS_DEC_TRUNCATED;
	total = gs_be16(s.p + 2);
	frag = gs_be16(s.p + 6);
	ip->family = 4;
	ip->proto = s.p[9];
	memcpy(ip->src, s.p + 12, 4);
	memcpy(ip->dst, s.p + 16, 4);
	memset(ip->src + 4, 0, 12);
	memset(ip->dst + 4, 0, 12);
	/* MF set or a non-zero offset: a fragment. */
	ip->fragment = (frag & 0x3fff) != 0;
	ip->len_clamped = false;
	if (total == 0) {
		/* TCP segmentation offload captured before the NIC split it. */
		total = wire_left > 0xffff ? 0xffff : (uint16_t)wire_left;
		if (wire_left < ihl)
			return GS_DEC_INVALID;
		ip->l4_len = wire_left - (uint32_t)ihl;
	} else {
		if (total < ihl)
			return GS_DEC_INVALID;
		if (total > wire_left) {
			ip->len_clamped = true;
			if (wire_left < ihl)
				return GS_DEC_INVALID;
			total = (uint16_t)wire_left;
		}
		ip->l4_len = (uint32_t)(total - ihl);
	}
	ip->l4_off = ihl;
	return GS_DEC_OK;
}

static enum gs_dec ipv6(struct gs_span s, uint32_t wire_left, struct gs_ip *ip)
{
	uint8_t nh;
	uint32_t plen;
	size_t off = 40;

	if (!gs_has(s.len, 0, 40))
		return GS_DEC_TRUNCATED;
	if (s.p[0] >> 4 != 6)
		return GS_DEC_INVALID;
	plen = gs_be16(s.p + 4);
	nh = s.p[6];
	ip->family = 6;
	memcpy(ip->src, s.p + 8, 16);
	memcpy(ip->dst, s.p + 24, 16);
	ip->fragment = false;
	ip->len_clamped = false;
	if (wire_left < 40)
		return GS_DEC_INVALID;
	if (plen == 0)          /* jumbogram (or TSO): trust the frame */
		plen = wire_left - 40;
	if (plen > wire_left - 40) {
		ip->len_clamped = true;
		plen = wire_left - 40;
	}
	for (int n = 0;; n++) {
		uint8_t b0, b1;
		size_t hlen;
		switch (nh) {
		case IPPROTO_HOPOPTS_: case IPPROTO_ROUTING_: case IPPROTO_DSTOPTS_:
		case IPPROTO_MH_: case IPPROTO_HIP_: case IPPROTO_SHIM6_:
		case IPPROTO_FRAGMENT_: case IPPROTO_AH_:
			break;
		case IPPROTO_ESP_: /* encrypted: nothing more to read */
		case IPPROTO_NONE_:
			ip->proto = nh;
			ip->l4_off = off;
			ip->l4_len = 0;
			return GS_DEC_SKIP;
		default:
			ip->proto = nh;
			ip->l4_off = off;
			if (off - 40 > plen)
				return GS_DEC_INVALID;
			ip->l4_len = plen - (uint32_t)(off - 40);
			return GS_DEC_OK;
		}
		if (n == GS_IPV6_MAX_EXT)
			return GS_DEC_INVALID;
		if (!gs_get_u8(s, off, &b0) || !gs_get_u8(s, off + 1, &b1))
			return GS_DEC_TRUNCATED;
		if (nh == IPPROTO_FRAGMENT_) {
			uint16_t fo;
			hlen = 8;
			if (!gs_get_be16(s, off + 2, &fo))
				return GS_DEC_TRUNCATED;
			/* offset or M flag: a real fragment (an atomic fragment is neither) */
			if ((fo & 0xfff9) != 0)
				ip->fragment = true;
		} else if (nh == IPPROTO_AH_) {
			hlen = ((size_t)b1 + 2) * 4;
		} else {
			hlen = ((size_t)b1 + 1) * 8;
		}
		if (off - 40 + hlen > plen)
			return GS_DEC_INVALID;
		off += hlen;
		nh = b0;
	}
}

enum gs_dec gs_ip_decode(enum gs_net net, struct gs_span s, uint32_t wire_left, struct gs_ip *ip)
{
	if (net == GS_NET_IPV4)
		return ipv4(s, wire_left, ip);
	if (net == GS_NET_IPV6)
		return ipv6(s, wire_left, ip);
	return GS_DEC_SKIP;
}
