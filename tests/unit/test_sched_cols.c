/* SPDX-License-Identifier: BSD-2-Clause */
/* The pairs columns of attach --sched and --orb (analysis/sink_pairs.c): their
 * header after attach's six, their values, empty (CSV) / null (JSON) where a
 * side is unknown, the tail reasons they give (analysis/tail.c), and the
 * summary's and --by's per-group parts (analysis/stats.c, summary.c). */
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
#include "../../analysis/stats.h"
#include "../../analysis/summary.h"
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
	assert_true(ends_with(buf, ",server_process_us,client_syscall_us,server_queued_us,server_oncpu_us,"
			      "server_runq_us,server_blocked_us,client_oncpu_us,client_runq_us,client_blocked_us,"
			      "server_queued_runq_us,t_upcall_start,t_upcall_end,orb_in_us,servant_us,orb_out_us\n"));
	f = fmemopen(buf, sizeof buf, "w");
	gs_pairs_header_times_cols(f, GS_PAIRS_CSV, GS_TIMES_COLS_ORB);
	fclose(f);
	assert_true(ends_with(buf, ",client_syscall_us,server_queued_us,t_upcall_start,t_upcall_end,orb_in_us,"
			      "servant_us,orb_out_us\n"));
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
	/* server_process 10 us = 1 + 4 + 5; client not followed: empty; the
	 * request not seen whole: no queued wait; 2 + 6 + 2 */
	assert_true(ends_with(buf, ",,1.000001000,1.000011000,,10.000,,,1.000,4.000,5.000,,,,,1.000003000,"
			      "1.000009000,2.000,6.000,2.000\n"));
	write_row(buf, sizeof buf, GS_PAIRS_JSONL, &t, &c, &tm);
	assert_non_null(strstr(buf, "\"server_oncpu_us\":1.000,\"server_runq_us\":4.000,\"server_blocked_us\":5.000,"
				    "\"client_oncpu_us\":null,\"client_runq_us\":null,\"client_blocked_us\":null,"
				    "\"server_queued_runq_us\":null,\"t_upcall_start\":\"1.000003000\",\"t_upcall_end\":\"1.000009000\",\"orb_in_us\":2.000,"
				    "\"servant_us\":6.000,\"orb_out_us\":2.000}"));
	/* no upcall seen, no split: empty, not zero */
	tm.upcall_start = tm.upcall_end = 0;
	tm.server_sched = false;
	write_row(buf, sizeof buf, GS_PAIRS_CSV, &t, &c, &tm);
	assert_true(ends_with(buf, ",10.000,,,,,,,,,,,,,,\n"));
	/* without the groups: attach's seven only */
	tm.cols = 0;
	write_row(buf, sizeof buf, GS_PAIRS_CSV, &t, &c, &tm);
	assert_true(ends_with(buf, ",,1.000001000,1.000011000,,10.000,,\n"));
	/* the request whole at the tap at 1.000000000, read at 1.000001000: it
	 * waited 1 us in the receive queue, 0.4 us of them runnable (--sched) */
	c.flags |= GS_CF_REQ_DONE;
	write_row(buf, sizeof buf, GS_PAIRS_CSV, &t, &c, &tm);
	assert_true(ends_with(buf, ",,1.000001000,1.000011000,,10.000,,1.000\n"));
	tm.cols = GS_TIMES_COLS_SCHED;
	tm.recvq_sched = true;
	tm.recvq_runq = 400;
	write_row(buf, sizeof buf, GS_PAIRS_CSV, &t, &c, &tm);
	assert_true(ends_with(buf, ",10.000,,1.000,,,,,,,0.400\n"));
	write_row(buf, sizeof buf, GS_PAIRS_JSONL, &t, &c, &tm);
	assert_non_null(strstr(buf, "\"server_queued_us\":1.000,"));
	assert_non_null(strstr(buf, "\"server_queued_runq_us\":0.400}"));
	/* a recv stamped before the tap's instant (the clocks' conversion): 0 */
	tm.server_recv = 999999990;
	write_row(buf, sizeof buf, GS_PAIRS_CSV, &t, &c, &tm);
	assert_true(ends_with(buf, ",,0.000,,,,,,,0.400\n"));
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

/* The wait in the server's receive queue (t3..t4), when it is most of the
 * server's time: the call reads `queued ... in the receive queue`, for a CPU
 * or for the ORB's threads by the reading thread's run queue (--sched), and
 * neither `server` nor the process's split (on-cpu), in the tail's rows. */
