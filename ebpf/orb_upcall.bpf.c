// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The ORB upcall probes of `giopscope attach --orb PROFILE`.
 *
 * Two programs, attached once per probe of the ORB profile
 * (probe/orb_profiles/NAME.txt) as a uprobe (function entry) or a
 * uretprobe (its return) on the ORB's shared library, for the followed
 * processes only.  The attach cookie says which edge of the upcall the
 * probe marks (start: the servant is next; end: the servant is done) and
 * which profile line it is.  Each hit is a 24-byte ring record: time, thread,
 * edge.  User space matches them to the call by thread.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "orb_upcall.h"

const volatile __u32 n_tgids = 0;
const volatile __u32 tgids[GS_ORB_TGIDS] = {};
const volatile __u64 wake_bytes = 1u << 18;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} orb_events SEC(".maps");

__u64 counters[GS_ORB_MAX_CPUS][GS_ORB_CNT_ROW] SEC(".bss");
__u64 lost_last_ns SEC(".bss");

static __always_inline int hit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx), now;
	__u32 tgid = (__u32)(id >> 32);
	bool ok = false;
	struct gs_orb_ev *e;
	for (__u32 i = 0; i < GS_ORB_TGIDS; i++) {
		if (i >= n_tgids)
			break;
		if (tgids[i] == tgid)
			ok = true;
	}
	if (!ok)
		return 0;
	/* stamped after the reservation (probe/ring_mark.h) */
	e = bpf_ringbuf_reserve(&orb_events, sizeof *e, 0);
	now = bpf_ktime_get_ns();
	if (!e) {
		__u32 cpu = bpf_get_smp_processor_id();
		if (cpu < GS_ORB_MAX_CPUS)
			counters[cpu][GS_ORB_CNT_LOST]++;
		lost_last_ns = now;
		return 0;
	}
	e->ts_ns = now;
	e->tgid = tgid;
	e->tid = (__u32)id;
	e->edge = (__u32)(cookie & 0xff);
	e->probe = (__u32)(cookie >> 8);
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&orb_events, BPF_RB_AVAIL_DATA) >= wake_bytes ? BPF_RB_FORCE_WAKEUP
												  : BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int gs_orb_entry(struct pt_regs *ctx)
{
	return hit(ctx);
}

SEC("uretprobe")
int gs_orb_return(struct pt_regs *ctx)
{
	return hit(ctx);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
