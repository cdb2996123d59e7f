/* analysis/thread_log.c: the per-call split of attach --sched (on CPU, run
 * queue, blocked) from the threads' scheduler state changes, the hand-off
 * along a wake-up edge, and the ORB upcall span of attach --orb. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../analysis/thread_log.h"

#define US 1000LL

static void split_one_thread(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	/* t4 = 100 us (recv returns, on CPU); blocks at 110 (sleep), woken at
	 * 3110, runs at 3150, preempted at 3200, back at 3300, t5 = 3320 */
	gs_tlog_switch(&l, 50 * US, 0, 7, false);
	gs_tlog_switch(&l, 110 * US, 7, 0, false);
	gs_tlog_wakeup(&l, 3110 * US, 7, 99);
	gs_tlog_switch(&l, 3150 * US, 0, 7, false);
	gs_tlog_switch(&l, 3200 * US, 7, 0, true);
	gs_tlog_switch(&l, 3300 * US, 0, 7, false);
	assert_true(gs_tlog_split(&l, 7, 100 * US, NULL, 7, 3320 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, (10 + 50 + 20) * US);
	assert_int_equal(sp.runq, (40 + 100) * US);
	assert_int_equal(sp.blocked, 3000 * US);
	assert_int_equal(sp.oncpu + sp.runq + sp.blocked, 3220 * US);
	/* the same from snapshots taken when the syscalls came */
	int64_t a[3], b[3];
	assert_true(gs_tlog_cum(&l, 7, 100 * US, a));
	assert_true(gs_tlog_cum(&l, 7, 3320 * US, b));
	assert_true(gs_tlog_split(&l, 7, 100 * US, a, 7, 3320 * US, b, &sp));
	assert_int_equal(sp.blocked, 3000 * US);
	assert_int_equal(sp.runq, 140 * US);
	/* a wake-up of a thread on CPU changes nothing */
	gs_tlog_wakeup(&l, 3330 * US, 7, 99);
	assert_true(gs_tlog_split(&l, 7, 3310 * US, NULL, 7, 3340 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, 30 * US);
	/* a thread never seen to change state stayed on CPU */
	assert_true(gs_tlog_split(&l, 8, 10 * US, NULL, 8, 30 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, 20 * US);
	gs_tlog_free(&l);
}

static void split_handoff(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	/* reader 5 (on CPU since 0) wakes worker 6 (blocked since 0) at 20 us,
	 * 6 runs at 30, blocks at 40, woken at 90 by someone else, runs 95..t5 = 100 */
	gs_tlog_switch(&l, 0, 6, 5, false);
	gs_tlog_wakeup(&l, 20 * US, 6, 5);
	gs_tlog_switch(&l, 25 * US, 5, 0, false);
	gs_tlog_switch(&l, 30 * US, 0, 6, false);
	gs_tlog_switch(&l, 40 * US, 6, 0, false);
	gs_tlog_wakeup(&l, 90 * US, 6, 3);
	gs_tlog_switch(&l, 95 * US, 0, 6, false);
	assert_true(gs_tlog_split(&l, 5, 10 * US, NULL, 6, 100 * US, NULL, &sp));
	assert_int_equal(sp.handoff_tid, 6);
	assert_int_equal(sp.handoff_ts, 20 * US);
	/* 5: 10..20 on CPU; 6: 20..30 run queue, 30..40 on CPU, 40..90 blocked,
	 * 90..95 run queue, 95..100 on CPU */
	assert_int_equal(sp.oncpu, (10 + 10 + 5) * US);
	assert_int_equal(sp.runq, (10 + 5) * US);
	assert_int_equal(sp.blocked, 50 * US);
	/* no wake-up links 6 to 9: not split */
	gs_tlog_switch(&l, 96 * US, 0, 9, false);
	assert_false(gs_tlog_split(&l, 9, 97 * US, NULL, 6, 100 * US, NULL, &sp));
	gs_tlog_free(&l);
}

static void split_history_short(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	for (int64_t i = 0; i < GS_TLOG_STATES + 10; i++)
		gs_tlog_switch(&l, (i + 1) * US, (i & 1) ? 4 : 0, (i & 1) ? 0 : 4, true);
	/* the first changes were pushed out: an interval reaching back there is not split */
	assert_false(gs_tlog_split(&l, 4, 2 * US, NULL, 4, (GS_TLOG_STATES + 5) * US, NULL, &sp));
	/* a recent one is */
	assert_true(gs_tlog_split(&l, 4, (GS_TLOG_STATES + 1) * US, NULL, 4, (GS_TLOG_STATES + 5) * US, NULL, &sp));
	assert_int_equal(sp.oncpu + sp.runq + sp.blocked, 4 * US);
	assert_int_equal(sp.blocked, 0);
	gs_tlog_free(&l);
}

static void upcall_span(void **state)
{
	struct gs_tlog l;
	int64_t s, e;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	gs_tlog_upcall(&l, 5 * US, 3, GS_TEDGE_START);   /* an earlier call's */
	gs_tlog_upcall(&l, 8 * US, 3, GS_TEDGE_END);
	gs_tlog_upcall(&l, 12 * US, 3, GS_TEDGE_START);
	gs_tlog_upcall(&l, 40 * US, 3, GS_TEDGE_END);
	gs_tlog_upcall(&l, 41 * US, 4, GS_TEDGE_END);    /* another thread */
	assert_true(gs_tlog_upcall_span(&l, 3, 10 * US, 45 * US, &s, &e));
	assert_int_equal(s, 12 * US);
	assert_int_equal(e, 40 * US);
	/* the end edge outside the interval: no span */
	assert_false(gs_tlog_upcall_span(&l, 3, 10 * US, 39 * US, &s, &e));
	assert_false(gs_tlog_upcall_span(&l, 4, 0, 100 * US, &s, &e));
	gs_tlog_free(&l);
}

static void held_until_their_time(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	int64_t s, e;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	/* pushed out of order (two CPUs' records), applied in time order */
	gs_tlog_push_switch(&l, 10 * US, 0, 7, false);
	gs_tlog_push_switch(&l, 30 * US, 7, 0, false);  /* blocks at 30 */
	gs_tlog_push_upcall(&l, 25 * US, 7, GS_TEDGE_END);
	gs_tlog_push_upcall(&l, 15 * US, 7, GS_TEDGE_START);
	gs_tlog_push_wakeup(&l, 50 * US, 7, 1);
	gs_tlog_push_switch(&l, 60 * US, 0, 7, false);
	/* nothing applied yet: the upcall is not there */
	assert_false(gs_tlog_upcall_span(&l, 7, 0, 100 * US, &s, &e));
	gs_tlog_advance(&l, 26 * US);
	assert_true(gs_tlog_upcall_span(&l, 7, 0, 100 * US, &s, &e));
	assert_int_equal(s, 15 * US);
	assert_int_equal(e, 25 * US);
	/* the state at 26 is known, what comes after is not applied yet */
	assert_int_equal(l.n_pend, 3);
	gs_tlog_advance(&l, 100 * US);
	assert_int_equal(l.n_pend, 0);
	assert_true(gs_tlog_split(&l, 7, 20 * US, NULL, 7, 70 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, (10 + 10) * US);
	assert_int_equal(sp.blocked, 20 * US);
	assert_int_equal(sp.runq, 10 * US);
	gs_tlog_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_one_thread),
		cmocka_unit_test(split_handoff),
		cmocka_unit_test(split_history_short),
		cmocka_unit_test(upcall_span),
		cmocka_unit_test(held_until_their_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
