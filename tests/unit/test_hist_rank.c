/* SPDX-License-Identifier: BSD-2-Clause */
/* gs_hist_quantile's rank is ceil(q * n) computed exactly: 0.9 as a double is
 * 0.90000000000000002220, and ceil(0.9 * 10) in floating point was 10, so the
 * p90 of ten values was the largest of them (found by tests/oracle/summary_oracle.py
 * on a capture window of 30 calls: p90 27% high). */
#include "unit.h"
#include "../../analysis/hist.h"

static void test_p90_of_ten_values(void **state)
{
	struct gs_hist h;
	(void)state;
	assert_int_equal(gs_hist_init(&h, 42), 0);
	for (int i = 1; i <= 10; i++)
		gs_hist_record(&h, i * 10);   /* exact below 2^GS_HIST_SUB_BITS */
	assert_int_equal(gs_hist_quantile(&h, 0.9), 90);
	assert_int_equal(gs_hist_quantile(&h, 0.5), 50);
	assert_int_equal(gs_hist_quantile(&h, 0.99), 100);
	assert_int_equal(gs_hist_quantile(&h, 0.1), 10);
	gs_hist_free(&h);
}

/* For every count up to 1000 and the quantiles the summary prints, the rank
 * is the smallest r with r >= q * n (q as the decimal it is meant to be). */
static void test_rank_is_exact_ceiling(void **state)
{
	static const struct { double q; unsigned num, den; } qs[] = {
		{0.5, 1, 2}, {0.9, 9, 10}, {0.99, 99, 100}, {0.999, 999, 1000}};
	(void)state;
	for (unsigned n = 1; n <= 1000; n++) {
		struct gs_hist h;
		assert_int_equal(gs_hist_init(&h, 42), 0);
		for (unsigned v = 1; v <= n; v++)
			gs_hist_record(&h, v);        /* value v has rank v; exact below 2^SUB_BITS */
		for (unsigned k = 0; k < sizeof qs / sizeof qs[0]; k++) {
			unsigned want = (qs[k].num * n + qs[k].den - 1) / qs[k].den;
			int64_t got = gs_hist_quantile(&h, qs[k].q);
			if (n <= (1u << (GS_HIST_SUB_BITS)))
				assert_int_equal(got, want);
			else /* past the exact range: the bucket's high end, within 1/128 */
				assert_true(got >= (int64_t)want && got <= (int64_t)want + (int64_t)want / 128 + 1);
		}
		gs_hist_free(&h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_p90_of_ten_values),
		UT(test_rank_is_exact_ceiling),
	};
	return cmocka_run_group_tests_name("test_hist_rank", tests, NULL, NULL);
}
