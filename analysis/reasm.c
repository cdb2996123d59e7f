/* SPDX-License-Identifier: BSD-2-Clause */
/* TCP reassembly, one direction at a time.
 *
 * Sequence numbers become 64-bit stream offsets (offset 0 = first byte after
 * the SYN, or the first byte seen when the capture began mid-connection), so
 * wrap-around is handled in one place.  In-order bytes go straight to the
 * framer without a copy; out-of-order segments are copied and held, up to a
 * bound per direction and in all, with the time they arrived (a byte's time is
 * the first time the capture saw it).  Bytes already seen are a retransmission
 * (counted, attributed to the calls they belong to).  Bytes the capture never
 * had are declared a gap when the receiver acknowledges past them, when the
 * hold bound is reached, or when the connection or the input ends.
 */
#include "reasm.h"

#include <stdlib.h>
#include <string.h>


/* Where bytes of the direction come from, with what the framer and pairing
 * read of the direction's reassembly. */
static inline struct gs_src src_of(const struct gs_reasm_dir *dr, int64_t ts, uint64_t packet, int64_t fill_wait)
{
	struct gs_src s = { ts, packet, fill_wait, dr->peer_ack_ts, dr->base_seq, dr->syn_seen };
	return s;
}

static void check_fin(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d)
{
	if (dr->fin_seen && !dr->fin_done && dr->next >= dr->fin_off) {
		dr->fin_done = true;
		gs_pair_direction_closed(rs->pr, f, &dr->fr.pr, d);
	}
}

static void deliver(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d, const uint8_t *data,
		    uint32_t cap, uint32_t len, const struct gs_src *src)
{
	uint64_t off = dr->next;
	dr->next += len;
	if (dr->next > dr->high)
		dr->high = dr->next;
	if (dr->acked_ts && dr->acked <= dr->next)
		dr->acked_ts = 0;
	gs_framer_bytes(rs->fm, f, &dr->fs, &dr->fr, d, off, data, cap, len, src);
}

/* A segment that brings bytes below the highest byte seen so far fills a gap
 * (a segment lost or reordered before the tap): how long after the earliest
 * held byte above `at` it came, or -1 when it fills none. */
static int64_t fill_wait(const struct gs_reasm_dir *dr, uint64_t at, int64_t ts)
{
	int64_t first = INT64_MAX;
	if (at >= dr->high)
		return -1;
	for (const struct gs_ooo *o = dr->ooo; o; o = o->next)
		if (o->off >= at && o->ts < first)
			first = o->ts;
	return first == INT64_MAX || ts < first ? 0 : ts - first;
}

static void free_ooo(struct gs_reasm *rs, struct gs_reasm_dir *dr, struct gs_ooo *o)
{
	dr->ooo_bytes -= o->cap;
	rs->ooo_total -= o->cap;
	free(o);
}

/* Delivers held segments that are now in order. */
static void drain(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d)
{
	while (dr->ooo && dr->ooo->off <= dr->next) {
		struct gs_ooo *o = dr->ooo;
		uint64_t end = o->off + o->len;
		dr->ooo = o->next;
		if (end > dr->next) {
			uint64_t trim = dr->next - o->off;
			uint32_t cap = o->cap > trim ? o->cap - (uint32_t)trim : 0;
			struct gs_src src = src_of(dr, o->ts, o->packet, o->fill_wait);
			deliver(rs, f, dr, d, o->data + (cap ? trim : 0), cap, (uint32_t)(end - dr->next), &src);
		}
		free_ooo(rs, dr, o);
		if (!f->in_use)
			return;
	}
}

/* The capture never had [next, upto): tell the framer, then go on. */
static void gap(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d, uint64_t upto, int64_t ts)
{
	/* no packet brought these bytes: the time only says when the gap was
	 * declared, and no message takes its instants from it */
	struct gs_src src = src_of(dr, ts, 0, -1);
	while (upto > dr->next) {
		uint64_t n = upto - dr->next;
		uint32_t chunk = n > 0x7fffffff ? 0x7fffffff : (uint32_t)n;
		rs->cnt->gaps++;
		rs->cnt->gap_bytes += chunk;
		deliver(rs, f, dr, d, NULL, 0, chunk, &src);
		if (!f->in_use)
			return;
	}
	drain(rs, f, dr, d);
}