static void recvq_reasons(void **state)
{
	struct gs_intern t;
	struct gs_call c;
	struct gs_call_times tm;
	struct gs_tail tail;
	char buf[1024], out[4096];
	unsigned tags;
	FILE *f;
	(void)state;
	setup_call(&t, &c, &tm);
	/* a 13.5 ms call: 12.7 ms queued, 755 us processed, all on CPU */
	c.flags |= GS_CF_REQ_DONE;
	c.t_request_first = c.t_request_last = 1000000000;
	c.t_reply_first = c.t_reply_last = 1013500000;
	tm.server_recv = 1012700000;
	tm.server_send = 1013455000;
	tm.server_oncpu = 755000, tm.server_runq = 0, tm.server_blocked = 0;
	tm.upcall_start = tm.upcall_end = 0;
	c.recvq_ns = 12700000;
	tm.recvq_sched = true;
	tm.recvq_runq = 11000000;
	assert_true(gs_recvq_dominates(&c));
	tags = gs_call_reasons_times(&c, &tm, NULL, buf, sizeof buf);
	assert_int_equal(tags, GS_TAG_QUEUED);
	assert_string_equal(buf, "queued 12700.0 us in the receive queue (for a CPU: run queue 11000.0 us)");
	/* the reading thread was busy elsewhere: the ORB's threads */
	tm.recvq_runq = 300000;
	gs_call_reasons_times(&c, &tm, NULL, buf, sizeof buf);
	assert_string_equal(buf, "queued 12700.0 us in the receive queue (for the ORB's threads: run queue 300.0 us)");
	/* no --sched: the wait alone; a capture's reasons (no times) likewise */
	tm.recvq_sched = false;
	gs_call_reasons_times(&c, &tm, NULL, buf, sizeof buf);
	assert_string_equal(buf, "queued 12700.0 us in the receive queue");
	gs_call_reasons(&c, NULL, buf, sizeof buf);
	assert_string_equal(buf, "queued 12700.0 us in the receive queue");
	/* the tail's row: queued, not server, not on-cpu */
	tm.recvq_sched = true;
	tm.recvq_runq = 11000000;
	assert_int_equal(gs_tail_init(&tail, 4), 0);
	tail.v[0].call = c;
	tail.v[0].times = tm;
	tail.v[0].has_times = true;
	strcpy(tail.v[0].op, "slow");
	tail.n = 1;
	f = fmemopen(out, sizeof out, "w");
	assert_non_null(f);
	gs_tail_write(f, true, &tail);
	fclose(f);
	assert_non_null(strstr(out, "\"tags\":[\"queued\"],\"reasons\":\"queued 12700.0 us in the receive queue (for a CPU"));
	gs_tail_free(&tail);
	/* a wait under half the server's time changes nothing: server, on-cpu */
	c.recvq_ns = 6000000;
	assert_false(gs_recvq_dominates(&c));
	tags = gs_call_reasons_times(&c, &tm, NULL, buf, sizeof buf);
	assert_int_equal(tags, GS_TAG_SERVER);
	assert_int_equal(gs_times_reasons(&tm, buf, sizeof buf, 0), GS_TAG_ON_CPU);
	/* not known: 0 */
	c.recvq_ns = 0;
	assert_false(gs_recvq_dominates(&c));
	gs_intern_free(&t);
}

/* the summary of `st` in `fmt` into buf */
static void summary(char *buf, size_t len, enum gs_summary_format fmt, const struct gs_stats *st,
		    const struct gs_intern *t)
{
	struct gs_counters cnt;
	struct gs_summary_info info;
	FILE *f = fmemopen(buf, len, "w");
	assert_non_null(f);
	memset(&cnt, 0, sizeof cnt);
	memset(&info, 0, sizeof info);
	info.source = "attach";
	gs_summary_write(f, fmt, st, &cnt, t, &info);
	assert_false(ferror(f));
	fclose(f);
}

/* the CSV field named `col` of the row whose first field is `row` */
static void csv_field(const char *csv, const char *row, const char *col, char *out, size_t len)
{
	char head[4096], line[4096];
	const char *nl = strchr(csv, '\n'), *p;
	int want = -1, i = 0;
	assert_non_null(nl);
	memcpy(head, csv, (size_t)(nl - csv));
	head[nl - csv] = '\0';
	for (char *tok = strtok(head, ","); tok; tok = strtok(NULL, ","), i++)
		if (strcmp(tok, col) == 0)
			want = i;
	assert_true(want >= 0);
	for (p = nl + 1; *p; p = strchr(p, '\n') + 1) {
		const char *e = strchr(p, '\n');
		size_t n = (size_t)(e - p);
		memcpy(line, p, n);
		line[n] = '\0';
		if (strncmp(line, row, strlen(row)) == 0 && line[strlen(row)] == ',') {
			char *q = line;
			for (i = 0; i < want; i++)
				q = strchr(q, ',') + 1;
			n = strcspn(q, ",");
			assert_true(n < len);
			memcpy(out, q, n);
			out[n] = '\0';
			return;
		}
	}
	fail_msg("no row %s", row);
}

