// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The packet tap's ring records: a segment's metadata and the heads of the
 * messages that start in it (struct gs_tap_seg, giop_tap.h), stamped, with the
 * syscalls claimed for it.  Included by giop_tap.bpf.c only. */
#ifndef GS_TAP_RECORDS_BPF_H
#define GS_TAP_RECORDS_BPF_H

/* TAI - REALTIME in ns (37 s, or 0 where the TAI offset was never set):
 * written by user space at start and at each poll (.bss is mapped), so that
 * a receive stamp (CLOCK_REALTIME) converts to CLOCK_MONOTONIC here, where
 * the kernel has no REALTIME helper for BPF. */
__s64 tai_off;

/* The instant of a segment's record, taken right after its place in the ring
 * is reserved (see tap()).  On ingress (`seg_flags` without GS_SEG_EGRESS;
 * `rx`: __sk_buff->tstamp, read without tstamp_type, so that at ingress a
 * delivery time -- a sender's EDT in CLOCK_MONOTONIC, which TCP sets and veth
 * carries over -- reads 0 and only a receive stamp, CLOCK_REALTIME, shows:
 * net/core/filter.c, bpf_convert_tstamp_read), when
 * the kernel took a receive stamp (netif_rx / netif_receive_skb, while anything
 * holds rx timestamping on: attach itself by default, tcpdump, chrony), that
 * instant instead: when the packet reached the host, before the backlog waited
 * for the softirq (the time model's t3/t7).  Its age is measured against
 * REALTIME now (TAI - the offset) and taken off MONOTONIC now.
 * A global function: verified once, on its own, not at each of the places a
 * record is stamped (its branches would multiply the states the verifier
 * walks through each of them). */
__attribute__((noinline)) __u64 seg_time(__u64 rx, __u32 seg_flags)
{
	__u64 now = bpf_ktime_get_ns();
	__s64 age;
	/* a segment's later records (GS_SEG_MORE) are not counted again */
	bool once = !(seg_flags & GS_SEG_MORE);
	if (seg_flags & GS_SEG_EGRESS)
		return now;
	/* TAI (6.1+) is how a REALTIME stamp is converted here */
	if (!rx || !HAS_HELPER(ktime_get_tai_ns)) {
		if (once)
			count(GS_CNT_RX_UNSTAMPED);
		return now;
	}
	age = (__s64)(bpf_ktime_get_tai_ns() - (__u64)tai_off - rx);
	if (age < 0 || (__u64)age >= GS_TAP_RX_AGE_MAX) {
		if (once)
			count(GS_CNT_RX_FAR);
		return now;
	}
	if (once)
		count(GS_CNT_RX_STAMPED);
	return now - (__u64)age;
}

static __always_inline void seg_fill(struct gs_tap_seg *r, const struct pkt *p, __u64 now, __u32 ifindex,
				     __u32 flags, __u32 n, __u32 used)
{
	r->kind = GS_REC_SEG;
	r->ifindex = ifindex;
	r->ts_ns = now;
	r->flow = p->flow;
	r->seq = p->seq;
	r->ack = p->ack;
	r->len = p->plen;
	r->window = p->window;
	r->tcp_flags = p->flags;
	r->flags = (__u8)flags;
	r->n_heads = (__u16)n;
	r->data_len = (__u16)used;
	r->sys_off = 0;
}

static __always_inline void submit(void *r)
{
	bpf_ringbuf_submit(r, wake_flags());
}

/* A record with one head of up to K bytes, written straight into the ring
 * (no copy through a scratch area): a fixed size (the verifier wants one), the
 * head loaded from the packet into it; with syscalls taken (`fold`), those
 * after the head's room. */
