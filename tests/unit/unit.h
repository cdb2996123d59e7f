/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared helpers of the cmocka unit tests.
 *
 *   struct ub      a byte buffer with a CDR writer: alignment is relative to the
 *                  start of the current GIOP message (or encapsulation), either
 *                  byte order, encapsulations written in place
 *   ub_giop_*      GIOP headers and whole messages of every type
 *   struct pk      a builder of Ethernet / 802.1Q / SLL / SLL2 / NULL / LOOP /
 *                  raw frames carrying IPv4 (options) or IPv6 (extension
 *                  headers) and TCP (options, seq/ack/flags)
 *   struct conn    one TCP connection fed to a gs_engine, segment by segment
 *   struct sink    a gs_engine callback that keeps a copy of every call
 *
 * Everything is static inline so each test includes only what it uses.
 */
#ifndef GS_TEST_UNIT_H
#define GS_TEST_UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "../../decoders/bytes.h"
#include "../../decoders/packet.h"
#include "../../decoders/giop/giop.h"
#include "../../analysis/call.h"
#include "../../analysis/engine.h"
#include "../../analysis/intern.h"

/* ======================================================================== */
/* Resources freed after each test, failed or not                           */
/* ======================================================================== */

/* A failing cmocka assertion leaves the test by longjmp: heap blocks it held
 * would be reported as leaks by LSan, hiding real ones.  Tests keep them here
 * and run with UT(): the teardown frees whatever is left. */
struct ut_res {
	void *p;
	void (*fn)(void *);
};

static struct ut_res ut_res[1024] __attribute__((unused));
static int ut_nres __attribute__((unused));

static inline void ut_keep(void *p, void (*fn)(void *))
{
	if (p && ut_nres < (int)(sizeof ut_res / sizeof *ut_res))
		ut_res[ut_nres++] = (struct ut_res){ p, fn };
}

static inline void ut_forget(void *p)
{
	for (int i = ut_nres - 1; i >= 0; i--)
		if (ut_res[i].p == p) {
			ut_res[i] = ut_res[--ut_nres];
			return;
		}
}

static inline void ut_replace(void *old, void *p)
{
	for (int i = 0; i < ut_nres; i++)
		if (ut_res[i].p == old) {
			ut_res[i].p = p;
			return;
		}
	ut_keep(p, free);
}

static inline int ut_cleanup(void **state)
{
	(void)state;
	while (ut_nres > 0) {
		struct ut_res r = ut_res[--ut_nres];
		r.fn(r.p);
	}
	return 0;
}

#define UT(f) cmocka_unit_test_teardown(f, ut_cleanup)

/* ======================================================================== */
/* CDR writer                                                                */
/* ======================================================================== */

#define UB_CAP (256u * 1024u)
#define UB_DEPTH 8

struct ub {
	uint8_t *b;
	size_t n;
	size_t base;            /* alignment origin */
	bool le;
	size_t msg;             /* start of the current GIOP message */
	/* encapsulations being written */
	int depth;
	size_t enc_len_at[UB_DEPTH];
	size_t enc_base[UB_DEPTH];
	bool enc_le[UB_DEPTH];
};

static inline void ub_init(struct ub *w, bool le)
{
	memset(w, 0, sizeof *w);
	w->b = calloc(1, UB_CAP);
	assert_non_null(w->b);
	ut_keep(w->b, free);
	w->le = le;
}

static inline void ub_free(struct ub *w)
{
	ut_forget(w->b);
	free(w->b);
	w->b = NULL;
}

static inline void ub_reset(struct ub *w)
{
	w->n = w->base = w->msg = 0;
	w->depth = 0;
}

static inline void ub_raw(struct ub *w, const void *p, size_t n)
{
	assert_true(n <= UB_CAP - w->n);
	if (n)
		memcpy(w->b + w->n, p, n);
	w->n += n;
}

static inline void ub_fill(struct ub *w, uint8_t v, size_t n)
{
	assert_true(n <= UB_CAP - w->n);
	memset(w->b + w->n, v, n);
	w->n += n;
}

