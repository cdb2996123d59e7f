/* One captured frame down to its TCP payload. */
#ifndef GS_PACKET_H
#define GS_PACKET_H

#include <stdint.h>
#include "ip.h"
#include "link.h"
#include "tcp.h"

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

/* OK: a TCP segment (payload may be cut by the snaplen: payload_cap < payload_len).
 * SKIP: not TCP over IP, or an IP fragment.  TRUNCATED/INVALID: *layer says where. */
enum gs_dec gs_packet_decode(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
			     struct gs_packet *pk, enum gs_layer *layer);

/* The same without the one-pass path for Ethernet + IPv4 + TCP: every layer through
 * its own decoder.  gs_packet_decode must give what this gives; the packet fuzzer
 * compares the two. */
enum gs_dec gs_packet_decode_general(int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen,
				     struct gs_packet *pk, enum gs_layer *layer);

#endif
