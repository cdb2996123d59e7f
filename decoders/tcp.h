/* SPDX-License-Identifier: BSD-2-Clause */
/* TCP header and the options the analysis uses. */
#ifndef GS_TCP_H
#define GS_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include "bytes.h"
#include "decode.h"

#define GS_TCP_FIN 0x01
#define GS_TCP_SYN 0x02
#define GS_TCP_RST 0x04
#define GS_TCP_PSH 0x08
#define GS_TCP_ACK 0x10

struct gs_tcp {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint16_t window;
	uint8_t flags;
	uint8_t wscale;       /* window scale option, valid when has_wscale */
	bool has_wscale;
	bool bad_options;     /* an option ran past the header: ignored, counted */
	uint16_t mss;         /* 0 when absent */
	size_t hdr_len;
};

/* `s` holds the captured bytes of the TCP header onward. */
enum gs_dec gs_tcp_decode(struct gs_span s, struct gs_tcp *t);

/* The same, inline for the per-packet path (decoders/packet.c). */
static inline void gs_tcp_options(const uint8_t *p, size_t len, struct gs_tcp *t)
{
	size_t i = 0;
	/* After the handshake most stacks send timestamps alone, laid out
	 * NOP NOP TS (RFC 7323, Appendix A): nothing in it to record */
	if (len == 12 && gs_be32(p) == 0x0101080au)
		return;
	while (i < len) {
		uint8_t kind = p[i], olen;
		if (kind == 0) /* end of list */
			return;
		if (kind == 1) { /* NOP */
			i++;
			continue;
		}
		if (len - i < 2) {
			t->bad_options = true;
			return;
		}
		olen = p[i + 1];
		if (olen < 2 || olen > len - i) {
			t->bad_options = true;
			return;
		}
		if (kind == 2 && olen == 4)
			t->mss = gs_be16(p + i + 2);
		else if (kind == 3 && olen == 3) {
			t->wscale = p[i + 2] > 14 ? 14 : p[i + 2];
			t->has_wscale = true;
		}
		i += olen;
	}
}

static inline enum gs_dec gs_tcp_decode_inline(struct gs_span s, struct gs_tcp *t)
{
	size_t doff;
	if (!gs_has(s.len, 0, 20))
		return GS_DEC_TRUNCATED;
	t->sport = gs_be16(s.p);
	t->dport = gs_be16(s.p + 2);
	t->seq = gs_be32(s.p + 4);
	t->ack = gs_be32(s.p + 8);
	doff = (size_t)(s.p[12] >> 4) * 4;
	t->flags = s.p[13];
	t->window = gs_be16(s.p + 14);
	t->has_wscale = false;
	t->wscale = 0;
	t->mss = 0;
	t->bad_options = false;
	if (doff < 20)
		return GS_DEC_INVALID;
	if (!gs_has(s.len, 0, doff))
		return GS_DEC_TRUNCATED;
	gs_tcp_options(s.p + 20, doff - 20, t);
	t->hdr_len = doff;
	return GS_DEC_OK;
}

#endif
