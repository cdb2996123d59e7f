// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Where a connection direction's framing state lives: its slot of the
 * direct-mapped `fcache`, or the LRU hash `flows`.  Included by
 * giop_tap.bpf.c only. */
#ifndef GS_TAP_FSTATE_BPF_H
#define GS_TAP_FSTATE_BPF_H

#define FC_READ(x) (*(volatile __u64 *)&(x))

static __always_inline __u32 fc_index(const struct gs_tap_flow *f)
{
	const __u32 *w = (const __u32 *)f;
	__u32 h = ((w[0] ^ w[3]) * 0x85EBCA6Bu) ^ (w[4] ^ w[7]) ^ (w[8] * 0xC2B2AE35u);
	return (((h * 0x9E3779B1u) >> 20) & (fc_slots - 1)) & (FC_SLOTS - 1);
}

/* The slot of direction f in fcache (NULL only to please the verifier). */
static __always_inline struct gs_tap_fcache *fc_slot_of(const struct gs_tap_flow *f, __u32 *idx)
{
	*idx = fc_index(f);
	return bpf_map_lookup_elem(&fcache, idx);
}

static __always_inline bool fc_holds(struct gs_tap_fcache *s, const struct gs_tap_flow *f)
{
	return FC_READ(s->use) > FC_BUSY && flow_eq(&s->key, f);
}

/* The framing state of direction f: in its slot, in `flows`, or nowhere
 * (NULL).  For the send/recv hooks (the packet tap: fc_get). */
static __always_inline struct gs_tap_fstate *fstate_find(const struct gs_tap_flow *f)
{
	__u32 idx;
	struct gs_tap_fcache *s = fc_slot_of(f, &idx);
	if (fc_slots && s && fc_holds(s, f))
		return &s->st;
	return bpf_map_lookup_elem(&flows, f);
}

/* A packet of the slot's direction at `now`: the slot stays its own for
 * FC_IDLE_NS more (renewed only once half of it is gone), or only FC_CLOSE_NS
 * after its first FIN or RST (FC_CLOSED: the ACKs that follow do not renew it;
 * a SYN, a new connection on the 4-tuple, does).  A failed exchange: another
 * CPU renewed it, or takes it. */
static __always_inline void fc_renew(struct gs_tap_fcache *s, __u32 tcp_flags, __u64 now)
{
	__u64 u = FC_READ(s->use), nu;
	if (u <= FC_BUSY)
		return;
	if (tcp_flags & TCP_SYN)
		nu = (now + FC_IDLE_NS) & ~FC_CLOSED;
	else if (u & FC_CLOSED)
		return;
	else if (tcp_flags & (TCP_FIN | TCP_RST))
		nu = (now + FC_CLOSE_NS) | FC_CLOSED;
	else if ((__s64)(u - now) < (__s64)(FC_IDLE_NS / 2))
		nu = (now + FC_IDLE_NS) & ~FC_CLOSED;
	else
		return;
	__sync_val_compare_and_swap(&s->use, u, nu);
}

/* A new framing state `init` for direction f, found in neither place: in its
 * slot if that is free or idle (an idle one's state moved to `flows` first;
 * *idx: the slot's index), in `flows` otherwise (*idx: FC_SLOTS).  NULL:
 * `flows` had no room. */
static __always_inline struct gs_tap_fstate *fstate_new(const struct gs_tap_flow *f,
							const struct gs_tap_fstate *init, __u64 now,
							__u32 *idx)
{
	struct gs_tap_fcache *s = fc_slot_of(f, idx);
	__u64 u;
	if (!s)
		return NULL;
	if (!fc_slots)
		goto hashed;
	u = FC_READ(s->use);
	for (int i = 0; i < FC_SPIN && u == FC_BUSY; i++)
		u = FC_READ(s->use);
	if (u > FC_BUSY && flow_eq(&s->key, f))
		return &s->st;  /* another CPU has just put it there */
	/* free, or idle (never FC_BUSY: another CPU is writing it) */
	if ((u == 0 || (u > FC_BUSY && (__s64)(u - now) < 0)) &&
	    __sync_val_compare_and_swap(&s->use, u, FC_BUSY) == u) {
		if (u) {
			bpf_map_update_elem(&flows, &s->key, &s->st, BPF_ANY);
			count(GS_CNT_FCACHE_EVICTED);
		}
		s->key = *f;
		s->st = *init;
		/* key and state before the slot is seen in use (x86 does not
		 * reorder stores with stores; this keeps the compiler from it) */
		asm volatile("" ::: "memory");
		FC_READ(s->use) = (now + FC_IDLE_NS) & ~FC_CLOSED;
		count(GS_CNT_FLOWS_NEW);
		return &s->st;
	}
hashed:
	*idx = FC_SLOTS;
	if (bpf_map_update_elem(&flows, f, init, BPF_NOEXIST) == 0) {
		count(GS_CNT_FLOWS_NEW);
		if (fc_slots)
			count(GS_CNT_FCACHE_HASHED);
	}
	return bpf_map_lookup_elem(&flows, f);
}

