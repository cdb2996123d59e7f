/* SPDX-License-Identifier: BSD-2-Clause */
#include "intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Eight bytes a step (operation names and object keys are 5 to 100 bytes, and
 * each request's are hashed unless they repeat the connection's last ones).
 * The hash only places a string in the table: ids go by first appearance. */
static uint32_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	size_t i = 0;
	for (; n - i >= 8; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 29;
	}
	if (i < n) {
		uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		if (n >= 8) {
			/* the last 8 bytes, those before i shifted out: the same word
			 * as the loop below gathers, in one load */
			memcpy(&w, p + n - 8, 8);
			w >>= 8 * (8 - (n - i));
			i = n;
		}
#endif
		for (unsigned k = 0; i < n; i++, k += 8)
			w |= (uint64_t)p[i] << k;
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 29;
	}
	h *= 0x94d049bb133111ebULL;
	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

int gs_intern_init(struct gs_intern *t, uint32_t max_count, size_t max_bytes)
{
	uint32_t cap = 16;
	memset(t, 0, sizeof *t);
	if (max_count < 1 || max_count > (1u << 28))
		return EINVAL;
	while (cap < max_count * 2)
		cap <<= 1;
	t->slots = calloc(cap, sizeof *t->slots);
	t->offset = calloc(max_count, sizeof *t->offset);
	t->length = calloc(max_count, sizeof *t->length);
	t->hash = calloc(max_count, sizeof *t->hash);
	t->chars = malloc(max_bytes ? max_bytes : 1);
	if (!t->slots || !t->offset || !t->length || !t->hash || !t->chars) {
		gs_intern_free(t);
		return ENOMEM;
	}
	t->mask = cap - 1;
	t->max_count = max_count;
	t->max_bytes = max_bytes;
	/* id 0: the empty string */
	t->count = 1;
	t->hash[0] = hash_bytes(NULL, 0);
	t->slots[t->hash[0] & t->mask] = 1;
	return 0;
}

void gs_intern_free(struct gs_intern *t)
{
	free(t->slots);
	free(t->offset);
	free(t->length);
	free(t->hash);
	free(t->chars);
	memset(t, 0, sizeof *t);
}

static uint32_t intern_hashed(struct gs_intern *t, const void *p, size_t len);

_Static_assert(GS_INTERN_QUICK == 1 << 6, "the quick key takes the top 6 bits");

/* Strings of 8 bytes or more: the quick table first (a string has one id, so
 * an entry whose bytes match is the answer), else the hash table. */
uint32_t gs_intern(struct gs_intern *t, const void *p, size_t len)
{
	uint64_t a, b;
	uint32_t q, id;
	if (len < 8)
		return intern_hashed(t, p, len);
	memcpy(&a, p, 8);
	memcpy(&b, (const uint8_t *)p + len - 8, 8);
	q = (uint32_t)(((a ^ (b * 0x9e3779b97f4a7c15ULL) ^ len) * 0xbf58476d1ce4e5b9ULL) >> 58);
	id = t->quick[q];
	if (id && t->length[id - 1] == len && gs_same_bytes(t->chars + t->offset[id - 1], p, len))
		return id - 1;
	id = intern_hashed(t, p, len);
	if (id != GS_INTERN_FULL)
		t->quick[q] = id + 1;
	return id;
}

static uint32_t intern_hashed(struct gs_intern *t, const void *p, size_t len)
{
	uint32_t h = hash_bytes(p, len), i, id;
	if (len == 0)
		return GS_INTERN_EMPTY;
	id = t->front[h & (GS_INTERN_FRONT - 1)];
	if (id) {
		/* a string has one id: a match here is what the table holds */
		id--;
		if (t->hash[id] == h && t->length[id] == len &&
		    memcmp(t->chars + t->offset[id], p, len) == 0)
			return id;
	}
	for (i = h & t->mask;; i = (i + 1) & t->mask) {
		uint32_t s = t->slots[i];
		if (s == 0)
			break;
		id = s - 1;
		if (t->hash[id] == h && t->length[id] == len &&
		    memcmp(t->chars + t->offset[id], p, len) == 0) {
			t->front[h & (GS_INTERN_FRONT - 1)] = id + 1;
			return id;
		}
	}
	if (t->count == t->max_count || len > t->max_bytes - t->used || len > UINT32_MAX) {
		t->refused++;
		return GS_INTERN_FULL;
	}
	id = t->count++;
	memcpy(t->chars + t->used, p, len);
	t->offset[id] = (uint32_t)t->used;
	t->length[id] = (uint32_t)len;
	t->hash[id] = h;
	t->used += len;
	t->slots[i] = id + 1;
	t->front[h & (GS_INTERN_FRONT - 1)] = id + 1;
	return id;
}