/* True when every byte of [off, end) is in held segments already. */
static bool held(const struct gs_reasm_dir *dr, uint64_t off, uint64_t end)
{
	for (const struct gs_ooo *o = dr->ooo; o && o->off <= off; o = o->next) {
		if (o->off + o->len > off)
			off = o->off + o->len;
		if (off >= end)
			return true;
	}
	return false;
}

static bool hold(struct gs_reasm *rs, struct gs_reasm_dir *dr, uint64_t off, const struct gs_packet *pk)
{
	struct gs_ooo *o, **pp;
	uint32_t cap = pk->payload_cap;
	if ((uint64_t)dr->ooo_bytes + cap > rs->max_ooo_bytes ||
	    rs->ooo_total + cap > rs->max_ooo_total)
		return false;
	o = malloc(sizeof *o + cap);
	if (!o)
		return false;
	o->off = off;
	o->len = pk->payload_len;
	o->cap = cap;
	o->ts = pk->ts_ns;
	o->packet = *rs->packet_no;
	o->fill_wait = fill_wait(dr, off, pk->ts_ns);
	if (o->fill_wait >= 0)
		rs->cnt->gap_fills++;
	memcpy(o->data, pk->payload, cap);
	for (pp = &dr->ooo; *pp && (*pp)->off <= off; pp = &(*pp)->next)
		;
	o->next = *pp;
	*pp = o;
	dr->ooo_bytes += cap;
	rs->ooo_total += cap;
	if (off + o->len > dr->high)
		dr->high = off + o->len;
	return true;
}

/* A receive window of 0 advertised by direction d's sender stops the other
 * direction: time it, and charge it to the calls open meanwhile. */
static void window(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d, const struct gs_packet *pk)
{
	struct gs_reasm_dir *stopped = (struct gs_reasm_dir *)((char *)dr + (d ? -rs->dir_stride : rs->dir_stride));
	if (pk->tcp.flags & (GS_TCP_SYN | GS_TCP_RST))
		return;
	if (pk->tcp.window == 0) {
		if (!stopped->zero_window_ts)
			stopped->zero_window_ts = pk->ts_ns;
	} else if (stopped->zero_window_ts) {
		gs_evidence_zero_window(rs->ev, f->calls, pk->ts_ns - stopped->zero_window_ts);
		stopped->zero_window_ts = 0;
	}
}

