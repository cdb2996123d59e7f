/* SPDX-License-Identifier: BSD-2-Clause */
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

/* A switch record without the kernel's counts: gs_tlog_switch with them unknown. */
static void switch_plain(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable)
{
	gs_tlog_switch(l, ts, prev, next, prev_runnable, -1, -1, GS_TLOG_NO_KCPU, GS_TLOG_NO_KCPU);
}

#define US 1000LL

static void split_one_thread(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	/* t4 = 100 us (recv returns, on CPU); blocks at 110 (sleep), woken at
	 * 3110, runs at 3150, preempted at 3200, back at 3300, t5 = 3320 */
	switch_plain(&l, 50 * US, 0, 7, false);
	switch_plain(&l, 110 * US, 7, 0, false);
	gs_tlog_wakeup(&l, 3110 * US, 7, 99);
	switch_plain(&l, 3150 * US, 0, 7, false);
	switch_plain(&l, 3200 * US, 7, 0, true);
	switch_plain(&l, 3300 * US, 0, 7, false);
	assert_true(gs_tlog_split(&l, 7, 100 * US, NULL, 7, 3320 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, (10 + 50 + 20) * US);
	assert_int_equal(sp.runq, (40 + 100) * US);
	assert_int_equal(sp.blocked, 3000 * US);
	assert_int_equal(sp.oncpu + sp.runq + sp.blocked, 3220 * US);
	/* the same from snapshots taken when the syscalls came */
	int64_t a[GS_TLOG_CUM], b[GS_TLOG_CUM];
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
	switch_plain(&l, 0, 6, 5, false);
	gs_tlog_wakeup(&l, 20 * US, 6, 5);
	switch_plain(&l, 25 * US, 5, 0, false);
	switch_plain(&l, 30 * US, 0, 6, false);
	switch_plain(&l, 40 * US, 6, 0, false);
	gs_tlog_wakeup(&l, 90 * US, 6, 3);
	switch_plain(&l, 95 * US, 0, 6, false);
	assert_true(gs_tlog_split(&l, 5, 10 * US, NULL, 6, 100 * US, NULL, &sp));
	assert_int_equal(sp.handoff_tid, 6);
	assert_int_equal(sp.handoff_ts, 20 * US);
	/* 5: 10..20 on CPU; 6: 20..30 run queue, 30..40 on CPU, 40..90 blocked,
	 * 90..95 run queue, 95..100 on CPU */
	assert_int_equal(sp.oncpu, (10 + 10 + 5) * US);
	assert_int_equal(sp.runq, (10 + 5) * US);
	assert_int_equal(sp.blocked, 50 * US);
	/* no wake-up links 6 to 9: not split */
	switch_plain(&l, 96 * US, 0, 9, false);
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
		switch_plain(&l, (i + 1) * US, (i & 1) ? 4 : 0, (i & 1) ? 0 : 4, true);
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

/* attach's parent by thread asks whether an upcall ran on the sending
 * thread at its send */
static void upcall_running_at(void **state)
{
	struct gs_tlog l;
	int64_t s = 0;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	assert_int_equal(gs_tlog_upcall_at(&l, 3, 10 * US, &s), -1); /* nothing of the thread */
	gs_tlog_upcall(&l, 5 * US, 3, GS_TEDGE_START);
	gs_tlog_upcall(&l, 8 * US, 3, GS_TEDGE_END);
	gs_tlog_upcall(&l, 12 * US, 3, GS_TEDGE_START);
	assert_int_equal(gs_tlog_upcall_at(&l, 3, 4 * US, &s), 0);
	assert_int_equal(gs_tlog_upcall_at(&l, 3, 6 * US, &s), 1);
	assert_int_equal(s, 5 * US);
	assert_int_equal(gs_tlog_upcall_at(&l, 3, 10 * US, &s), 0);
	assert_int_equal(gs_tlog_upcall_at(&l, 3, 20 * US, &s), 1);
	assert_int_equal(s, 12 * US);
	/* an instant past what the rings were read to is not known */
	gs_tlog_set_complete(&l, 15 * US);
	assert_int_equal(gs_tlog_upcall_at(&l, 3, 20 * US, &s), -1);
	/* edges pushed out of the thread's ring: before them, not known */
	for (int i = 0; i < GS_TLOG_UPCALLS; i++)
		gs_tlog_upcall(&l, (100 + i) * US, 4, i % 2 ? GS_TEDGE_END : GS_TEDGE_START);
	gs_tlog_set_complete(&l, 1000 * US);
	assert_int_equal(gs_tlog_upcall_at(&l, 4, 50 * US, &s), 0);
	gs_tlog_upcall(&l, 200 * US, 4, GS_TEDGE_START);
	assert_int_equal(gs_tlog_upcall_at(&l, 4, 50 * US, &s), -1);
	gs_tlog_free(&l);
}

/* the wait of a request in the receive queue, split by the reading thread's
 * states: run queue (waiting for a CPU) vs on CPU or blocked elsewhere */
static void states_in_wait(void **state)
{
	struct gs_tlog l;
	int64_t st[3];
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	/* on CPU from 10, blocked at 20, woken at 30 (runnable), runs at 90 */
	switch_plain(&l, 10 * US, 0, 7, false);
	switch_plain(&l, 20 * US, 7, 0, false);
	gs_tlog_wakeup(&l, 30 * US, 7, 99);
	switch_plain(&l, 90 * US, 0, 7, false);
	/* the request arrived at 25, read at 95 */
	assert_true(gs_tlog_states_in(&l, 7, 25 * US, 95 * US, st));
	assert_int_equal(st[0], 5 * US);
	assert_int_equal(st[1], 60 * US);
	assert_int_equal(st[2], 5 * US);
	/* before the thread's first change: not known */
	assert_false(gs_tlog_states_in(&l, 7, 5 * US, 95 * US, st));
	assert_false(gs_tlog_states_in(&l, 8, 25 * US, 95 * US, st));
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

/* The bug seen under load (a spin call: server_oncpu_us 2021 while the servant
 * had used 3000 us of CPU, runq 1377): the servant thread 7 was preempted at
 * 2000 us, switched back in at 2400 on another CPU, sent the reply at 3400.
 * The switch-in's record was written, but behind a record another CPU had
 * reserved and not written yet (a vCPU the hypervisor held): the reader stops
 * there, so when t5's syscall record came the log still had 7 in the run
 * queue since 2000, and its totals taken then gave 2000 us on CPU and 1400 us
 * of run queue.  The log now knows how far it is complete: the totals are not
 * taken before the ring was read up to the instant. */
static void held_up_record(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	int64_t a[GS_TLOG_CUM], b[GS_TLOG_CUM];
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	/* what the drain before t4 gave: 7 on CPU since 0, read to its end at 50 */
	gs_tlog_push_switch(&l, 0, 0, 7, false);
	gs_tlog_set_complete(&l, 50 * US);
	gs_tlog_advance(&l, 0);
	/* t4 = 0 us: known, its totals taken then */
	assert_true(gs_tlog_cum(&l, 7, 0, a));
	/* the drain at t5 (3400 us): the preemption is there, the switch-in at
	 * 2400 is held behind another CPU's unwritten record: the ring was not
	 * read to its end, the log is complete up to 1900 us only */
	gs_tlog_push_switch(&l, 2000 * US, 7, 0, true);
	gs_tlog_set_complete(&l, 1900 * US);
	gs_tlog_advance(&l, 3400 * US);
	/* the log does not run past what it knows is complete: the preemption
	 * waits, so the switch-in held up behind it is applied after it */
	assert_int_equal(l.n_pend, 1);
	/* t5's totals are not taken now, nor is the call split */
	assert_false(gs_tlog_known(&l, 3400 * US));
	assert_false(gs_tlog_cum(&l, 7, 3400 * US, b));
	assert_false(gs_tlog_split(&l, 7, 0, a, 7, 3400 * US, NULL, &sp));
	/* the held record written, the ring read to its end at 3500 us */
	gs_tlog_push_switch(&l, 2400 * US, 0, 7, false);
	gs_tlog_set_complete(&l, 3500 * US);
	gs_tlog_advance(&l, 3400 * US);
	assert_int_equal(l.n_pend, 0);
	assert_int_equal(l.late, 0);
	assert_true(gs_tlog_known(&l, 3400 * US));
	assert_true(gs_tlog_cum(&l, 7, 3400 * US, b));
	assert_true(gs_tlog_split(&l, 7, 0, a, 7, 3400 * US, b, &sp));
	assert_int_equal(sp.oncpu, 3000 * US);
	assert_int_equal(sp.runq, 400 * US);
	assert_int_equal(sp.blocked, 0);
	/* a mark never goes back */
	gs_tlog_set_complete(&l, 10 * US);
	assert_true(gs_tlog_known(&l, 3500 * US));
	gs_tlog_free(&l);
}

/* Losses are kept as windows: a call touched by an early loss stays marked
 * whatever is lost later (the kernel side keeps only the last loss's time). */
static void loss_windows(void **state)
{
	struct gs_tlog l;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	assert_false(gs_tlog_lost_in(&l, 100 * US, 400 * US));
	gs_tlog_loss(&l, 200 * US, 300 * US);
	gs_tlog_loss(&l, 5000 * US, 5100 * US);
	assert_true(gs_tlog_lost_in(&l, 100 * US, 400 * US));
	assert_true(gs_tlog_lost_in(&l, 250 * US, 260 * US));
	assert_true(gs_tlog_lost_in(&l, 4000 * US, 5000 * US));
	assert_false(gs_tlog_lost_in(&l, 301 * US, 4999 * US));
	/* windows pushed out: an interval reaching back before the oldest kept is unknown */
	for (int i = 0; i < GS_TLOG_LOSSES; i++)
		gs_tlog_loss(&l, (10000 + i * 10) * US, (10000 + i * 10 + 1) * US);
	assert_true(gs_tlog_lost_in(&l, 1000 * US, 1100 * US));
	assert_false(gs_tlog_lost_in(&l, 10002 * US, 10009 * US));
	gs_tlog_free(&l);
}

/* A call handed from the reading thread 5 to a dispatcher 8 and by it to the
 * worker 6 that replies: followed along both wake-ups. */
static void split_chain(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	switch_plain(&l, 0, 6, 5, false);   /* 6 blocked, 5 on CPU */
	switch_plain(&l, 1 * US, 8, 0, false); /* 8 blocked */
	gs_tlog_wakeup(&l, 15 * US, 9, 5);    /* 5 wakes an unrelated thread */
	gs_tlog_wakeup(&l, 20 * US, 8, 5);    /* 5 hands the call to 8 */
	switch_plain(&l, 25 * US, 5, 8, false);
	gs_tlog_wakeup(&l, 35 * US, 6, 8);    /* 8 hands it to 6 */
	switch_plain(&l, 40 * US, 8, 0, false);
	switch_plain(&l, 50 * US, 0, 6, false);
	/* t4 = 10 (5), t5 = 70 (6): 5 10..20 on CPU; 8 20..25 run queue,
	 * 25..35 on CPU; 6 35..50 run queue, 50..70 on CPU */
	assert_true(gs_tlog_split(&l, 5, 10 * US, NULL, 6, 70 * US, NULL, &sp));
	assert_int_equal(sp.hops, 2);
	assert_int_equal(sp.handoff_tid, 6);
	assert_int_equal(sp.handoff_ts, 35 * US);
	assert_int_equal(sp.oncpu, (10 + 10 + 20) * US);
	assert_int_equal(sp.runq, (5 + 15) * US);
	assert_int_equal(sp.blocked, 0);
	/* a wake-up before the interval links nothing */
	assert_false(gs_tlog_split(&l, 5, 21 * US, NULL, 6, 70 * US, NULL, &sp));
	gs_tlog_free(&l);
}

/* A switch-in the kernel counted without a record (sched_info.pcount moved by
 * two between two switch-in records): the thread ran while its log has it in
 * the run queue, so the time between is a loss and the call is not split
 * (seen under load: 2 of 56 switches-in of a spinning servant had no record,
 * on-CPU 690 us for a 3000 us spin, with no ring loss). */
static void missed_switch(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	gs_tlog_push_switch_pc(&l, 0, 3, 7, false, 4, -1);          /* on CPU: its 5th run */
	gs_tlog_push_switch_pc(&l, 1000 * US, 7, 3, true, -1, 5);   /* preempted: 5 runs */
	/* its 6th switch-in (1500) and the switch-out after it (2500): no record */
	gs_tlog_push_switch_pc(&l, 3000 * US, 3, 7, false, 6, -1);  /* the 7th */
	gs_tlog_set_complete(&l, 4000 * US);
	gs_tlog_advance(&l, 4000 * US);
	assert_int_equal(l.missed, 1);
	/* the log alone would say 1300 us on CPU, 2000 in the run queue */
	assert_true(gs_tlog_split(&l, 7, 100 * US, NULL, 7, 3400 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, 1300 * US);
	/* but the stretch since the last counted record is a loss: not split */
	assert_true(gs_tlog_lost_in(&l, 100 * US, 3400 * US));
	assert_false(gs_tlog_lost_in(&l, 0, 900 * US));
	/* a run missed after t5 = 3400 is not known until a record of the thread
	 * after t5 carries the count: the call waits for it */
	assert_false(gs_tlog_counted(&l, 7, 3400 * US));
	gs_tlog_push_switch_pc(&l, 4500 * US, 7, 3, true, -1, 8);   /* 8 runs: the 8th had no record */
	gs_tlog_set_complete(&l, 5000 * US);
	gs_tlog_advance(&l, 5000 * US);
	assert_true(gs_tlog_counted(&l, 7, 3400 * US));
	assert_int_equal(l.missed, 2);
	assert_true(gs_tlog_lost_in(&l, 3100 * US, 3400 * US));
	/* consecutive counts are no loss */
	gs_tlog_push_switch_pc(&l, 5000 * US, 3, 7, false, 8, -1);
	gs_tlog_push_switch_pc(&l, 5500 * US, 7, 3, false, -1, 9);
	gs_tlog_set_complete(&l, 6000 * US);
	gs_tlog_advance(&l, 6000 * US);
	assert_int_equal(l.missed, 2);
	assert_false(gs_tlog_lost_in(&l, 5100 * US, 5400 * US));
	/* a thread whose records carry no count is never waited for; a new
	 * thread's first switch-in carries 0, a count like any other */
	assert_true(gs_tlog_counted(&l, 99, 0));
	gs_tlog_push_switch_pc(&l, 6000 * US, 3, 12, false, 0, -1);
	gs_tlog_push_switch_pc(&l, 6100 * US, 12, 3, true, -1, 2);  /* its 2nd run had no record */
	gs_tlog_set_complete(&l, 7000 * US);
	gs_tlog_advance(&l, 7000 * US);
	assert_int_equal(l.missed, 3);
	gs_tlog_free(&l);
}

/* on-CPU time as the kernel charged it (sum_exec_runtime at each switch):
 * it charges a woken thread from its wake-up, time the instants count as run
 * queue; whole runs from the kernel's counts, partial runs back from their
 * switch-out; the difference taken from the run queue, then blocked */
static void split_kernel_cpu(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	int64_t a[GS_TLOG_CUM], b[GS_TLOG_CUM];
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	/* as split_one_thread; the kernel's count 1000 us at 50, 1060 when it
	 * blocks at 110; woken at 3110 and charged from there: 1150 when
	 * preempted at 3200; back at 3300, t5 = 3320, switched out at 3400 */
	gs_tlog_switch(&l, 50 * US, 0, 7, false, -1, -1, 1000 * US, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 110 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 1060 * US);
	gs_tlog_wakeup(&l, 3110 * US, 7, 99);
	gs_tlog_switch(&l, 3150 * US, 0, 7, false, -1, -1, 1060 * US, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 3200 * US, 7, 0, true, -1, -1, GS_TLOG_NO_KCPU, 1150 * US);
	gs_tlog_switch(&l, 3300 * US, 0, 7, false, -1, -1, 1150 * US, GS_TLOG_NO_KCPU);
	/* the run at t5 goes on: forward from its start, 1150 + 20 */
	assert_true(gs_tlog_cum(&l, 7, 3320 * US, b));
	assert_int_equal(b[GS_TLOG_KCPU], 1170 * US);
	/* t4 = 100: back from the run's end (1060 - 10) */
	assert_true(gs_tlog_cum(&l, 7, 100 * US, a));
	assert_int_equal(a[GS_TLOG_KCPU], 1050 * US);
	assert_true(gs_tlog_split(&l, 7, 100 * US, NULL, 7, 3320 * US, NULL, &sp));
	assert_true(sp.kernel);
	assert_int_equal(sp.oncpu_inst, 80 * US);
	assert_int_equal(sp.oncpu, 120 * US);
	assert_int_equal(sp.runq, (140 - 40) * US);
	assert_int_equal(sp.blocked, 3000 * US);
	/* the run at t5 ends at 3400 with 1245 charged (5 us less than the
	 * instants: a tail after the kernel's last clock update): forward
	 * (1170) is later than back (1165) */
	gs_tlog_switch(&l, 3400 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 1245 * US);
	assert_true(gs_tlog_split(&l, 7, 100 * US, NULL, 7, 3320 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, (1170 - 1050) * US);
	/* charged 15 us more than its instants (a lead-in): back (1180) */
	gs_tlog_switch(&l, 3500 * US, 0, 7, false, -1, -1, 1245 * US, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 3600 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 1360 * US);
	assert_true(gs_tlog_split(&l, 7, 100 * US, NULL, 7, 3520 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, (1280 - 1050) * US);
	assert_int_equal(sp.oncpu + sp.runq + sp.blocked, 3420 * US);
	/* inside one run: t5 - t4, forward or back */
	assert_true(gs_tlog_split(&l, 7, 3510 * US, NULL, 7, 3590 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, 80 * US);
	/* the logs before the snapshots taken when the syscalls came (b above
	 * was taken forward only) */
	gs_tlog_switch(&l, 3700 * US, 0, 7, false, -1, -1, 1360 * US, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 3800 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 1490 * US);
	assert_true(gs_tlog_cum(&l, 7, 3790 * US, b));
	assert_int_equal(b[GS_TLOG_KCPU], 1480 * US);
	b[GS_TLOG_KCPU] = 1450 * US;
	assert_true(gs_tlog_split(&l, 7, 100 * US, a, 7, 3790 * US, b, &sp));
	assert_int_equal(sp.oncpu, (1480 - 1050) * US);
	/* within one run: the instants (t5 - t4) */
	assert_true(gs_tlog_split(&l, 7, 3310 * US, NULL, 7, 3390 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, 80 * US);
	assert_int_equal(sp.runq + sp.blocked, 0);
	gs_tlog_free(&l);

	/* more charged than the run queue holds: the rest from blocked; more
	 * than the interval: oncpu is the interval */
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	gs_tlog_switch(&l, 0, 0, 7, false, -1, -1, 0, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 10 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 10 * US);
	gs_tlog_wakeup(&l, 100 * US, 7, 99);
	gs_tlog_switch(&l, 104 * US, 0, 7, false, -1, -1, 10 * US, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 120 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 36 * US);
	assert_true(gs_tlog_split(&l, 7, 5 * US, NULL, 7, 115 * US, NULL, &sp));
	/* kernel: 36 - 5 - (10 - 5 + 5 [back from 10]) = (36 - 5) - (10 - 5) */
	assert_int_equal(sp.oncpu, (31 - 5) * US);
	assert_int_equal(sp.oncpu_inst, (5 + 11) * US);
	assert_int_equal(sp.runq, 0);
	assert_int_equal(sp.blocked, (90 - 6) * US);
	assert_int_equal(sp.oncpu + sp.runq + sp.blocked, 110 * US);
	gs_tlog_switch(&l, 130 * US, 0, 7, false, -1, -1, 500 * US, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 140 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 510 * US);
	assert_true(gs_tlog_split(&l, 7, 115 * US, NULL, 7, 135 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, 20 * US);
	assert_int_equal(sp.runq + sp.blocked, 0);
	gs_tlog_free(&l);

	/* a switch-in without a record between two switch-outs: the second
	 * one's count is kept (a hand-off counts the woken thread from it) */
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	gs_tlog_switch(&l, 0, 0, 5, false, -1, -1, 0, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 0, 6, 0, false, -1, -1, GS_TLOG_NO_KCPU, 100 * US);
	gs_tlog_switch(&l, 10 * US, 6, 0, false, -1, -1, GS_TLOG_NO_KCPU, 104 * US);
	gs_tlog_wakeup(&l, 20 * US, 6, 5);
	gs_tlog_switch(&l, 30 * US, 0, 6, false, -1, -1, 104 * US, GS_TLOG_NO_KCPU);
	assert_true(gs_tlog_split(&l, 5, 15 * US, NULL, 6, 35 * US, NULL, &sp));
	assert_int_equal(sp.hops, 1);
	assert_int_equal(sp.oncpu, (5 + 5) * US);
	assert_int_equal(sp.runq, 10 * US);
	assert_int_equal(sp.blocked, 0);
	gs_tlog_free(&l);

	/* records without the kernel's count: the instants alone */
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	switch_plain(&l, 50 * US, 0, 7, false);
	switch_plain(&l, 110 * US, 7, 0, false);
	switch_plain(&l, 150 * US, 0, 7, false);
	assert_true(gs_tlog_cum(&l, 7, 160 * US, b));
	assert_true(b[GS_TLOG_KCPU] == GS_TLOG_NO_KCPU);
	assert_true(gs_tlog_split(&l, 7, 100 * US, NULL, 7, 160 * US, NULL, &sp));
	assert_false(sp.kernel);
	assert_int_equal(sp.oncpu, 20 * US);
	assert_int_equal(sp.blocked, 40 * US);
	gs_tlog_free(&l);
}

/* CI run 13, attach_sched.sh quiet: 11 slow calls (the servant nanosleep()s
 * 3000 us) with server_oncpu_us 10-63 us below the servant's own CPU time,
 * each with 40-60 us of server_runq_us: the timer's wake-up reached the
 * thread 40-60 us before its switch-in, and the kernel charged that wait
 * (it charges a woken thread from its run queue's clock as the wake-up left
 * it), inside t4..t5.  The run at t5 then ended with less charged than its
 * instants after t5 (the clock's last update before the switch-out came
 * early: the rest went to the next thread), so the count back from the
 * run's end missed that wait, and forward from the switch-in misses it by
 * construction: on-CPU lost it to the run queue.  The vCPU was idle
 * through the sleep (quiet), so the switch-in came from its idle task.  The
 * numbers: the columns of the failing calls (runq 50, on-CPU by the
 * instants 30) */
static void split_woken_wait_charged(void **state)
{
	struct gs_tlog l;
	struct gs_tlog_split sp;
	int64_t c0 = 22 * US, c1 = 90 * US; /* the servant's CPU clock at 1012 and 4080 */
	(void)state;
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	/* blocked in its recv; woken at 990, on CPU at 1000 (charged from 990) */
	gs_tlog_switch(&l, 900 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 0);
	gs_tlog_wakeup(&l, 990 * US, 7, 99);
	gs_tlog_switch(&l, 1000 * US, 0, 7, false, -1, -1, 0, GS_TLOG_NO_KCPU);
	/* t4 = 1010; nanosleep at 1020: 30 charged (10 of them the lead-in) */
	gs_tlog_switch(&l, 1020 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 30 * US);
	/* the timer wakes it at 4020, on CPU at 4070, charged from 4020; t1 =
	 * 4080 (its CPU clock: 30 + 60), t5 = 4090; switched out at 4140 with 95
	 * (charged up to 4085) */
	gs_tlog_wakeup(&l, 4020 * US, 7, 0);
	gs_tlog_switch_idle(&l, 4070 * US, 0, 7, false, -1, -1, 30 * US, GS_TLOG_NO_KCPU, true);
	gs_tlog_switch(&l, 4140 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 95 * US);
	assert_true(gs_tlog_split(&l, 7, 1010 * US, NULL, 7, 4090 * US, NULL, &sp));
	assert_true(sp.kernel);
	assert_int_equal(sp.oncpu_inst, 30 * US);
	/* never below what the kernel charged between the instants (at least
	 * the servant's own CPU time, c1 - c0 = 68): switched in from the idle
	 * task, so the count at t5 is the most the kernel can have charged by
	 * then, from the wake-up on, not past the run's end: min(30 + (4090 -
	 * 4020), 95) = 95; at t4 the least: 20 */
	assert_true(sp.oncpu >= c1 - c0);
	assert_int_equal(sp.oncpu, (95 - 20) * US);
	assert_int_equal(sp.runq, (50 - 45) * US);
	assert_int_equal(sp.blocked, 3000 * US);
	assert_int_equal(sp.oncpu + sp.runq + sp.blocked, 3080 * US);
	/* the wake-up before the interval (the run at t4 holds t5 too): its
	 * lead-in was charged before t4, the instants stand */
	assert_true(gs_tlog_split(&l, 7, 1005 * US, NULL, 7, 1015 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, 10 * US);
	assert_int_equal(sp.runq + sp.blocked, 0);
	/* the same by way of the held events, the order they come in from two
	 * CPUs (the wake-up from the timer's, the switches from the thread's) */
	gs_tlog_free(&l);
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	gs_tlog_push_switch_rt(&l, 900 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 0);
	gs_tlog_push_switch_rt(&l, 1000 * US, 0, 7, false, -1, -1, 0, GS_TLOG_NO_KCPU);
	gs_tlog_push_switch_rt(&l, 1020 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 30 * US);
	gs_tlog_push_switch_idle(&l, 4070 * US, 0, 7, false, -1, -1, 30 * US, GS_TLOG_NO_KCPU, true);
	gs_tlog_push_wakeup(&l, 990 * US, 7, 99);
	gs_tlog_push_switch_rt(&l, 4140 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 95 * US);
	gs_tlog_push_wakeup(&l, 4020 * US, 7, 0);
	gs_tlog_set_complete(&l, 5000 * US);
	gs_tlog_advance(&l, 5000 * US);
	assert_true(gs_tlog_split(&l, 7, 1010 * US, NULL, 7, 4090 * US, NULL, &sp));
	assert_true(sp.oncpu >= c1 - c0);
	assert_int_equal(sp.oncpu + sp.runq + sp.blocked, 3080 * US);
	/* switched in from another task (a busy CPU: the kernel may have
	 * updated its clock at the switch-in, the wait then not charged): the
	 * later of forward and back, as before */
	gs_tlog_free(&l);
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	gs_tlog_switch(&l, 1020 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 30 * US);
	gs_tlog_wakeup(&l, 4020 * US, 7, 0);
	gs_tlog_switch(&l, 4070 * US, 0, 7, false, -1, -1, 30 * US, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 4140 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 95 * US);
	assert_true(gs_tlog_split(&l, 7, 1010 * US, NULL, 7, 4090 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, (50 - 20) * US);
	assert_int_equal(sp.runq, 50 * US);
	/* from the idle task, before the run at t5 has ended: forward from its
	 * switch-in (no end count bounds the most yet) */
	gs_tlog_free(&l);
	assert_int_equal(gs_tlog_init(&l, 64), 0);
	gs_tlog_switch(&l, 1020 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 30 * US);
	gs_tlog_wakeup(&l, 4020 * US, 7, 0);
	gs_tlog_switch_idle(&l, 4070 * US, 0, 7, false, -1, -1, 30 * US, GS_TLOG_NO_KCPU, true);
	assert_true(gs_tlog_split(&l, 7, 1010 * US, NULL, 7, 4090 * US, NULL, &sp));
	assert_int_equal(sp.oncpu, (10 + 20) * US);
	assert_int_equal(sp.runq, 50 * US);
	/* preempted, not woken: the wait before the switch-in is not the
	 * kernel's lead-in (its clock is updated when it switches the thread in) */
	gs_tlog_switch(&l, 4100 * US, 7, 0, true, -1, -1, GS_TLOG_NO_KCPU, 60 * US);
	gs_tlog_switch(&l, 4200 * US, 0, 7, false, -1, -1, 60 * US, GS_TLOG_NO_KCPU);
	gs_tlog_switch(&l, 4240 * US, 7, 0, false, -1, -1, GS_TLOG_NO_KCPU, 90 * US);
	assert_true(gs_tlog_split(&l, 7, 4080 * US, NULL, 7, 4210 * US, NULL, &sp));
	/* t4 = 4080: the run from 4070 charged from the wake-up: back, 60 - 20;
	 * t5 = 4210: the later of forward (70) and back (90 - 30) */
	assert_int_equal(sp.oncpu, (70 - 40) * US);
	assert_int_equal(sp.runq, 100 * US);
	gs_tlog_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_one_thread),
		cmocka_unit_test(split_handoff),
		cmocka_unit_test(split_history_short),
		cmocka_unit_test(upcall_span),
		cmocka_unit_test(upcall_running_at),
		cmocka_unit_test(states_in_wait),
		cmocka_unit_test(held_until_their_time),
		cmocka_unit_test(held_up_record),
		cmocka_unit_test(loss_windows),
		cmocka_unit_test(split_chain),
		cmocka_unit_test(missed_switch),
		cmocka_unit_test(split_kernel_cpu),
		cmocka_unit_test(split_woken_wait_charged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
