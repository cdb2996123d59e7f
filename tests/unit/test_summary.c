/* SPDX-License-Identifier: BSD-2-Clause */
/* The summary's forms (analysis/summary.c) of the nesting split: the columns
 * appear when the calls came through the nesting stage, with the group's own
 * and downstream parts of server time and the stage's counts. */
#include "unit.h"
#include "call_fixtures.h"
#include "../../analysis/summary.h"

static char *summary(const struct gs_stats *st, const struct gs_intern *names, enum gs_summary_format fmt,
		     const struct gs_summary_info *info)
{
	struct gs_counters c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	memset(&c, 0, sizeof c);
	gs_summary_write(f, fmt, st, &c, names, info);
	assert_int_equal(fclose(f), 0);
	ut_keep(buf, free);
	return buf;
}

static void test_summary_nesting(void **state)
{
	struct gs_stats st;
	struct gs_intern names;
	struct gs_summary_info info;
	struct gs_call c = base_call(); /* server 1000 us */
	char *out;
	(void)state;
	assert_int_equal(gs_intern_init(&names, 16, 256), 0);
	assert_int_equal(gs_stats_init(&st, 4, 16), 0);
	memset(&info, 0, sizeof info);
	info.source = "test";
	c.op = gs_intern(&names, "forward", 7);
	/* without the stage: the columns of today */
	gs_stats_add_call(&st, &names, &c);
	out = summary(&st, &names, GS_SUM_CSV, &info);
	assert_null(strstr(out, "downstream"));
	gs_stats_free(&st);

	assert_int_equal(gs_stats_init(&st, 4, 16), 0);
	gs_stats_nesting(&st, true);
	c.downstream_ns = 800000;
	gs_stats_add_call(&st, &names, &c);
	info.nesting = true;
	info.parent_time = 3;
	info.parent_thread = 1;
	info.undecided = 2;
	out = summary(&st, &names, GS_SUM_CSV, &info);
	assert_non_null(strstr(out, ",gap_filled,capture_loss,nested_calls,calls_with_downstream,server_own_p50_us,"
				    "server_own_p99_us,server_own_max_us,server_own_mean_us,downstream_p50_us,"
				    "downstream_p99_us,downstream_max_us,downstream_mean_us\n"));
	assert_non_null(strstr(out, "\nforward,1,0,1,"));
	assert_non_null(strstr(out, ",0,1,200.000,200.000,200.000,200.000,800.000,800.000,800.000,800.000\n"));
	out = summary(&st, &names, GS_SUM_JSONL, &info);
	assert_non_null(strstr(out, "\"nested_calls\":0,\"calls_with_downstream\":1,\"server_own_us\":{\"p50\":200.000,"));
	assert_non_null(strstr(out, "\"downstream_us\":{\"p50\":800.000,\"p99\":800.000,\"max\":800.000,\"mean\":800.000}}\n"));
	assert_non_null(strstr(out, "{\"type\":\"nesting\",\"parent_time\":3,\"parent_thread\":1,\"undecided\":2}\n"));
	out = summary(&st, &names, GS_SUM_TEXT, &info);
	assert_non_null(strstr(out, "\nserver_us split"));
	assert_non_null(strstr(out, "\nforward                         0        1 |    200.0    200.0    200.0    200.0 |"
				    "    800.0    800.0    800.0    800.0\n"));
	assert_non_null(strstr(out, "nesting: 4 calls with a parent (3 by time, 1 by thread), 2 undecided"));
	gs_stats_free(&st);
	gs_intern_free(&names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_summary_nesting),
	};
	return cmocka_run_group_tests_name("test_summary", tests, NULL, NULL);
}