/* Any segment (gs_reasm_segment takes the common ones itself). */
static __attribute__((noinline)) void segment_general(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d,
						      const struct gs_packet *pk)
{
	uint8_t flags = pk->tcp.flags;
	int64_t off;
	uint64_t end;

	if (flags & GS_TCP_SYN) {
		dr->base_seq = pk->tcp.seq + 1;
		dr->started = true;
		dr->syn_seen = true;
		dr->next = 0;
		dr->high = 0;
	}
	if (pk->payload_len == 0)
		goto fin;
	rs->cnt->segments++;
	if (!dr->started) {
		/* The capture began mid-connection: start where we are. */
		dr->base_seq = pk->tcp.seq;
		dr->started = true;
		dr->next = 0;
		dr->high = 0;
	}
	off = gs_stream_off(dr, pk->tcp.seq);
	if (flags & GS_TCP_SYN)
		off = 0;
	end = (uint64_t)(off + (int64_t)pk->payload_len);
	if (off < 0 && (int64_t)end <= 0) {
		/* entirely before the first byte we track: old data again */
		rs->cnt->retransmits++;
		goto fin;
	}
	if (end <= dr->next) {
		rs->cnt->retransmits++;
		if (dr->fs.fstate == GS_FR_MSG && !dr->fs.decoded && end > dr->fr.pr.msg.start)
			/* the head of the message it reaches is still being gathered */
			gs_pair_hold_retransmit(rs->pr, &dr->fr.pr, off < 0 ? 0 : (uint64_t)off, end, pk->ts_ns);
		else
			gs_evidence_retransmit(rs->ev, dr->fr.pr.mlog, f->calls, d, off < 0 ? 0 : (uint64_t)off, end, pk->ts_ns);
		goto fin;
	}
	if (off > (int64_t)dr->next) {
		if (held(dr, (uint64_t)off, end)) {
			rs->cnt->retransmits++;
			gs_pair_hold_retransmit(rs->pr, &dr->fr.pr, (uint64_t)off, end, pk->ts_ns);
			goto fin;
		}
		rs->cnt->out_of_order++;
		if (!hold(rs, dr, (uint64_t)off, pk)) {
			/* The bound is reached: stop waiting for the hole. */
			uint64_t upto = (uint64_t)off;
			if (dr->ooo && dr->ooo->off < upto)
				upto = dr->ooo->off;
			rs->cnt->ooo_dropped_bytes += upto - dr->next;
			gap(rs, f, dr, d, upto, pk->ts_ns);
			if (!f->in_use)
				return;
			if ((uint64_t)off <= dr->next) /* now in order */
				goto in_order;
			/* still beyond held data: hold it or give it up as a gap too */
			if (!hold(rs, dr, (uint64_t)off, pk)) {
				gap(rs, f, dr, d, (uint64_t)off, pk->ts_ns);
				if (!f->in_use)
					return;
				goto in_order;
			}
		}
		goto fin;
	}
in_order:
	{
		/* Bytes held already keep the time they were first seen: the segment
		 * goes in up to the next held one, which follows, and so on. */
		struct gs_src src = src_of(dr, pk->ts_ns, *rs->packet_no, fill_wait(dr, dr->next, pk->ts_ns));
		if (src.fill_wait >= 0)
			rs->cnt->gap_fills++;
		if ((uint64_t)off < dr->next)
			rs->cnt->overlaps++;
		while (dr->next < end) {
			uint64_t from = dr->next, to = end, skip = from - (uint64_t)off;
			uint32_t cap = pk->payload_cap > skip ? pk->payload_cap - (uint32_t)skip : 0;
			if (dr->ooo && dr->ooo->off > from && dr->ooo->off < to)
				to = dr->ooo->off;
			if (cap > to - from)
				cap = (uint32_t)(to - from);
			deliver(rs, f, dr, d, skip == 0 ? pk->payload : cap ? pk->payload + skip : NULL, cap,
				(uint32_t)(to - from), &src);
			if (!f->in_use)
				return;
			if (dr->ooo) { /* held segments may follow on now */
				drain(rs, f, dr, d);
				if (!f->in_use)
					return;
			}
		}
	}
fin:
	if ((flags & GS_TCP_FIN) && dr->started && !dr->fin_seen) {
		int64_t fo = gs_stream_off(dr, pk->tcp.seq) + pk->payload_len;
		dr->fin_seen = true;
		dr->fin_off = fo < 0 ? 0 : (uint64_t)fo;
	}
	check_fin(rs, f, dr, d);
}

/* The common segments in few tests, the rest through segment_general: an
 * ACK without bytes, SYN or FIN (it may complete a FIN seen before); bytes in
 * order exactly where the stream stands, nothing held, no byte above seen
 * before (so they fill no gap), no SYN or FIN to note.  For those this does
 * what segment_general and deliver do, without their tests for other cases. */
void gs_reasm_segment(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d, const struct gs_packet *pk)
{

	window(rs, f, dr, d, pk);
	if (!(pk->tcp.flags & (GS_TCP_SYN | GS_TCP_FIN))) {
		if (!pk->payload_len) {
			check_fin(rs, f, dr, d);
			return;
		}
		if (dr->started && !dr->ooo && dr->high <= dr->next &&
		    pk->tcp.seq == dr->base_seq + (uint32_t)dr->next) {
			struct gs_src src = src_of(dr, pk->ts_ns, *rs->packet_no, -1);
			uint32_t cap = pk->payload_cap < pk->payload_len ? pk->payload_cap : pk->payload_len;
			uint64_t off = dr->next;
			rs->cnt->segments++;
			/* deliver(): `high` was at most `next`, so it becomes the new `next` */
			dr->next += pk->payload_len;
			dr->high = dr->next;
			if (dr->acked_ts && dr->acked <= dr->next)
				dr->acked_ts = 0;
			gs_framer_bytes(rs->fm, f, &dr->fs, &dr->fr, d, off, pk->payload, cap, pk->payload_len, &src);
			if (f->in_use)
				check_fin(rs, f, dr, d);
			return;
		}
	}
	segment_general(rs, f, dr, d, pk);
}

/* Gives up on holes: acknowledged by the peer for longer than the grace, or
 * blocking held data for longer than the reorder timeout. */
