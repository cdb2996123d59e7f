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
/* Records one value (negative values count as 0).  False when clamped. */
bool gs_hist_record(struct gs_hist *h, int64_t v);
/* The value at quantile q (0..1): the highest value of the bucket holding it,
 * never above the largest value recorded.  0 when empty. */
int64_t gs_hist_quantile(const struct gs_hist *h, double q);
/* Adds b's counts to a (same top_bits). */
void gs_hist_merge(struct gs_hist *a, const struct gs_hist *b);
/* Bucket index of a value, and the highest value in a bucket (for tests). */
uint32_t gs_hist_index(const struct gs_hist *h, uint64_t v);
uint64_t gs_hist_bucket_high(const struct gs_hist *h, uint32_t idx);

#endif
