// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Framing a segment: where the GIOP messages that start in it lie, from the
 * direction's framing state (giop_frame.bpf.h checks a header).  Included by
 * giop_tap.bpf.c only. */
#ifndef GS_TAP_FRAME_BPF_H
#define GS_TAP_FRAME_BPF_H

/* A record carries GS_TAP_HEADS heads; a segment that starts more messages
 * (oneway floods: omniORB coalesces many small Requests into one send) goes on
 * in records of their own (seg_more), up to GS_TAP_FRAME_HEADS_MAX starts. */
#define FRAME_STEPS GS_TAP_HEADS
#define MORE_RECORDS (GS_TAP_FRAME_HEADS_MAX / GS_TAP_HEADS - 1)
/* scanned for a header when framing is lost: SCAN_CHUNKS * SCAN_STEP bytes */
#define SCAN_CHUNKS 8
#define SCAN_STEP 52
#define SCAN_LOAD (SCAN_STEP + GIOP_HDR)

/* in frame_ctx.flags (not the record's: seg_fill keeps 8 bits): the segment
 * is a late one, framed in this CPU's spare entry (frame()) */
#define FR_LATE 0x100

/* Framing finds where the message heads of a segment lie; their bytes are
 * loaded only when the record is written (straight into the ring).  What it
 * found is kept per CPU (`framing`), not on the stack: the framing and the
 * writing of the records are two global functions (frame_seg, write_seg),
 * each verified once, and this is what the one hands to the other.  No
 * pointers in it: a pointer kept in memory a global function writes is a
 * number to the verifier afterwards. */
struct frame_ctx {
	__u32 seq, poff, plen;
	__u32 used;               /* head bytes so far */
	__u16 n;                  /* heads so far */
	__u16 flags;              /* GS_SEG_* found, FR_LATE */
	__u32 fi;                 /* the direction's fcache index (fc_get) */
	__u32 st_idx;             /* the fcache entry framed in: fi, or the CPU's spare one (FR_LATE) */
	/* a segment shipped in several records (seg_more): the payload offset
	 * the record being framed covers from */
	__u32 start;
	__u32 ifindex;
	struct gs_tap_head heads[GS_TAP_HEADS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct frame_ctx);
} framing SEC(".maps");

/* What framing works with, on the stack of the function that frames (the
 * loop callbacks get it). */
struct frame_run {
	struct __sk_buff *skb;
	struct gs_tap_fstate *st;
	struct frame_ctx *c;
	const struct pkt *p;
};

/* Notes payload bytes [pos, pos+k) as the next message head of the record. */
static __always_inline void ship(struct frame_ctx *c, __u32 pos, __u32 k)
{
	__u32 i = c->n;
	if (i >= GS_TAP_HEADS) {
		c->flags |= GS_SEG_HEADS_LOST;
		count(GS_CNT_HEADS_LOST);
		return;
	}
	if (k == 0)
		return;
	if (k > GS_TAP_HEAD_MAX)
		k = GS_TAP_HEAD_MAX;
	c->heads[i & (GS_TAP_HEADS - 1)].off = pos;
	c->heads[i & (GS_TAP_HEADS - 1)].len = k;
	c->n = i + 1;
	c->used += k;
}

static __always_inline void lose_sync(struct gs_tap_fstate *st)
{
	st->mode = GS_FS_UNSYNC;
	st->hdr_have = 0;
	st->hole_end = 0;  /* a hole still open is forgotten */
	count(GS_CNT_RESYNC);
}

struct scan_ctx {
	struct __sk_buff *skb;
	__u32 poff, plen;
	__u32 from;               /* searched from this payload offset */
	int found;                /* offset of the magic, -1: none yet */
};

/* One SCAN_STEP of the payload searched for the GIOP magic.  The byte loop
 * compares the magic only: a header's other checks (giop_msg_len), inside it,
 * gave the verifier a dozen data-dependent branches per byte, whose states
 * do not merge (300 000 instructions for this loop alone). */
static int scan_chunk(__u32 ci, struct scan_ctx *c)
{
	__u8 scan[SCAN_LOAD + 4];
	__u32 base = c->from + ci * SCAN_STEP, k;
	if (base >= SCAN_CHUNKS * SCAN_STEP || base + GIOP_HDR > c->plen)
		return 1;
	k = c->plen - base;
	if (k > SCAN_LOAD)
		k = SCAN_LOAD;
	barrier_var(k);
	k &= 127;
	if (k < GIOP_HDR || k > SCAN_LOAD || bpf_skb_load_bytes(c->skb, c->poff + base, scan, k))
		return 1;
	for (__u32 j = 0; j < SCAN_STEP; j++) {
		if (j + GIOP_HDR > k)
			return 1;
		if (scan[j] == 'G' && scan[j + 1] == 'I' && scan[j + 2] == 'O' && scan[j + 3] == 'P') {
			c->found = (int)(base + j);
			return 1;
		}
	}
	return 0;
}