static inline void ub_align(struct ub *w, size_t a)
{
	size_t rel = w->n - w->base;
	size_t pad = (a - (rel & (a - 1))) & (a - 1);
	ub_fill(w, 0, pad);
}

static inline void ub_u8(struct ub *w, uint8_t v) { ub_raw(w, &v, 1); }

static inline void ub_put16_at(struct ub *w, size_t at, uint16_t v, bool le)
{
	if (le) {
		w->b[at] = (uint8_t)v;
		w->b[at + 1] = (uint8_t)(v >> 8);
	} else {
		w->b[at] = (uint8_t)(v >> 8);
		w->b[at + 1] = (uint8_t)v;
	}
}

static inline void ub_put32_at(struct ub *w, size_t at, uint32_t v, bool le)
{
	for (int i = 0; i < 4; i++)
		w->b[at + (size_t)i] = (uint8_t)(le ? v >> (8 * i) : v >> (8 * (3 - i)));
}

static inline void ub_u16(struct ub *w, uint16_t v)
{
	ub_align(w, 2);
	ub_fill(w, 0, 2);
	ub_put16_at(w, w->n - 2, v, w->le);
}

static inline void ub_u32(struct ub *w, uint32_t v)
{
	ub_align(w, 4);
	ub_fill(w, 0, 4);
	ub_put32_at(w, w->n - 4, v, w->le);
}

/* CDR string: length with the NUL, bytes, NUL */
static inline void ub_str(struct ub *w, const char *s)
{
	size_t n = strlen(s);
	ub_u32(w, (uint32_t)(n + 1));
	ub_raw(w, s, n);
	ub_u8(w, 0);
}

/* sequence<octet> */
static inline void ub_octets(struct ub *w, const void *p, size_t n)
{
	ub_u32(w, (uint32_t)n);
	ub_raw(w, p, n);
}

/* An encapsulation (sequence<octet> whose first octet is its byte order and
 * whose alignment restarts at that octet). */
static inline void ub_encap_begin(struct ub *w, bool le)
{
	assert_true(w->depth < UB_DEPTH);
	ub_u32(w, 0);
	w->enc_len_at[w->depth] = w->n - 4;
	w->enc_base[w->depth] = w->base;
	w->enc_le[w->depth] = w->le;
	w->depth++;
	w->base = w->n;
	w->le = le;
	ub_u8(w, le ? 1 : 0);
}

static inline void ub_encap_end(struct ub *w)
{
	size_t len;
	assert_true(w->depth > 0);
	w->depth--;
	len = w->n - w->enc_len_at[w->depth] - 4;
	w->base = w->enc_base[w->depth];
	w->le = w->enc_le[w->depth];
	ub_put32_at(w, w->enc_len_at[w->depth], (uint32_t)len, w->le);
}

/* ---- GIOP ---------------------------------------------------------------- */

#define GIOP_FLAG_MORE 2

/* A header with exactly these bytes (major, minor, flags, type); the size is
 * patched by ub_giop_end.  The byte order for what follows is flags bit 0. */
static inline void ub_giop_begin_raw(struct ub *w, uint8_t major, uint8_t minor, uint8_t flags,
				     uint8_t type)
{
	w->msg = w->base = w->n;
	w->le = (flags & 1) != 0;
	ub_raw(w, "GIOP", 4);
	ub_u8(w, major);
	ub_u8(w, minor);
	ub_u8(w, flags);
	ub_u8(w, type);
	ub_fill(w, 0, 4);
}

/* minor 0: flags is the byte_order boolean; 1+: byte order | more fragments. */
static inline void ub_giop_begin(struct ub *w, unsigned minor, bool le, unsigned type, bool more)
{
	uint8_t flags = le ? 1 : 0;
	if (minor >= 1 && more)
		flags |= GIOP_FLAG_MORE;
	ub_giop_begin_raw(w, 1, (uint8_t)minor, flags, (uint8_t)type);
}

