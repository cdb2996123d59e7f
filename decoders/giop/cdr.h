/* SPDX-License-Identifier: BSD-2-Clause */
/* A CDR reader over the captured head of one GIOP message.
 *
 * Offsets are counted from the first byte of the GIOP header, which is how CDR
 * alignment is defined for GIOP messages.  A read past the message size is
 * INVALID (the message contradicts itself); a read past what we have, but inside
 * the message, is NEED_MORE (more bytes may come, or the capture cut them).
 */
#ifndef GS_CDR_H
#define GS_CDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../bytes.h"

enum giop_res { GIOP_OK = 0, GIOP_NEED_MORE, GIOP_INVALID };

struct cdr {
	const uint8_t *p;
	size_t avail;   /* bytes at p we may read; never more than msg_len */
	size_t msg_len; /* bytes the message has (12 + size) */
	size_t off;
	bool le;
};

/* avail <= msg_len (giop_decode, encap_open): bytes we have lie inside the
 * message, so the common read is one test. */
static inline enum giop_res cdr_need(const struct cdr *c, size_t n)
{
	if (gs_has(c->avail, c->off, n))
		return GIOP_OK;
	return gs_has(c->msg_len, c->off, n) ? GIOP_NEED_MORE : GIOP_INVALID;
}

static inline void cdr_align(struct cdr *c, size_t a)
{
	size_t pad = (a - (c->off & (a - 1))) & (a - 1);
	c->off += pad;
}

static inline enum giop_res cdr_octet(struct cdr *c, uint8_t *v)
{
	enum giop_res r = cdr_need(c, 1);
	if (r != GIOP_OK)
		return r;
	*v = c->p[c->off++];
	return GIOP_OK;
}

static inline enum giop_res cdr_ushort(struct cdr *c, uint16_t *v)
{
	enum giop_res r;
	cdr_align(c, 2);
	if ((r = cdr_need(c, 2)) != GIOP_OK)
		return r;
	*v = gs_ord16(c->p + c->off, c->le);
	c->off += 2;
	return GIOP_OK;
}

static inline enum giop_res cdr_ulong(struct cdr *c, uint32_t *v)
{
	enum giop_res r;
	cdr_align(c, 4);
	if ((r = cdr_need(c, 4)) != GIOP_OK)
		return r;
	*v = gs_ord32(c->p + c->off, c->le);
	c->off += 4;
	return GIOP_OK;
}

/* Skipping needs no bytes, only room in the message; a message of unknown
 * end (its header goes on in a Fragment) can only be skipped through what we
 * have. */
static inline enum giop_res cdr_skip(struct cdr *c, size_t n)
{
	if (!gs_has(c->msg_len, c->off, n))
		return GIOP_INVALID;
	if (c->msg_len == SIZE_MAX && !gs_has(c->avail, c->off, n))
		return GIOP_NEED_MORE;
	c->off += n;
	return GIOP_OK;
}

/* sequence<octet>: a length then the bytes.  The bytes must be available only
 * when `want` is set; otherwise they are skipped (only bounded by the message). */
static inline __attribute__((always_inline)) enum giop_res cdr_octets(struct cdr *c, struct gs_span *out,
									 bool want)
{
	uint32_t n;
	enum giop_res r = cdr_ulong(c, &n);
	if (r != GIOP_OK)
		return r;
	if (want) {
		if ((r = cdr_need(c, n)) != GIOP_OK)
			return r;
	} else {
		if (!gs_has(c->msg_len, c->off, n))
			return GIOP_INVALID;
		if (c->msg_len == SIZE_MAX && !gs_has(c->avail, c->off, n))
			return GIOP_NEED_MORE;
	}
	if (out) {
		out->p = want ? c->p + c->off : NULL;
		out->len = n;
	}
	c->off += n;
	return GIOP_OK;
}

#endif
