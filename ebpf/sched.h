/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the scheduler probes of `giopscope attach --sched` (sched.bpf.c) and
 * their user side (probe/attach_sched.c) share: the ring record, the counters.
 * Fixed-width and pinned in size: both sides are compiled separately. */
#ifndef GS_SCHED_H
#define GS_SCHED_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GS_SCHED_TGIDS 16         /* thread groups followed (read-only data) */

/* gs_sched_ev.kind */
enum gs_sched_kind {
	GS_SCHED_SWITCH = 1,     /* a CPU switched from `prev` to `next` */
	GS_SCHED_WAKEUP = 2,     /* `tid` became runnable; `waker` ran the wake-up */
};

/* prev_state of a GS_SCHED_SWITCH */
enum {
	GS_SCHED_PREV_RUNNABLE = 1, /* preempted (or yielded): it waits in the run queue */
	GS_SCHED_PREV_BLOCKED = 2,  /* it went to sleep: lock, I/O, sleep */
};

/* One record of the ring.  SWITCH: tid is `prev` (0 when it is not followed),
 * other is `next` (0 when not followed), prev_state says how prev left.
 * WAKEUP: tid is the task woken (followed), other the thread that woke it
 * (whatever was current: 0 from an interrupt of the idle task). */
struct gs_sched_ev {
	__u64 ts_ns;             /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 kind;              /* enum gs_sched_kind */
	__u32 cpu;
	__u32 tid;
	__u32 other;
	__u32 prev_state;        /* SWITCH: GS_SCHED_PREV_* */
	__u32 pcount;            /* SWITCH with `other`: how many times `other` had been
				  * switched in before (sched_info.pcount, low 32 bits; the
				  * kernel counts this switch after the tracepoint): a jump
				  * of more than one from its last record is a switch-in no
				  * record told of */
	__u32 prev_pcount;       /* SWITCH with `tid`: tid's count, this run included */
	__u32 flags;             /* GS_SCHED_F_PCOUNT: the two counts are there;
				  * GS_SCHED_F_FROM_IDLE */
	/* SWITCH: the CPU time the kernel has charged `tid` (this run included)
	 * and `other` (before this run): se.sum_exec_runtime, what their CPU
	 * clocks read (0 for a thread not followed) */
	__u64 prev_rt, next_rt;
};
#define GS_SCHED_F_PCOUNT 1u
/* SWITCH: `prev` was the CPU's idle task.  A wake-up onto an idle CPU asks the
 * idle task to reschedule and the kernel skips its clock update at the switch
 * (rq_clock_skip_update()): the thread switched in is charged from the clock
 * as the wake-up left it, its whole wait in the run queue with it */
#define GS_SCHED_F_FROM_IDLE 2u
_Static_assert(sizeof(struct gs_sched_ev) == 56, "gs_sched_ev layout");

/* Counters, one row per CPU in .bss (no atomics). */
enum gs_sched_counter {
	GS_SCHED_CNT_LOST,       /* records the ring had no room for */
	GS_SCHED_CNT_WRITTEN,    /* records written */
	GS_SCHED_CNT__MAX
};
#define GS_SCHED_MAX_CPUS 512
#define GS_SCHED_CNT_ROW 8       /* a 64-byte line per CPU */
_Static_assert(GS_SCHED_CNT__MAX <= GS_SCHED_CNT_ROW, "counter row too small");

#endif