/* Patches the size field; returns the whole message length. */
static inline size_t ub_giop_end(struct ub *w)
{
	size_t len = w->n - w->msg;
	ub_put32_at(w, w->msg + 8, (uint32_t)(len - GIOP_HEADER_LEN), w->le);
	w->base = 0;
	return len;
}

/* Service contexts. */
static inline void ub_ctx_codesets(struct ub *w, bool encap_le, uint32_t cs, uint32_t wcs)
{
	ub_u32(w, GIOP_SC_CODESETS);
	ub_encap_begin(w, encap_le);
	ub_u32(w, cs);
	ub_u32(w, wcs);
	ub_encap_end(w);
}

static inline void ub_ctx_priority(struct ub *w, bool encap_le, int16_t prio)
{
	ub_u32(w, GIOP_SC_RT_CORBA_PRIORITY);
	ub_encap_begin(w, encap_le);
	ub_u16(w, (uint16_t)prio);
	ub_encap_end(w);
}

static inline void ub_ctx_raw(struct ub *w, uint32_t id, const void *p, size_t n)
{
	ub_u32(w, id);
	ub_octets(w, p, n);
}

/* An IIOP 1.2 profile body (TAG_INTERNET_IOP) as an encapsulation. */
static inline void ub_iiop_profile(struct ub *w, bool encap_le, const char *host, uint16_t port,
				   const void *key, size_t keylen)
{
	ub_u32(w, 0); /* TAG_INTERNET_IOP */
	ub_encap_begin(w, encap_le);
	ub_u8(w, 1);
	ub_u8(w, 2);
	ub_str(w, host);
	ub_u16(w, port);
	ub_octets(w, key, keylen);
	ub_u32(w, 0); /* no tagged components */
	ub_encap_end(w);
}

#define UB_KEY "key1"

/* ---- whole messages (one call each, appended to w) ----------------------- */

/* A Request with no service contexts and `body` octets of body (0xab).
 * resp: 1.0/1.1 response_expected (non-zero = true); 1.2+ response_flags. */
static inline size_t ub_request_ex(struct ub *w, unsigned minor, bool le, uint32_t rid, uint8_t resp,
				   const char *key, const char *op, size_t body, bool more)
{
	size_t start = w->n;
	ub_giop_begin(w, minor, le, GIOP_REQUEST, more);
	if (minor <= 1) {
		ub_u32(w, 0);
		ub_u32(w, rid);
		ub_u8(w, resp ? 1 : 0);
		if (minor == 1)
			ub_fill(w, 0, 3);
		ub_octets(w, key, strlen(key));
		ub_str(w, op);
		ub_octets(w, "", 0); /* principal */
	} else {
		ub_u32(w, rid);
		ub_u8(w, resp);
		ub_fill(w, 0, 3);
		ub_u16(w, 0); /* KeyAddr */
		ub_octets(w, key, strlen(key));
		ub_str(w, op);
		ub_u32(w, 0);
		if (body)
			ub_align(w, 8);
	}
	ub_fill(w, 0xab, body);
	ub_giop_end(w);
	return w->n - start;
}

static inline size_t ub_request(struct ub *w, unsigned minor, bool le, uint32_t rid, const char *op,
				size_t body)
{
	return ub_request_ex(w, minor, le, rid, minor <= 1 ? 1 : 3, UB_KEY, op, body, false);
}

/* A Reply with no service contexts, `status`, and `body` octets (0xcd). */
static inline size_t ub_reply_ex(struct ub *w, unsigned minor, bool le, uint32_t rid, uint32_t status,
				 size_t body, bool more)
{
	size_t start = w->n;
	ub_giop_begin(w, minor, le, GIOP_REPLY, more);
	if (minor <= 1) {
		ub_u32(w, 0);
		ub_u32(w, rid);
		ub_u32(w, status);
	} else {
		ub_u32(w, rid);
		ub_u32(w, status);
		ub_u32(w, 0);
		if (body)
			ub_align(w, 8);
	}
	ub_fill(w, 0xcd, body);
	ub_giop_end(w);
	return w->n - start;
}

