// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The syscalls waiting in watch_tab for the packet tap to carry them in a
 * segment record (struct gs_tap_watch, giop_tap.h): the slot of a connection,
 * holding and letting go of it, and what the tap claims.  Included by
 * giop_tap.bpf.c only. */
#ifndef GS_TAP_WATCH_BPF_H
#define GS_TAP_WATCH_BPF_H

/* The tag of a connection (direction local -> remote) and its slot in
 * watch_tab (from the connection: a pointer may not be computed with). */
static __always_inline struct gs_tap_watch *watch_of(const struct gs_tap_flow *out, __u64 *tag)
{
	const __u32 *a = (const __u32 *)out->saddr, *b = (const __u32 *)out->daddr;
	__u64 t = ((__u64)out->sport << 48 | (__u64)out->dport << 32 | out->family) ^
		  ((__u64)(a[0] ^ a[3]) << 16) ^ (b[0] ^ b[3]);
	__u32 idx = ((__u32)(t ^ (t >> 32)) * 0x9E3779B1u) >> 20;
	*tag = t;
	return &watch_tab[idx & (GS_TAP_WATCH_SLOTS - 1)];
}

/* A waiting syscall as the GS_REC_SEND/GS_REC_RECV record it stands for (no
 * head: only syscalls without one wait in watch_tab); `fl`: the socket's
 * connection, local -> remote.  0, or -1: the ring is full (not counted here:
 * the caller may keep it waiting). */
static __always_inline int sys_rec(const struct gs_tap_fold_ev *ev, const struct gs_tap_flow *fl, bool send)
{
	struct gs_tap_sys *r = bpf_ringbuf_reserve(&events, GS_TAP_SYS_SHORT, 0);
	if (!r)
		return -1;
	r->kind = send ? GS_REC_SEND : GS_REC_RECV;
	r->tgid = ev->tgid;
	r->tid = ev->tid;
	r->seq = ev->seq;
	r->ts_ns = ev->ts_ns;
	r->ts_enter = 0;
	if (send) {
		r->flow = *fl;
	} else {
		__builtin_memcpy(r->flow.saddr, fl->daddr, 16);
		__builtin_memcpy(r->flow.daddr, fl->saddr, 16);
		r->flow.sport = fl->dport;
		r->flow.dport = fl->sport;
		r->flow.family = fl->family;
		r->flow.pad[0] = r->flow.pad[1] = r->flow.pad[2] = 0;
	}
	r->len = ev->len;
	r->call = ev->call;
	r->head_len = 0;
	r->pad = 0;
	bpf_ringbuf_submit(r, wake_flags());
	return 0;
}

/* Holds the slot (GS_PEND_BUSY) unless another CPU does: true with what was
 * waiting in *was.  The holder ends with settle(). */
static __always_inline bool hold(struct gs_tap_watch *w, __u64 *was)
{
	__u64 o = w->state;
	if (o & GS_PEND_BUSY)
		return false;
	if (__sync_val_compare_and_swap(&w->state, o, o | GS_PEND_BUSY) != o)
		return false;
	*was = o;
	return true;
}

/* Lets go of a held slot: `state`, what waits in it now. */
static __always_inline void settle(struct gs_tap_watch *w, __u64 state)
{
	__sync_lock_test_and_set(&w->state, state);
}

/* A held slot's waiting syscalls of the kinds in `which` as records of their
 * own (in the order they happened); returns what is left waiting. */
static __always_inline __u64 flush_held(struct gs_tap_watch *w, __u64 was, __u64 which)
{
	bool send = (was & which & GS_PEND_SEND) != 0, recv = (was & which & GS_PEND_RECV) != 0;
	struct gs_tap_flow fl;
	if (!send && !recv)
		return was;
	fl = w->flow;
	if (recv && send && w->send.ts_ns < w->recv.ts_ns) {
		if (sys_rec(&w->send, &fl, true))
			count(GS_CNT_RB_LOST);
		send = false;
	}
	if (recv && sys_rec(&w->recv, &fl, false))
		count(GS_CNT_RB_LOST);
	if (send && sys_rec(&w->send, &fl, true))
		count(GS_CNT_RB_LOST);
	return was & ~which;
}

/* The packet tap, for a segment the socket of direction `fl` sends (payload
 * [seq, seq + plen)): the send whose first byte it carries and the recv
 * that came before it, if they wait.  Returns the slot, held, with the fold
 * in *fold and what stays waiting in *left (settle() it to that once the
 * record is written, to what was there if it was not); NULL: nothing taken. */
static __always_inline struct gs_tap_watch *claim(const struct gs_tap_flow *fl, __u32 seq, __u32 plen,
						  struct gs_tap_seg_fold *fold, __u64 *was, __u64 *left)
{
	__u64 tag, o, take = 0;
	struct gs_tap_watch *w = watch_of(fl, &tag);
	/* plain reads first: most segments find nothing waiting */
	o = w->state;
	if (!(o & (GS_PEND_SEND | GS_PEND_RECV)) || (o & GS_PEND_BUSY) || w->tag != tag)
		return NULL;
	if (!(o & GS_PEND_RECV) && w->send.seq - seq >= plen)
		return NULL;
	if (!hold(w, &o))
		return NULL;
	/* held now: what was read before may have changed under us */
	if (w->tag != tag || !flow_eq(&w->flow, fl)) {
		settle(w, o);
		return NULL;
	}
	fold->send.call = fold->recv.call = 0;
	if ((o & GS_PEND_SEND) && w->send.seq - seq < plen) {
		fold->send = w->send;
		take |= GS_PEND_SEND;
	}
	if (o & GS_PEND_RECV) {
		fold->recv = w->recv;
		take |= GS_PEND_RECV;
	}
	if (!take) {
		settle(w, o);
		return NULL;
	}
	*was = o;
	*left = o & ~take;
	return w;
}

#endif
