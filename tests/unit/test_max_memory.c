/* --max-memory SIZE: gs_config_for_memory() sizes every bound of the engine
 * (connections with their head pool, message logs and retransmitted-range
 * lists, open calls with their side records, the order window, held
 * out-of-order bytes, strings) so that the tables' worst case,
 * gs_config_memory_bound(), fits the budget; and the budget is used, not
 * left idle. An engine so sized hits its open-call bound at the count it was
 * given and says so (open_calls_evicted). */
#include <errno.h>

#include "unit.h"
#include "../../analysis/engine_impl.h"

static void test_sizes_fit_and_grow(void **state)
{
	static const uint64_t budgets[] = { 16ull << 20, 40ull << 20, 64ull << 20, 160ull << 20,
					    1ull << 30, 8ull << 30 };
	struct gs_config prev;
	(void)state;
	for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++) {
		struct gs_config c;
		uint64_t b = budgets[i], used;
		gs_config_default(&c);
		assert_int_equal(gs_config_for_memory(&c, b), 0);
		used = gs_config_memory_bound(&c);
		assert_true(used <= b);
		/* most of it is given out (the power-of-two index sizes cost the rest) */
		assert_true(used >= b / 10 * 7);
		assert_true(c.order_window >= 1 && c.order_window <= c.max_open_calls);
		assert_true(c.max_ooo_bytes <= c.max_ooo_total);
		assert_true(c.max_flows >= 2 && c.max_open_calls >= 2);
		if (i > 0) {
			assert_true(c.max_flows >= prev.max_flows);
			assert_true(c.max_open_calls > prev.max_open_calls);
			assert_true(c.max_ooo_total > prev.max_ooo_total);
			assert_true(c.max_strings >= prev.max_strings);
		}
		if (b <= (160ull << 20)) {
			/* the sized configuration is one the engine takes */
			struct gs_engine *e = NULL;
			assert_int_equal(gs_engine_new(&e, &c, NULL, NULL), 0);
			gs_engine_free(e);
		}
		prev = c;
	}
	/* the default configuration's worst case, for scale: over 512 MiB (the
	 * tables are made resident only as they are used) */
	gs_config_default(&prev);
	assert_true(gs_config_memory_bound(&prev) > (512ull << 20));
}

static void test_too_small_refused(void **state)
{
	struct gs_config c;
	(void)state;
	gs_config_default(&c);
	assert_int_equal(gs_config_for_memory(&c, GS_MIN_MEMORY - 1), EINVAL);
	assert_int_equal(gs_config_for_memory(&c, 0), EINVAL);
	assert_int_equal(gs_config_for_memory(&c, GS_MIN_MEMORY), 0);
}

/* Requests never answered on one connection, more than the sized bound:
 * the oldest give way, exactly as many as went past it, and are counted. */
static void test_open_call_bound_hit_and_counted(void **state)
{
	struct gs_config c;
	struct sink s;
	struct ub w;
	struct conn cn;
	struct gs_engine *e;
	uint32_t n, extra = 25;
	(void)state;
	gs_config_default(&c);
	assert_int_equal(gs_config_for_memory(&c, GS_MIN_MEMORY), 0);
	n = c.max_open_calls;
	assert_true(n > 1000 && n < 100000);
	e = engine_new(&c, &s);
	ub_init(&w, false);
	conn_init(&cn, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &cn, T0);
	for (uint32_t i = 0; i < n + extra; i++) {
		size_t l;
		ub_reset(&w);
		l = ub_request(&w, 2, false, i + 1, "op", 0);
		conn_send(e, &cn, 0, T0 + MS + (int64_t)i * US, w.b, l);
	}
	assert_int_equal(gs_engine_open_calls(e), n);
	assert_int_equal(gs_engine_counters(e)->open_calls_evicted, extra);
	gs_engine_finish(e);
	assert_int_equal(s.n, n + extra);
	assert_int_equal(gs_engine_counters(e)->no_reply, n + extra);
	engine_free(e);
	conn_free(&cn);
	sink_free(&s);
	ub_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_sizes_fit_and_grow),
		UT(test_too_small_refused),
		UT(test_open_call_bound_hit_and_counted),
	};
	return cmocka_run_group_tests_name("test_max_memory", tests, NULL, NULL);
}