static inline size_t ub_reply(struct ub *w, unsigned minor, bool le, uint32_t rid, size_t body)
{
	return ub_reply_ex(w, minor, le, rid, GIOP_NO_EXCEPTION, body, false);
}

/* A Reply carrying a system exception. */
static inline size_t ub_reply_sysex(struct ub *w, unsigned minor, bool le, uint32_t rid,
				    const char *repo, uint32_t minor_code, uint32_t completed)
{
	size_t start = w->n;
	ub_giop_begin(w, minor, le, GIOP_REPLY, false);
	if (minor <= 1) {
		ub_u32(w, 0);
		ub_u32(w, rid);
		ub_u32(w, GIOP_SYSTEM_EXCEPTION);
	} else {
		ub_u32(w, rid);
		ub_u32(w, GIOP_SYSTEM_EXCEPTION);
		ub_u32(w, 0);
		ub_align(w, 8);
	}
	ub_str(w, repo);
	ub_u32(w, minor_code);
	ub_u32(w, completed);
	ub_giop_end(w);
	return w->n - start;
}

static inline size_t ub_cancel(struct ub *w, unsigned minor, bool le, uint32_t rid)
{
	size_t start = w->n;
	ub_giop_begin(w, minor, le, GIOP_CANCEL_REQUEST, false);
	ub_u32(w, rid);
	ub_giop_end(w);
	return w->n - start;
}

static inline size_t ub_locate_request(struct ub *w, unsigned minor, bool le, uint32_t rid)
{
	size_t start = w->n;
	ub_giop_begin(w, minor, le, GIOP_LOCATE_REQUEST, false);
	ub_u32(w, rid);
	if (minor >= 2)
		ub_u16(w, 0);
	ub_octets(w, UB_KEY, strlen(UB_KEY));
	ub_giop_end(w);
	return w->n - start;
}

static inline size_t ub_locate_reply(struct ub *w, unsigned minor, bool le, uint32_t rid, uint32_t status)
{
	size_t start = w->n;
	ub_giop_begin(w, minor, le, GIOP_LOCATE_REPLY, false);
	ub_u32(w, rid);
	ub_u32(w, status);
	ub_giop_end(w);
	return w->n - start;
}

/* A Fragment: 1.1 has no header of its own, 1.2+ starts with the request id. */
static inline size_t ub_fragment(struct ub *w, unsigned minor, bool le, uint32_t rid, size_t body,
				 bool more)
{
	size_t start = w->n;
	ub_giop_begin(w, minor, le, GIOP_FRAGMENT, more);
	if (minor >= 2)
		ub_u32(w, rid);
	ub_fill(w, 0xef, body);
	ub_giop_end(w);
	return w->n - start;
}

static inline size_t ub_close(struct ub *w, unsigned minor, bool le)
{
	size_t start = w->n;
	ub_giop_begin(w, minor, le, GIOP_CLOSE_CONNECTION, false);
	ub_giop_end(w);
	return w->n - start;
}

/* A copy of b[0..n) in a heap block of exactly n bytes, so that ASan sees any
 * read past n.  (n == 0 gives a 1-byte block.) */
static inline uint8_t *exact_copy(const uint8_t *b, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);
	assert_non_null(p);
	if (n)
		memcpy(p, b, n);
	return p;
}

/* ======================================================================== */
/* Frames                                                                    */
/* ======================================================================== */

#define PK_MAX_EXT 24
#define PK_MAX_VLAN 12

