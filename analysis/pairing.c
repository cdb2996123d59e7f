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
#include "engine_impl.h"

#include <stdlib.h>
#include <string.h>

static void flow_link(struct gs_engine *e, struct gs_flow *f, uint32_t idx)
{
	struct gs_ocall *c = &e->calls[idx];
	c->flow_prev = GS_NONE;
	c->flow_next = f->calls;
	if (f->calls != GS_NONE)
		e->calls[f->calls].flow_prev = idx;
	f->calls = idx;
}

static uint32_t intern_span(struct gs_engine *e, struct gs_span s)
{
	uint32_t id;
	if (s.p == NULL || s.len == 0)
		return GS_INTERN_EMPTY;
	id = gs_intern(&e->strings, s.p, s.len);
	if (id == GS_INTERN_FULL)
		e->cnt.intern_refused++;
	return id;
}

/* Most requests of a connection repeat the last operation: compare with it
 * before interning. */
static inline __attribute__((always_inline)) uint32_t intern_cached(struct gs_engine *e, struct gs_span s,
								     uint32_t *last)
{
	size_t n;
	const char *prev = gs_intern_get(&e->strings, *last, &n);
	if (n && n == s.len && gs_same_bytes(prev, s.p, n))
		return *last;
	*last = intern_span(e, s);
	return *last;
}

/* The request half of a call, from its decoded header. */
static inline __attribute__((always_inline)) void request_fields(struct gs_engine *e, struct gs_flow *f, int d,
								  const struct giop_msg *m, struct gs_ocall *c)
{
	struct gs_dir *dr = &f->dir[d];
	c->major = m->major;
	c->minor = m->minor;
	if (m->type == GIOP_REQUEST) {
		c->kind = GS_KIND_REQUEST;
		e->cnt.requests++;
		if ((m->have & GIOP_HAVE_RESPONSE) && !m->response_expected)
			c->flags |= GS_CF_ONEWAY;
		if (m->have & GIOP_HAVE_OPERATION) {
			c->op = intern_cached(e, m->operation, &dr->last_op);
			c->flags |= GS_CF_OP_KNOWN;
		}
	} else {
		c->kind = GS_KIND_LOCATE_REQUEST;
		e->cnt.locate_requests++;
		c->flags |= GS_CF_OP_KNOWN;
	}
	if ((m->have & GIOP_HAVE_TARGET) && m->object_key.p)
		/* a connection's object keys rotate (several objects a client): the
		 * intern table's quick lookup, not the last key */
		c->object_key = intern_span(e, m->object_key);
	if (m->has_priority) {
		c->priority = m->priority;
		c->flags |= GS_CF_HAS_PRIORITY;
	}
	c->t_request_last = dr->msg_t_first;
	c->request_bytes = m->msg_len;
	c->req_off0 = dr->msg_start;
	c->req_off1 = dr->msg_end;
	c->req_seq_base = dr->base_seq;
	if (dr->more_frags) {
		c->flags |= GS_CF_REQ_FRAG;
		dr->frag_open++;
	}
	e->cnt.calls++;
	dr->msg_call = (uint32_t)(c - e->calls);
	dr->msg_serial = c->serial;
	dr->msg_half = 0;
	if (dr->more_frags) {
		dr->frag_call = dr->msg_call;
		dr->frag_serial = c->serial;
		dr->frag_half = 0;
	}
}

/* A request whose reply came first (parked): the call is whole now. */
static void adopt(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m, uint32_t idx)
{
	struct gs_ocall *c = &e->calls[idx];
	c->flags &= ~(uint32_t)GS_CF_PARKED;
	e->cnt.replies_paired++;
	request_fields(e, f, d, m, c);
	gs_call_rekey_time(e, idx, f->dir[d].msg_t_first);
}