#define SEG_ONE(K)							\
	struct seg_one_##K {						\
		struct gs_tap_seg h;					\
		struct gs_tap_head head;				\
		__u8 data[K];						\
	};								\
	struct seg_one_##K##_fold {					\
		struct seg_one_##K r;					\
		struct gs_tap_seg_fold s;				\
	};								\
	static __always_inline int seg_one_##K(struct __sk_buff *skb, const struct pkt *p, \
					       const struct frame_ctx *c, __u32 ifindex, \
					       const struct gs_tap_seg_fold *fold) \
	{								\
		struct seg_one_##K *r;					\
		__u32 k = c->heads[0].len;				\
		__u64 now;						\
		if (fold) {						\
			struct seg_one_##K##_fold *rs =			\
				bpf_ringbuf_reserve(&events, sizeof *rs, 0); \
			if (!rs)					\
				return -1;				\
			rs->s = *fold;					\
			r = &rs->r;					\
		} else {						\
			r = bpf_ringbuf_reserve(&events, sizeof *r, 0);	\
			if (!r)						\
				return -1;				\
		}							\
		now = seg_time(skb->tstamp, c->flags); /* ring order = time order (tap()) */ \
		if (k == 0 || k > K ||					\
		    bpf_skb_load_bytes(skb, p->poff + c->heads[0].off, r->data, len_1_to(k, K - 1))) { \
			/* the metadata all the same */			\
			count(GS_CNT_HEADS_LOST);			\
			seg_fill(&r->h, p, now, ifindex, c->flags | GS_SEG_HEADS_LOST, 0, 0); \
			r->head.off = r->head.len = 0;			\
		} else {						\
			seg_fill(&r->h, p, now, ifindex, c->flags, 1, k); \
			r->head = c->heads[0];				\
		}							\
		if (fold)						\
			r->h.sys_off = sizeof *r;			\
		submit(r);						\
		return 0;						\
	}
SEG_ONE(64)
SEG_ONE(128)
SEG_ONE(256)

/* The common data segment: exactly one GIOP message starts in it, at its first
 * byte, on a direction in sync (st->next_hdr == seq, no head of an earlier
 * message going on here), and the message ends in it or later.  Its first k
 * payload bytes (k = min(plen, GS_TAP_HEAD_MAX): the head the record ships) are
 * loaded once, straight into the ring record, and the header is read there: one
 * bpf_skb_load_bytes, not one for the header (frame_step) and one for the head
 * (seg_one_K).  The same record, and the same framing state after it, as
 * frame() + seg_one_K.  0: written; 1: not this case (a bad header, another
 * message starting in the segment, no room in the ring, a failed load): the
 * record is discarded, the state untouched, and the caller frames the segment
 * the general way. */
#define ONE_FAST(K)							\
	static __always_inline int one_fast_##K(struct __sk_buff *skb, const struct pkt *p, \
						struct gs_tap_fstate *st, __u32 k, \
						__u32 ifindex, __u32 flags, \
						const struct gs_tap_seg_fold *fold) \
	{								\
		struct seg_one_##K *r;					\
		struct seg_one_##K##_fold *rs = NULL;			\
		__u32 len, head;					\
		__u64 now;						\
		if (fold) {						\
			rs = bpf_ringbuf_reserve(&events, sizeof *rs, 0); \
			if (!rs)					\
				return 1;				\
			r = &rs->r;					\
		} else {						\
			r = bpf_ringbuf_reserve(&events, sizeof *r, 0);	\
			if (!r)						\
				return 1;				\
		}							\
		now = seg_time(skb->tstamp, flags); /* ring order = time order */ \
		barrier_var(k);						\
		k &= 2 * K - 1;						\
		if (k < GIOP_HDR || k > K ||				\
		    bpf_skb_load_bytes(skb, p->poff, r->data, k))	\
			goto undo;					\
		len = giop_msg_len(r->data, max_message);		\
		if (!len || len < p->plen)				\
			goto undo;					\
		head = len < GS_TAP_HEAD_MAX ? len : GS_TAP_HEAD_MAX;	\
		if (k < head) {						\
			st->head_end = st->next_hdr + head;		\
			st->cont_seq = p->seq + p->plen;		\
		}							\
		st->next_hdr += len;					\
		seg_fill(&r->h, p, now, ifindex, flags, 1, k);		\
		r->head.off = 0;					\
		r->head.len = k;					\
		if (fold) {						\
			rs->s = *fold;					\
			r->h.sys_off = sizeof *r;			\
		}							\
		submit(r);						\
		return 0;						\
	undo:								\
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);		\
		return 1;						\
	}