struct pk {
	int dlt;                 /* GS_DLT_* (EN10MB when 0 and !raw_dlt) */
	int nvlan;               /* EN10MB: 802.1Q/802.1ad tags */
	uint16_t vlan_tpid[PK_MAX_VLAN]; /* 0: 0x8100 */
	bool null_be;            /* NULL link: family in big-endian order */
	uint32_t null_family;    /* NULL/LOOP: 0 means 2 or 24 by ip version */
	uint16_t ethertype;      /* 0: by ip version */
	int ipv;                 /* 4 or 6 */
	uint8_t src[16], dst[16];
	uint8_t ip4_optlen;      /* bytes of IPv4 options (multiple of 4, <= 40) */
	bool ip4_totlen_zero;    /* IPv4 total length 0 (TSO) */
	int32_t ip_len_delta;    /* added to the IP length field */
	uint16_t ip4_frag;       /* flags+offset field */
	uint8_t proto;           /* 0: TCP */
	uint8_t ext[PK_MAX_EXT]; /* IPv6 extension header chain (protocol numbers) */
	int next_ext;
	uint16_t frag6;          /* IPv6 fragment header offset/M field */
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window;
	const uint8_t *tcp_opts; /* raw option bytes, padded by the builder to 4 */
	size_t tcp_optlen;
	uint8_t tcp_doff_override; /* non-zero: data offset nibble as given */
	const uint8_t *payload;
	size_t len;
	size_t pad;              /* trailing link padding after the IP packet */
	/* filled by pk_build */
	size_t link_len, ip_hdr_len, tcp_hdr_len;
};

static inline void pk_defaults4(struct pk *p)
{
	memset(p, 0, sizeof *p);
	p->dlt = GS_DLT_EN10MB;
	p->ipv = 4;
	p->src[0] = 10, p->src[3] = 1;
	p->dst[0] = 10, p->dst[3] = 2;
	p->sport = 40000;
	p->dport = 2809;
	p->seq = 1000;
	p->ack = 5000;
	p->flags = GS_TCP_ACK | GS_TCP_PSH;
	p->window = 65535;
}

static inline void pk_defaults6(struct pk *p)
{
	pk_defaults4(p);
	p->ipv = 6;
	memset(p->src, 0, 16);
	memset(p->dst, 0, 16);
	p->src[0] = 0x20, p->src[1] = 0x01, p->src[2] = 0x0d, p->src[3] = 0xb8, p->src[15] = 1;
	p->dst[0] = 0x20, p->dst[1] = 0x01, p->dst[2] = 0x0d, p->dst[3] = 0xb8, p->dst[15] = 2;
}