/* The first GIOP magic in payload [poff, poff + plen) at or after `from`,
 * below SCAN_CHUNKS * SCAN_STEP, with room for a header: its offset, or -1.
 * A global function: the byte loop is walked once by the verifier, whatever
 * state the caller is in. */
__attribute__((noinline)) int scan_magic(struct __sk_buff *skb, __u32 poff, __u32 plen, __u32 from)
{
	struct scan_ctx s = { .skb = skb, .poff = poff, .plen = plen, .from = from, .found = -1 };
	if (!skb)
		return -1;
	bpf_loop(SCAN_CHUNKS, scan_chunk, &s, 0);
	return s.found;
}

/* Candidates checked as whole headers, at most: a payload with more false
 * magics than this before a real header is not resynced in (counted as a
 * resync not found; the next segment tries again). */
#define SCAN_TRIES 8

/* The first SCAN_CHUNKS * SCAN_STEP bytes of payload [poff, poff + plen)
 * searched for a plausible GIOP header: its offset, or -1. */
__attribute__((noinline)) int scan_header(struct __sk_buff *skb, __u32 poff, __u32 plen)
{
	__u8 h[GIOP_HDR];
	__u32 from = 0;
	if (!skb)
		return -1;
	for (int t = 0; t < SCAN_TRIES; t++) {
		int at = scan_magic(skb, poff, plen, from);
		if (at < 0 || at >= SCAN_CHUNKS * SCAN_STEP)
			return -1;
		if (bpf_skb_load_bytes(skb, poff + (__u32)at, h, GIOP_HDR))
			return -1;
		if (giop_msg_len(h, max_message))
			return at;
		from = (__u32)at + 1;
	}
	return -1;
}

/* A header cut by the previous segment's end: its remaining bytes start this
 * one.  Returns the bytes of the payload it used. */
static __always_inline __u32 finish_header(struct __sk_buff *skb, struct gs_tap_fstate *st, __u32 seq,
					   __u32 poff, __u32 plen)
{
	__u32 have = st->hdr_have, take = GIOP_HDR - have, len;
	__u8 part[16];
	if (have == 0 || have >= GIOP_HDR)
		return 0;
	if (take > plen)
		take = plen;
	barrier_var(take);
	take &= 15;
	if (take == 0 || take > GIOP_HDR || bpf_skb_load_bytes(skb, poff, part, len_1_to(take, 15)))
		return 0;
	for (__u32 i = 0; i < GIOP_HDR; i++)
		if (i >= have && i < have + take)
			st->hdr[i] = part[(i - have) & 15];
	st->hdr_have = have + take;
	if (have + take < GIOP_HDR) {
		st->cont_seq = seq + plen;   /* a tiny segment: still not whole */
		return take;
	}
	len = giop_msg_len(st->hdr, max_message);
	if (!len) {
		lose_sync(st);
		return take;
	}
	st->mode = GS_FS_SYNC;
	st->hdr_have = 0;
	st->next_hdr = st->hdr_seq + len;
	st->head_end = st->hdr_seq + (len < GS_TAP_HEAD_MAX ? len : GS_TAP_HEAD_MAX);
	return take;
}

/* The message that starts at st->next_hdr, if it starts in this segment:
 * its head goes into the record, framing moves past it.  1: no more. */
static int frame_step(__u32 i, struct frame_run *r)
{
	struct gs_tap_fstate *st = r->st;
	struct frame_ctx *c = r->c;
	__u32 pos = st->next_hdr - c->seq, len, head, k;
	__u8 h[GIOP_HDR];
	(void)i;
	/* the record is full: the next message's head goes in the next one */
	if (c->n >= GS_TAP_HEADS)
		return 1;
	if (st->mode != GS_FS_SYNC || seq_before(st->next_hdr, c->seq) || pos >= c->plen)
		return 1;
	if (pos + GIOP_HDR > c->plen) {
		/* the header goes on in the next segment */
		__u32 n = c->plen - pos;
		/* the verifier must see the bound on the register passed */
		barrier_var(n);
		n &= 15;
		if (n == 0 || n >= GIOP_HDR || bpf_skb_load_bytes(r->skb, c->poff + pos, st->hdr, len_1_to(n, 15))) {
			lose_sync(st);
			return 1;
		}
		st->mode = GS_FS_PARTIAL;
		st->hdr_have = n;
		st->hdr_seq = st->next_hdr;
		st->head_end = st->next_hdr + GS_TAP_HEAD_MAX;
		st->cont_seq = c->seq + c->plen;
		ship(c, pos, n);
		return 1;
	}
	if (bpf_skb_load_bytes(r->skb, c->poff + pos, h, GIOP_HDR)) {
		lose_sync(st);
		return 1;
	}
	len = giop_msg_len(h, max_message);
	if (!len) {
		lose_sync(st);
		return 1;
	}
	head = len < GS_TAP_HEAD_MAX ? len : GS_TAP_HEAD_MAX;
	k = c->plen - pos < head ? c->plen - pos : head;
	ship(c, pos, k);
	if (k < head) {
		st->head_end = st->next_hdr + head;
		st->cont_seq = c->seq + c->plen;
	}
	st->next_hdr += len;
	return 0;
}

