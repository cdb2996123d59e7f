/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer harness: gs_packet_decode (link, IPv4/IPv6, TCP) over every link type.
 *
 * Input: byte 0 picks the link type (and a wire length beyond the captured
 * bytes, as a snapshot length would leave it); the rest is the captured frame.
 * The frame is copied into a buffer of exactly its size, so a read one byte past
 * what was captured is an AddressSanitizer report.  The result is checked: the
 * payload must lie inside the captured bytes and never exceed its wire length,
 * and gs_packet_decode (with its one-pass path for Ethernet + IPv4 + TCP) must
 * give what the general path, every layer through its own decoder, gives.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../decoders/packet.h"

static const int dlts[] = {
	GS_DLT_EN10MB, GS_DLT_LINUX_SLL, GS_DLT_LINUX_SLL2, GS_DLT_NULL, GS_DLT_LOOP,
	GS_DLT_RAW, GS_DLT_RAW_OPENBSD, GS_DLT_LINKTYPE_RAW, GS_DLT_IPV4, GS_DLT_IPV6,
	105 /* IEEE 802.11: unsupported */, 147 /* user */,
};
#define NDLT (sizeof dlts / sizeof dlts[0])

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_packet: invariant broken: %s\n", what);
		abort();
	}
}

/* Field by field: the structs have padding, which neither path writes. */
static void same_packet(const struct gs_packet *a, const struct gs_packet *b)
{
	check(a->ip.family == b->ip.family && a->ip.proto == b->ip.proto &&
		      a->ip.fragment == b->ip.fragment && a->ip.len_clamped == b->ip.len_clamped,
	      "fast path = general path: IP family, protocol, flags");
	check(memcmp(a->ip.src, b->ip.src, 16) == 0 && memcmp(a->ip.dst, b->ip.dst, 16) == 0,
	      "fast path = general path: addresses");
	check(a->ip.l4_off == b->ip.l4_off && a->ip.l4_len == b->ip.l4_len,
	      "fast path = general path: IP payload offset and length");
	check(a->tcp.sport == b->tcp.sport && a->tcp.dport == b->tcp.dport && a->tcp.seq == b->tcp.seq &&
		      a->tcp.ack == b->tcp.ack && a->tcp.window == b->tcp.window && a->tcp.flags == b->tcp.flags,
	      "fast path = general path: TCP header fields");
	check(a->tcp.has_wscale == b->tcp.has_wscale && (!a->tcp.has_wscale || a->tcp.wscale == b->tcp.wscale) &&
		      a->tcp.bad_options == b->tcp.bad_options && a->tcp.mss == b->tcp.mss &&
		      a->tcp.hdr_len == b->tcp.hdr_len,
	      "fast path = general path: TCP options and header length");
	check(a->payload == b->payload && a->payload_len == b->payload_len && a->payload_cap == b->payload_cap,
	      "fast path = general path: payload");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_packet pk, gen;
	enum gs_layer layer, gen_layer;
	enum gs_dec r, gen_r;
	uint8_t *buf;
	uint32_t caplen, wirelen;
	int dlt;

	if (size < 1 || size > (1u << 20))
		return 0;
	dlt = dlts[(data[0] & 0x0f) % NDLT];
	caplen = (uint32_t)(size - 1);
	/* high nibble: 0 -> wire == captured; else the frame was longer on the wire */
	wirelen = caplen + (uint32_t)(data[0] >> 4) * 97u;
	if ((data[0] >> 4) == 15)
		wirelen = 0xffffffffu; /* absurd wire length */
	buf = malloc(caplen ? caplen : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, caplen);

	memset(&pk, 0xa5, sizeof pk);
	r = gs_packet_decode(dlt, buf, caplen, wirelen, &pk, &layer);
	check(r == GS_DEC_OK || r == GS_DEC_SKIP || r == GS_DEC_TRUNCATED || r == GS_DEC_INVALID, "result");
	check(layer == GS_LAYER_LINK || layer == GS_LAYER_IP || layer == GS_LAYER_TCP, "layer");
	memset(&gen, 0x5a, sizeof gen);
	gen_r = gs_packet_decode_general(dlt, buf, caplen, wirelen, &gen, &gen_layer);
	check(r == gen_r && layer == gen_layer, "fast path = general path: result and layer");
	if (r == GS_DEC_OK)
		same_packet(&pk, &gen);
	(void)gs_dec_name(r);
	(void)gs_link_name(dlt);
	(void)gs_link_supported(dlt);
	if (r == GS_DEC_OK) {
		volatile uint8_t sink = 0;
		check(layer == GS_LAYER_TCP, "OK from the TCP layer");
		check(pk.ip.family == 4 || pk.ip.family == 6, "IP family");
		check(pk.ip.proto == 6 && !pk.ip.fragment, "TCP, not a fragment");
		check(pk.tcp.hdr_len >= 20 && pk.tcp.hdr_len <= 60, "TCP header length");
		check(pk.payload_cap <= pk.payload_len, "captured payload <= wire payload");
		check(pk.payload >= buf && pk.payload <= buf + caplen, "payload starts inside the frame");
		check((size_t)(pk.payload - buf) + pk.payload_cap <= caplen, "payload ends inside the frame");
		/* touch every captured payload byte: ASan checks the bounds */
		for (uint32_t i = 0; i < pk.payload_cap; i++)
			sink ^= pk.payload[i];
		(void)sink;
	}
	free(buf);
	return 0;
}