ONE_FAST(64)
ONE_FAST(128)
ONE_FAST(256)

/* The common data segment (see ONE_FAST), of direction p->flow whose framing
 * state is fcache entry fi (fc_get), with the syscalls waiting for it when
 * `claim_ok`.  0: its record is written; 1: nothing done (nothing taken, the
 * state untouched): frame it the general way.  A global function: the verifier
 * walks it once, and the tap after it sees one outcome whichever way it went
 * (inlined, its paths would multiply the tap's). */
__attribute__((noinline)) int one_fast(struct __sk_buff *skb, const struct pkt *p, __u32 fi, __u32 flags,
				       bool claim_ok)
{
	struct gs_tap_watch *w = NULL;
	struct gs_tap_seg_fold *fold;
	const struct gs_tap_seg_fold *fp;
	struct gs_tap_fstate *st;
	struct gs_tap_fcache *fc;
	struct scratch *sc;
	__u64 was = 0, left = 0;
	__u32 k, zero = 0;
	int r;
	if (!skb || !p)
		return 1;
	fc = bpf_map_lookup_elem(&fcache, &fi);
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!fc || !sc)
		return 1;
	fold = &sc->fold;
	st = &fc->st;
	/* in sync, a message starting at the first byte, no head of an
	 * earlier one going on here (frame(): its first branch) */
	if (st->mode != GS_FS_SYNC || st->next_hdr != p->seq ||
	    (st->cont_seq == p->seq && seq_before(p->seq, st->head_end)))
		return 1;
	k = p->plen < GS_TAP_HEAD_MAX ? p->plen : GS_TAP_HEAD_MAX;
	if (claim_ok)
		w = claim(&p->flow, p->seq, p->plen, fold, &was, &left);
	fp = w ? fold : NULL;
	r = k <= 64 ? one_fast_64(skb, p, st, k, skb->ifindex, flags, fp) :
	    k <= 128 ? one_fast_128(skb, p, st, k, skb->ifindex, flags, fp) :
	    one_fast_256(skb, p, st, k, skb->ifindex, flags, fp);
	if (r == 0) {
		/* on the stack: a map key must be there on older kernels */
		struct gs_tap_flow key = p->flow;
		fc_put_back(&key, fi, st);
	}
	/* what was taken went with the record; no record: as if not tried */
	if (w)
		settle(w, r ? was : left);
	return r ? 1 : 0;
}

struct load_ctx {
	struct __sk_buff *skb;
	struct scratch *sc;
	const struct frame_ctx *c;
	__u32 data_off;           /* where the data starts in sc->rec */
	__u32 used;
	int err;
};

#define SC_HEADS sizeof(struct gs_tap_seg)

/* Head i of a record put together in the scratch area. */
static int load_head(__u32 i, struct load_ctx *l)
{
	const struct frame_ctx *c = l->c;
	struct gs_tap_head *hd;
	__u32 off, k, u = l->used, d = l->data_off, j;
	if (i >= c->n || i >= GS_TAP_HEADS)
		return 1;
	j = i;
	barrier_var(j);
	j &= GS_TAP_HEADS - 1;
	off = c->heads[j].off;
	k = c->heads[j].len;
	barrier_var(k);
	k &= 2 * GS_TAP_HEAD_MAX - 1;
	barrier_var(u);
	u &= 2 * GS_TAP_DATA_MAX - 1;
	barrier_var(d);
	d &= 255;
	if (k == 0 || k > GS_TAP_HEAD_MAX || u > GS_TAP_DATA_MAX - GS_TAP_HEAD_MAX ||
	    bpf_skb_load_bytes(l->skb, c->poff + off, l->sc->rec + d + u, len_1_to(k, GS_TAP_HEAD_MAX - 1))) {
		l->err = 1;
		return 1;
	}
	hd = (struct gs_tap_head *)(l->sc->rec + SC_HEADS + j * sizeof(*hd));
	hd->off = off - c->start;
	hd->len = k;
	l->used = u + k;
	return 0;
}