static inline void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static inline uint16_t ip_csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Writes the frame into out (room for 64 KiB + headers); returns its length. */
static inline size_t pk_build(uint8_t *out, struct pk *p)
{
	size_t o = 0, ip0, l4len, tcp0, optpad, iplen;
	uint8_t proto = p->proto ? p->proto : 6;
	uint16_t et = p->ethertype ? p->ethertype : (p->ipv == 6 ? 0x86dd : 0x0800);

	switch (p->dlt) {
	case GS_DLT_EN10MB:
		memcpy(out, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
		o = 12;
		for (int i = 0; i < p->nvlan; i++) {
			wr16(out + o, p->vlan_tpid[i] ? p->vlan_tpid[i] : 0x8100);
			wr16(out + o + 2, (uint16_t)(100 + i));
			o += 4;
		}
		wr16(out + o, et);
		o += 2;
		break;
	case GS_DLT_LINUX_SLL:
		memset(out, 0, 16);
		wr16(out, 0);      /* packet type: to us */
		wr16(out + 2, 1);  /* ARPHRD_ETHER */
		wr16(out + 4, 6);
		memcpy(out + 6, "\x02\x00\x00\x00\x00\x01", 6);
		wr16(out + 14, et);
		o = 16;
		break;
	case GS_DLT_LINUX_SLL2:
		memset(out, 0, 20);
		wr16(out, et);
		wr32(out + 4, 2);  /* interface index */
		wr16(out + 8, 1);
		out[11] = 6;
		o = 20;
		break;
	case GS_DLT_NULL:
	case GS_DLT_LOOP: {
		uint32_t fam = p->null_family ? p->null_family : (p->ipv == 6 ? 24u : 2u);
		if (p->dlt == GS_DLT_LOOP || p->null_be)
			wr32(out, fam);
		else
			out[0] = (uint8_t)fam, out[1] = (uint8_t)(fam >> 8), out[2] = (uint8_t)(fam >> 16),
			out[3] = (uint8_t)(fam >> 24);
		o = 4;
		break;
	}
	default: /* raw IP */
		o = 0;
		break;
	}
	p->link_len = o;
	ip0 = o;

	optpad = (p->tcp_optlen + 3) & ~(size_t)3;
	p->tcp_hdr_len = 20 + optpad;
	l4len = p->tcp_hdr_len + p->len;

	if (p->ipv == 4) {
		size_t ihl = 20 + p->ip4_optlen;
		iplen = ihl + l4len;
		memset(out + o, 0, ihl);
		out[o] = (uint8_t)(0x40 | (ihl / 4));
		wr16(out + o + 2, p->ip4_totlen_zero ? 0 : (uint16_t)((int32_t)iplen + p->ip_len_delta));
		wr16(out + o + 4, 0x1234);
		wr16(out + o + 6, p->ip4_frag ? p->ip4_frag : 0x4000); /* DF */
		out[o + 8] = 64;
		out[o + 9] = proto;
		memcpy(out + o + 12, p->src, 4);
		memcpy(out + o + 16, p->dst, 4);
		for (size_t i = 20; i < ihl; i++)
			out[o + i] = 1; /* NOP options */
		wr16(out + o + 10, ip_csum(out + o, ihl));
		o += ihl;
		p->ip_hdr_len = ihl;
	} else {
		size_t ext_total = 0;
		memset(out + o, 0, 40);
		out[o] = 0x60;
		out[o + 6] = p->next_ext ? p->ext[0] : proto;
		out[o + 7] = 64;
		memcpy(out + o + 8, p->src, 16);
		memcpy(out + o + 24, p->dst, 16);
		o += 40;
		for (int i = 0; i < p->next_ext; i++) {
			uint8_t nh = i + 1 < p->next_ext ? p->ext[i + 1] : proto;
			size_t hlen = 8;
			memset(out + o, 0, 8);
			out[o] = nh;
			if (p->ext[i] == 44) {
				wr16(out + o + 2, p->frag6);
				wr32(out + o + 4, 0xabcd);
			} else if (p->ext[i] == 51) {
				/* AH: (len + 2) * 4 bytes; 24 keeps 8-byte alignment */
				hlen = 24;
				memset(out + o, 0, hlen);
				out[o] = nh;
				out[o + 1] = 4;
			} else {
				out[o + 1] = 0; /* (0 + 1) * 8 bytes */
				out[o + 2] = 1; /* PadN */
				out[o + 3] = 4;
			}
			o += hlen;
			ext_total += hlen;
		}
		iplen = 40 + ext_total + l4len;
		wr16(out + ip0 + 4, (uint16_t)((int32_t)(ext_total + l4len) + p->ip_len_delta));
		p->ip_hdr_len = 40 + ext_total;
	}

	tcp0 = o;
	memset(out + o, 0, p->tcp_hdr_len);
	wr16(out + o, p->sport);
	wr16(out + o + 2, p->dport);
	wr32(out + o + 4, p->seq);
	wr32(out + o + 8, p->ack);
	out[o + 12] = (uint8_t)((p->tcp_doff_override ? p->tcp_doff_override : p->tcp_hdr_len / 4) << 4);
	out[o + 13] = p->flags;
	wr16(out + o + 14, p->window);
	if (p->tcp_optlen)
		memcpy(out + o + 20, p->tcp_opts, p->tcp_optlen);
	o += p->tcp_hdr_len;
	(void)tcp0;
	if (p->len)
		memcpy(out + o, p->payload, p->len);
	o += p->len;
	(void)iplen;
	memset(out + o, 0, p->pad);
	o += p->pad;
	return o;
}

/* Offset of the TCP payload in a frame built by pk_build. */
static inline size_t pk_payload_off(const struct pk *p)
{
	return p->link_len + p->ip_hdr_len + p->tcp_hdr_len;
}

/* ======================================================================== */
/* Engine: connections and a sink                                            */
/* ======================================================================== */

#define T0 1700000000000000000LL  /* a capture time, ns since the epoch */
#define MS 1000000LL
#define US 1000LL

struct got {
	struct gs_call c;
	char op[512];
	size_t oplen;
	char exc[512];
	size_t exclen;
	char key[128];
	size_t keylen;
};

struct sink {
	struct got *v;
	size_t n, cap;
};

static inline void sink_fn(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	struct sink *s = arg;
	struct got *g;
	const char *p;
	size_t n;
	if (s->n == s->cap) {
		struct got *nv;
		s->cap = s->cap ? s->cap * 2 : 64;
		nv = realloc(s->v, s->cap * sizeof *s->v);
		assert_non_null(nv);
		ut_replace(s->v, nv);
		s->v = nv;
	}
	g = &s->v[s->n++];
	memset(g, 0, sizeof *g);
	g->c = *c;
	p = gs_intern_get(gs_engine_strings(e), c->op, &n);
	g->oplen = n < sizeof g->op - 1 ? n : sizeof g->op - 1;
	memcpy(g->op, p, g->oplen);
	p = gs_intern_get(gs_engine_strings(e), c->exception, &n);
	g->exclen = n < sizeof g->exc - 1 ? n : sizeof g->exc - 1;
	memcpy(g->exc, p, g->exclen);
	p = gs_intern_get(gs_engine_strings(e), c->object_key, &n);
	g->keylen = n < sizeof g->key - 1 ? n : sizeof g->key - 1;
	memcpy(g->key, p, g->keylen);
}

static inline void sink_free(struct sink *s)
{
	ut_forget(s->v);
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* A call of the sink by request id and client port (NULL when absent). */
static inline const struct got *sink_find(const struct sink *s, uint32_t rid, uint16_t cport)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].c.request_id == rid && (cport == 0 || s->v[i].c.client.port == cport))
			return &s->v[i];
	return NULL;
}

