// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The scheduler probes of `giopscope attach --sched`.
 *
 * BTF tracepoints sched_switch, sched_wakeup and sched_wakeup_new (tp_btf:
 * typed task pointers, no perf event, no kprobe).  For the threads of the
 * followed thread groups (compared in read-only data, set before loading),
 * every change of scheduler state becomes a 56-byte ring record: switched
 * out (runnable: preempted; or blocked), switched in, woken (and by whom).
 * User space keeps a short timeline per thread and splits each call's
 * server (client) time into on-CPU, run queue and blocked.
 *
 * Records do not wake the reader (it polls every 50 ms and drains the ring
 * before it writes a call); a ring full past wake_bytes does.  Records the ring
 * has no room for are counted (per-CPU row in .bss; user space turns each
 * change of the count into a window of time) and the time of the last one
 * kept, so that user space leaves the split of a call it touched empty.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sched.h"

const volatile __u32 n_tgids = 0;
const volatile __u32 tgids[GS_SCHED_TGIDS] = {};
const volatile __u64 wake_bytes = 1u << 20;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} sched_events SEC(".maps");

__u64 counters[GS_SCHED_MAX_CPUS][GS_SCHED_CNT_ROW] SEC(".bss");
/* the last time a record was lost (any CPU; a plain store is enough) */
__u64 lost_last_ns SEC(".bss");

static __always_inline bool followed(__u32 tgid)
{
	if (!tgid)
		return false;
	for (__u32 i = 0; i < GS_SCHED_TGIDS; i++) {
		if (i >= n_tgids)
			break;
		if (tgids[i] == tgid)
			return true;
	}
	return false;
}

static __always_inline void lost(__u64 now)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (cpu < GS_SCHED_MAX_CPUS)
		counters[cpu][GS_SCHED_CNT_LOST]++;
	lost_last_ns = now;
}

static __always_inline void emit(__u32 kind, __u32 tid, __u32 other, __u32 prev_state, __u32 pcount,
				 __u32 prev_pcount, __u64 prev_rt, __u64 next_rt, __u32 flags_more)
{
	/* stamped after the reservation: a record reserved after user space
	 * read the producer position has a later time than that read
	 * (probe/ring_mark.h: how far the logs are complete) */
	struct gs_sched_ev *e = bpf_ringbuf_reserve(&sched_events, sizeof *e, 0);
	__u64 now = bpf_ktime_get_ns();
	__u64 flags;
	if (!e) {
		lost(now);
		return;
	}
	e->ts_ns = now;
	e->kind = kind;
	e->cpu = bpf_get_smp_processor_id();
	e->tid = tid;
	e->other = other;
	e->prev_state = prev_state;
	e->pcount = pcount;
	e->prev_pcount = prev_pcount;
	e->prev_rt = prev_rt;
	e->next_rt = next_rt;
	e->flags = (bpf_core_field_exists(struct sched_info, pcount) ? GS_SCHED_F_PCOUNT : 0) | flags_more;
	flags = bpf_ringbuf_query(&sched_events, BPF_RB_AVAIL_DATA) >= wake_bytes ? BPF_RB_FORCE_WAKEUP
										   : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, flags);
	{
		__u32 cpu = bpf_get_smp_processor_id();
		if (cpu < GS_SCHED_MAX_CPUS)
			counters[cpu][GS_SCHED_CNT_WRITTEN]++;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(gs_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 p = followed(prev->tgid) ? (__u32)prev->pid : 0;
	__u32 n = followed(next->tgid) ? (__u32)next->pid : 0;
	(void)ctx;
	if (!p && !n)
		return 0;
	/* TASK_RUNNING is 0: a task switched out in it (or preempted) stays runnable */
	emit(GS_SCHED_SWITCH, p, n, (preempt || prev_state == 0) ? GS_SCHED_PREV_RUNNABLE : GS_SCHED_PREV_BLOCKED,
	     n && bpf_core_field_exists(next->sched_info.pcount) ? (__u32)next->sched_info.pcount : 0,
	     p && bpf_core_field_exists(prev->sched_info.pcount) ? (__u32)prev->sched_info.pcount : 0,
	     p ? prev->se.sum_exec_runtime : 0, n ? next->se.sum_exec_runtime : 0,
	     prev->pid == 0 ? GS_SCHED_F_FROM_IDLE : 0);
	/* (prev's sum_exec_runtime is up to date here: __schedule() charged its
	 * run -- update_curr() -- before the tracepoint) */
	/* (a new thread's first switch-in carries 0: a count like any other) */
	/* (prev->pid 0: the idle task; only a switch-in of a followed thread
	 * after it is read) */
	return 0;
}

static __always_inline int woken(struct task_struct *p)
{
	if (!followed(p->tgid))
		return 0;
	emit(GS_SCHED_WAKEUP, (__u32)p->pid, (__u32)bpf_get_current_pid_tgid(), 0, 0, 0, 0, 0, 0);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(gs_sched_wakeup, struct task_struct *p)
{
	(void)ctx;
	return woken(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(gs_sched_wnew, struct task_struct *p)
{
	(void)ctx;
	return woken(p);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
