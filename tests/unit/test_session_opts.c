/* SPDX-License-Identifier: BSD-2-Clause */
/* --max-memory's budget as the session splits it (probe/session_opts.c): where
 * the nesting stage runs (rows, --tail, --report, --trace), the calls it holds
 * beside the engine (at most the order window's) come out of the budget, so the
 * engine's worst case and the stage's together fit it; without the stage the
 * engine gets the whole budget, as before. */
#include "unit.h"
#include "../../analysis/nest.h"
#include "../../probe/session_opts.h"

static void opts(struct gs_session_opts *o, bool ordered)
{
	memset(o, 0, sizeof *o);
	gs_config_default(&o->cfg);
	o->cfg.ordered = ordered;
}

static void test_stage_inside_budget(void **state)
{
	static const uint64_t budgets[] = { 16ull << 20, 40ull << 20, 64ull << 20, 1ull << 30, 8ull << 30 };
	static struct gs_session_opts o;
	(void)state;
	for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++) {
		uint64_t b = budgets[i];
		for (int k = 0; k < 4; k++) {
			struct gs_config plain, c;
			bool ordered = k != 1, times = k == 2;
			opts(&o, ordered);
			assert_true(gs_session_budget(&o, b, &plain));
			/* no stage: the engine's own sizing, untouched */
			assert_true(gs_config_memory_bound(&plain) <= b);
			if (k == 3)
				o.tail = 10;
			else
				o.pairs = true;
			o.syscall_times = times;
			assert_true(gs_session_budget(&o, b, &c));
			assert_true(gs_config_memory_bound(&c) + gs_nest_memory_bound(c.order_window, times, ordered) <= b);
			/* the share is the stage's: the engine gets less, the window stays its eighth */
			assert_true(c.max_open_calls < plain.max_open_calls);
			assert_true(c.order_window >= 1 && c.order_window <= plain.order_window);
			/* most of the budget is still given out */
			assert_true(gs_config_memory_bound(&c) + gs_nest_memory_bound(c.order_window, times, ordered) >=
				    b / 10 * 6);
		}
	}
}

/* An order window given on its own wins over the budget, as before. */
static void test_window_given_wins(void **state)
{
	static struct gs_session_opts o;
	struct gs_config c;
	(void)state;
	opts(&o, true);
	o.pairs = true;
	o.cfg.order_window = 5000;
	o.set_window = true;
	assert_true(gs_session_budget(&o, 64ull << 20, &c));
	assert_int_equal(c.order_window, 5000);
	assert_true(gs_session_budget(&o, 0, &c)); /* no budget: the options as given */
	assert_int_equal(c.order_window, 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_inside_budget),
		cmocka_unit_test(test_window_given_wins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
