/* The pairs columns of attach --sched and --orb (analysis/sink_pairs.c): their
 * header after attach's six, their values, empty (CSV) / null (JSON) where a
 * side is unknown, and the tail reasons they give (analysis/tail.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../analysis/intern.h"
#include "../../analysis/sink_pairs.h"
#include "../../analysis/tail.h"

static size_t write_row(char *buf, size_t len, enum gs_pairs_format fmt, const struct gs_intern *t,
			const struct gs_call *c, const struct gs_call_times *times)
{
	FILE *f = fmemopen(buf, len, "w");
	long n;
	assert_non_null(f);
	gs_pairs_write_times(f, fmt, t, c, NULL, times);
	fflush(f);
	n = ftell(f);
	fclose(f);
	buf[n] = '\0';
	return (size_t)n;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

static void setup_call(struct gs_intern *t, struct gs_call *c, struct gs_call_times *tm)
{
	assert_int_equal(gs_intern_init(t, 16, 1024), 0);
	memset(c, 0, sizeof *c);
	c->op = gs_intern(t, "slow", 4);
	c->kind = GS_KIND_REQUEST;
	c->major = 1, c->minor = 2;
	c->outcome = GS_OUT_REPLY;
	c->flags = GS_CF_REP_SEEN | GS_CF_STATUS_KNOWN;
	c->t_request_first = c->t_request_last = 1000000000;
	c->t_reply_first = c->t_reply_last = 1000020000;
	memset(tm, 0, sizeof *tm);
	tm->server_recv = 1000001000;
	tm->server_send = 1000011000;
	tm->cols = GS_TIMES_COLS_SCHED | GS_TIMES_COLS_ORB;
	tm->server_sched = true;
	tm->server_oncpu = 1000;
	tm->server_runq = 4000;
	tm->server_blocked = 5000;
	tm->upcall_start = 1000003000;
	tm->upcall_end = 1000009000;
}

static void header(void **state)
{
	char buf[4096];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	(void)state;
	gs_pairs_header_times_cols(f, GS_PAIRS_CSV, GS_TIMES_COLS_SCHED | GS_TIMES_COLS_ORB);
	fclose(f);
	assert_true(ends_with(buf, ",server_process_us,client_syscall_us,server_oncpu_us,server_runq_us,"
			      "server_blocked_us,client_oncpu_us,client_runq_us,client_blocked_us,t_upcall_start,"
			      "t_upcall_end,orb_in_us,servant_us,orb_out_us\n"));
	f = fmemopen(buf, sizeof buf, "w");
	gs_pairs_header_times_cols(f, GS_PAIRS_CSV, GS_TIMES_COLS_ORB);
	fclose(f);
	assert_true(ends_with(buf, ",client_syscall_us,t_upcall_start,t_upcall_end,orb_in_us,servant_us,orb_out_us\n"));
}

static void rows(void **state)
{
	struct gs_intern t;
	struct gs_call c;
	struct gs_call_times tm;
	char buf[8192];
	(void)state;
	setup_call(&t, &c, &tm);
	write_row(buf, sizeof buf, GS_PAIRS_CSV, &t, &c, &tm);
	/* server_process 10 us = 1 + 4 + 5; client not followed: empty; 2 + 6 + 2 */
	assert_true(ends_with(buf, ",,1.000001000,1.000011000,,10.000,,1.000,4.000,5.000,,,,1.000003000,"
			      "1.000009000,2.000,6.000,2.000\n"));
	write_row(buf, sizeof buf, GS_PAIRS_JSONL, &t, &c, &tm);
	assert_non_null(strstr(buf, "\"server_oncpu_us\":1.000,\"server_runq_us\":4.000,\"server_blocked_us\":5.000,"
				    "\"client_oncpu_us\":null,\"client_runq_us\":null,\"client_blocked_us\":null,"
				    "\"t_upcall_start\":\"1.000003000\",\"t_upcall_end\":\"1.000009000\",\"orb_in_us\":2.000,"
				    "\"servant_us\":6.000,\"orb_out_us\":2.000}"));
	/* no upcall seen, no split: empty, not zero */
	tm.upcall_start = tm.upcall_end = 0;
	tm.server_sched = false;
	write_row(buf, sizeof buf, GS_PAIRS_CSV, &t, &c, &tm);
	assert_true(ends_with(buf, ",10.000,,,,,,,,,,,,\n"));
	/* without the groups: attach's six only */
	tm.cols = 0;
	write_row(buf, sizeof buf, GS_PAIRS_CSV, &t, &c, &tm);
	assert_true(ends_with(buf, ",,1.000001000,1.000011000,,10.000,\n"));
	gs_intern_free(&t);
}

static void reasons(void **state)
{
	struct gs_intern t;
	struct gs_call c;
	struct gs_call_times tm;
	char buf[1024] = "";
	unsigned tags;
	(void)state;
	setup_call(&t, &c, &tm);
	/* runq 4 and blocked 5 of 10 us: both a third or more; on-cpu 1 is not; ORB 4 of 10 */
	tags = gs_times_reasons(&tm, buf, sizeof buf, 0);
	assert_int_equal(tags, GS_TAG_CPU_STARVED | GS_TAG_BLOCKED | GS_TAG_ORB);
	assert_non_null(strstr(buf, "cpu-starved: 4.0 us runnable in the run queue (40%"));
	assert_non_null(strstr(buf, "blocked: 5.0 us off CPU (50%)"));
	assert_null(strstr(buf, "on-cpu"));
	assert_non_null(strstr(buf, "orb: 4.0 us in the ORB (in 2.0, out 2.0; servant 6.0 us)"));
	/* a mostly computing servant */
	tm.server_oncpu = 9000, tm.server_runq = 500, tm.server_blocked = 500;
	tm.upcall_start = 1000001500, tm.upcall_end = 1000010500;
	buf[0] = '\0';
	assert_int_equal(gs_times_reasons(&tm, buf, sizeof buf, 0), GS_TAG_ON_CPU);
	gs_intern_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header),
		cmocka_unit_test(rows),
		cmocka_unit_test(reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
