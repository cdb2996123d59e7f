/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-thread logs for `giopscope attach --sched` and `--orb`: each followed
 * thread's scheduler state changes (on CPU, runnable in the run queue,
 * blocked), the wake-up edges between threads, and the ORB's upcall edges
 * (start: the servant is next; end: it is done).  A call's interval (t4..t5
 * on the server, t1..t8 on the client) is then split by integrating the
 * states of the threads that held it.
 *
 * All times are one clock (attach: CLOCK_MONOTONIC ns of the records).
 * Bounded: a table of threads (the one idle longest is replaced), the last
 * GS_TLOG_STATES state changes and GS_TLOG_UPCALLS upcall edges of each, the
 * last GS_TLOG_WAKES wake-ups between followed threads.  A split whose
 * interval reaches back past what a thread's log still holds is not made. */
#ifndef GS_THREAD_LOG_H
#define GS_THREAD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GS_TLOG_STATES 2048
#define GS_TLOG_UPCALLS 64
#define GS_TLOG_WAKES 8192
#define GS_TLOG_LOSSES 256
#define GS_TLOG_CHAIN 4           /* threads a hand-off is followed through */

enum gs_tstate { GS_TS_UNKNOWN = 0, GS_TS_ONCPU = 1, GS_TS_RUNQ = 2, GS_TS_BLOCKED = 3 };

/* A thread's totals up to an instant (gs_tlog_cum): [0..2] ns on CPU, in the
 * run queue, blocked, by the records' instants; [GS_TLOG_KCPU] the CPU time
 * the kernel charged it (se.sum_exec_runtime, what its CPU clock reads), or
 * GS_TLOG_NO_KCPU when a record did not carry it. */
#define GS_TLOG_CUM 4
#define GS_TLOG_KCPU 3
#define GS_TLOG_NO_KCPU INT64_MIN
enum gs_tedge { GS_TEDGE_START = 1, GS_TEDGE_END = 2 };

struct gs_tlog_state {
	int64_t ts;
	int64_t cum[3];           /* ns on CPU, in the run queue, blocked before ts */
	int64_t krt;              /* the kernel's CPU time of the thread at ts (a switch
				   * record's sum_exec_runtime; GS_TLOG_NO_KCPU: none) */
	uint8_t state;            /* enum gs_tstate: the state from ts on */
	uint8_t woken;            /* GS_TS_RUNQ entered by a wake-up (not a preemption) */
	uint8_t from_idle;        /* GS_TS_ONCPU: switched in from the CPU's idle task */
};

struct gs_tlog_edge {
	int64_t ts;
	uint8_t edge;             /* enum gs_tedge */
};

struct gs_tlog_thread {
	uint32_t tid;
	uint8_t cur;              /* the state after the last change */
	int64_t last_ts;
	uint64_t n_states, n_upcalls; /* ever added (the rings keep the last ones) */
	/* the kernel's count of its switches-in (sched_info.pcount) as the
	 * records have accounted for them so far (gs_tlog_switch's pcount), and the
	 * time of the last record that carried it */
	uint32_t runs;
	bool pc_known;
	int64_t pc_ts;
	struct gs_tlog_state states[GS_TLOG_STATES];
	struct gs_tlog_edge upcalls[GS_TLOG_UPCALLS];
};

struct gs_tlog_wake {
	int64_t ts;
	uint32_t tid, waker;
};

/* A stretch of time in which the probes' rings lost records. */
struct gs_tlog_loss {
	int64_t from, to;
};

/* An event waiting to be applied (gs_tlog_push_*, gs_tlog_advance). */
struct gs_tlog_pending {
	int64_t ts;
	uint32_t a, b;            /* switch: prev, next; wakeup: tid, waker; upcall: tid, edge */
	int64_t pc, prev_pc;      /* switch: next's count of switches-in before this one,
				   * prev's with its run included (-1: not known) */
	int64_t rt, prev_rt;      /* switch: next's, prev's kernel CPU time (GS_TLOG_NO_KCPU) */
	uint8_t kind;             /* 1 switch, 2 wakeup, 3 upcall */
	uint8_t flag;             /* switch: 1 prev runnable, 2 from the idle task */
};