#define FC_READ32(x) (*(volatile __u32 *)&(x))
/* busy-wait steps for the CPU framing the segment before (a few ns each;
 * 648 heads framed and shipped in 41 records take tens of us) */
#define BUSY_SPIN (1u << 16)

/* 0 (wait on) while another CPU frames a segment of the direction that ends
 * at or before this one's start and the expected header is still before it:
 * the segment just before (the common case), or an earlier one with a
 * segment between not framed yet (sent by two threads, two segments can
 * reach tc in the other order) -- which may come while the earlier one's
 * framing ends. */
/* With no CPU framing yet, a hole is waited on for HOLE_SPIN steps (a few
 * us): the segment before may be about to be framed on another CPU (between
 * its tc entry and frame()), and a resync here would race with it. */
#define HOLE_SPIN 1024u

static int busy_wait(__u32 i, struct frame_run *r)
{
	const struct gs_tap_fstate *st = r->st;
	const struct frame_ctx *c = r->c;
	__u32 b = FC_READ32(st->busy_end);
	if (!(*(volatile const __u8 *)&st->mode == GS_FS_SYNC && seq_before(FC_READ32(st->next_hdr), c->seq)))
		return 1;  /* no hole (any more) */
	if (b && !seq_before(c->seq, b))
		return 0;  /* framing before this segment is under way */
	return i >= HOLE_SPIN;
}

/* The segment's framing is done (its records written): a segment after it
 * waits no more; a late one moves its direction's hole on. */
static __always_inline void frame_done(struct frame_run *r)
{
	const struct gs_tap_fstate *sp = r->st;
	const struct frame_ctx *c = r->c;
	struct gs_tap_fcache *fc;
	struct gs_tap_fstate *st;
	__u32 fi = c->fi;
	if (!(c->flags & FR_LATE)) {
		if (r->st->busy_end == c->seq + c->plen)
			r->st->busy_end = 0;
		return;
	}
	fc = bpf_map_lookup_elem(&fcache, &fi);
	if (!fc)
		return;
	st = &fc->st;
	if (!st->hole_end)
		return;
	if (sp->mode != GS_FS_SYNC || seq_before(sp->next_hdr, c->seq + c->plen)) {
		st->hole_end = 0;  /* framing lost in it: the hole stays unframed */
	} else if (seq_before(sp->next_hdr, st->hole_end)) {
		st->hole_hdr = sp->next_hdr;  /* more late segments to come */
	} else {
		/* the late segments' framing meets the resync point: it was right */
		if (sp->next_hdr == st->hole_end)
			count(GS_CNT_HOLE_CONFIRMED);
		st->hole_end = 0;
	}
}

/* Finds the GIOP messages that start in payload [0, plen) of sequence `seq`
 * and notes their heads in c (the first GS_TAP_HEADS: seg_more the next). */
