/* SPDX-License-Identifier: BSD-2-Clause */
/* Pairing: GIOP messages of a connection become calls.
 *
 * A Request or LocateRequest sent in direction d opens a call keyed by
 * (connection, d, request id); a Reply or LocateReply in the other direction
 * with that id answers it.  Fragments extend the message they continue: by
 * request id in GIOP 1.2+, by position (the previous message of the direction
 * that had the more-fragments flag) in 1.1.  A call ends when its reply's last
 * byte is seen, at the end of a oneway request, or when the connection or the
 * input ends (NO_REPLY / CANCELLED).
 */
#include "pairing.h"

#include <stdlib.h>
#include <string.h>

static void flow_link(struct gs_pairing *p, struct gs_conn *f, uint32_t idx)
{
	struct gs_ocall *c = &p->cs->calls[idx];
	c->flow_prev = GS_NONE;
	c->flow_next = f->calls;
	if (f->calls != GS_NONE)
		p->cs->calls[f->calls].flow_prev = idx;
	f->calls = idx;
}

static uint32_t intern_span(struct gs_pairing *p, struct gs_span s)
{
	uint32_t id;
	if (s.p == NULL || s.len == 0)
		return GS_INTERN_EMPTY;
	id = gs_intern(p->strings, s.p, s.len);
	if (id == GS_INTERN_FULL)
		p->cnt->intern_refused++;
	return id;
}

/* Most requests of a connection repeat the last operation: compare with it
 * before interning. */
static inline __attribute__((always_inline)) uint32_t intern_cached(struct gs_pairing *p, struct gs_span s,
								     uint32_t *last)
{
	size_t n;
	const char *prev = gs_intern_get(p->strings, *last, &n);
	if (n && n == s.len && gs_same_bytes(prev, s.p, n))
		return *last;
	*last = intern_span(p, s);
	return *last;
}

/* The request half of a call, from its decoded header. */
static inline __attribute__((always_inline)) void request_fields(struct gs_pairing *p, struct gs_pair_dir *dr,
								  const struct giop_msg *m, struct gs_ocall *c, uint32_t seq_base)
{
	c->major = m->major;
	c->minor = m->minor;
	if (m->type == GIOP_REQUEST) {
		c->kind = GS_KIND_REQUEST;
		p->cnt->requests++;
		if ((m->have & GIOP_HAVE_RESPONSE) && !m->response_expected)
			c->flags |= GS_CF_ONEWAY;
		if (m->have & GIOP_HAVE_OPERATION) {
			c->op = intern_cached(p, m->operation, &dr->last_op);
			c->flags |= GS_CF_OP_KNOWN;
		}
	} else {
		c->kind = GS_KIND_LOCATE_REQUEST;
		p->cnt->locate_requests++;
		c->flags |= GS_CF_OP_KNOWN;
	}
	if ((m->have & GIOP_HAVE_TARGET) && m->object_key.p)
		/* a connection's object keys rotate (several objects a client): the
		 * intern table's quick lookup, not the last key */
		c->object_key = intern_span(p, m->object_key);
	if (m->has_priority) {
		c->priority = m->priority;
		c->flags |= GS_CF_HAS_PRIORITY;
	}
	c->t_request_last = dr->msg.t_first;
	c->request_bytes = m->msg_len;
	c->req_off0 = dr->msg.start;
	c->req_off1 = dr->msg.end;
	c->req_seq_base = seq_base;
	if (dr->msg.more_frags) {
		c->flags |= GS_CF_REQ_FRAG;
		dr->frag_open++;
	}
	p->cnt->calls++;
	dr->msg_call = (uint32_t)(c - p->cs->calls);
	dr->msg_serial = c->serial;
	dr->msg_half = 0;
	if (dr->msg.more_frags) {
		dr->frag_call = dr->msg_call;
		dr->frag_serial = c->serial;
		dr->frag_half = 0;
	}
}

/* A request whose reply came first (parked): the call is whole now. */
static void adopt(struct gs_pairing *p, struct gs_pair_dir *dr, const struct giop_msg *m, uint32_t idx,
		  uint32_t seq_base)
{
	struct gs_ocall *c = &p->cs->calls[idx];
	c->flags &= ~(uint32_t)GS_CF_PARKED;
	p->cnt->replies_paired++;
	request_fields(p, dr, m, c, seq_base);
	gs_call_rekey_time(p->cs, idx, dr->msg.t_first);
}