/* Several heads: put together in the scratch area (header, the heads, their
 * bytes: contiguous as the record wants them), then copied into the ring. */
/* The record covers payload [c->start, end) (all of it but for a segment
 * shipped in several records). */
static __always_inline int seg_many(struct __sk_buff *skb, const struct pkt *p, const struct frame_ctx *c,
				    __u32 ifindex, __u32 end)
{
	struct gs_tap_seg *h;
	__u32 zero = 0, n = c->n, size;
	struct load_ctx l = { .skb = skb, .c = c };
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return -1;
	if (n > GS_TAP_HEADS)
		n = GS_TAP_HEADS;
	l.sc = sc;
	l.data_off = SC_HEADS + n * sizeof(struct gs_tap_head);
	bpf_loop(GS_TAP_HEADS, load_head, &l, 0);
	if (l.err) {
		/* the metadata all the same */
		count(GS_CNT_HEADS_LOST);
		n = 0;
		l.used = 0;
	}
	size = SC_HEADS + n * sizeof(struct gs_tap_head) + l.used;
	barrier_var(size);
	size &= 2 * GS_TAP_DATA_MAX - 1;
	if (size > GS_TAP_SEG_MAX)
		return -1;
	/* stamped right before the copy reserves its place (ring order = time
	 * order but for that instant) */
	h = (struct gs_tap_seg *)sc->rec;
	seg_fill(h, p, seg_time(skb->tstamp, c->flags), ifindex, c->flags | (l.err ? GS_SEG_HEADS_LOST : 0), n,
		 l.used);
	if (end != c->plen || c->start) {
		/* a part: FIN, PSH, RST where the payload ends, SYN where it
		 * starts (its seq is the SYN's, c->seq the data's) */
		h->len = end - c->start;
		if (c->start) {
			h->seq = c->seq + c->start;
			h->tcp_flags &= ~TCP_SYN;
		}
		if (end != c->plen)
			h->tcp_flags &= ~(TCP_FIN | TCP_PSH | TCP_RST);
	}
	return bpf_ringbuf_output(&events, sc->rec, size, wake_flags()) ? -1 : 0;
}

/* The next record of a segment shipped in several (its earlier ones are in
 * the ring): the heads of up to GS_TAP_HEADS more messages, for the payload
 * from the first of them to the next record's first (or the end).  The last
 * one allowed (GS_TAP_FRAME_HEADS_MAX starts) covers the rest of the payload,
 * unframed: counted, and the next segment finds framing behind it (a resync). */
static int seg_more(__u32 i, struct frame_run *r)
{
	struct gs_tap_fstate *st = r->st;
	struct frame_ctx *c = r->c;
	__u32 end;
	bool more;
	c->start = st->next_hdr - c->seq;
	c->n = 0;
	c->used = 0;
	c->flags = (c->flags & (GS_SEG_EGRESS | FR_LATE)) | GS_SEG_MORE;
	bpf_loop(GS_TAP_HEADS, frame_step, r, 0);
	more = frame_more(r);
	if (more && i + 1 >= MORE_RECORDS) {
		count(GS_CNT_FRAME_BOUND);
		more = false;
	}
	end = more ? st->next_hdr - c->seq : c->plen;
	if (c->start >= c->plen || end > c->plen || end < c->start)
		return 1;
	if (seg_many(r->skb, r->p, c, c->ifindex, end)) {
		count(GS_CNT_RB_LOST);
		return 1;
	}
	return more ? 0 : 1;
}

