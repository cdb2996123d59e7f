/* SPDX-License-Identifier: BSD-2-Clause */
/* A growable byte buffer and a CDR writer over it (CORBA 3.x, 9.3 CDR). */
#ifndef GEN_BUF_H
#define GEN_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *p;
	size_t len, cap;
};

void buf_reserve(struct buf *b, size_t more);
void buf_put(struct buf *b, const void *data, size_t n);
void buf_free(struct buf *b);

/* CDR aligns each primitive on its size, counted from `base` (the first byte of the
 * GIOP header for a message, the byte-order octet for an encapsulation). */
struct cdr {
	struct buf *b;
	size_t base;
	bool le;
};

static inline size_t cdr_pos(const struct cdr *c)
{
	return c->b->len - c->base;
}

void cdr_align(struct cdr *c, unsigned n);
void cdr_u8(struct cdr *c, uint8_t v);
void cdr_u16(struct cdr *c, uint16_t v);
void cdr_u32(struct cdr *c, uint32_t v);
void cdr_u64(struct cdr *c, uint64_t v);
void cdr_raw(struct cdr *c, const void *p, size_t n);
void cdr_octets(struct cdr *c, const void *p, size_t n);   /* sequence<octet> */
void cdr_string(struct cdr *c, const char *s);             /* string, NUL included */
void cdr_string_n(struct cdr *c, const char *s, size_t n); /* n chars, no NUL in s */
/* writes v at message offset `at` (a size field filled in afterwards) */
void cdr_patch_u32(struct cdr *c, size_t at, uint32_t v);

#endif