static void add(struct gs_stats *st, const struct gs_intern *t, const struct gs_call *c, const struct gs_call_times *tm)
{
	struct gs_call_parts p;
	memset(&p, 0, sizeof p);
	p.sched = tm->server_sched;
	p.ns[GS_PART_ONCPU] = tm->server_oncpu;
	p.ns[GS_PART_RUNQ] = tm->server_runq;
	p.ns[GS_PART_BLOCKED] = tm->server_blocked;
	if (tm->upcall_start) {
		p.orb = true;
		p.ns[GS_PART_ORB_IN] = tm->upcall_start - tm->server_recv;
		p.ns[GS_PART_SERVANT] = tm->upcall_end - tm->upcall_start;
		p.ns[GS_PART_ORB_OUT] = tm->server_send - tm->upcall_end;
	}
	gs_stats_add_call_parts(st, t, c, &p);
}

/* The summary (text, CSV, JSON) and --by carry per group the parts of
 * server_process_us: on-CPU / run queue / blocked and ORB in / servant / ORB
 * out, p50 p99 max mean, and how many calls had them; without --sched/--orb
 * nothing changes. */
static void summary_parts(void **state)
{
	struct gs_intern t;
	struct gs_call c;
	struct gs_call_times tm;
	struct gs_stats st, plain;
	static char buf[65536], buf2[65536];
	char v[64];
	(void)state;
	setup_call(&t, &c, &tm);
	assert_int_equal(gs_stats_init(&st, 16, 1024), 0);
	assert_int_equal(gs_stats_init(&plain, 16, 1024), 0);
	gs_stats_parts(&st, GS_PARTS_SCHED | GS_PARTS_ORB);
	/* "slow": 3 calls as setup_call (1/4/5 us, 2/6/2 us) */
	for (int i = 0; i < 3; i++) {
		add(&st, &t, &c, &tm);
		gs_stats_add_call(&plain, &t, &c);
	}
	/* "spin": on CPU 100 and 200 us (mean 150), its second call without an upcall */
	c.op = gs_intern(&t, "spin", 4);
	tm.server_oncpu = 100000, tm.server_runq = 0, tm.server_blocked = 0;
	tm.server_send = tm.server_recv + 100000;
	tm.upcall_start = tm.server_recv + 1000, tm.upcall_end = tm.server_send - 1000;
	add(&st, &t, &c, &tm);
	tm.server_oncpu = 200000;
	tm.upcall_start = tm.upcall_end = 0;
	add(&st, &t, &c, &tm);
	/* a call without any part: counted, not split */
	tm.server_sched = false;
	add(&st, &t, &c, &tm);

	summary(buf, sizeof buf, GS_SUM_CSV, &st, &t);
	csv_field(buf, "slow", "sched_calls", v, sizeof v);
	assert_string_equal(v, "3");
	csv_field(buf, "slow", "server_runq_p50_us", v, sizeof v);
	assert_string_equal(v, "4.000");
	csv_field(buf, "slow", "server_blocked_p99_us", v, sizeof v);
	assert_string_equal(v, "5.000");
	csv_field(buf, "slow", "servant_mean_us", v, sizeof v);
	assert_string_equal(v, "6.000");
	csv_field(buf, "slow", "orb_out_max_us", v, sizeof v);
	assert_string_equal(v, "2.000");
	csv_field(buf, "spin", "calls", v, sizeof v);
	assert_string_equal(v, "3");
	csv_field(buf, "spin", "sched_calls", v, sizeof v);
	assert_string_equal(v, "2");
	csv_field(buf, "spin", "server_oncpu_mean_us", v, sizeof v);
	assert_string_equal(v, "150.000");
	csv_field(buf, "spin", "server_oncpu_max_us", v, sizeof v);
	assert_string_equal(v, "200.000");
	csv_field(buf, "spin", "orb_calls", v, sizeof v);
	assert_string_equal(v, "1");
	csv_field(buf, "spin", "servant_p50_us", v, sizeof v);
	assert_string_equal(v, "98.000");
	csv_field(buf, "(all)", "sched_calls", v, sizeof v);
	assert_string_equal(v, "5");
	csv_field(buf, "(all)", "orb_in_mean_us", v, sizeof v);
	assert_string_equal(v, "1.750"); /* (2 + 2 + 2 + 1) / 4 */
	/* JSON: one object per part */
	summary(buf, sizeof buf, GS_SUM_JSONL, &st, &t);
	assert_non_null(strstr(buf, "\"operation\":\"spin\""));
	assert_non_null(strstr(buf, ",\"sched_calls\":2,\"server_oncpu_us\":{\"p50\":"));
	assert_non_null(strstr(buf, "\"max\":200.000,\"mean\":150.000}"));
	assert_non_null(strstr(buf, ",\"orb_calls\":3,\"orb_in_us\":{\"p50\":2.000,\"p99\":2.000,\"max\":2.000,"
				    "\"mean\":2.000}"));
	/* text: a table per kind, each group's calls and p50 p99 max */
	summary(buf, sizeof buf, GS_SUM_TEXT, &st, &t);
	assert_non_null(strstr(buf, "server_process_us split"));
	assert_non_null(strstr(buf, "\nserver_process_us: ORB            | orb-in "));
	assert_non_null(strstr(buf, "\nslow                            3 |      1.0      1.0      1.0 |"
				    "      4.0      4.0      4.0 |      5.0      5.0      5.0\n"));
	assert_non_null(strstr(buf, "\nspin                            1 |      1.0      1.0      1.0 |"
				    "     98.0     98.0     98.0 |      1.0      1.0      1.0\n"));
	/* only the kinds asked for */
	gs_stats_parts(&st, GS_PARTS_ORB);
	summary(buf, sizeof buf, GS_SUM_CSV, &st, &t);
	assert_null(strstr(buf, "sched_calls"));
	assert_non_null(strstr(buf, ",capture_loss,orb_calls,orb_in_p50_us,"));
	/* without --sched/--orb the summary is what it was, byte for byte */
	gs_stats_parts(&st, 0);
	for (int f = GS_SUM_TEXT; f <= GS_SUM_JSONL; f++) {
		summary(buf, sizeof buf, (enum gs_summary_format)f, &st, &t);
		assert_null(strstr(buf, "oncpu"));
		assert_null(strstr(buf, "orb_in"));
	}
	summary(buf, sizeof buf, GS_SUM_CSV, &plain, &t);
	summary(buf2, sizeof buf2, GS_SUM_CSV, &st, &t);
	assert_memory_equal(buf, buf2, strcspn(buf, "\n")); /* the same header */
	gs_stats_free(&st);
	gs_stats_free(&plain);
	gs_intern_free(&t);
}