static void new_call(struct gs_pairing *p, struct gs_conn *f, struct gs_pair_dir *dr, int d, const struct giop_msg *m,
		     uint32_t seq_base)
{
	uint32_t fno = f->no, idx;
	struct gs_ocall *c, *old;

	old = gs_pair_open_find(p, f, dr, d, m->request_id);
	if (old && (old->flags & GS_CF_PARKED)) {
		adopt(p, dr, m, (uint32_t)(old - p->cs->calls), seq_base);
		return;
	}
	if (old) {
		/* the id came again before its reply: the first call got none */
		p->cnt->request_id_reused++;
		gs_call_end(p->cs, (uint32_t)(old - p->cs->calls), GS_OUT_NO_REPLY);
	}
	idx = gs_call_alloc(p->cs);
	c = &p->cs->calls[idx];
	gs_zero(c, sizeof *c);
	c->ext = GS_NONE;
	c->attached = 1;
	c->request_id = m->request_id;
	c->dir = (uint8_t)d;
	c->flow = fno;
	c->flow_gen = f->gen;
	c->serial = ++p->cs->serial;
	c->op = GS_INTERN_EMPTY;
	c->object_key = GS_INTERN_EMPTY;
	c->t_request_first = dr->msg.t_first;
	gs_call_open_insert(p->cs, idx);
	flow_link(p, f, idx);
	request_fields(p, dr, m, c, seq_base);
}

static void reply(struct gs_pairing *p, struct gs_conn *f, struct gs_pair_dir *dr, int d, const struct giop_msg *m,
		  uint32_t seq_base)
{
	struct gs_pair_dir *rq = gs_pair_peer(p, dr, d);
	struct gs_ocall *c = gs_pair_open_find(p, f, rq, !d, m->request_id);
	struct gs_cext *x;
	if (!c && p->holds_before(p->arg, rq, dr->msg.t_first)) {
		/* The requester's side holds bytes captured before this reply that it
		 * has not delivered yet (reordered segments, or a hole being waited
		 * for): keep the reply until its request is decoded or cannot be. */
		uint32_t idx = gs_call_alloc(p->cs);
		c = &p->cs->calls[idx];
		gs_zero(c, sizeof *c);
		c->ext = GS_NONE;
		c->attached = 1;
		c->request_id = m->request_id;
		c->dir = (uint8_t)!d;
		c->flow = f->no;
		c->flow_gen = f->gen;
		c->serial = ++p->cs->serial;
		c->op = c->object_key = GS_INTERN_EMPTY;
		c->flags = GS_CF_PARKED;
		c->t_request_first = c->t_request_last = dr->msg.t_first;
		gs_call_open_insert(p->cs, idx);
		flow_link(p, f, idx);
		p->cnt->replies_paired--; /* counted when adopted */
	}
	if (!c) {
		p->cnt->orphan_replies++;
		return;
	}
	if (c->flags & GS_CF_REP_SEEN) {
		p->cnt->duplicate_replies++;
		return;
	}
	p->cnt->replies_paired++;
	x = gs_cx(p->cs, c);
	c->flags |= GS_CF_REP_SEEN;
	x->reply_type = m->type;
	if (m->have & GIOP_HAVE_STATUS) {
		x->status = m->status;
		c->flags |= GS_CF_STATUS_KNOWN;
	}
	if (m->have & GIOP_HAVE_EXCEPTION) {
		x->exception = intern_span(p, m->exception_id);
		x->minor_code = m->minor_code;
		x->completion = (uint8_t)m->completed;
		c->flags |= GS_CF_HAS_EXCEPTION;
	}
	x->t_reply_first = dr->msg.t_first;
	x->t_reply_last = dr->msg.t_first;
	x->reply_bytes = m->msg_len;
	x->rep_off0 = dr->msg.start;
	x->rep_off1 = dr->msg.end;
	x->rep_seq_base = seq_base;
	if (dr->msg.more_frags) {
		c->flags |= GS_CF_REP_FRAG;
		dr->frag_open++;
	}
	dr->msg_call = (uint32_t)(c - p->cs->calls);
	dr->msg_serial = c->serial;
	dr->msg_half = 1;
	if (dr->msg.more_frags) {
		dr->frag_call = dr->msg_call;
		dr->frag_serial = c->serial;
		dr->frag_half = 1;
	}
}