struct conn {
	int dlt;
	int ipv;
	uint8_t addr[2][16];   /* [0] client, [1] server */
	uint16_t port[2];
	uint32_t isn[2];
	uint32_t next[2];      /* next sequence number each side sends */
	uint8_t *frame;
};

static inline void conn_init(struct conn *c, const char *client, uint16_t cport, const char *server,
			     uint16_t sport, uint32_t cisn, uint32_t sisn)
{
	memset(c, 0, sizeof *c);
	c->dlt = GS_DLT_EN10MB;
	if (strchr(client, ':')) {
		c->ipv = 6;
		assert_int_equal(inet_pton(AF_INET6, client, c->addr[0]), 1);
		assert_int_equal(inet_pton(AF_INET6, server, c->addr[1]), 1);
	} else {
		c->ipv = 4;
		assert_int_equal(inet_pton(AF_INET, client, c->addr[0]), 1);
		assert_int_equal(inet_pton(AF_INET, server, c->addr[1]), 1);
	}
	c->port[0] = cport;
	c->port[1] = sport;
	c->isn[0] = cisn;
	c->isn[1] = sisn;
	c->next[0] = cisn + 1;
	c->next[1] = sisn + 1;
	c->frame = malloc(70000 + 256);
	assert_non_null(c->frame);
	ut_keep(c->frame, free);
}

static inline void conn_free(struct conn *c)
{
	ut_forget(c->frame);
	free(c->frame);
	c->frame = NULL;
}

#define CAP_ALL (-1L)

/* One segment from side d with explicit seq, ack and flags; `cap` payload
 * bytes captured (CAP_ALL: all of them). */
static inline void conn_raw(struct gs_engine *e, struct conn *c, int d, int64_t ts, uint32_t seq,
			    uint32_t ack, uint8_t flags, const void *data, size_t len, long cap)
{
	struct pk p;
	size_t n, caplen;
	pk_defaults4(&p);
	p.dlt = c->dlt;
	p.ipv = c->ipv;
	memcpy(p.src, c->addr[d], 16);
	memcpy(p.dst, c->addr[!d], 16);
	p.sport = c->port[d];
	p.dport = c->port[!d];
	p.seq = seq;
	p.ack = ack;
	p.flags = flags;
	p.payload = data;
	p.len = len;
	n = pk_build(c->frame, &p);
	caplen = n;
	if (cap >= 0 && (size_t)cap + pk_payload_off(&p) < n)
		caplen = (size_t)cap + pk_payload_off(&p);
	{
		uint8_t *copy = exact_copy(c->frame, caplen);
		gs_engine_frame(e, c->dlt, ts, copy, (uint32_t)caplen, (uint32_t)n);
		free(copy);
	}
}