/* --by conn: the parts go to the group the call is counted in */
static void summary_parts_by(void **state)
{
	struct gs_intern t;
	struct gs_call c;
	struct gs_call_times tm;
	struct gs_stats st;
	static char buf[65536];
	char v[64];
	(void)state;
	setup_call(&t, &c, &tm);
	c.client.family = c.server.family = 4;
	c.client.addr[0] = 10, c.client.addr[3] = 1, c.client.port = 40000;
	c.server.addr[0] = 10, c.server.addr[3] = 2, c.server.port = 2809;
	assert_int_equal(gs_stats_init(&st, 16, 1024), 0);
	assert_int_equal(gs_stats_group_by(&st, GS_BY_SERVER), 0);
	gs_stats_parts(&st, GS_PARTS_SCHED);
	add(&st, &t, &c, &tm);
	c.server.port = 2810;
	tm.server_runq = 8000, tm.server_blocked = 1000;
	add(&st, &t, &c, &tm);
	summary(buf, sizeof buf, GS_SUM_CSV, &st, &t);
	csv_field(buf, "10.0.0.2:2809", "server_runq_p50_us", v, sizeof v);
	assert_string_equal(v, "4.000");
	csv_field(buf, "10.0.0.2:2810", "server_runq_p50_us", v, sizeof v);
	assert_string_equal(v, "8.000");
	csv_field(buf, "(all)", "server_runq_mean_us", v, sizeof v);
	assert_string_equal(v, "6.000");
	assert_null(strstr(buf, "orb_calls"));
	gs_stats_free(&st);
	gs_intern_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header),
		cmocka_unit_test(rows),
		cmocka_unit_test(reasons),
		cmocka_unit_test(recvq_reasons),
		cmocka_unit_test(summary_parts),
		cmocka_unit_test(summary_parts_by),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