static __always_inline void frame(struct frame_run *r)
{
	struct gs_tap_fstate *st = r->st;
	struct frame_ctx *c = r->c;
	__u32 seq = c->seq, plen = c->plen;

	/* A late segment (the expected header of a hole lies in it, see
	 * hole_hdr): framed from that header in this CPU's spare entry, the
	 * direction's state untouched (frame_done moves the hole on). */
	if (c->fi < FC_SLOTS && st->hole_end && !seq_before(st->hole_hdr, seq) &&
	    seq_before(st->hole_hdr, seq + plen) && seq_before(seq, st->hole_end)) {
		__u32 idx = FC_SLOTS + (bpf_get_smp_processor_id() & (GS_TAP_MAX_CPUS - 1));
		struct gs_tap_fcache *sp = bpf_map_lookup_elem(&fcache, &idx);
		if (sp) {
			__u32 h = st->hole_hdr;
			__builtin_memset(&sp->st, 0, sizeof sp->st);
			sp->st.mode = GS_FS_SYNC;
			sp->st.next_hdr = h;
			r->st = st = &sp->st;
			c->st_idx = idx;
			c->flags |= FR_LATE;
		}
	}
	/* Two segments of one direction can reach tc on two CPUs at once; the
	 * later one's framing starts where the earlier one's ends.  Framing a
	 * segment of many messages takes a while (all of them, a record per
	 * GS_TAP_HEADS): the later one waits for it (bounded: counted), else it
	 * would find the expected header behind it and resync, and the earlier
	 * one its state moved past its end and stop. */
	if (!busy_wait(0, r)) {
		bpf_loop(BUSY_SPIN, busy_wait, r, 0);
		if (!busy_wait(HOLE_SPIN, r))
			count(GS_CNT_FRAME_WAIT_LONG);
	}
	st->busy_end = seq + plen;

	/* the head of a message that began in the previous segment goes on here */
	if (st->mode != GS_FS_UNSYNC && st->cont_seq == seq && seq_before(seq, st->head_end)) {
		__u32 k;
		if (st->mode == GS_FS_PARTIAL)
			finish_header(r->skb, st, seq, c->poff, plen);
		if (st->mode != GS_FS_UNSYNC && seq_before(seq, st->head_end)) {
			k = st->head_end - seq;
			if (k > plen)
				k = plen;
			ship(c, 0, k);
			if (k == plen)
				st->cont_seq = seq + plen;
		}
	} else if (st->mode == GS_FS_PARTIAL && !seq_before(seq, st->hdr_seq + st->hdr_have)) {
		/* the rest of the header is in a segment the tap did not see */
		lose_sync(st);
	}
	if (st->mode == GS_FS_PARTIAL)
		return;
	/* the expected header lies in bytes before this segment that never came
	 * (or come later: the hole, framed when they do) */
	if (st->mode == GS_FS_SYNC && seq_before(st->next_hdr, seq)) {
		__u32 h = st->next_hdr;
		lose_sync(st);
		st->hole_hdr = h;
		st->hole_end = 1;  /* set to the resync point below */
	}
	if (st->mode == GS_FS_UNSYNC) {
		int found = scan_header(r->skb, c->poff, plen);
		if (found < 0)
			return;
		st->mode = GS_FS_SYNC;
		st->next_hdr = seq + (__u32)found;
		c->flags |= GS_SEG_RESYNC;
		if (st->hole_end)
			st->hole_end = st->next_hdr ? st->next_hdr : 1;
	}
	/* mostly one message, which ends in this segment or later: no loop
	 * (a helper call and a callback per step) unless another header lies in
	 * the segment */
	if (frame_step(0, r) == 0 && st->mode == GS_FS_SYNC && !seq_before(st->next_hdr, seq) &&
	    st->next_hdr - seq < plen)
		bpf_loop(FRAME_STEPS, frame_step, r, 0);
}

/* Framing stopped with the record full and another message starting in the
 * segment. */
static __always_inline bool frame_more(const struct frame_run *r)
{
	const struct gs_tap_fstate *st = r->st;
	const struct frame_ctx *c = r->c;
	return c->n >= GS_TAP_HEADS && st->mode == GS_FS_SYNC && !seq_before(st->next_hdr, c->seq) &&
	       st->next_hdr - c->seq < c->plen;
}

/* A segment's payload framed (pp: the packet, fi: its direction's framing
 * state, fc_get; flags: GS_SEG_EGRESS or 0), the result in this CPU's
 * `framing` entry for write_seg.  A global function (see frame_ctx).  0, or
 * -1: nothing framed (write_seg then writes the metadata alone). */
__attribute__((noinline)) int frame_seg(struct __sk_buff *skb, const struct pkt *pp, __u32 fi, __u32 flags)
{
	struct gs_tap_fcache *fc;
	struct gs_tap_flow key;
	struct frame_run r;
	struct frame_ctx *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&framing, &zero);
	if (!c || !skb || !pp)
		return -1;
	c->n = 0;
	c->used = 0;
	c->flags = (__u16)flags;
	c->fi = fi;
	c->st_idx = fi;
	c->start = 0;
	c->ifindex = skb->ifindex;
	c->seq = pp->seq + ((pp->flags & TCP_SYN) ? 1 : 0);
	c->poff = pp->poff;
	c->plen = pp->plen;
	if (!pp->plen)
		return 0;
	fc = bpf_map_lookup_elem(&fcache, &fi);
	if (!fc)
		return -1;
	r.skb = skb;
	r.st = &fc->st;
	r.c = c;
	r.p = pp;
	frame(&r);
	if (!frame_more(&r))
		frame_done(&r);
	/* on the stack: a map key must be there on older kernels */
	key = pp->flow;
	fc_put_back(&key, fi, &fc->st);
	return 0;
}

#endif