struct gs_tlog {
	struct gs_tlog_thread **slot; /* allocated when first used */
	uint32_t mask;
	struct gs_tlog_wake *wakes;
	uint64_t n_wakes;
	uint64_t replaced;        /* threads pushed out by newer ones */
	uint64_t no_memory;       /* events dropped: a thread's log could not be allocated */
	/* events pushed, not applied yet: sorted by time from `head` on */
	struct gs_tlog_pending *pend;
	size_t head, n_pend, cap;
	uint64_t forced;          /* applied early: more than GS_TLOG_PENDING_MAX waited */
	uint64_t late;            /* state changes older than their thread's last one */
	uint64_t missed;          /* switches-in the kernel counted and no record told of */
	/* every event up to `complete` has been pushed (the rings were read to
	 * their end then); INT64_MAX until gs_tlog_set_complete() is called */
	int64_t complete;
	struct gs_tlog_loss losses[GS_TLOG_LOSSES];
	uint64_t n_losses;
};
#define GS_TLOG_PENDING_MAX (1u << 22)

/* `threads`: a power of two, at least 16.  0 or an errno value. */
int gs_tlog_init(struct gs_tlog *l, uint32_t threads);
void gs_tlog_free(struct gs_tlog *l);

/* A CPU switched from `prev` to `next` (0: not a followed thread); prev stays
 * runnable (preempted) or blocks.
 * `pcount`, `prev_pcount`: the kernel's count of switches-in (sched_info.pcount;
 * -1: not known) of `next` before this one and of `prev` with its run included:
 * when a count is ahead of the switches-in the thread's records told of,
 * switches-in went unrecorded (the thread ran while its log has it off CPU) and
 * the time since the thread's last counted record is given as a loss
 * (gs_tlog_loss): calls there are not split.
 * `rt`, `prev_rt`: the kernel's CPU time (se.sum_exec_runtime at the switch;
 * GS_TLOG_NO_KCPU: not known) of `next` before its run and of `prev` with its
 * run included: on-CPU time is then counted as the kernel charged it
 * (gs_tlog_split). */
void gs_tlog_switch(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
		    int64_t pcount, int64_t prev_pcount, int64_t rt, int64_t prev_rt);
/* True when a record of `tid` after `ts` carried its count of switches-in
 * (so any switch-in without a record up to `ts` is known), or when its
 * records carry none. */
bool gs_tlog_counted(const struct gs_tlog *l, uint32_t tid, int64_t ts);
/* gs_tlog_switch, and `from_idle`: the CPU switched from its idle task (a
 * wake-up onto an idle CPU: the kernel charges the thread switched in from the
 * wake-up on, gs_tlog_split) */
void gs_tlog_switch_idle(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
			 int64_t pcount, int64_t prev_pcount, int64_t rt, int64_t prev_rt, bool from_idle);
/* `tid` was woken by `waker` (0: not known). */
void gs_tlog_wakeup(struct gs_tlog *l, int64_t ts, uint32_t tid, uint32_t waker);
/* An ORB upcall edge on thread `tid`. */
void gs_tlog_upcall(struct gs_tlog *l, int64_t ts, uint32_t tid, enum gs_tedge edge);

/* The same events, held until gs_tlog_advance() reaches their time and then
 * applied in time order (whatever order they were pushed in): the probes'
 * rings are read ahead of the syscall records the splits are taken at, and a
 * log must not run ahead of them (it would push out what they need). */
void gs_tlog_push_switch(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable);
void gs_tlog_push_switch_pc(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
			    int64_t pcount, int64_t prev_pcount);
void gs_tlog_push_switch_rt(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
			    int64_t pcount, int64_t prev_pcount, int64_t rt, int64_t prev_rt);
void gs_tlog_push_switch_idle(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
			      int64_t pcount, int64_t prev_pcount, int64_t rt, int64_t prev_rt, bool from_idle);
void gs_tlog_push_wakeup(struct gs_tlog *l, int64_t ts, uint32_t tid, uint32_t waker);
void gs_tlog_push_upcall(struct gs_tlog *l, int64_t ts, uint32_t tid, enum gs_tedge edge);
/* Applies the pushed events up to `ts` (inclusive), never past the point
 * known complete (gs_tlog_set_complete). */
void gs_tlog_advance(struct gs_tlog *l, int64_t ts);
/* Every event up to `ts` has been pushed: the probes' rings were read to
 * their end (no record reserved and not yet written, none still to come with
 * an earlier time).  Until a log is told so, an instant after the last such
 * point is not known: gs_tlog_cum() says false, gs_tlog_known() too (a
 * record held up behind another CPU's unfinished one would otherwise be
 * missed, and the thread's state taken from before it). */
void gs_tlog_set_complete(struct gs_tlog *l, int64_t ts);
bool gs_tlog_known(const struct gs_tlog *l, int64_t ts);
/* Records were lost (ring full) at some time in [from, to]. */
void gs_tlog_loss(struct gs_tlog *l, int64_t from, int64_t to);
/* True when a loss may have touched [from, to] (also when the losses kept
 * no longer reach back to `from`). */