/* SYN, SYN-ACK, ACK at ts, ts+1us, ts+2us. */
static inline void conn_handshake(struct gs_engine *e, struct conn *c, int64_t ts)
{
	conn_raw(e, c, 0, ts, c->isn[0], 0, GS_TCP_SYN, NULL, 0, CAP_ALL);
	conn_raw(e, c, 1, ts + US, c->isn[1], c->isn[0] + 1, GS_TCP_SYN | GS_TCP_ACK, NULL, 0, CAP_ALL);
	conn_raw(e, c, 0, ts + 2 * US, c->isn[0] + 1, c->isn[1] + 1, GS_TCP_ACK, NULL, 0, CAP_ALL);
}

/* In-order data from side d (acknowledging everything the other side sent). */
static inline void conn_send(struct gs_engine *e, struct conn *c, int d, int64_t ts, const void *data,
			     size_t len)
{
	conn_raw(e, c, d, ts, c->next[d], c->next[!d], GS_TCP_ACK | GS_TCP_PSH, data, len, CAP_ALL);
	c->next[d] += (uint32_t)len;
}

/* The same, cut to `caplen` payload bytes by the snapshot length. */
static inline void conn_send_cut(struct gs_engine *e, struct conn *c, int d, int64_t ts,
				 const void *data, size_t len, size_t caplen)
{
	conn_raw(e, c, d, ts, c->next[d], c->next[!d], GS_TCP_ACK | GS_TCP_PSH, data, len, (long)caplen);
	c->next[d] += (uint32_t)len;
}

/* data[0..len) sent as segments of at most `mss` bytes, all at ts + i us. */
static inline void conn_send_split(struct gs_engine *e, struct conn *c, int d, int64_t ts,
				   const uint8_t *data, size_t len, size_t mss)
{
	for (size_t off = 0, i = 0; off < len; off += mss, i++)
		conn_send(e, c, d, ts + (int64_t)i * US, data + off, len - off < mss ? len - off : mss);
}

/* A pure ACK from side d. */
static inline void conn_ack(struct gs_engine *e, struct conn *c, int d, int64_t ts)
{
	conn_raw(e, c, d, ts, c->next[d], c->next[!d], GS_TCP_ACK, NULL, 0, CAP_ALL);
}

static inline void conn_fin(struct gs_engine *e, struct conn *c, int d, int64_t ts)
{
	conn_raw(e, c, d, ts, c->next[d], c->next[!d], GS_TCP_ACK | GS_TCP_FIN, NULL, 0, CAP_ALL);
	c->next[d] += 1;
}

static inline void conn_rst(struct gs_engine *e, struct conn *c, int d, int64_t ts)
{
	conn_raw(e, c, d, ts, c->next[d], c->next[!d], GS_TCP_ACK | GS_TCP_RST, NULL, 0, CAP_ALL);
}

static inline void ut_engine_free(void *p) { gs_engine_free(p); }

/* An engine with the default configuration (changes applied by the caller). */
static inline struct gs_engine *engine_new(const struct gs_config *cfg, struct sink *s)
{
	struct gs_engine *e = NULL;
	struct gs_config def;
	if (!cfg) {
		gs_config_default(&def);
		cfg = &def;
	}
	memset(s, 0, sizeof *s);
	assert_int_equal(gs_engine_new(&e, cfg, sink_fn, s), 0);
	assert_non_null(e);
	ut_keep(e, ut_engine_free);
	return e;
}

static inline void engine_free(struct gs_engine *e)
{
	ut_forget(e);
	gs_engine_free(e);
}

static inline void assert_span_str(struct gs_span sp, const char *s)
{
	assert_non_null(sp.p);
	assert_int_equal(sp.len, strlen(s));
	assert_memory_equal(sp.p, s, sp.len);
}

#endif