static void fragment(struct gs_pairing *p, struct gs_conn *f, struct gs_pair_dir *dr, int d, const struct giop_msg *m)
{
	struct gs_ocall *c = NULL;
	uint8_t half = 0;

	if (m->minor >= 2 && (m->have & GIOP_HAVE_REQUEST_ID)) {
		c = gs_pair_open_find(p, f, dr, d, m->request_id);
		if (c && (c->flags & GS_CF_REQ_FRAG)) {
			half = 0;
		} else {
			c = gs_pair_open_find(p, f, gs_pair_peer(p, dr, d), !d, m->request_id);
			half = 1;
			if (c && !(c->flags & GS_CF_REP_FRAG))
				c = NULL;
		}
	}
	if (!c && dr->frag_call != GS_NONE) {
		/* GIOP 1.1 Fragments carry no request id: they continue the
		 * direction's last message that announced more.  A 1.2+ Fragment
		 * names its request: one of another request (whose own head the
		 * capture lost) is not this call's */
		c = gs_call_live(p->cs, dr->frag_call, dr->frag_serial);
		half = dr->frag_half;
		if (c && m->minor >= 2 && (m->have & GIOP_HAVE_REQUEST_ID) && c->request_id != m->request_id)
			c = NULL;
	}
	if (!c) {
		p->cnt->orphan_fragments++;
		return;
	}
	/* a Fragment that does not follow its message's last byte: other messages
	 * lie in between, inside the span (see gs_evidence_retransmit) */
	if (half == 0) {
		if (dr->msg.start != c->req_off1)
			c->scattered |= 1;
		c->request_bytes += m->msg_len;
		c->req_off1 = dr->msg.end;
	} else {
		struct gs_cext *x = gs_cx(p->cs, c); /* the reply began: it has one */
		if (dr->msg.start != x->rep_off1)
			c->scattered |= 2;
		x->reply_bytes += m->msg_len;
		x->rep_off1 = dr->msg.end;
	}
	dr->msg_call = (uint32_t)(c - p->cs->calls);
	dr->msg_serial = c->serial;
	dr->msg_half = half;
	if (!dr->msg.more_frags) {
		dr->frag_call = GS_NONE;
		if (dr->frag_open)
			dr->frag_open--;
	}
}

static void gs_pair_message_kind(struct gs_pairing *p, struct gs_conn *f, struct gs_pair_dir *dr, int d, const struct giop_msg *m,
				 uint32_t seq_base);

/* Retransmitted ranges seen before their messages were decoded (held out of
 * order, or a head still being gathered): charged once every message they
 * overlap is decoded, that is once a message reaches their end (`upto`), so
 * that a range counts once per call however many of its messages it covers. */
static void held_retransmits(struct gs_pairing *p, const struct gs_conn *f, struct gs_pair_dir *dr, int d, uint64_t upto)
{
	uint16_t k = 0;
	for (uint16_t i = 0; i < dr->rtx_n; i++) {
		if (dr->rtx[i].off1 <= upto)
			gs_evidence_retransmit(p->ev, dr->mlog, f->calls, d, dr->rtx[i].off0, dr->rtx[i].off1, dr->rtx[i].ts);
		else
			dr->rtx[k++] = dr->rtx[i];
	}
	dr->rtx_n = k;
	if (!k && dr->rtx) {
		/* drained: the list's slot goes back to the bounded pool */
		free(dr->rtx);
		dr->rtx = NULL;
		p->rtx_lists--;
	}
}

void gs_pair_hold_retransmit(struct gs_pairing *p, struct gs_pair_dir *dr, uint64_t off0, uint64_t off1, int64_t ts)
{
	if (!dr->rtx) {
		/* Bounded like the message logs: a peer that retransmits into held
		 * bytes on every connection must not cost GS_RTX_PENDING ranges per
		 * direction of the whole flow table. The list goes when it drains. */
		if (p->rtx_lists >= p->side_max || !(dr->rtx = malloc(GS_RTX_PENDING * sizeof *dr->rtx))) {
			p->cnt->rtx_not_charged++;
			return;
		}
		p->rtx_lists++;
	}
	if (dr->rtx_n >= GS_RTX_PENDING) {
		p->cnt->rtx_not_charged++;
		return;
	}
	dr->rtx[dr->rtx_n].off0 = off0;
	dr->rtx[dr->rtx_n].off1 = off1;
	dr->rtx[dr->rtx_n].ts = ts;
	dr->rtx_n++;
}