static void new_call(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m)
{
	struct gs_dir *dr = &f->dir[d];
	uint32_t fno = gs_flow_no(e, f), idx;
	struct gs_ocall *c, *old;

	old = gs_call_open_find(e, fno, f->gen, d, m->request_id);
	if (old && (old->flags & GS_CF_PARKED)) {
		adopt(e, f, d, m, (uint32_t)(old - e->calls));
		return;
	}
	if (old) {
		/* the id came again before its reply: the first call got none */
		e->cnt.request_id_reused++;
		gs_call_end(e, (uint32_t)(old - e->calls), GS_OUT_NO_REPLY);
	}
	idx = gs_call_alloc(e);
	c = &e->calls[idx];
	gs_zero(c, sizeof *c);
	c->ext = GS_NONE;
	c->attached = 1;
	c->request_id = m->request_id;
	c->dir = (uint8_t)d;
	c->flow = fno;
	c->flow_gen = f->gen;
	c->serial = ++e->serial;
	c->op = GS_INTERN_EMPTY;
	c->object_key = GS_INTERN_EMPTY;
	c->t_request_first = dr->msg_t_first;
	gs_call_open_insert(e, idx);
	flow_link(e, f, idx);
	request_fields(e, f, d, m, c);
}

static void reply(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m)
{
	struct gs_dir *dr = &f->dir[d];
	struct gs_ocall *c = gs_call_open_find(e, gs_flow_no(e, f), f->gen, !d, m->request_id);
	struct gs_cext *x;
	if (!c && gs_dir_holds_before(&f->dir[!d], dr->msg_t_first)) {
		/* The requester's side holds bytes captured before this reply that it
		 * has not delivered yet (reordered segments, or a hole being waited
		 * for): keep the reply until its request is decoded or cannot be. */
		uint32_t idx = gs_call_alloc(e);
		c = &e->calls[idx];
		gs_zero(c, sizeof *c);
		c->ext = GS_NONE;
		c->attached = 1;
		c->request_id = m->request_id;
		c->dir = (uint8_t)!d;
		c->flow = gs_flow_no(e, f);
		c->flow_gen = f->gen;
		c->serial = ++e->serial;
		c->op = c->object_key = GS_INTERN_EMPTY;
		c->flags = GS_CF_PARKED;
		c->t_request_first = c->t_request_last = dr->msg_t_first;
		gs_call_open_insert(e, idx);
		flow_link(e, f, idx);
		e->cnt.replies_paired--; /* counted when adopted */
	}
	if (!c) {
		e->cnt.orphan_replies++;
		return;
	}
	if (c->flags & GS_CF_REP_SEEN) {
		e->cnt.duplicate_replies++;
		return;
	}
	e->cnt.replies_paired++;
	x = gs_cx(e, c);
	c->flags |= GS_CF_REP_SEEN;
	x->reply_type = m->type;
	if (m->have & GIOP_HAVE_STATUS) {
		x->status = m->status;
		c->flags |= GS_CF_STATUS_KNOWN;
	}
	if (m->have & GIOP_HAVE_EXCEPTION) {
		x->exception = intern_span(e, m->exception_id);
		x->minor_code = m->minor_code;
		x->completion = (uint8_t)m->completed;
		c->flags |= GS_CF_HAS_EXCEPTION;
	}
	x->t_reply_first = dr->msg_t_first;
	x->t_reply_last = dr->msg_t_first;
	x->reply_bytes = m->msg_len;
	x->rep_off0 = dr->msg_start;
	x->rep_off1 = dr->msg_end;
	x->rep_seq_base = dr->base_seq;
	if (dr->more_frags) {
		c->flags |= GS_CF_REP_FRAG;
		dr->frag_open++;
	}
	dr->msg_call = (uint32_t)(c - e->calls);
	dr->msg_serial = c->serial;
	dr->msg_half = 1;
	if (dr->more_frags) {
		dr->frag_call = dr->msg_call;
		dr->frag_serial = c->serial;
		dr->frag_half = 1;
	}
}

