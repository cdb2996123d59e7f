/* SPDX-License-Identifier: BSD-2-Clause */
/* The Prometheus text (analysis/report_prom.c). */
#include "call_fixtures.h"
#include "text_check.h"
#include "../../analysis/report_prom.h"
#include "../../analysis/nest.h"

static void test_prom_text(void **state)
{
	struct gs_stats *st = calloc(1, sizeof *st);
	struct gs_intern strings;
	struct gs_counters cnt;
	struct gs_prom_input in;
	struct mem m;
	struct gs_nest_counts nc = { .parent_time = 7, .parent_thread = 3, .undecided = 2, .early = 1, .late = 4 };
	uint32_t op_echo, op_odd;
	size_t lines = 0;

	assert_non_null(st);
	assert_int_equal(gs_stats_init(st, 16, 1024), 0);
	ut_keep(st, ut_stats_free);
	assert_int_equal(gs_intern_init(&strings, 64, 4096), 0);
	op_echo = gs_intern(&strings, "echoString", 10);
	op_odd = gs_intern(&strings, "we\"ird\\op", 9);
	for (uint32_t i = 0; i < 100; i++) {
		/* total i+3.5 us: 3.5..102.5 us, away from the bucket bounds (a value
		 * within 0.8% below a bound may count in the next bucket) */
		struct gs_call c = answered(40000, i, T0 + i * MS, US, (int64_t)(i + 1) * US + 500, US);
		c.op = i % 4 ? op_echo : op_odd;
		gs_stats_add_call(st, &strings, &c);
	}
	{
		struct gs_call o = oneway(40000, 500, T0);
		o.op = op_echo;
		gs_stats_add_call(st, &strings, &o);
	}
	memset(&cnt, 0, sizeof cnt);
	cnt.packets = 777;
	cnt.retransmits = 3;
	memset(&in, 0, sizeof in);
	in.stats = st;
	in.counters = &cnt;
	in.strings = &strings;
	in.kernel_drops = 5;
	in.open_calls = 2;
	in.last_ts = T0 + 123;
	in.nest = &nc;
	mem_open(&m);
	gs_prom_write(m.f, &in);
	mem_close(&m);
	gs_intern_free(&strings);

	/* every line follows the format */
	for (char *line = m.buf, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		*nl = '\0';
		if (!prom_line(line))
			fail_msg("not Prometheus text: %s", line);
		*nl = '\n';
		lines++;
	}
	assert_true(lines > 100);
	assert_non_null(strstr(m.buf, "# TYPE giopscope_call_duration_seconds histogram\n"));
	assert_non_null(strstr(m.buf, "operation=\"we\\\"ird\\\\op\""));
	/* counts: 75 echoString answered + 1 oneway; 25 of the other */
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_count{operation=\"echoString\"}"), 75);
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_bucket{operation=\"echoString\",le=\"+Inf\"}"), 75);
	assert_int_equal(sample_value(m.buf, "giopscope_calls_total{operation=\"echoString\"}"), 76);
	assert_int_equal(sample_value(m.buf, "giopscope_calls_oneway_total{operation=\"echoString\"}"), 1);
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_count{operation=\"we\\\"ird\\\\op\"}"), 25);
	/* echoString is i % 4 != 0: below 10 us i = 1, 2, 3, 5, 6; below 100 us i <= 96 */
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_bucket{operation=\"echoString\",le=\"0.00001\"}"), 5);
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_bucket{operation=\"echoString\",le=\"0.0001\"}"), 72);
	assert_int_equal(sample_value(m.buf, "giopscope_packets_total"), 777);
	assert_int_equal(sample_value(m.buf, "giopscope_retransmissions_total"), 3);
	assert_int_equal(sample_value(m.buf, "giopscope_dropped_packets_total{where=\"kernel\"}"), 5);
	assert_int_equal(sample_value(m.buf, "giopscope_open_calls"), 2);
	assert_int_equal(sample_value(m.buf, "giopscope_nested_calls_total{basis=\"time\"}"), 7);
	assert_int_equal(sample_value(m.buf, "giopscope_nested_calls_total{basis=\"thread\"}"), 3);
	assert_int_equal(sample_value(m.buf, "giopscope_nesting_undecided_total"), 2);
	assert_int_equal(sample_value(m.buf, "giopscope_nesting_early_total"), 1);
	assert_int_equal(sample_value(m.buf, "giopscope_nesting_late_total"), 4);
	/* buckets never decrease */
	{
		uint64_t prev = 0;
		const char *p = m.buf;
		const char *key = "giopscope_server_duration_seconds_bucket{operation=\"echoString\"";
		while ((p = strstr(p, key)) != NULL) {
			uint64_t v = strtoull(strchr(p, ' ') + 1, NULL, 10);
			assert_true(v >= prev);
			prev = v;
			p += strlen(key);
		}
		assert_int_equal(prev, 75);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_prom_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
