/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_feed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../decoders/giop/giop.h"

struct gs_pending {
	struct gs_call c;
	struct gs_call_times t;   /* the instants found so far */
	int64_t deadline;         /* CLOCK_MONOTONIC */
	uint64_t poll;            /* polls ended when it came (gs_aparent_wait) */
};

/* a waiting call is looked at again after this many syscall records: the
 * per-direction rings of attach_times must not have moved past it */
#define SETTLE_EVERY 32

static void ep_of(struct gs_endpoint *ep, const uint8_t *addr, uint16_t port, uint8_t family)
{
	memset(ep, 0, sizeof *ep);
	memcpy(ep->addr, addr, family == 6 ? 16 : 4);
	ep->port = port;
	ep->family = family;
}

/* ---- ended calls wait for their instants --------------------------------- */

/* Fills the instants of `c` not found yet; true when every one worth waiting
 * for is there.  An instant is awaited once its process has shown itself on
 * that direction of the connection (a send or recv seen there).  By the order
 * of the ring, the sends and the server's recv come before the reply that
 * ends the call; only the client's recv of the reply comes after it. */
static bool instants(const struct gs_feed *f, const struct gs_call *c, struct gs_call_times *t)
{
	/* a direction looked up only while one of its instants is still missing
	 * (an instant found stays found) */
	const struct gs_times_dir *req = !t->client_send || !t->server_recv ?
		gs_times_dir(&f->times, &c->client, &c->server) : NULL;
	const struct gs_times_dir *rep = !t->server_send || !t->client_recv ?
		gs_times_dir(&f->times, &c->server, &c->client) : NULL;
	bool replied = (c->flags & GS_CF_REP_SEEN) != 0, whole = true;
	uint8_t rtype = c->kind == GS_KIND_REQUEST ? GIOP_REQUEST : GIOP_LOCATE_REQUEST;

	if (!t->client_send && req && req->n_send) {
		t->client_send = gs_times_send(req, c->req_seq_base + (uint32_t)c->req_off0, c->t_request_first, rtype,
					       c->request_id);
		whole &= t->client_send != 0;
	}
	if (!t->server_recv && (c->flags & GS_CF_REQ_DONE) && req && req->n_recv) {
		t->server_recv = gs_times_recv(req, c->req_seq_base + (uint32_t)c->req_off1 - 1);
		whole &= t->server_recv != 0;
	}
	if (!t->server_send && replied && rep && rep->n_send) {
		t->server_send = gs_times_send(rep, c->rep_seq_base + (uint32_t)c->rep_off0, c->t_reply_first,
					       c->reply_type, c->request_id);
		whole &= t->server_send != 0;
	}
	if (!t->client_recv && replied && (c->flags & GS_CF_REP_DONE) && ((rep && rep->n_recv) || t->client_send)) {
		if (rep)
			t->client_recv = gs_times_recv(rep, c->rep_seq_base + (uint32_t)c->rep_off1 - 1);
		whole &= t->client_recv != 0;
	}
	return whole;
}

/* `whole`: instants() has just said so (nothing came since) */
static void emit_call(struct gs_feed *f, const struct gs_call *c, struct gs_call_times *t, bool late, bool whole)
{
	struct gs_call own;
	if (!whole && !instants(f, c, t) && late)
		f->instants_missing++;
	t->cols = f->cols;
	if (f->enrich)
		f->enrich(f->enrich_arg, f, c, t);
	gs_session_emit(f->s, gs_aparent_call(&f->nest, &f->times, c, t, &own), t);
}

static void emit(struct gs_feed *f, struct gs_pending *p, bool late, bool whole)
{
	emit_call(f, &p->c, &p->t, late, whole);
}

void gs_feed_settle(struct gs_feed *f, bool all)
{
	struct timespec ts;
	int64_t mono;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	mono = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	/* in order: a call waiting holds back the ones that ended after it */
	while (f->q_n) {
		struct gs_pending *p = &f->q[f->q_head];
		bool late = all || mono >= p->deadline;
		if (!late && (!instants(f, &p->c, &p->t) || (f->ready && !f->ready(f->enrich_arg, f, &p->c, &p->t)) ||
			      gs_aparent_wait(&f->nest, &f->times, &p->c, &p->t, p->poll, f->polls)))
			break;
		emit(f, p, late, !late);
		f->q_head = (f->q_head + 1) % f->q_cap;
		f->q_n--;
	}
}

