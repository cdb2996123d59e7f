/* SPDX-License-Identifier: BSD-2-Clause */
#include "link.h"

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define ETH_P_QINQ_OLD 0x9100

const char *gs_dec_name(enum gs_dec r)
{
	switch (r) {
	case GS_DEC_OK: return "ok";
	case GS_DEC_SKIP: return "skipped";
	case GS_DEC_TRUNCATED: return "truncated";
	case GS_DEC_INVALID: return "invalid";
	}
	return "?";
}

bool gs_link_supported(int dlt)
{
	switch (dlt) {
	case GS_DLT_NULL: case GS_DLT_EN10MB: case GS_DLT_RAW: case GS_DLT_RAW_OPENBSD:
	case GS_DLT_LINKTYPE_RAW: case GS_DLT_LOOP: case GS_DLT_LINUX_SLL:
	case GS_DLT_IPV4: case GS_DLT_IPV6: case GS_DLT_LINUX_SLL2:
		return true;
	}
	return false;
}

const char *gs_link_name(int dlt)
{
	switch (dlt) {
	case GS_DLT_NULL: return "NULL";
	case GS_DLT_EN10MB: return "EN10MB";
	case GS_DLT_RAW: case GS_DLT_RAW_OPENBSD: case GS_DLT_LINKTYPE_RAW: return "RAW";
	case GS_DLT_LOOP: return "LOOP";
	case GS_DLT_LINUX_SLL: return "LINUX_SLL";
	case GS_DLT_IPV4: return "IPV4";
	case GS_DLT_IPV6: return "IPV6";
	case GS_DLT_LINUX_SLL2: return "LINUX_SLL2";
	}
	return "unsupported";
}

static enum gs_dec from_ethertype(uint16_t et, enum gs_net *net)
{
	if (et == ETH_P_IPV4) {
		*net = GS_NET_IPV4;
		return GS_DEC_OK;
	}
	if (et == ETH_P_IPV6) {
		*net = GS_NET_IPV6;
		return GS_DEC_OK;
	}
	return GS_DEC_SKIP;
}

/* Raw IP: the version nibble says which. */
static enum gs_dec from_version(struct gs_span s, size_t off, enum gs_net *net)
{
	uint8_t v;
	if (!gs_get_u8(s, off, &v))
		return GS_DEC_TRUNCATED;
	if (v >> 4 == 4) {
		*net = GS_NET_IPV4;
		return GS_DEC_OK;
	}
	if (v >> 4 == 6) {
		*net = GS_NET_IPV6;
		return GS_DEC_OK;
	}
	return GS_DEC_SKIP;
}

static enum gs_dec ethernet(struct gs_span s, enum gs_net *net, size_t *off)
{
	uint16_t et;
	size_t o = 12;
	if (!gs_get_be16(s, o, &et))
		return GS_DEC_TRUNCATED;
	o += 2;
	/* 802.1Q, 802.1ad and the pre-standard 0x9100 QinQ, possibly stacked. */
	for (int tags = 0; et == ETH_P_8021Q || et == ETH_P_8021AD || et == ETH_P_QINQ_OLD; tags++) {
		if (tags == GS_MAX_VLAN_TAGS)
			return GS_DEC_INVALID;
		if (!gs_get_be16(s, o + 2, &et))
			return GS_DEC_TRUNCATED;
		o += 4;
	}
	*off = o;
	return from_ethertype(et, net);
}

/* BSD loopback: a 4-byte address family, host order for NULL, network order for LOOP.
 * AF_INET is 2 everywhere; AF_INET6 is 24 (NetBSD/OpenBSD), 28 (FreeBSD), 30 (macOS), 10 (Linux). */
static enum gs_dec bsd_null(struct gs_span s, bool network_order, enum gs_net *net, size_t *off)
{
	uint32_t fam;
	if (!gs_has(s.len, 0, 4))
		return GS_DEC_TRUNCATED;
	fam = gs_ord32(s.p, !network_order);
	/* NULL is in the capturing host's order: accept both byte orders. */
	if (!network_order && fam > 0xffff)
		fam = gs_be32(s.p);
	*off = 4;
	switch (fam) {
	case 2: *net = GS_NET_IPV4; return GS_DEC_OK;
	case 10: case 24: case 28: case 30: *net = GS_NET_IPV6; return GS_DEC_OK;
	}
	return GS_DEC_SKIP;
}

bool gs_link_outgoing(int dlt, const uint8_t *data, uint32_t caplen)
{
	/* SLL: the packet type is the header's first 16 bits; SLL2: its byte 10 */
	if (dlt == GS_DLT_LINUX_SLL)
		return caplen >= 16 && data[0] == 0 && data[1] == 4;
	if (dlt == GS_DLT_LINUX_SLL2)
		return caplen >= 20 && data[10] == 4;
	return false;
}

enum gs_dec gs_link_decode(int dlt, struct gs_span s, enum gs_net *net, size_t *off)
{
	uint16_t proto;
	*net = GS_NET_NONE;
	switch (dlt) {
	case GS_DLT_EN10MB:
		return ethernet(s, net, off);
	case GS_DLT_LINUX_SLL: /* 16-byte header, protocol last */
		if (!gs_get_be16(s, 14, &proto))
			return GS_DEC_TRUNCATED;
		*off = 16;
		return from_ethertype(proto, net);
	case GS_DLT_LINUX_SLL2: /* 20-byte header, protocol first */
		if (!gs_has(s.len, 0, 20))
			return GS_DEC_TRUNCATED;
		*off = 20;
		return from_ethertype(gs_be16(s.p), net);
	case GS_DLT_NULL:
		return bsd_null(s, false, net, off);
	case GS_DLT_LOOP:
		return bsd_null(s, true, net, off);
	case GS_DLT_RAW: case GS_DLT_RAW_OPENBSD: case GS_DLT_LINKTYPE_RAW:
		*off = 0;
		return from_version(s, 0, net);
	case GS_DLT_IPV4:
		*off = 0;
		*net = GS_NET_IPV4;
		return GS_DEC_OK;
	case GS_DLT_IPV6:
		*off = 0;
		*net = GS_NET_IPV6;
		return GS_DEC_OK;
	}
	return GS_DEC_INVALID;
}