bool gs_tlog_lost_in(const struct gs_tlog *l, int64_t from, int64_t to);

struct gs_tlog_split {
	int64_t oncpu, runq, blocked; /* ns; they add up to to - from */
	/* the kernel's count was used for oncpu (every record carried it):
	 * oncpu_inst is the on-CPU time by the records' instants, and
	 * oncpu - oncpu_inst was taken from runq (then blocked) */
	bool kernel;
	int64_t oncpu_inst;
	uint32_t handoff_tid;         /* the thread the call went on to (0: none) */
	int64_t handoff_ts;
	uint32_t hops;                /* wake-up edges followed (0: one thread) */
};
/* The time thread `tid` spent in each state (on CPU, run queue, blocked) up
 * to `ts`, and the kernel's count of its CPU time there (GS_TLOG_CUM
 * entries), counted from a point of its own (only differences mean
 * something); the thread was on CPU at `ts` (in a syscall).  False when its
 * log has no change at or before `ts` (nothing seen yet, or pushed out).
 *
 * The kernel's count at an instant inside a run: forward from the run's
 * start, rt_in + (ts - ts_in), while the run goes on; once its switch-out
 * is in the log, the later of that (not past rt_out) and back from the
 * run's end, rt_out - (ts_out - ts).  The kernel charges a run from its
 * scheduler clock's last update before the switch-in (often the wake-up:
 * a lead-in the forward count misses) to the last update before the
 * switch-out (usually the top of __schedule(), just before the switch
 * record); docs/attach.md has the measured differences. */
bool gs_tlog_cum(const struct gs_tlog *l, uint32_t tid, int64_t ts, int64_t cum[GS_TLOG_CUM]);
/* Splits [from, to] of a call that `first` held at `from` (on CPU: it was in
 * a syscall) and `last` at `to` (idem).  cum_from / cum_to: gs_tlog_cum() of
 * those threads at those instants taken earlier, used when the logs no
 * longer hold those instants (NULL: only the logs).  When every record
 * involved carried the kernel's CPU time, oncpu is the kernel's (what the
 * threads' CPU clocks count) and the difference to the on-CPU time by the
 * records' instants is taken from runq, then blocked (the kernel charges a
 * woken thread from its wake-up: time the instants count as run queue), so
 * the three still add up to to - from.  The count at `to` (and at the end of
 * each thread of a chain) of a run switched in from the idle task after a
 * wake-up inside the interval is the most the kernel can have charged by
 * then: its wait from the wake-up on, which the kernel charges, inside the
 * interval (gs_tlog_switch_idle; thread_log.c, kcpu_at).  When the threads differ, the call is followed from `first` to `last`
 * along wake-up edges in the interval: the earliest chain of wake-ups (each
 * later than the one before, at most GS_TLOG_CHAIN threads in all) by which
 * `first` reaches `last`; each thread of the chain counts from its wake-up to
 * the one it made.  False when a log does not reach back to where it is
 * needed, no chain links the two threads, or `to` is not known yet
 * (gs_tlog_known). */
bool gs_tlog_split(const struct gs_tlog *l, uint32_t first, int64_t from, const int64_t *cum_from, uint32_t last,
		   int64_t to, const int64_t *cum_to, struct gs_tlog_split *out);
/* The upcall of thread `tid` inside [from, to]: the last start edge in it and
 * the first end edge after that start and within it.  False when either is
 * missing. */
bool gs_tlog_upcall_span(const struct gs_tlog *l, uint32_t tid, int64_t from, int64_t to, int64_t *start,
			 int64_t *end);
/* The time thread `tid` spent on CPU, in the run queue and blocked in
 * [from, to] by the records' instants (ns, in out[0..2]); the thread was on
 * CPU at `to` (a syscall returned), its state at `from` is what its log
 * says.  False when the log does not reach back to `from` or `to` is not
 * known yet. */
bool gs_tlog_states_in(const struct gs_tlog *l, uint32_t tid, int64_t from, int64_t to, int64_t out[3]);
/* Whether an ORB upcall was running on thread `tid` at `ts`: 1 (its start
 * edge in *start), 0 (the last edge at or before ts ends one, or the thread's
 * log has edges and none before ts while none was pushed out), -1 not known
 * (no log of the thread, edges pushed out, or ts not known yet). */
int gs_tlog_upcall_at(const struct gs_tlog *l, uint32_t tid, int64_t ts, int64_t *start);

#endif