static void fragment(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m)
{
	struct gs_dir *dr = &f->dir[d];
	struct gs_ocall *c = NULL;
	uint8_t half = 0;
	uint32_t fno = gs_flow_no(e, f);

	if (m->minor >= 2 && (m->have & GIOP_HAVE_REQUEST_ID)) {
		c = gs_call_open_find(e, fno, f->gen, d, m->request_id);
		if (c && (c->flags & GS_CF_REQ_FRAG)) {
			half = 0;
		} else {
			c = gs_call_open_find(e, fno, f->gen, !d, m->request_id);
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
		c = gs_call_live(e, dr->frag_call, dr->frag_serial);
		half = dr->frag_half;
		if (c && m->minor >= 2 && (m->have & GIOP_HAVE_REQUEST_ID) && c->request_id != m->request_id)
			c = NULL;
	}
	if (!c) {
		e->cnt.orphan_fragments++;
		return;
	}
	/* a Fragment that does not follow its message's last byte: other messages
	 * lie in between, inside the span (see gs_evidence_retransmit) */
	if (half == 0) {
		if (dr->msg_start != c->req_off1)
			c->scattered |= 1;
		c->request_bytes += m->msg_len;
		c->req_off1 = dr->msg_end;
	} else {
		struct gs_cext *x = gs_cx(e, c); /* the reply began: it has one */
		if (dr->msg_start != x->rep_off1)
			c->scattered |= 2;
		x->reply_bytes += m->msg_len;
		x->rep_off1 = dr->msg_end;
	}
	dr->msg_call = (uint32_t)(c - e->calls);
	dr->msg_serial = c->serial;
	dr->msg_half = half;
	if (!dr->more_frags) {
		dr->frag_call = GS_NONE;
		if (dr->frag_open)
			dr->frag_open--;
	}
}

static void gs_pair_message_kind(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m);

/* Retransmitted ranges seen before their messages were decoded (held out of
 * order, or a head still being gathered): charged once every message they
 * overlap is decoded, that is once a message reaches their end (`upto`), so
 * that a range counts once per call however many of its messages it covers. */
void gs_pair_held_retransmits(struct gs_engine *e, struct gs_flow *f, int d, uint64_t upto)
{
	struct gs_dir *dr = &f->dir[d];
	uint16_t k = 0;
	for (uint16_t i = 0; i < dr->rtx_n; i++) {
		if (dr->rtx[i].off1 <= upto)
			gs_evidence_retransmit(e, f, d, dr->rtx[i].off0, dr->rtx[i].off1, dr->rtx[i].ts);
		else
			dr->rtx[k++] = dr->rtx[i];
	}
	dr->rtx_n = k;
	if (!k && dr->rtx) {
		/* drained: the list's slot goes back to the bounded pool */
		free(dr->rtx);
		dr->rtx = NULL;
		e->rtx_lists--;
	}
}

/* Logs the current message's extent and call (see struct gs_msglog).  The
 * number of logs is bounded like the head pool; without one, fragmented
 * calls are charged by their spans (counted when that may be wrong). */
static void log_message(struct gs_engine *e, struct gs_dir *dr)
{
	struct gs_msglog *lg = dr->mlog;
	struct gs_msg_ext *x;
	if (!lg) {
		if (e->mlogs >= gs_side_tables_max(e) || !(lg = malloc(sizeof *lg)))
			return;
		e->mlogs++;
		lg->from = dr->msg_start;
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
	x->off0 = dr->msg_start;
	x->off1 = dr->msg_end;
	x->call = dr->msg_call;
	x->serial = dr->msg_serial;
	lg->n++;
}

void gs_pair_message(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m,
		     enum giop_res r)
{
	struct gs_dir *dr = &f->dir[d];
	(void)r;
	dr->msg_call = GS_NONE;
	gs_pair_message_kind(e, f, d, m);
	/* the message that ends the last open fragmented one still goes in */
	if (dr->msg_call != GS_NONE && (dr->frag_open || m->type == GIOP_FRAGMENT))
		log_message(e, dr);
	if (dr->rtx_n)
		gs_pair_held_retransmits(e, f, d, dr->msg_end);
}

static void gs_pair_message_kind(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m)
{
	switch (m->type) {
	case GIOP_REQUEST:
	case GIOP_LOCATE_REQUEST:
		if (!(m->have & GIOP_HAVE_REQUEST_ID)) {
			e->cnt.unknown_request_id++;
			return;
		}
		new_call(e, f, d, m);
		return;
	case GIOP_REPLY:
	case GIOP_LOCATE_REPLY:
		if (!(m->have & GIOP_HAVE_REQUEST_ID)) {
			e->cnt.unknown_request_id++;
			return;
		}
		reply(e, f, d, m);
		return;
	case GIOP_CANCEL_REQUEST: {
		struct gs_ocall *c;
		if (!(m->have & GIOP_HAVE_REQUEST_ID)) {
			e->cnt.unknown_request_id++;
			return;
		}
		c = gs_call_open_find(e, gs_flow_no(e, f), f->gen, d, m->request_id);
		if (c)
			c->flags |= GS_CF_CANCELLED;
		else
			e->cnt.cancel_unknown++;
		return;
	}
	case GIOP_FRAGMENT:
		fragment(e, f, d, m);
		return;
	default:
		return;
	}
}

/* The instants of the message that just ended (or was cut short) go to its
 * call: the earliest packet of its own bytes may lower t_*_first, the one
 * that completed it raises t_*_last; its gap fills are added.  Inline: once a
 * message, with the call's records at hand. */
static inline __attribute__((always_inline)) void message_times(struct gs_engine *e, struct gs_dir *dr,
								 struct gs_ocall *c, uint32_t idx)
{
	uint32_t fills = dr->msg_fills;
	if (dr->msg_t_max == INT64_MIN) /* no packet of its own: nothing to say */
		return;
	if (dr->msg_half == 0) {
		if (dr->msg_t_max > c->t_request_last)
			c->t_request_last = dr->msg_t_max;
		if (dr->msg_t_min < c->t_request_first) {
			if (c->where == GS_CALL_OPEN)
				gs_call_rekey_time(e, idx, dr->msg_t_min);
		}
	} else {
		struct gs_cext *x = gs_cx(e, c);
		if (dr->msg_t_max > x->t_reply_last)
			x->t_reply_last = dr->msg_t_max;
		if (dr->msg_t_min < x->t_reply_first)
			x->t_reply_first = dr->msg_t_min;
	}
	/* a packet that filled bytes of this message and of the call's previous
	 * one (two Fragments) counts once */
	if (fills && dr->prev_fill_set && dr->prev_fill_pkt == dr->msg_fill_first && dr->prev_fill_call == idx &&
	    dr->prev_fill_serial == c->serial)
		fills--;
	if (fills || dr->msg_fills) {
		struct gs_cext *x = gs_cx(e, c);
		x->gap_fills += fills;
		if (dr->msg_fills)
			x->fill_wait_ns += dr->msg_fill_wait;
	}
	/* the cold line only when there is something to remember (packet numbers
	 * start at 1: a message without fills left 0 there, which matched none) */
	dr->prev_fill_set = dr->msg_fills != 0;
	if (dr->msg_fills) {
		dr->prev_fill_call = idx;
		dr->prev_fill_serial = c->serial;
		dr->prev_fill_pkt = dr->msg_fill_last;
	}
}

void gs_pair_message_end(struct gs_engine *e, struct gs_flow *f, int d, int64_t ts)
{
	struct gs_dir *dr = &f->dir[d];
	struct gs_ocall *c;
	uint32_t idx;
	if (dr->msg_call == GS_NONE)
		return;
	/* a queued call still takes the end of its messages: a reply can end the
	 * call before the request's tail, held behind a hole, is delivered */
	c = gs_call_live(e, dr->msg_call, dr->msg_serial);
	if (!c)
		return;
	idx = dr->msg_call;
	if (dr->missing)
		c->flags |= GS_CF_CAPTURE_LOSS;
	message_times(e, dr, c, idx);
	/* summary records read no evidence (as inside): not even the call */
	if (!e->lean)
		gs_evidence_nagle(e, c, dr, ts, dr->msg_half);
	if (dr->msg_half == 0) {
		if (!dr->more_frags) {
			c->flags &= ~(uint32_t)GS_CF_REQ_FRAG;
			c->flags |= GS_CF_REQ_DONE;
			if ((c->flags & GS_CF_ONEWAY) && !(c->flags & GS_CF_REP_SEEN))
				gs_call_end(e, idx, GS_OUT_ONEWAY);
			else if ((c->flags & GS_CF_REP_DONE) && c->where == GS_CALL_OPEN)
				gs_call_end(e, idx, GS_OUT_REPLY); /* its reply came first */
		}
	} else {
		if (!dr->more_frags) {
			const struct gs_dir *rq = &f->dir[!d];
			c->flags &= ~(uint32_t)GS_CF_REP_FRAG;
			c->flags |= GS_CF_REP_DONE;
			if (!(c->flags & GS_CF_PARKED)) {
				if (!e->lean)
					gs_evidence_queued(e, f, c);
				/* The request is still being delivered (its last bytes held
				 * behind a hole, or missing from the capture): the call ends
				 * with it, so that its completion and any loss are on it. */
				if (!(c->flags & GS_CF_REQ_DONE) && rq->fstate == GS_FR_MSG &&
				    rq->msg_call == idx && rq->msg_serial == c->serial)
					return;
				gs_call_end(e, idx, GS_OUT_REPLY);
			}
		}
	}
}

/* A call cut short: what was seen of it is kept, the rest is NO_REPLY. */
static void end_unanswered(struct gs_engine *e, uint32_t idx)
{
	struct gs_ocall *c = &e->calls[idx];
	if (c->flags & GS_CF_PARKED) {
		e->cnt.orphan_replies++;
		gs_call_discard(e, idx);
	} else if (c->flags & GS_CF_REP_SEEN) {
		c->flags |= GS_CF_CAPTURE_LOSS;
		gs_call_end(e, idx, GS_OUT_REPLY);
	} else if (c->flags & GS_CF_ONEWAY) {
		gs_call_end(e, idx, GS_OUT_ONEWAY);
	} else {
		gs_call_end(e, idx, (c->flags & GS_CF_CANCELLED) ? GS_OUT_CANCELLED : GS_OUT_NO_REPLY);
	}
}

/* A message in progress when its connection ends: record how far it got. */
static void cut_message(struct gs_engine *e, struct gs_dir *dr)
{
	struct gs_ocall *c;
	if (dr->fstate != GS_FR_MSG || dr->msg_call == GS_NONE)
		return;
	c = gs_call_live(e, dr->msg_call, dr->msg_serial);
	if (!c)
		return;
	c->flags |= GS_CF_CAPTURE_LOSS;
	message_times(e, dr, c, dr->msg_call);
	dr->msg_call = GS_NONE;
}

/* Direction d has ended (FIN): calls waiting for a reply in it get none. */
void gs_pair_direction_closed(struct gs_engine *e, struct gs_flow *f, int d)
{
	uint32_t i = f->calls;
	/* every byte before the FIN is in: what is still held will not be decoded */
	if (f->dir[d].rtx_n)
		gs_pair_held_retransmits(e, f, d, UINT64_MAX);
	cut_message(e, &f->dir[d]);
	while (i != GS_NONE) {
		uint32_t next = e->calls[i].flow_next;
		struct gs_ocall *c = &e->calls[i];
		if (c->where == GS_CALL_OPEN && c->dir != d && !(c->flags & GS_CF_PARKED))
			end_unanswered(e, i);
		i = next;
	}
}

void gs_pair_unpark(struct gs_engine *e, struct gs_flow *f, int requester_dir)
{
	uint32_t i = f->calls;
	while (i != GS_NONE) {
		uint32_t next = e->calls[i].flow_next;
		struct gs_ocall *c = &e->calls[i];
		if ((c->flags & GS_CF_PARKED) && c->dir == requester_dir && c->where == GS_CALL_OPEN) {
			e->cnt.orphan_replies++;
			gs_call_discard(e, i);
		}
		i = next;
	}
}

void gs_pair_flow_ended(struct gs_engine *e, struct gs_flow *f, bool evicted)
{
	uint32_t i;
	for (int d = 0; d < 2; d++)
		if (f->dir[d].rtx_n)
			gs_pair_held_retransmits(e, f, d, UINT64_MAX);
	cut_message(e, &f->dir[0]);
	cut_message(e, &f->dir[1]);
	i = f->calls;
	while (i != GS_NONE) {
		uint32_t next = e->calls[i].flow_next;
		if (e->calls[i].where == GS_CALL_OPEN) {
			if (evicted)
				e->calls[i].flags |= GS_CF_EVICTED;
			end_unanswered(e, i);
		}
		i = next;
	}
	/* detach what is left (queued for output) from the connection; the
	 * slot's ends stay until another connection takes it, which never happens
	 * once the input has ended */
	i = f->calls;
	while (i != GS_NONE) {
		struct gs_ocall *c = &e->calls[i];
		uint32_t next = c->flow_next;
		if (!e->finishing) {
			struct gs_cext *x = gs_cx(e, c);
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