/* The packet tap's framing state for a segment of direction f (TCP flags
 * `tcp_flags`, sequence number `seq`), found or created: its index in fcache,
 * the direction's slot or (>= FC_SLOTS) this CPU's spare entry holding a copy
 * of its `flows` entry, for fc_put_back; -1: none (a direction nobody follows,
 * or no room).  A global function: the verifier walks it once, and the tap
 * after it sees one outcome (an index) whichever way the state was found. */
__attribute__((noinline)) int fc_get(const struct gs_tap_flow *fp, __u32 seq, __u32 tcp_flags)
{
	/* on the stack: a map key from a global function's argument memory is
	 * refused by older verifiers (6.1: "R2 type=mem expected=fp") */
	struct gs_tap_flow key, *f = &key;
	if (!fp)
		return -1;
	key = *fp;

	struct gs_tap_fcache *s, *spare;
	struct gs_tap_fstate *st;
	__u64 now = coarse_now();
	__u32 idx;
	s = fc_slot_of(f, &idx);
	if (!s)
		return -1;
	if (fc_slots && fc_holds(s, f)) {
		st = &s->st;
		fc_renew(s, tcp_flags, now);
	} else if ((st = bpf_map_lookup_elem(&flows, f))) {
		idx = FC_SLOTS;
	} else {
		struct gs_tap_fstate init = {};
		if (!watch_ports || !(port_watched(f->sport) || port_watched(f->dport)))
			return -1;
		if (tcp_flags & TCP_RST)
			return -1;
		if (tcp_flags & TCP_SYN) {
			init.mode = GS_FS_SYNC;
			init.next_hdr = seq + 1;
		} else {
			count(GS_CNT_FLOWS_MIDSTREAM);
		}
		st = fstate_new(f, &init, now, &idx);
		if (!st) {
			count(GS_CNT_FLOW_MAP_FULL);
			return -1;
		}
		tcp_flags &= ~TCP_SYN;  /* just made for it */
	}
	if (tcp_flags & TCP_SYN) {
		/* a new connection on the 4-tuple: frame from its first byte */
		__builtin_memset(st, 0, sizeof *st);
		st->mode = GS_FS_SYNC;
		st->next_hdr = seq + 1;
	}
	if (idx < FC_SLOTS)
		return idx;
	idx = FC_SLOTS + (bpf_get_smp_processor_id() & (GS_TAP_MAX_CPUS - 1));
	spare = bpf_map_lookup_elem(&fcache, &idx);
	if (!spare)
		return -1;
	spare->st = *st;
	return idx;
}

/* The common packet's framing state: its direction holds its fcache slot (and
 * no SYN: fc_get starts a new connection's framing).  The slot's index, the
 * slot renewed as fc_get renews it; -1: ask fc_get.  Inlined in the tap. */
static __always_inline int fc_fast(const struct gs_tap_flow *f, __u32 tcp_flags)
{
	struct gs_tap_fcache *s;
	__u32 idx;
	if (!fc_slots || (tcp_flags & TCP_SYN))
		return -1;
	s = fc_slot_of(f, &idx);
	if (!s || !fc_holds(s, f))
		return -1;
	fc_renew(s, tcp_flags, coarse_now());
	return (int)idx;
}

/* A spare entry's state (fc_get) back into `flows`. */
static __always_inline void fc_put_back(const struct gs_tap_flow *f, __u32 idx, const struct gs_tap_fstate *st)
{
	struct gs_tap_fstate *h;
	if (idx < FC_SLOTS)
		return;
	h = bpf_map_lookup_elem(&flows, f);
	if (h)
		*h = *st;
}

#endif