void gs_reasm_expire(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d)
{
	if (dr->acked_ts && dr->acked <= dr->next)
		dr->acked_ts = 0;
	if (dr->acked_ts && *rs->now - dr->acked_ts >= GS_ACK_GAP_GRACE_NS) {
		uint64_t upto = dr->acked;
		dr->acked_ts = 0;
		while (f->in_use && upto > dr->next) {
			uint64_t stop = upto;
			if (dr->ooo && dr->ooo->off < stop)
				stop = dr->ooo->off;
			if (stop > dr->next)
				gap(rs, f, dr, d, stop, *rs->now);
			else
				drain(rs, f, dr, d);
		}
		if (!f->in_use)
			return;
		check_fin(rs, f, dr, d);
	}
	if (f->in_use && dr->ooo && *rs->now - dr->ooo->ts >= GS_REORDER_TIMEOUT_NS && dr->ooo->off > dr->next) {
		gap(rs, f, dr, d, dr->ooo->off, dr->ooo->ts);
		if (f->in_use)
			check_fin(rs, f, dr, d);
	}
}

/* End of input or of the connection: deliver what is held, across the holes. */
void gs_reasm_flush(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d)
{
	while (f->in_use && dr->ooo) {
		if (dr->ooo->off > dr->next)
			gap(rs, f, dr, d, dr->ooo->off, dr->ooo->ts);
		else
			drain(rs, f, dr, d);
	}
}

void gs_reasm_free(struct gs_reasm *rs, struct gs_reasm_dir *dr)
{
	gs_pair_dir_free(rs->pr, &dr->fr.pr);
	while (dr->ooo) {
		struct gs_ooo *o = dr->ooo;
		dr->ooo = o->next;
		free_ooo(rs, dr, o);
	}
}

/* A segment of which only `pc` were captured, on purpose (heads_only: the
 * eBPF tap ships message heads).  It goes in as consecutive sub-segments, each
 * starting at a piece, so that the framer finds every head at its offset and
 * sees the bytes between as there but not captured.  A segment wholly seen
 * before (a retransmission, or a copy of held data) goes in whole, so that it
 * counts once. */
void gs_reasm_pieces(struct gs_reasm *rs, struct gs_conn *f, struct gs_reasm_dir *dr, int d, const struct gs_packet *pk,
		     const struct gs_piece *pc, uint32_t n)
{
	static const uint8_t none[1];
	struct gs_packet sub = *pk;
	uint32_t syn = (pk->tcp.flags & GS_TCP_SYN) ? 1 : 0, at = 0, i = 0, fed = 0;
	uint64_t segs = rs->cnt->segments;

	sub.payload = none;
	sub.payload_cap = 0;
	if (pk->payload_len == 0 || n == 0) {
		gs_reasm_segment(rs, f, dr, d, &sub);
		return;
	}
	if (dr->started && !syn) {
		int64_t off = gs_stream_off(dr, pk->tcp.seq);
		uint64_t end = (uint64_t)(off + (int64_t)pk->payload_len);
		if ((off < 0 && (int64_t)end <= 0) || end <= dr->next ||
		    (off > (int64_t)dr->next && held(dr, (uint64_t)off, end))) {
			gs_reasm_segment(rs, f, dr, d, &sub);
			return;
		}
	}
	if (pc[0].off == 0) {
		sub.payload = pc[0].data;
		sub.payload_cap = pc[0].len;
		i = 1;
	}
	for (;;) {
		/* [at, to): this piece and the uncaptured bytes up to the next one;
		 * pieces out of order or outside the payload end it all */
		uint32_t to = i < n && pc[i].off > at && pc[i].off < pk->payload_len ? pc[i].off : pk->payload_len;
		if (to == pk->payload_len)
			i = n;
		sub.tcp.seq = pk->tcp.seq + (at ? syn + at : 0);
		sub.tcp.flags = pk->tcp.flags;
		if (at)
			sub.tcp.flags &= (uint8_t)~GS_TCP_SYN;
		if (to < pk->payload_len)
			sub.tcp.flags &= (uint8_t)~GS_TCP_FIN;
		sub.payload_len = to - at;
		if (sub.payload_cap > sub.payload_len)
			sub.payload_cap = sub.payload_len;
		/* the old part of a resegmented retransmission is skipped, not counted */
		if (!dr->started || (sub.tcp.flags & GS_TCP_SYN) ||
		    gs_stream_off(dr, sub.tcp.seq) + (int64_t)sub.payload_len > (int64_t)dr->next) {
			gs_reasm_segment(rs, f, dr, d, &sub);
			fed++;
		}
		if (!f->in_use || to >= pk->payload_len)
			break;
		at = to;
		sub.payload = pc[i].data;
		sub.payload_cap = pc[i].len;
		i++;
	}
	/* one segment on the wire */
	if (fed > 1)
		rs->cnt->segments = segs + 1;
}