void gs_pair_dir_free(struct gs_pairing *p, struct gs_pair_dir *dr)
{
	if (dr->rtx) {
		free(dr->rtx);
		dr->rtx = NULL;
		p->rtx_lists--;
	}
	dr->rtx_n = 0;
	if (dr->mlog) {
		free(dr->mlog);
		dr->mlog = NULL;
		p->mlogs--;
	}
}

/* Logs the current message's extent and call (see struct gs_msglog).  The
 * number of logs is bounded like the head pool; without one, fragmented
 * calls are charged by their spans (counted when that may be wrong). */
static void log_message(struct gs_pairing *p, struct gs_pair_dir *dr)
{
	struct gs_msglog *lg = dr->mlog;
	struct gs_msg_ext *x;
	if (!lg) {
		if (p->mlogs >= p->side_max || !(lg = malloc(sizeof *lg)))
			return;
		p->mlogs++;
		lg->from = dr->msg.start;
		lg->head = lg->n = 0;
		dr->mlog = lg;
	}
	if (lg->n == GS_MSGLOG) {
		/* the oldest gives way: its bytes are charged by spans from now on */
		lg->from = lg->ext[lg->head].off1;
		lg->head = (lg->head + 1) % GS_MSGLOG;
		lg->n--;
	}
	x = &lg->ext[(lg->head + lg->n) % GS_MSGLOG];
	x->off0 = dr->msg.start;
	x->off1 = dr->msg.end;
	x->call = dr->msg_call;
	x->serial = dr->msg_serial;
	lg->n++;
}

void gs_pair_message(struct gs_pairing *p, struct gs_conn *f, struct gs_pair_dir *dr, int d, const struct giop_msg *m,
		     uint32_t seq_base)
{
	dr->msg_call = GS_NONE;
	gs_pair_message_kind(p, f, dr, d, m, seq_base);
	/* the message that ends the last open fragmented one still goes in */
	if (dr->msg_call != GS_NONE && (dr->frag_open || m->type == GIOP_FRAGMENT))
		log_message(p, dr);
	if (dr->rtx_n)
		held_retransmits(p, f, dr, d, dr->msg.end);
}

static void gs_pair_message_kind(struct gs_pairing *p, struct gs_conn *f, struct gs_pair_dir *dr, int d, const struct giop_msg *m,
				 uint32_t seq_base)
{
	switch (m->type) {
	case GIOP_REQUEST:
	case GIOP_LOCATE_REQUEST:
		if (!(m->have & GIOP_HAVE_REQUEST_ID)) {
			p->cnt->unknown_request_id++;
			return;
		}
		new_call(p, f, dr, d, m, seq_base);
		return;
	case GIOP_REPLY:
	case GIOP_LOCATE_REPLY:
		if (!(m->have & GIOP_HAVE_REQUEST_ID)) {
			p->cnt->unknown_request_id++;
			return;
		}
		reply(p, f, dr, d, m, seq_base);
		return;
	case GIOP_CANCEL_REQUEST: {
		struct gs_ocall *c;
		if (!(m->have & GIOP_HAVE_REQUEST_ID)) {
			p->cnt->unknown_request_id++;
			return;
		}
		c = gs_pair_open_find(p, f, dr, d, m->request_id);
		if (c)
			c->flags |= GS_CF_CANCELLED;
		else
			p->cnt->cancel_unknown++;
		return;
	}
	case GIOP_FRAGMENT:
		fragment(p, f, dr, d, m);
		return;
	default:
		return;
	}
}

/* The instants of the message that just ended (or was cut short) go to its
 * call: the earliest packet of its own bytes may lower t_*_first, the one
 * that completed it raises t_*_last; its gap fills are added.  Inline: once a
 * message, with the call's records at hand. */
