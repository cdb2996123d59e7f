/* SPDX-License-Identifier: BSD-2-Clause */
/* A fixed-memory log-linear histogram of nanosecond latencies (HDR-style).
 *
 * Values below 2^GS_HIST_SUB_BITS are counted exactly; above, each power of
 * two is split into 2^(GS_HIST_SUB_BITS-1) equal buckets, so any recorded value
 * is known to within 1/2^(GS_HIST_SUB_BITS-1) of itself (0.8% with 8 bits).
 * One flat counts array, sized at init; values past the top are clamped into
 * the last bucket and counted in `saturated`.
 */
#ifndef GS_HIST_H
#define GS_HIST_H

#include <stdbool.h>
#include <stdint.h>

#define GS_HIST_SUB_BITS 8

struct gs_hist {
	uint64_t *counts;
	uint32_t n_buckets;
	uint32_t top_bits;    /* values up to 2^top_bits - 1 are in range */
	uint64_t total;
	uint64_t saturated;
	int64_t min, max;
	uint64_t sum;          /* of the recorded values (ns), saturating */
};

/* top_bits: 8..62 (42 covers 73 minutes in ns).  Returns 0 or an errno value. */
int gs_hist_init(struct gs_hist *h, unsigned top_bits);
void gs_hist_free(struct gs_hist *h);
/* The value at quantile q (0..1): the highest value of the bucket holding it,
 * never above the largest value recorded.  0 when empty. */
int64_t gs_hist_quantile(const struct gs_hist *h, double q);
/* Adds b's counts to a (same top_bits). */
void gs_hist_merge(struct gs_hist *a, const struct gs_hist *b);
/* The highest value in a bucket (for tests). */
uint64_t gs_hist_bucket_high(const struct gs_hist *h, uint32_t idx);

/* Bucket index of a value.  Inline, with the record: four records a call. */
static inline uint32_t gs_hist_index(const struct gs_hist *h, uint64_t v)
{
	unsigned b;
	(void)h;
	if (v < (1u << GS_HIST_SUB_BITS))
		return (uint32_t)v;
	b = 64u - (unsigned)__builtin_clzll(v); /* > GS_HIST_SUB_BITS */
	/* octave o = b - SUB_BITS (1..), keep the top SUB_BITS bits of v */
	return (1u << GS_HIST_SUB_BITS) + (uint32_t)(b - GS_HIST_SUB_BITS - 1) * (1u << (GS_HIST_SUB_BITS - 1)) +
	       (uint32_t)((v >> (b - GS_HIST_SUB_BITS)) - (1u << (GS_HIST_SUB_BITS - 1)));
}

/* The counters of a record past the bucket: both records of a value share them. */
static inline void gs_hist_note(struct gs_hist *h, uint32_t idx, int64_t v)
{
	h->counts[idx]++;
	h->total++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	/* integer, not long double: the x87 add was most of a record */
	h->sum = (uint64_t)v > UINT64_MAX - h->sum ? UINT64_MAX : h->sum + (uint64_t)v;
}

/* Records one value (negative values count as 0).  False when clamped. */
static inline bool gs_hist_record(struct gs_hist *h, int64_t v)
{
	uint64_t u;
	bool ok = true;
	if (v < 0) /* a reply seen before its request ended: count it as 0 */
		v = 0;
	u = (uint64_t)v;
	if (u >> h->top_bits) {
		u = ((uint64_t)1 << h->top_bits) - 1;
		h->saturated++;
		ok = false;
	}
	gs_hist_note(h, gs_hist_index(h, u), v);
	return ok;
}

/* Records one value into two histograms (a group's and the whole's): the same
 * as gs_hist_record on each, with the bucket found once when their ranges match. */
static inline void gs_hist_record2(struct gs_hist *a, struct gs_hist *b, int64_t v)
{
	uint64_t u;
	uint32_t idx;
	if (a->top_bits != b->top_bits) {
		gs_hist_record(a, v);
		gs_hist_record(b, v);
		return;
	}
	if (v < 0)
		v = 0;
	u = (uint64_t)v;
	if (u >> a->top_bits) {
		u = ((uint64_t)1 << a->top_bits) - 1;
		a->saturated++;
		b->saturated++;
	}
	idx = gs_hist_index(a, u);
	gs_hist_note(a, idx, v);
	gs_hist_note(b, idx, v);
}

#endif