/* The records of a segment framed by frame_seg (its result in this CPU's
 * `framing` entry; pp, fi as there), with the syscalls waiting for it when
 * `claim_ok`: the metadata alone, one head, or several heads (in several
 * records when more than GS_TAP_HEADS messages start in it, framing the next
 * ones as it goes).  A global function (see frame_ctx).  0, or -1: a record
 * was lost (counted). */
__attribute__((noinline)) int write_seg(struct __sk_buff *skb, const struct pkt *pp, __u32 fi, bool claim_ok)
{
	struct gs_tap_fcache *fc, *fd;
	struct gs_tap_watch *w = NULL;
	struct gs_tap_seg_fold *fold;
	struct scratch *sc;
	struct frame_ctx *c;
	struct frame_run fr;
	__u64 was = 0, left = 0;
	__u32 zero = 0, ifindex, sti;
	struct pkt p;
	int r;

	if (!skb || !pp)
		return -1;
	/* on the stack: a map key must be there on older kernels */
	p = *pp;
	ifindex = skb->ifindex;
	c = bpf_map_lookup_elem(&framing, &zero);
	/* the syscalls taken live in the scratch area (the stack is short) */
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!c || !sc)
		return -1;
	fold = &sc->fold;
	/* the syscalls of a followed process waiting for this segment (its
	 * socket sends it: it leaves here, or comes back in on loopback): their
	 * records are this one's */
	if (claim_ok)
		w = claim(&p.flow, p.seq + ((p.flags & TCP_SYN) ? 1 : 0), p.plen, fold, &was, &left);
	if (c->n == 0) {
		if (w) {
			struct {
				struct gs_tap_seg h;
				struct gs_tap_seg_fold s;
			} *rs = bpf_ringbuf_reserve(&events, sizeof *rs, 0);
			if (rs) {
				seg_fill(&rs->h, &p, seg_time(skb->tstamp, c->flags), ifindex, c->flags, 0, 0);
				rs->h.sys_off = sizeof rs->h;
				rs->s = *fold;
				submit(rs);
				r = 0;
			} else {
				r = -1;
			}
		} else {
			struct gs_tap_seg *rec = bpf_ringbuf_reserve(&events, sizeof *rec, 0);
			if (rec) {
				seg_fill(rec, &p, seg_time(skb->tstamp, c->flags), ifindex, c->flags, 0, 0);
				submit(rec);
				r = 0;
			} else {
				r = -1;
			}
		}
	} else if (c->n == 1) {
		__u32 k = c->heads[0].len;
		const struct gs_tap_seg_fold *fp = w ? fold : NULL;
		r = k <= 64 ? seg_one_64(skb, &p, c, ifindex, fp) :
		    k <= 128 ? seg_one_128(skb, &p, c, ifindex, fp) :
		    seg_one_256(skb, &p, c, ifindex, fp);
	} else {
		/* rare (several messages start here): records of their own
		 * first, as they would have come */
		bool more;
		if (w) {
			settle(w, flush_held(w, was, was & ~left));
			w = NULL;
		}
		sti = c->st_idx;
		fc = bpf_map_lookup_elem(&fcache, &sti);
		fd = bpf_map_lookup_elem(&fcache, &fi);
		if (!fc || !fd)
			return -1;
		fr.skb = skb;
		fr.st = &fc->st;
		fr.c = c;
		fr.p = &p;
		more = frame_more(&fr);
		r = seg_many(skb, &p, c, ifindex, more ? fc->st.next_hdr - c->seq : c->plen);
		if (more) {
			if (!r)
				bpf_loop(MORE_RECORDS, seg_more, &fr, 0);
			frame_done(&fr);
			fc_put_back(&p.flow, fi, &fd->st);
		}
	}
	if (r)
		count(GS_CNT_RB_LOST);
	/* what was taken went with the record; the record was lost: it waits
	 * on (the next syscall of its kind, or user space, writes it) */
	if (w)
		settle(w, r ? was : left);
	return r ? -1 : 0;
}

#endif
