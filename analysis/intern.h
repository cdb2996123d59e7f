/* SPDX-License-Identifier: BSD-2-Clause */
/* Interned byte strings (operation names, object keys, exception ids).
 *
 * Calls store a 32-bit id instead of the bytes.  The table is sized once and
 * bounded both in entries and in bytes; when it is full, new strings get
 * GS_INTERN_FULL and the refusal is counted.
 */
#ifndef GS_INTERN_H
#define GS_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GS_INTERN_EMPTY 0u          /* the empty string, always present */
#define GS_INTERN_FULL 0xffffffffu  /* the table refused a new string */

struct gs_intern {
	uint32_t *slots;      /* open addressing: id + 1, 0 = free */
	uint32_t mask;
	uint32_t *offset;     /* id -> offset in chars */
	uint32_t *length;     /* id -> length */
	uint32_t *hash;       /* id -> hash */
	char *chars;
	uint32_t count, max_count;
	size_t used, max_bytes;
	uint64_t refused;
	/* id + 1 by the low bits of the hash: a hint checked before the table,
	 * which is too large to stay in cache (8 bytes a string allowed) */
#define GS_INTERN_FRONT 256
	uint32_t front[GS_INTERN_FRONT];
	/* id + 1 by a cheap key of a string of 8 bytes or more (its length, first
	 * and last 8 bytes): checked before the hash, which reads every byte */
#define GS_INTERN_QUICK 64
	uint32_t quick[GS_INTERN_QUICK];
};

/* Returns 0 or an errno value. */
int gs_intern_init(struct gs_intern *t, uint32_t max_count, size_t max_bytes);
void gs_intern_free(struct gs_intern *t);
uint32_t gs_intern(struct gs_intern *t, const void *p, size_t len);
/* Bytes of an id (not NUL-terminated); GS_INTERN_FULL reads as empty.  Inline:
 * each request's operation and object key are compared with the last ones. */
static inline const char *gs_intern_get(const struct gs_intern *t, uint32_t id, size_t *len)
{
	if (id >= t->count) {
		*len = 0;
		return "";
	}
	*len = t->length[id];
	return t->chars + t->offset[id];
}

/* n bytes at a and b alike; up to 16 with two overlapping loads of each (no
 * byte outside either), longer ones by memcmp: operation names are mostly
 * short, and the library call cost more than the compare (pairing's last
 * operation, the quick table below). */
static inline bool gs_same_bytes(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	uint64_t u, v, w, z;
	uint32_t s, t, q, r;
	if (n >= 8 && n <= 16) {
		memcpy(&u, x, 8);
		memcpy(&v, y, 8);
		memcpy(&w, x + n - 8, 8);
		memcpy(&z, y + n - 8, 8);
		return ((u ^ v) | (w ^ z)) == 0;
	}
	if (n >= 4 && n < 8) {
		memcpy(&s, x, 4);
		memcpy(&t, y, 4);
		memcpy(&q, x + n - 4, 4);
		memcpy(&r, y + n - 4, 4);
		return ((s ^ t) | (q ^ r)) == 0;
	}
	return memcmp(a, b, n) == 0;
}

#endif
