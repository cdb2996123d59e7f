// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* bench/tc_floor.bpf.c -- a bench-only tc tap: the hooks of giop_tap.bpf.c's packet
 * tap (TCX links, or a clsact qdisc's cls_bpf filter in direct-action mode: bench/tc_floor.c)
 * with as little or as much of the tap's per-packet work as `variant` says, so that what the
 * hook alone, the header reads and a ring record each add to a round trip can be measured
 * side by side (bench/attach_toggle.sh, arms tc_*).  Every variant returns what the tap
 * returns: TCX_NEXT (= TC_ACT_UNSPEC for cls_bpf: go on as if no program were there). */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "giop_tap.h"
#include "tc_floor.h"

const volatile __u32 variant = TCF_EMPTY;
const volatile __u32 l2_len = 14;       /* Ethernet on a veth */
const volatile __u64 wake_bytes = 1u << 20;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);    /* set by user space */
} events SEC(".maps");

/* variant ring2: the ingress program's records go here (egress's to `events`): on the
 * benchmark's pinned pair each ring is then written by one CPU only */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);    /* set by user space */
} events_in SEC(".maps");

/* as the tap's watch_tab: direct-mapped by a hash of the connection, in .bss */
struct gs_tap_watch watch_tab[TCF_WATCH_SLOTS] __attribute__((aligned(64)));

__u64 counters[TCF_MAX_CPUS][TCF_CNT_ROW];

/* variant store: the record goes here (one slot per CPU, the same lines every time) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gs_tap_seg);
} slot SEC(".maps");

/* variant batch: this CPU's staging area (4 KiB: a header and TCF_STAGE_N records), written
 * to `events` as one ring record (the header and the records behind it) by flush() */
struct tcf_stage {
	struct tcf_batch_hdr h;
	struct gs_tap_seg recs[TCF_STAGE_N];
};
_Static_assert(sizeof(struct tcf_stage) <= 4096, "the staging area fits 4 KiB");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tcf_stage);
} stage SEC(".maps");

/* variant batch: a timer per CPU (bpf_timer is not allowed in per-CPU maps: an array indexed
 * by the CPU), started pinned (BPF_F_TIMER_CPU_PIN) so that its callback runs on the CPU whose
 * area it flushes, in softirq: never inside a tc program's run on that CPU */
struct tcf_tmr {
	struct bpf_timer t;
	__u32 inited;
	__u32 armed;
} __attribute__((aligned(64))); /* a line per CPU */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TCF_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct tcf_tmr);
} stage_tmr SEC(".maps");

/* variant coldw: the record into a 1 MiB area per CPU, written in turn (the next 80 bytes each
 * run, as a ring's), never read: the ring's cold lines without the ring */
struct tcf_cold {
	__u32 pos;
	__u32 pad[15];
	struct gs_tap_seg recs[TCF_COLD_N];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TCF_COLD_CPUS);
	__type(key, __u32);
	__type(value, struct tcf_cold);
} cold SEC(".maps");

const volatile __u64 stage_ns = TCF_STAGE_NS_DEFAULT;
const volatile __u32 stage_n = TCF_STAGE_N; /* records an area holds, 1..TCF_STAGE_N (-n) */

#define TCF_CLOCK_MONOTONIC 1

static __always_inline void count_n(__u32 idx, __u64 n)
{
	__u32 cpu = bpf_get_smp_processor_id() & (TCF_MAX_CPUS - 1);
	counters[cpu][idx & (TCF_CNT_ROW - 1)] += n;
}

static __always_inline void count(__u32 idx)
{
	count_n(idx, 1);
}

/* the staged records to the ring in one record; the area is empty after, written or lost */
static __always_inline void flush(struct tcf_stage *st, __u32 why)
{
	__u32 n = st->h.n;
	__u64 fl = BPF_RB_NO_WAKEUP;

	st->h.n = 0;
	if (n == 0 || n > TCF_STAGE_N)
		return;
	st->h.n = (__u16)n; /* the header as it goes out */
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes)
		fl = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&events, st, sizeof st->h + n * sizeof(struct gs_tap_seg), fl)) {
		count(TCF_CNT_RB_LOST);
		count_n(TCF_CNT_B_LOST_RECS, n);
	} else {
		count(why);
		count_n(TCF_CNT_B_RECS, n);
	}
	st->h.n = 0;
}

