/* SPDX-License-Identifier: BSD-2-Clause */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_reserve(struct buf *b, size_t more)
{
	if (b->cap - b->len >= more)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < more)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		fputs("giopgen: out of memory\n", stderr);
		exit(2);
	}
	b->p = p;
	b->cap = cap;
}

void buf_put(struct buf *b, const void *data, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

void buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void cdr_align(struct cdr *c, unsigned n)
{
	size_t pad = (n - cdr_pos(c) % n) % n;
	buf_reserve(c->b, pad);
	memset(c->b->p + c->b->len, 0, pad);
	c->b->len += pad;
}

static void put_uint(struct cdr *c, uint64_t v, unsigned n)
{
	cdr_align(c, n);
	buf_reserve(c->b, n);
	uint8_t *p = c->b->p + c->b->len;
	for (unsigned i = 0; i < n; i++)
		p[c->le ? i : n - 1 - i] = (uint8_t)(v >> (8 * i));
	c->b->len += n;
}

void cdr_u8(struct cdr *c, uint8_t v)
{
	buf_put(c->b, &v, 1);
}

void cdr_u16(struct cdr *c, uint16_t v)
{
	put_uint(c, v, 2);
}

void cdr_u32(struct cdr *c, uint32_t v)
{
	put_uint(c, v, 4);
}

void cdr_u64(struct cdr *c, uint64_t v)
{
	put_uint(c, v, 8);
}

void cdr_raw(struct cdr *c, const void *p, size_t n)
{
	buf_put(c->b, p, n);
}

void cdr_octets(struct cdr *c, const void *p, size_t n)
{
	cdr_u32(c, (uint32_t)n);
	buf_put(c->b, p, n);
}

void cdr_string_n(struct cdr *c, const char *s, size_t n)
{
	cdr_u32(c, (uint32_t)n + 1);
	buf_put(c->b, s, n);
	cdr_u8(c, 0);
}

void cdr_string(struct cdr *c, const char *s)
{
	cdr_string_n(c, s, strlen(s));
}

void cdr_patch_u32(struct cdr *c, size_t at, uint32_t v)
{
	uint8_t *p = c->b->p + c->base + at;
	for (unsigned i = 0; i < 4; i++)
		p[c->le ? i : 3 - i] = (uint8_t)(v >> (8 * i));
}
