/* SPDX-License-Identifier: BSD-2-Clause */
/* The log-linear latency histogram. */
#include <errno.h>
#include "unit.h"
#include "../../analysis/hist.h"

/* kept for the teardown, so that a failed assertion does not leak */
static int hist_init(struct gs_hist *h, unsigned top_bits)
{
	int r = gs_hist_init(h, top_bits);
	ut_keep(h->counts, free);
	return r;
}

static void hist_free(struct gs_hist *h)
{
	ut_forget(h->counts);
	gs_hist_free(h);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void test_init_bounds(void **state)
{
	struct gs_hist h;
	assert_int_equal(hist_init(&h, 7), EINVAL);
	assert_int_equal(hist_init(&h, 63), EINVAL);
	assert_int_equal(hist_init(&h, 8), 0);
	assert_int_equal(h.n_buckets, 256);
	hist_free(&h);
	assert_int_equal(hist_init(&h, 42), 0);
	assert_int_equal(h.n_buckets, 256 + (42 - 8) * 128);
	assert_int_equal(h.total, 0);
	assert_int_equal(gs_hist_quantile(&h, 0.5), 0);
	hist_free(&h);
	assert_null(h.counts);
}

static void test_index_exact_below_256(void **state)
{
	struct gs_hist h;
	assert_int_equal(hist_init(&h, 42), 0);
	for (uint64_t v = 0; v < 256; v++) {
		assert_int_equal(gs_hist_index(&h, v), v);
		assert_int_equal(gs_hist_bucket_high(&h, (uint32_t)v), v);
	}
	/* the first octave above: buckets of 2 */
	assert_int_equal(gs_hist_index(&h, 256), 256);
	assert_int_equal(gs_hist_index(&h, 257), 256);
	assert_int_equal(gs_hist_index(&h, 258), 257);
	assert_int_equal(gs_hist_bucket_high(&h, 256), 257);
	assert_int_equal(gs_hist_index(&h, 511), 383);
	assert_int_equal(gs_hist_bucket_high(&h, 383), 511);
	/* then buckets of 4 */
	assert_int_equal(gs_hist_index(&h, 512), 384);
	assert_int_equal(gs_hist_index(&h, 515), 384);
	assert_int_equal(gs_hist_index(&h, 516), 385);
	assert_int_equal(gs_hist_bucket_high(&h, 384), 515);
	/* the last bucket ends at 2^42 - 1 */
	assert_int_equal(gs_hist_index(&h, (1ull << 42) - 1), h.n_buckets - 1);
	assert_int_equal(gs_hist_bucket_high(&h, h.n_buckets - 1), (1ull << 42) - 1);
	hist_free(&h);
}

/* Every bucket: its high value maps back to it, high + 1 starts the next one,
 * and buckets are contiguous. */
static void test_index_high_round_trip(void **state)
{
	struct gs_hist h;
	uint64_t prev_high = 0;
	assert_int_equal(hist_init(&h, 62), 0);
	for (uint32_t i = 0; i < h.n_buckets; i++) {
		uint64_t hi = gs_hist_bucket_high(&h, i);
		assert_int_equal(gs_hist_index(&h, hi), i);
		if (i > 0) {
			assert_int_equal(prev_high + 1 <= hi, 1);
			assert_int_equal(gs_hist_index(&h, prev_high + 1), i);
		}
		prev_high = hi;
	}
	assert_int_equal(prev_high, (1ull << 62) - 1);
	hist_free(&h);
}

/* Any value's bucket high is within 1/128 of it, above it. */
static void test_relative_error(void **state)
{
	struct gs_hist h;
	assert_int_equal(hist_init(&h, 62), 0);
	for (int n = 0; n < 1000000; n++) {
		unsigned bits = (unsigned)(rnd() % 62) + 1;
		uint64_t v = rnd() >> (64 - bits);
		uint64_t hi = gs_hist_bucket_high(&h, gs_hist_index(&h, v));
		assert_true(hi >= v);
		/* (hi - v) / v < 1/128 */
		if (v >= 256)
			assert_true((hi - v) * 128 < v);
		else
			assert_int_equal(hi, v);
	}
	hist_free(&h);
}

static void test_quantiles_vs_sorted(void **state)
{
	enum { N = 100000 };
	static const double qs[] = { 0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0 };
	int64_t *v = malloc(N * sizeof *v);
	struct gs_hist h;
	assert_non_null(v);
	assert_int_equal(hist_init(&h, 42), 0);
	for (int i = 0; i < N; i++) {
		/* log-uniform from 1 ns to ~1 s */
		unsigned bits = (unsigned)(rnd() % 30) + 1;
		v[i] = (int64_t)(rnd() >> (64 - bits));
		assert_true(gs_hist_record(&h, v[i]));
	}
	qsort(v, N, sizeof *v, cmp_i64);
	assert_int_equal(h.total, N);
	assert_int_equal(h.min, v[0]);
	assert_int_equal(h.max, v[N - 1]);
	assert_int_equal(h.saturated, 0);
	for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
		double q = qs[k];
		int64_t got = gs_hist_quantile(&h, q), want, exact;
		if (q <= 0) {
			assert_int_equal(got, v[0]);
			continue;
		}
		if (q >= 1) {
			assert_int_equal(got, v[N - 1]);
			continue;
		}
		/* the smallest value with at least ceil(q * N) values at or below it */
		{
			long double t = (long double)q * N;
			size_t r = (size_t)t;
			if ((long double)r < t)
				r++;
			if (r == 0)
				r = 1;
			exact = v[r - 1];
		}
		want = (int64_t)gs_hist_bucket_high(&h, gs_hist_index(&h, (uint64_t)exact));
		if (want > v[N - 1])
			want = v[N - 1];
		assert_int_equal(got, want);
		assert_true(got >= exact);
		assert_true((got - exact) * 128 <= exact || exact < 256);
	}
	hist_free(&h);
	free(v);
}