/* this CPU's tick, every stage_ns while records come: whatever is staged goes to the ring (a
 * record waits at most stage_ns and the timer's lateness); a tick that finds the area empty
 * stops the ticking (the next record's run starts it again).  Its own time is counted
 * (TCF_CNT_B_CB_NS): bpf_stats times the tc programs' runs, not their timers' callbacks. */
static int stage_timer_cb(void *map, __u32 *key, struct tcf_tmr *tm)
{
	__u32 zero = 0, cpu = bpf_get_smp_processor_id() & (TCF_MAX_CPUS - 1);
	__u64 t0 = bpf_ktime_get_ns();
	struct tcf_stage *st;

	(void)map;
	count(TCF_CNT_B_FIRED);
	tm->armed = 0;
	if (*key != cpu) {
		count(TCF_CNT_B_ODDCPU); /* the CPU's own runs flush its area by age */
		return 0;
	}
	st = bpf_map_lookup_elem(&stage, &zero);
	if (st && st->h.n) {
		flush(st, TCF_CNT_B_TIMER);
		if (!bpf_timer_start(&tm->t, stage_ns, BPF_F_TIMER_CPU_PIN)) {
			tm->armed = 1;
			count(TCF_CNT_B_ARMED);
		}
	}
	count_n(TCF_CNT_B_CB_NS, bpf_ktime_get_ns() - t0);
	return 0;
}

/* the first record of an empty area: this CPU's tick started (made on the CPU's first run),
 * unless it is ticking already */
static __always_inline void stage_arm(void)
{
	__u32 cpu = bpf_get_smp_processor_id() & (TCF_MAX_CPUS - 1);
	struct tcf_tmr *tm = bpf_map_lookup_elem(&stage_tmr, &cpu);

	if (!tm || tm->armed)
		return;
	if (!tm->inited) {
		if (bpf_timer_init(&tm->t, &stage_tmr, TCF_CLOCK_MONOTONIC) && !tm->inited)
			return;
		if (bpf_timer_set_callback(&tm->t, stage_timer_cb))
			return;
		tm->inited = 1;
	}
	if (!bpf_timer_start(&tm->t, stage_ns, BPF_F_TIMER_CPU_PIN)) {
		tm->armed = 1;
		count(TCF_CNT_B_ARMED);
	}
}

static __always_inline void fill(struct gs_tap_seg *r, struct __sk_buff *skb, const struct iphdr *ip,
				 const __u8 *t, bool egress, __u64 ts)
{
	__builtin_memset(r, 0, sizeof *r);
	r->kind = GS_REC_SEG;
	r->ifindex = skb->ifindex;
	r->ts_ns = ts;
	r->flow.family = 4;
	__builtin_memcpy(r->flow.saddr, &ip->saddr, 4);
	__builtin_memcpy(r->flow.daddr, &ip->daddr, 4);
	r->flow.sport = (__u16)t[0] << 8 | t[1];
	r->flow.dport = (__u16)t[2] << 8 | t[3];
	r->seq = (__u32)t[4] << 24 | (__u32)t[5] << 16 | (__u32)t[6] << 8 | t[7];
	r->ack = (__u32)t[8] << 24 | (__u32)t[9] << 16 | (__u32)t[10] << 8 | t[11];
	r->tcp_flags = t[13];
	r->window = (__u16)t[14] << 8 | t[15];
	r->flags = egress ? GS_SEG_EGRESS : 0;
}

