/* SPDX-License-Identifier: BSD-2-Clause */
#include "hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SUB (1u << GS_HIST_SUB_BITS)      /* exact range, and buckets of the first octave */
#define HALF (SUB / 2)                     /* buckets per further octave */

uint64_t gs_hist_bucket_high(const struct gs_hist *h, uint32_t idx)
{
	uint32_t o, s;
	unsigned shift;
	(void)h;
	if (idx < SUB)
		return idx;
	o = (idx - SUB) / HALF;
	s = (idx - SUB) % HALF;
	shift = o + 1;
	return (((uint64_t)(HALF + s) + 1) << shift) - 1;
}

int gs_hist_init(struct gs_hist *h, unsigned top_bits)
{
	memset(h, 0, sizeof *h);
	if (top_bits < GS_HIST_SUB_BITS || top_bits > 62)
		return EINVAL;
	h->top_bits = top_bits;
	h->n_buckets = SUB + (top_bits - GS_HIST_SUB_BITS) * HALF;
	h->counts = calloc(h->n_buckets, sizeof *h->counts);
	if (!h->counts)
		return ENOMEM;
	h->min = INT64_MAX;
	return 0;
}

void gs_hist_free(struct gs_hist *h)
{
	free(h->counts);
	h->counts = NULL;
}

int64_t gs_hist_quantile(const struct gs_hist *h, double q)
{
	uint64_t rank, seen = 0;
	if (h->total == 0)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	/* The smallest value with at least ceil(q * total) values at or below it,
	 * in integers: q in parts per billion first, since 0.9 as a double is a
	 * hair above 0.9 and ceil(0.9 * 10) in floating point gives 10, not 9. */
	{
		unsigned __int128 ppb = (unsigned __int128)(q * 1e9 + 0.5);
		unsigned __int128 num = ppb * h->total;
		rank = (uint64_t)(num / 1000000000u) + (num % 1000000000u != 0);
	}
	if (rank == 0)
		rank = 1;
	for (uint32_t i = 0; i < h->n_buckets; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			uint64_t hi = gs_hist_bucket_high(h, i);
			return (int64_t)hi > h->max ? h->max : (int64_t)hi;
		}
	}
	return h->max;
}

void gs_hist_merge(struct gs_hist *a, const struct gs_hist *b)
{
	if (a->n_buckets != b->n_buckets || b->total == 0)
		return;
	for (uint32_t i = 0; i < a->n_buckets; i++)
		a->counts[i] += b->counts[i];
	a->total += b->total;
	a->saturated += b->saturated;
	a->sum = b->sum > UINT64_MAX - a->sum ? UINT64_MAX : a->sum + b->sum;
	if (b->min < a->min)
		a->min = b->min;
	if (b->max > a->max)
		a->max = b->max;
}