static inline __attribute__((always_inline)) void message_times(struct gs_pairing *p, struct gs_pair_dir *dr,
								 struct gs_ocall *c, uint32_t idx)
{
	uint32_t fills = dr->msg.fills;
	if (dr->msg.t_max == INT64_MIN) /* no packet of its own: nothing to say */
		return;
	if (dr->msg_half == 0) {
		if (dr->msg.t_max > c->t_request_last)
			c->t_request_last = dr->msg.t_max;
		if (dr->msg.t_min < c->t_request_first) {
			if (c->where == GS_CALL_OPEN)
				gs_call_rekey_time(p->cs, idx, dr->msg.t_min);
		}
	} else {
		struct gs_cext *x = gs_cx(p->cs, c);
		if (dr->msg.t_max > x->t_reply_last)
			x->t_reply_last = dr->msg.t_max;
		if (dr->msg.t_min < x->t_reply_first)
			x->t_reply_first = dr->msg.t_min;
	}
	/* a packet that filled bytes of this message and of the call's previous
	 * one (two Fragments) counts once */
	if (fills && dr->prev_fill_set && dr->prev_fill_pkt == dr->msg_fill_first && dr->prev_fill_call == idx &&
	    dr->prev_fill_serial == c->serial)
		fills--;
	if (fills || dr->msg.fills) {
		struct gs_cext *x = gs_cx(p->cs, c);
		x->gap_fills += fills;
		if (dr->msg.fills)
			x->fill_wait_ns += dr->msg.fill_wait;
	}
	/* the cold line only when there is something to remember (packet numbers
	 * start at 1: a message without fills left 0 there, which matched none) */
	dr->prev_fill_set = dr->msg.fills != 0;
	if (dr->msg.fills) {
		dr->prev_fill_call = idx;
		dr->prev_fill_serial = c->serial;
		dr->prev_fill_pkt = dr->msg_fill_last;
	}
}

void gs_pair_message_end(struct gs_pairing *p, struct gs_pair_dir *dr, int d, int64_t ts,
			 int64_t peer_ack_ts)
{
	struct gs_ocall *c;
	uint32_t idx;
	if (dr->msg_call == GS_NONE)
		return;
	/* a queued call still takes the end of its messages: a reply can end the
	 * call before the request's tail, held behind a hole, is delivered */
	c = gs_call_live(p->cs, dr->msg_call, dr->msg_serial);
	if (!c)
		return;
	idx = dr->msg_call;
	if (dr->msg.missing)
		c->flags |= GS_CF_CAPTURE_LOSS;
	message_times(p, dr, c, idx);
	/* summary records read no evidence (as inside): not even the call */
	if (!p->cs->lean)
		gs_evidence_nagle(p->ev, c, dr->msg.prev_seg_ts, peer_ack_ts, ts, dr->msg_half);
	if (dr->msg_half == 0) {
		if (!dr->msg.more_frags) {
			c->flags &= ~(uint32_t)GS_CF_REQ_FRAG;
			c->flags |= GS_CF_REQ_DONE;
			if ((c->flags & GS_CF_ONEWAY) && !(c->flags & GS_CF_REP_SEEN))
				gs_call_end(p->cs, idx, GS_OUT_ONEWAY);
			else if ((c->flags & GS_CF_REP_DONE) && c->where == GS_CALL_OPEN)
				gs_call_end(p->cs, idx, GS_OUT_REPLY); /* its reply came first */
		}
	} else {
		if (!dr->msg.more_frags) {
			struct gs_pair_dir *rq = gs_pair_peer(p, dr, d);
			c->flags &= ~(uint32_t)GS_CF_REP_FRAG;
			c->flags |= GS_CF_REP_DONE;
			if (!(c->flags & GS_CF_PARKED)) {
				if (!p->cs->lean)
					gs_evidence_queued(p->ev, c->dir == d ? &dr->ev : &rq->ev, c);
				/* The request is still being delivered (its last bytes held
				 * behind a hole, or missing from the capture): the call ends
				 * with it, so that its completion and any loss are on it (a
				 * message has a call only while the framer is inside it). */
				if (!(c->flags & GS_CF_REQ_DONE) && rq->msg_call == idx && rq->msg_serial == c->serial)
					return;
				gs_call_end(p->cs, idx, GS_OUT_REPLY);
			}
		}
	}
}