static void on_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	struct gs_feed *f = arg;
	struct timespec ts;
	struct gs_pending *p;
	(void)e;
	if (!f->q_n) {
		/* nothing waits (the common case): a call whose instants are all
		 * there is written from the engine's own copy, not copied into the
		 * queue first; one that has to wait goes to the queue's first slot
		 * (warm: not a walk through megabytes of the queue's memory, which
		 * would push the followed processes' lines out of the shared
		 * cache) with what was found */
		struct gs_call_times t;
		memset(&t, 0, sizeof t);
		if (instants(f, c, &t) && (!f->ready || f->ready(f->enrich_arg, f, c, &t)) &&
		    !gs_aparent_wait(&f->nest, &f->times, c, &t, f->polls, f->polls)) {
			emit_call(f, c, &t, false, true);
			return;
		}
		f->q_head = 0;
		p = &f->q[0];
		p->c = *c;
		p->t = t;
		p->poll = f->polls;
		f->q_n = 1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		p->deadline = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + f->wait_ns;
		return;
	}
	if (f->q_n == f->q_cap) {
		/* full: the oldest goes out with what it has */
		f->queue_full++;
		emit(f, &f->q[f->q_head], true, false);
		f->q_head = (f->q_head + 1) % f->q_cap;
		f->q_n--;
	}
	p = &f->q[(f->q_head + f->q_n) % f->q_cap];
	p->c = *c;
	memset(&p->t, 0, sizeof p->t);
	p->poll = f->polls;
	f->q_n++;
	/* what is there now is taken now: the rings move on */
	if (instants(f, &p->c, &p->t) && f->q_n == 1 && (!f->ready || f->ready(f->enrich_arg, f, &p->c, &p->t)) &&
	    !gs_aparent_wait(&f->nest, &f->times, &p->c, &p->t, p->poll, f->polls)) {
		emit(f, p, false, true);
		f->q_head = (f->q_head + 1) % f->q_cap;
		f->q_n--;
		return;
	}
	/* it waits: from now on at most wait_ns */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->deadline = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + f->wait_ns;
}

static void flush(void *arg)
{
	gs_feed_settle(arg, true);
}

/* ---- records ------------------------------------------------------------- */

/* A send or recv of a followed process, from its own record or folded into
 * a segment's. */
static void on_sys_event(struct gs_feed *f, const struct gs_tap_flow *fl, bool send, uint32_t seq, uint32_t len,
			 uint64_t ts_ns, const uint8_t *head, uint32_t head_len, uint32_t tid)
{
	struct gs_endpoint src, dst;
	struct gs_times_id id;
	struct gs_times_ev *ev;
	ep_of(&src, fl->saddr, fl->sport, fl->family);
	ep_of(&dst, fl->daddr, fl->dport, fl->family);
	f->syscalls++;
	id = gs_times_id_of(head_len ? head : NULL, head_len);
	ev = gs_times_add_tid(&f->times, &src, &dst, send, seq, len, (int64_t)ts_ns + f->mono_to_real, &id, tid,
			      (int64_t)ts_ns);
	if (f->on_instant) {
		f->on_instant(f->enrich_arg, ev);
		gs_times_repin(&f->times);
	}
	if (f->q_n && ++f->since_settle >= SETTLE_EVERY) {
		f->since_settle = 0;
		gs_feed_settle(f, false);
	}
}

/* Syscalls folded into a segment record or taken from watch_tab: `out` is
 * the socket's sending direction (a send's flow; a recv's is its reverse);
 * call 0: none.  In the order they happened. */
static void on_fold(struct gs_feed *f, const struct gs_tap_flow *out, struct gs_tap_seg_fold fold)
{
	struct gs_tap_flow rev;
	memset(&rev, 0, sizeof rev);
	memcpy(rev.saddr, out->daddr, sizeof rev.saddr);
	memcpy(rev.daddr, out->saddr, sizeof rev.daddr);
	rev.sport = out->dport;
	rev.dport = out->sport;
	rev.family = out->family;
	if (fold.send.call && (!fold.recv.call || fold.send.ts_ns < fold.recv.ts_ns)) {
		on_sys_event(f, out, true, fold.send.seq, fold.send.len, fold.send.ts_ns, NULL, 0, fold.send.tid);
		fold.send.call = 0;
	}
	if (fold.recv.call)
		on_sys_event(f, &rev, false, fold.recv.seq, fold.recv.len, fold.recv.ts_ns, NULL, 0, fold.recv.tid);
	if (fold.send.call)
		on_sys_event(f, out, true, fold.send.seq, fold.send.len, fold.send.ts_ns, NULL, 0, fold.send.tid);
}

/* A whole Request's (LocateRequest's) id and kind, when its head shipped
 * says so (1.2+: the id follows the header, then a Request's response flags;
 * 1.0 and 1.1 Requests only without service contexts) */