static void test_quantile_small_sets(void **state)
{
	struct gs_hist h;
	assert_int_equal(hist_init(&h, 42), 0);
	gs_hist_record(&h, 1000);
	assert_int_equal(gs_hist_quantile(&h, 0.5), 1000); /* bucket high 1003, capped at max */
	assert_int_equal(gs_hist_quantile(&h, 0.0), 1000);
	assert_int_equal(gs_hist_quantile(&h, 1.0), 1000);
	gs_hist_record(&h, 5000);
	gs_hist_record(&h, 3);
	/* sorted: 3, 1000, 5000 */
	assert_int_equal(gs_hist_quantile(&h, 0.33), 3);
	assert_int_equal(gs_hist_quantile(&h, 0.34), 1003);
	assert_int_equal(gs_hist_quantile(&h, 0.5), 1003);
	assert_int_equal(gs_hist_quantile(&h, 0.67), 5000);
	assert_int_equal(gs_hist_quantile(&h, 0.99), 5000);
	assert_int_equal(gs_hist_quantile(&h, -1), 3);
	assert_int_equal(gs_hist_quantile(&h, 2), 5000);
	assert_true(h.sum == 6003);
	hist_free(&h);
}

static void test_saturation(void **state)
{
	struct gs_hist h;
	assert_int_equal(hist_init(&h, 20), 0);
	assert_true(gs_hist_record(&h, (1 << 20) - 1));
	assert_false(gs_hist_record(&h, 1 << 20));
	assert_false(gs_hist_record(&h, INT64_MAX));
	assert_int_equal(h.saturated, 2);
	assert_int_equal(h.total, 3);
	assert_int_equal(h.counts[h.n_buckets - 1], 3);
	assert_int_equal(h.max, INT64_MAX);
	/* a quantile in the clamped bucket reads as the top of the range */
	assert_int_equal(gs_hist_quantile(&h, 0.5), (1 << 20) - 1);
	assert_int_equal(gs_hist_quantile(&h, 1.0), INT64_MAX);
	hist_free(&h);
}

/* "negative values count as 0" (hist.h): min, quantiles and sum agree. */
static void test_negative_counts_as_zero(void **state)
{
	struct gs_hist h;
	assert_int_equal(hist_init(&h, 42), 0);
	assert_true(gs_hist_record(&h, -5000));
	assert_int_equal(h.counts[0], 1);
	assert_int_equal(h.total, 1);
	assert_int_equal(gs_hist_quantile(&h, 0.5), 0);
	assert_int_equal(gs_hist_quantile(&h, 0.0), 0);
	assert_int_equal(gs_hist_quantile(&h, 1.0), 0);
	assert_int_equal(h.min, 0);
	assert_int_equal(h.max, 0);
	assert_true(h.sum == 0);
	hist_free(&h);
}

static void test_merge(void **state)
{
	struct gs_hist a, b, all, other;
	assert_int_equal(hist_init(&a, 42), 0);
	assert_int_equal(hist_init(&b, 42), 0);
	assert_int_equal(hist_init(&all, 42), 0);
	assert_int_equal(hist_init(&other, 30), 0);
	for (int i = 0; i < 20000; i++) {
		int64_t v = (int64_t)(rnd() >> (64 - 1 - rnd() % 40));
		gs_hist_record((i & 1) ? &a : &b, v);
		gs_hist_record(&all, v);
	}
	gs_hist_record(&b, (int64_t)1 << 50); /* saturated in b */
	gs_hist_record(&all, (int64_t)1 << 50);
	gs_hist_merge(&a, &b);
	assert_int_equal(a.total, all.total);
	assert_int_equal(a.saturated, 1);
	assert_int_equal(a.min, all.min);
	assert_int_equal(a.max, all.max);
	assert_true(a.sum == all.sum);
	assert_memory_equal(a.counts, all.counts, a.n_buckets * sizeof *a.counts);
	for (double q = 0.01; q < 1; q += 0.01)
		assert_int_equal(gs_hist_quantile(&a, q), gs_hist_quantile(&all, q));
	/* an empty histogram, or one of another size, changes nothing */
	{
		uint64_t total = a.total;
		struct gs_hist empty;
		assert_int_equal(hist_init(&empty, 42), 0);
		gs_hist_merge(&a, &empty);
		assert_int_equal(a.total, total);
		assert_int_equal(a.min, all.min);
		gs_hist_record(&other, 5);
		gs_hist_merge(&a, &other);
		assert_int_equal(a.total, total);
		hist_free(&empty);
	}
	/* merging into an empty one copies */
	{
		struct gs_hist c;
		assert_int_equal(hist_init(&c, 42), 0);
		gs_hist_merge(&c, &all);
		assert_int_equal(c.total, all.total);
		assert_int_equal(c.min, all.min);
		assert_int_equal(c.max, all.max);
		assert_int_equal(gs_hist_quantile(&c, 0.5), gs_hist_quantile(&all, 0.5));
		hist_free(&c);
	}
	hist_free(&a);
	hist_free(&b);
	hist_free(&all);
	hist_free(&other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_init_bounds),
		UT(test_index_exact_below_256),
		UT(test_index_high_round_trip),
		UT(test_relative_error),
		UT(test_quantiles_vs_sorted),
		UT(test_quantile_small_sets),
		UT(test_saturation),
		UT(test_negative_counts_as_zero),
		UT(test_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