/* A call cut short: what was seen of it is kept, the rest is NO_REPLY. */
static void end_unanswered(struct gs_pairing *p, uint32_t idx)
{
	struct gs_ocall *c = &p->cs->calls[idx];
	if (c->flags & GS_CF_PARKED) {
		p->cnt->orphan_replies++;
		gs_call_discard(p->cs, idx);
	} else if (c->flags & GS_CF_REP_SEEN) {
		c->flags |= GS_CF_CAPTURE_LOSS;
		gs_call_end(p->cs, idx, GS_OUT_REPLY);
	} else if (c->flags & GS_CF_ONEWAY) {
		gs_call_end(p->cs, idx, GS_OUT_ONEWAY);
	} else {
		gs_call_end(p->cs, idx, (c->flags & GS_CF_CANCELLED) ? GS_OUT_CANCELLED : GS_OUT_NO_REPLY);
	}
}

/* A message in progress when its connection ends: record how far it got. */
static void cut_message(struct gs_pairing *p, struct gs_pair_dir *dr)
{
	struct gs_ocall *c;
	/* a message has a call only while the framer is inside it */
	if (dr->msg_call == GS_NONE)
		return;
	c = gs_call_live(p->cs, dr->msg_call, dr->msg_serial);
	if (!c)
		return;
	c->flags |= GS_CF_CAPTURE_LOSS;
	message_times(p, dr, c, dr->msg_call);
	dr->msg_call = GS_NONE;
}

/* Direction d has ended (FIN): calls waiting for a reply in it get none. */
void gs_pair_direction_closed(struct gs_pairing *p, struct gs_conn *f, struct gs_pair_dir *dr, int d)
{
	uint32_t i = f->calls;
	/* every byte before the FIN is in: what is still held will not be decoded */
	if (dr->rtx_n)
		held_retransmits(p, f, dr, d, UINT64_MAX);
	cut_message(p, dr);
	while (i != GS_NONE) {
		uint32_t next = p->cs->calls[i].flow_next;
		struct gs_ocall *c = &p->cs->calls[i];
		if (c->where == GS_CALL_OPEN && c->dir != d && !(c->flags & GS_CF_PARKED))
			end_unanswered(p, i);
		i = next;
	}
}

void gs_pair_unpark(struct gs_pairing *p, struct gs_conn *f, int requester_dir)
{
	uint32_t i = f->calls;
	while (i != GS_NONE) {
		uint32_t next = p->cs->calls[i].flow_next;
		struct gs_ocall *c = &p->cs->calls[i];
		if ((c->flags & GS_CF_PARKED) && c->dir == requester_dir && c->where == GS_CALL_OPEN) {
			p->cnt->orphan_replies++;
			gs_call_discard(p->cs, i);
		}
		i = next;
	}
}

void gs_pair_flow_ended(struct gs_pairing *p, struct gs_conn *f, struct gs_pair_dir *pd0, bool evicted)
{
	struct gs_pair_dir *pd[2] = { pd0, gs_pair_peer(p, pd0, 0) };
	uint32_t i;
	for (int d = 0; d < 2; d++)
		if (pd[d]->rtx_n)
			held_retransmits(p, f, pd[d], d, UINT64_MAX);
	cut_message(p, pd[0]);
	cut_message(p, pd[1]);
	i = f->calls;
	while (i != GS_NONE) {
		uint32_t next = p->cs->calls[i].flow_next;
		if (p->cs->calls[i].where == GS_CALL_OPEN) {
			if (evicted)
				p->cs->calls[i].flags |= GS_CF_EVICTED;
			end_unanswered(p, i);
		}
		i = next;
	}
	/* detach what is left (queued for output) from the connection; the
	 * slot's ends stay until another connection takes it, which never happens
	 * once the input has ended */
	i = f->calls;
	while (i != GS_NONE) {
		struct gs_ocall *c = &p->cs->calls[i];
		uint32_t next = c->flow_next;
		if (!p->cs->finishing) {
			struct gs_cext *x = gs_cx(p->cs, c);
			x->client = f->ep[c->dir];
			x->server = f->ep[!c->dir];
			x->has_ep = 1;
		}
		c->attached = 0;
		c->flow_prev = c->flow_next = GS_NONE;
		i = next;
	}
	f->calls = GS_NONE;
}