static bool request_of(const struct gs_piece *p, uint32_t *rid, enum gs_times_req *kind)
{
	struct gs_times_id id = gs_times_id_of(p->data, p->len);
	/* the id's place, then the flags' (an octet; 1.0/1.1: a boolean) */
	uint32_t at = p->data[5] >= 2 ? 16 : 20;
	if (id.has_id && id.type == GIOP_LOCATE_REQUEST) {
		*rid = id.rid;
		*kind = GS_TREQ_LOCATE;
		return true;
	}
	if (!id.has_id || id.type != GIOP_REQUEST || p->len <= at)
		return false;
	*rid = id.rid;
	*kind = (p->data[5] >= 2 ? (p->data[at] & 1) == 0 : p->data[at] == 0) ? GS_TREQ_ONEWAY : GS_TREQ_TWOWAY;
	return true;
}

/* The messages the segment starts: their first sends kept apart (a reply of
 * 157 Fragments is 157 sends, more than the ring of a direction holds, and
 * its call ends only after the last), and so the recvs that will return the
 * last bytes of whole messages (a Request's last Fragment, or one not
 * fragmented), which others' recvs on the connection could push out. */
static void pin_starts(struct gs_feed *f, const struct gs_segment *seg)
{
	for (uint32_t i = 0; i < seg->n_pieces; i++) {
		const struct gs_piece *p = &seg->pieces[i];
		const uint8_t *h = p->data;
		uint32_t size, rid;
		enum gs_times_req kind;
		if (p->len < 12 || memcmp(h, "GIOP", 4) != 0 || h[4] != 1)
			continue; /* the rest of a header cut by the segment before */
		if (h[7] == GIOP_REQUEST || h[7] == GIOP_REPLY || h[7] == GIOP_LOCATE_REQUEST ||
		    h[7] == GIOP_LOCATE_REPLY)
			gs_times_pin_send(&f->times, &seg->src, &seg->dst, seg->seq + p->off);
		/* 1.1+: flags bit 1, more fragments follow; 1.0 has none */
		if (h[7] > GIOP_FRAGMENT || h[7] == GIOP_CANCEL_REQUEST || h[7] == GIOP_CLOSE_CONNECTION ||
		    h[7] == GIOP_MESSAGE_ERROR || (h[5] >= 1 && (h[6] & 2)))
			continue;
		size = (h[6] & 1) ? (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24
				  : (uint32_t)h[11] | (uint32_t)h[10] << 8 | (uint32_t)h[9] << 16 | (uint32_t)h[8] << 24;
		if ((h[7] == GIOP_REQUEST || h[7] == GIOP_LOCATE_REQUEST) && request_of(p, &rid, &kind))
			gs_times_expect_request(&f->times, &seg->src, &seg->dst, seg->seq + p->off + 12 + size - 1, rid,
						kind);
		else
			gs_times_expect_end(&f->times, &seg->src, &seg->dst, seg->seq + p->off + 12 + size - 1);
	}
}

static void on_segment(struct gs_feed *f, const struct gs_tap_seg *r, size_t len)
{
	struct gs_segment seg;
	const struct gs_tap_head *heads = (const struct gs_tap_head *)(r + 1);
	const uint8_t *data;
	uint32_t used = 0;

	/* the header, n_heads heads, data_len bytes; the record may be longer */
	if (len < sizeof *r || r->n_heads > GS_TAP_HEADS ||
	    (size_t)r->n_heads * sizeof *heads + r->data_len > len - sizeof *r ||
	    (r->flow.family != 4 && r->flow.family != 6)) {
		f->bad_records++;
		return;
	}
	data = (const uint8_t *)(heads + r->n_heads);
	/* syscalls folded in: after the heads' bytes, whole, aligned */
	if (r->sys_off && (r->sys_off % 8 || r->sys_off < sizeof *r + (size_t)r->n_heads * sizeof *heads +
			   r->data_len || r->sys_off > len || len - r->sys_off < sizeof(struct gs_tap_seg_fold))) {
		f->bad_records++;
		return;
	}
	memset(&seg, 0, sizeof seg);
	ep_of(&seg.src, r->flow.saddr, r->flow.sport, r->flow.family);
	ep_of(&seg.dst, r->flow.daddr, r->flow.dport, r->flow.family);
	seg.seq = r->seq;
	seg.ack = r->ack;
	seg.len = r->len;
	seg.window = r->window;
	seg.tcp_flags = r->tcp_flags;
	for (uint32_t i = 0; i < r->n_heads; i++) {
		struct gs_tap_head h;
		memcpy(&h, &heads[i], sizeof h);
		if (h.len > r->data_len - used) {
			f->bad_records++;
			return;
		}
		f->pieces[i].off = h.off;
		f->pieces[i].len = h.len;
		f->pieces[i].data = data + used;
		used += h.len;
	}
	seg.pieces = f->pieces;
	seg.n_pieces = r->n_heads;
	/* the syscalls this segment carries: the records they stand for came
	 * before the segment, in the order they happened */
	if (r->sys_off) {
		struct gs_tap_seg_fold fold;
		memcpy(&fold, (const uint8_t *)r + r->sys_off, sizeof fold);
		on_fold(f, &r->flow, fold);
	}
	pin_starts(f, &seg);
	if (r->flags & GS_SEG_HEADS_LOST)
		f->heads_lost_segments++;
	/* a later record of a segment shipped in several: the next part of its
	 * payload (seq, len: the part), with more heads -- to the engine a
	 * segment that follows the earlier part, counted once */
	if (r->flags & GS_SEG_MORE)
		f->seg_more++;
	else
		f->segments++;
	gs_engine_segment(f->s->e, (int64_t)r->ts_ns + f->mono_to_real, &seg);
}

static void on_syscall(struct gs_feed *f, const struct gs_tap_sys *r, size_t len)
{
	/* the short form (GS_TAP_SYS_SHORT bytes) has no head */
	if (len < GS_TAP_SYS_SHORT || r->head_len > GS_TAP_USER_HEAD ||
	    (r->head_len && len < sizeof *r) || (r->flow.family != 4 && r->flow.family != 6)) {
		f->bad_records++;
		return;
	}
	on_sys_event(f, &r->flow, r->kind == GS_REC_SEND, r->seq, r->len, r->ts_ns, r->head, r->head_len, r->tid);
}

void gs_feed_record(void *arg, const void *rec, size_t len)
{
	struct gs_feed *f = arg;
	const uint32_t *kind = rec;
	if (len < sizeof *kind) {
		f->bad_records++;
		return;
	}
	switch (*kind) {
	case GS_REC_SEG:
		on_segment(f, rec, len);
		break;
	case GS_REC_SEND:
	case GS_REC_RECV:
		on_syscall(f, rec, len);
		break;
	case GS_REC_FOLD: {
		const struct gs_tap_fold_rec *r = rec;
		if (len < sizeof *r || (r->flow.family != 4 && r->flow.family != 6)) {
			f->bad_records++;
			break;
		}
		on_fold(f, &r->flow, r->fold);
		break;
	}
	default:
		f->bad_records++;
	}
}

/* ---- clock and life ------------------------------------------------------ */

void gs_feed_polled(struct gs_feed *f)
{
	f->polls++;
}

void gs_feed_clock(struct gs_feed *f)
{
	/* the tightest of a few (monotonic, wall, monotonic) samples */
	int64_t best = INT64_MAX;
	for (int i = 0; i < 3; i++) {
		struct timespec a, w, b;
		int64_t ma, mb;
		clock_gettime(CLOCK_MONOTONIC, &a);
		clock_gettime(CLOCK_REALTIME, &w);
		clock_gettime(CLOCK_MONOTONIC, &b);
		ma = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec;
		mb = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
		if (mb - ma < best) {
			best = mb - ma;
			f->mono_to_real = (int64_t)w.tv_sec * 1000000000 + w.tv_nsec - (ma + (mb - ma) / 2);
		}
	}
}

int gs_feed_init(struct gs_feed *f, struct gs_session *s, uint32_t queue, int64_t wait_ns)
{
	int err;
	memset(f, 0, sizeof *f);
	f->s = s;
	f->wait_ns = wait_ns;
	f->q_cap = queue;
	f->q = calloc(queue, sizeof *f->q);
	if (!f->q)
		return ENOMEM;
	if ((err = gs_times_init(&f->times, 8192)) != 0) {
		free(f->q);
		return err;
	}
	if ((err = gs_aparent_init(&f->nest)) != 0) {
		gs_times_free(&f->times);
		free(f->q);
		return err;
	}
	f->times.on_read = gs_aparent_on_read;
	f->times.read_arg = &f->nest;
	gs_feed_clock(f);
	s->call_hook = on_call;
	s->flush_hook = flush;
	s->hook_arg = f;
	return 0;
}

void gs_feed_free(struct gs_feed *f)
{
	gs_times_free(&f->times);
	gs_aparent_free(&f->nest);
	free(f->q);
	f->q = NULL;
}
