/* SPDX-License-Identifier: BSD-2-Clause */
/* Evidence for the tail analysis: what the wire shows about why a call was
 * slow.  Each function records facts on the call; the tail sink (tail.c)
 * turns them into tags with their figures. */
#include "engine_impl.h"

static void rtx_cost(struct gs_cext *x, int64_t since, int64_t now)
{
	if (now - since > x->rtx_cost_ns)
		x->rtx_cost_ns = now - since;
}

/* Charges call c once for the range numbered `mark`, in its request (the
 * call's direction is d) or its reply; the range came at ts. */
static void charge(struct gs_engine *e, struct gs_ocall *c, int d, uint32_t mark, int64_t ts)
{
	struct gs_cext *x = gs_cx_ev(gs_cx(e, c));
	if (x->rtx_mark == mark)
		return;
	x->rtx_mark = mark;
	x->retransmits++;
	rtx_cost(x, c->dir == d ? c->t_request_first : x->t_reply_first, ts);
}

/* Retransmitted bytes [off0, off1) of direction d count once for every call
 * one of whose messages they overlap (its Request or Reply, or a Fragment of
 * them), as Wireshark's per-frame retransmission flags do.  A call whose
 * messages in d are contiguous is found by its first..last span; one whose
 * Fragments interleave with other messages by the direction's message log,
 * or by its span when the log does not hold it (counted in rtx_charged_by_span). */
void gs_evidence_retransmit(struct gs_engine *e, struct gs_flow *f, int d, uint64_t off0, uint64_t off1,
			int64_t ts)
{
	const struct gs_msglog *lg = f->dir[d].mlog;
	uint64_t from = UINT64_MAX;
	uint32_t mark = ++e->rtx_mark;

	if (mark == 0) /* 0 is a fresh call's: never a range's */
		mark = ++e->rtx_mark;
	if (lg) {
		from = lg->from;
		/* newest first: retransmissions are of recent bytes */
		for (uint32_t k = lg->n; k-- > 0;) {
			const struct gs_msg_ext *x = &lg->ext[(lg->head + k) % GS_MSGLOG];
			struct gs_ocall *c;
			if (x->off1 <= off0)
				break;
			if (x->off0 >= off1)
				continue;
			c = gs_call_live(e, x->call, x->serial);
			if (c)
				charge(e, c, d, mark, ts);
		}
	}
	for (uint32_t i = f->calls; i != GS_NONE; i = e->calls[i].flow_next) {
		struct gs_ocall *c = &e->calls[i];
		uint64_t first;
		uint8_t bit;
		if (c->dir == d) {
			if (!(off0 < c->req_off1 && c->req_off0 < off1))
				continue;
			first = c->req_off0;
			bit = 1;
		} else {
			const struct gs_cext *x;
			if (!(c->flags & GS_CF_REP_SEEN))
				continue;
			x = gs_cx_peek(e, c);
			if (!(off0 < x->rep_off1 && x->rep_off0 < off1))
				continue;
			first = x->rep_off0;
			bit = 2;
		}
		if (c->scattered & bit) {
			/* the log holds every message of it from `from` on: it has been
			 * open since, and every message while one is open is logged */
			if (first >= from || off0 >= from)
				continue;
			e->cnt.rtx_charged_by_span++;
		}
		charge(e, c, d, mark, ts);
	}
}

void gs_evidence_zero_window(struct gs_engine *e, struct gs_flow *f, int64_t ns)
{
	for (uint32_t i = f->calls; i != GS_NONE; i = e->calls[i].flow_next)
		if (e->calls[i].where == GS_CALL_OPEN)
			gs_cx_ev(gs_cx(e, &e->calls[i]))->zero_window_ns += ns;
}

/* A message's last segment came long after the one before it, and right after
 * the peer's ACK: the sender held it back (Nagle) until that ACK, which the
 * peer had delayed (40 ms on Linux, 200 ms on Windows).  10 ms is far beyond
 * back-to-back segments; "right after" means the ACK ended the wait, not a
 * pause in a bulk transfer clocked by ACKs. */
#define GS_NAGLE_MIN_NS 10000000LL

void gs_evidence_nagle(struct gs_engine *e, struct gs_ocall *c, const struct gs_dir *dr, int64_t ts,
		       uint8_t half)
{
	int64_t gap = ts - dr->msg_prev_seg_ts;
	/* the tail analysis's evidence: no sink of summary records reads it */
	if (e->lean || !dr->msg_prev_seg_ts || gap < GS_NAGLE_MIN_NS)
		return;
	if (dr->peer_ack_ts < dr->msg_prev_seg_ts || dr->peer_ack_ts > ts)
		return;
	if ((ts - dr->peer_ack_ts) * 4 > gap)
		return;
	{
		const struct gs_cext *p = gs_cx_peek(e, c);
		if (gap > (p && p->ev_set ? p->nagle_ns : 0)) {
			struct gs_cext *x = gs_cx_ev(gs_cx(e, c));
			x->nagle_ns = gap;
			x->nagle_half = half;
		}
	}
}

/* On a connection carrying several calls at once, a call waited behind
 * another (the culprit) when
 *   - its request was sent while the culprit was open (the culprit's request
 *     began first, its reply ended after this request's last byte),
 *   - its reply is the next one on the connection, and came right after the
 *     culprit's: the time from the culprit's reply to this one is less than
 *     half the wait, so most of this call was the wait, not its own service,
 *   - and the far side answers this connection in order.
 * Without the last two, reply order proves nothing: two calls served at the
 * same time, both slow, also end one after the other (the second would be
 * "queued" behind the first), and so does a call that waited and then took
 * long itself (its own time then shows as `server`).  In order means no reply
 * so far came for a request sent after one still unanswered: once one has,
 * the server serves the connection's calls concurrently, and no call on it
 * is tagged from then on. */
void gs_evidence_queued(struct gs_engine *e, struct gs_flow *f, struct gs_ocall *c)
{
	struct gs_dir *rq = &f->dir[c->dir];
	struct gs_cext *x;
	if (e->lean) /* as gs_evidence_nagle */
		return;
	x = gs_cx(e, c); /* its reply has ended: it has one */
	if (rq->done_valid && rq->done_t_req_first > c->t_request_first)
		rq->served_concurrently = true;
	if (rq->done_valid && !rq->served_concurrently && rq->done_t_req_first < c->t_request_first &&
	    rq->done_t_rep_last > c->t_request_last && rq->done_t_rep_last <= x->t_reply_first) {
		int64_t wait = rq->done_t_rep_last - c->t_request_last;
		int64_t after = x->t_reply_first - rq->done_t_rep_last;
		if (after * 2 < wait) {
			gs_cx_ev(x);
			x->queued_ns = wait;
			x->queued_rid = rq->done_rid;
			x->queued_op = rq->done_op;
		}
	}
	rq->done_valid = true;
	rq->done_rid = c->request_id;
	rq->done_op = c->op;
	rq->done_t_req_first = c->t_request_first;
	rq->done_t_rep_last = x->t_reply_last;
}
