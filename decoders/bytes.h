/* SPDX-License-Identifier: BSD-2-Clause */
/* Bounds-checked reads of wire fields.
 *
 * Every field of a packet or of a GIOP message is read through these getters:
 * a read past what was captured is impossible by construction.  The test is
 * always written as `len > remaining` (never `p + len > end`, which can wrap).
 */
#ifndef GS_BYTES_H
#define GS_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t gs_be16(const uint8_t *p) { return (uint16_t)((uint16_t)p[0] << 8 | p[1]); }
static inline uint16_t gs_le16(const uint8_t *p) { return (uint16_t)((uint16_t)p[1] << 8 | p[0]); }
static inline uint32_t gs_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint32_t gs_le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
/* In the byte order a CDR stream or a GIOP header names: both orders are read
 * and one is kept without a branch (the order changes from one connection to
 * the next, a branch the predictor loses; GCC makes ?: of two values a cmov) */
static inline uint16_t gs_ord16(const uint8_t *p, bool le)
{
	uint16_t l = gs_le16(p), b = (uint16_t)(l << 8 | l >> 8);
	return le ? l : b;
}
static inline uint32_t gs_ord32(const uint8_t *p, bool le)
{
	uint32_t l = gs_le32(p), b = __builtin_bswap32(l);
	return le ? l : b;
}

/* Clears n bytes, a record the hot path clears per message or per call.  GCC
 * (12, -O2, generic tuning) clears more than 64 bytes of a known size with
 * `rep stos`, whose start-up costs tens of cycles on AMD cores (measured: a
 * few per cent of `read`); 64-byte pieces become plain vector stores. */
static inline void gs_zero(void *p, size_t n)
{
	unsigned char *q = p;
	for (size_t i = 0; i + 64 <= n; i += 64)
		memset(q + i, 0, 64);
	if (n % 64)
		memset(q + n - n % 64, 0, n % 64);
}

/* A read-only window over captured bytes. */
struct gs_span {
	const uint8_t *p;
	size_t len;
};

/* True when [off, off+n) lies inside a buffer of `len` bytes. */
static inline bool gs_has(size_t len, size_t off, size_t n)
{
	return off <= len && n <= len - off;
}

static inline bool gs_get_u8(struct gs_span s, size_t off, uint8_t *v)
{
	if (!gs_has(s.len, off, 1))
		return false;
	*v = s.p[off];
	return true;
}

static inline bool gs_get_be16(struct gs_span s, size_t off, uint16_t *v)
{
	if (!gs_has(s.len, off, 2))
		return false;
	*v = gs_be16(s.p + off);
	return true;
}

static inline bool gs_get_be32(struct gs_span s, size_t off, uint32_t *v)
{
	if (!gs_has(s.len, off, 4))
		return false;
	*v = gs_be32(s.p + off);
	return true;
}

#endif