/* variant batch: the record into this CPU's area; the area to the ring when full or stale */
static __always_inline void stage_run(struct __sk_buff *skb, const struct iphdr *ip, const __u8 *t, bool egress)
{
	__u32 zero = 0, n;
	__u64 ts = bpf_ktime_get_ns();
	struct tcf_stage *st = bpf_map_lookup_elem(&stage, &zero);

	if (!st)
		return;
	n = st->h.n;
	if (n >= TCF_STAGE_N) { /* not left so by flush(); kept for the verifier */
		flush(st, TCF_CNT_B_FULL);
		n = 0;
	}
	fill(&st->recs[n], skb, ip, t, egress, ts);
	if (n == 0) {
		st->h.kind = TCF_REC_BATCH;
		st->h.cpu = (__u16)bpf_get_smp_processor_id();
		st->h.first_ts = ts;
	}
	st->h.n = (__u16)(n + 1);
	if (variant == TCF_STAGEW) { /* the area's lines written in turn, nothing flushed */
		if (n + 1 >= stage_n)
			st->h.n = 0;
		return;
	}
	if (n + 1 >= stage_n)
		flush(st, TCF_CNT_B_FULL);
	else if (ts - st->h.first_ts >= stage_ns)
		flush(st, TCF_CNT_B_AGED);
	else if (n == 0)
		stage_arm();
}

static __always_inline int floor_run(struct __sk_buff *skb, bool egress)
{
	struct iphdr ip;
	__u8 t[20];
	__u32 l4;
	__u64 tag;
	struct gs_tap_watch *w;

	if (variant == TCF_EMPTY)
		return TCX_NEXT;
	count(egress ? TCF_CNT_OUT : TCF_CNT_IN);
	/* the tap's header reads when parse_direct() gives up: helper copies of IP and TCP */
	if (skb->protocol != bpf_htons(0x0800) || bpf_skb_load_bytes(skb, l2_len, &ip, sizeof ip) ||
	    ip.version != 4 || ip.protocol != 6 || ip.ihl < 5)
		return TCX_NEXT;
	l4 = l2_len + ip.ihl * 4;
	if (bpf_skb_load_bytes(skb, l4, t, sizeof t))
		return TCX_NEXT;
	count(TCF_CNT_TCP);
	/* the watch lookup: the slot of the connection (as watch_of()), its tag compared */
	tag = ((__u64)t[0] << 56 | (__u64)t[1] << 48 | (__u64)t[2] << 40 | (__u64)t[3] << 32) ^ ip.saddr ^
	      ((__u64)ip.daddr << 16);
	w = &watch_tab[(((__u32)(tag ^ (tag >> 32)) * 0x9E3779B1u) >> 20) & (TCF_WATCH_SLOTS - 1)];
	if (*(volatile __u64 *)&w->tag == tag)
		count(TCF_CNT_WATCH);
	if (variant == TCF_BATCH || variant == TCF_STAGEW) {
		stage_run(skb, &ip, t, egress);
		return TCX_NEXT;
	}
	if (variant == TCF_COLDW) {
		__u32 cpu = bpf_get_smp_processor_id() & (TCF_COLD_CPUS - 1), p;
		struct tcf_cold *c = bpf_map_lookup_elem(&cold, &cpu);

		if (!c)
			return TCX_NEXT;
		p = c->pos;
		if (p >= TCF_COLD_N)
			p = 0;
		fill(&c->recs[p], skb, &ip, t, egress, bpf_ktime_get_ns());
		c->pos = p + 1;
		return TCX_NEXT;
	}
	if (variant != TCF_RING && variant != TCF_STORE && variant != TCF_RING2)
		return TCX_NEXT;
	{
		__u32 zero = 0;
		void *rb = variant == TCF_RING2 && !egress ? (void *)&events_in : (void *)&events;
		struct gs_tap_seg *r = variant != TCF_STORE ? bpf_ringbuf_reserve(rb, sizeof *r, 0)
							    : bpf_map_lookup_elem(&slot, &zero);
		__u64 fl = BPF_RB_NO_WAKEUP;
		if (!r) {
			count(TCF_CNT_RB_LOST);
			return TCX_NEXT;
		}
		fill(r, skb, &ip, t, egress, bpf_ktime_get_ns());
		if (variant == TCF_STORE)
			return TCX_NEXT;
		/* as the tap's wake_flags(): no wake-up below wake_bytes */
		if (bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= wake_bytes)
			fl = BPF_RB_FORCE_WAKEUP;
		bpf_ringbuf_submit(r, fl);
	}
	return TCX_NEXT;
}

SEC("tc")
int tc_floor_ingress(struct __sk_buff *skb)
{
	return floor_run(skb, false);
}

SEC("tc")
int tc_floor_egress(struct __sk_buff *skb)
{
	return floor_run(skb, true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
