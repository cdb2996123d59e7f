/* SPDX-License-Identifier: BSD-2-Clause */
/* Link layer: finds the IP header in a captured frame. */
#ifndef GS_LINK_H
#define GS_LINK_H

#include <stddef.h>
#include <stdbool.h>
#include "bytes.h"
#include "decode.h"

enum gs_net { GS_NET_NONE = 0, GS_NET_IPV4 = 4, GS_NET_IPV6 = 6 };

/* libpcap DLT_ values of the link types we read (numbers fixed by libpcap). */
enum {
	GS_DLT_NULL = 0,
	GS_DLT_EN10MB = 1,
	GS_DLT_RAW = 12,        /* most platforms */
	GS_DLT_RAW_OPENBSD = 14,
	GS_DLT_LINKTYPE_RAW = 101,
	GS_DLT_LOOP = 108,
	GS_DLT_LINUX_SLL = 113,
	GS_DLT_IPV4 = 228,
	GS_DLT_IPV6 = 229,
	GS_DLT_LINUX_SLL2 = 276,
};

/* Deepest stack of 802.1Q/802.1ad tags we walk; more is reported INVALID. */
#define GS_MAX_VLAN_TAGS 8

bool gs_link_supported(int dlt);
const char *gs_link_name(int dlt);

/* A Linux cooked capture's frame the capture host sent (SLL packet type, SLL2
 * packet type: 4, PACKET_OUTGOING): its source address is the host's own. */
bool gs_link_outgoing(int dlt, const uint8_t *data, uint32_t caplen);

/* On OK, *net says which IP version starts at *off; SKIP for non-IP frames. */
enum gs_dec gs_link_decode(int dlt, struct gs_span frame, enum gs_net *net, size_t *off);

#endif
