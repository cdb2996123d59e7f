/* SPDX-License-Identifier: BSD-2-Clause */
/* The call table: a fixed pool of call records, an index of open calls by
 * (connection, direction, request id), a min-heap of open calls by start time
 * (the output watermark) and the ended calls waiting to be written in
 * (t_request_first, client, request_id) order (a few sorted runs and a min-heap).
 *
 * A call slot is free, open (waiting for its reply) or queued (ended, waiting
 * for output).  When the pool is full the oldest queued call is written early,
 * or if none is queued the oldest open call is ended; both are counted.
 */
#include "calls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "table_mem.h"


/* ---- keys ---------------------------------------------------------------- */

/* Each run of 16 request ids of a connection picks a random 16-slot block of
 * the index (one cache line) and takes its place in it by the low bits: ORBs
 * number requests in sequence, so one connection's open calls sit in a few
 * cache lines instead of one line (and page) each.  Blocks, not one run per
 * connection: with many calls open on each connection, runs that long would
 * merge into clusters that every probe walks (1M calls open on 1000
 * connections took 30 s, most of it here). */
static inline __attribute__((always_inline)) uint32_t open_hash(uint32_t flow, uint32_t gen, int dir, uint32_t rid)
{
	uint64_t k = ((uint64_t)flow << 33) ^ ((uint64_t)gen << 1) ^ (uint64_t)dir;
	k ^= (uint64_t)(rid >> 4) * 0xc2b2ae3d27d4eb4fULL;
	k *= 0x9e3779b97f4a7c15ULL;
	k ^= k >> 31;
	k *= 0xbf58476d1ce4e5b9ULL;
	k ^= k >> 29;
	return ((uint32_t)k << 4) | (rid & 15u);
}

static inline __attribute__((always_inline)) uint32_t call_hash(const struct gs_ocall *c)
{
	return open_hash(c->flow, c->flow_gen, c->dir, c->request_id);
}

/* A call's client: its connection's, or its own once it outlived it. */
static const struct gs_endpoint *gs_ocall_client(const struct gs_calls *e, const struct gs_ocall *c)
{
	const struct gs_cext *x = gs_cx_peek(e, c);
	if (x && x->has_ep)
		return &x->client;
	return gs_cf_ep(&e->fl, c->flow, c->dir);
}

/* Heap entries (struct gs_heap_ent) carry the start time and serial of their
 * call: most comparisons end there, without reading two call records (each in
 * cache lines of its own). */

/* Output order: t_request_first, then the client as text, then request id;
 * the rare tie on the time out of line. */
static __attribute__((noinline)) bool out_tie(const struct gs_calls *e, const struct gs_heap_ent *x,
					      const struct gs_heap_ent *y)
{
	const struct gs_ocall *a = &e->calls[x->idx], *b = &e->calls[y->idx];
	int c = gs_endpoint_text_cmp(gs_ocall_client(e, a), gs_ocall_client(e, b));
	if (c)
		return c < 0;
	if (a->request_id != b->request_id)
		return a->request_id < b->request_id;
	return x->serial < y->serial;
}

static inline bool out_before(const struct gs_calls *e, const struct gs_heap_ent *x,
			      const struct gs_heap_ent *y)
{
	if (x->t != y->t)
		return x->t < y->t;
	return out_tie(e, x, y);
}

static inline bool wm_before(const struct gs_calls *e, const struct gs_heap_ent *x,
			     const struct gs_heap_ent *y)
{
	(void)e;
	if (x->t != y->t)
		return x->t < y->t;
	return x->serial < y->serial;
}

/* ---- heaps --------------------------------------------------------------- */

/* Four children a node: half the levels of a binary heap, and a node's
 * children are one cache line of entries.  Both orders are total (the serial
 * breaks every tie), so the calls come off in the same order whatever the
 * heap's shape.  The open calls' heap tracks each call's position (a reply
 * takes its call out from anywhere); the queue of ended calls does not: they
 * leave from the top, and every write to a call record is a cache line. */
#define HEAP_D 4

typedef bool (*before_fn)(const struct gs_calls *, const struct gs_heap_ent *,
			  const struct gs_heap_ent *);

/* The open calls' heap (tracked) runs up from heap_mem, the ended calls' (not
 * tracked) down from its last entry: entry i of h is at(h, i, !track). */
static inline struct gs_heap_ent *at(struct gs_heap_ent *h, uint32_t i, bool rev)
{
	return rev ? h - i : h + i;
}

static inline void heap_set(struct gs_calls *e, struct gs_heap_ent *h, uint32_t i,
			    struct gs_heap_ent v, bool track)
{
	*at(h, i, !track) = v;
	if (track)
		e->calls[v.idx].heap_pos = i;
}

static inline void sift_up(struct gs_calls *e, struct gs_heap_ent *h, uint32_t i, before_fn before,
			   bool track)
{
	struct gs_heap_ent v = *at(h, i, !track);
	while (i > 0) {
		uint32_t p = (i - 1) / HEAP_D;
		if (!before(e, &v, at(h, p, !track)))
			break;
		heap_set(e, h, i, *at(h, p, !track), track);
		i = p;
	}
	heap_set(e, h, i, v, track);
}

static inline void sift_down(struct gs_calls *e, struct gs_heap_ent *h, uint32_t n, uint32_t i,
			     before_fn before, bool track)
{
	struct gs_heap_ent v = *at(h, i, !track);
	for (;;) {
		uint32_t c = HEAP_D * i + 1, end, best;
		if (c >= n)
			break;
		end = n - c > HEAP_D ? c + HEAP_D : n;
		best = c;
		for (uint32_t k = c + 1; k < end; k++)
			if (before(e, at(h, k, !track), at(h, best, !track)))
				best = k;
		if (!before(e, at(h, best, !track), &v))
			break;
		heap_set(e, h, i, *at(h, best, !track), track);
		i = best;
	}
	heap_set(e, h, i, v, track);
}

static inline void heap_push(struct gs_calls *e, struct gs_heap_ent *h, uint32_t *n, uint32_t idx,
			     before_fn before, bool track)
{
	const struct gs_ocall *c = &e->calls[idx];
	struct gs_heap_ent v = { .t = c->t_request_first, .serial = c->serial, .idx = idx };
	*at(h, *n, !track) = v;
	(*n)++;
	sift_up(e, h, *n - 1, before, track);
}

static inline void heap_remove(struct gs_calls *e, struct gs_heap_ent *h, uint32_t *n, uint32_t pos,
			       before_fn before, bool track)
{
	(*n)--;
	if (pos == *n)
		return;
	*at(h, pos, !track) = *at(h, *n, !track);
	if (pos > 0 && before(e, at(h, pos, !track), at(h, (pos - 1) / HEAP_D, !track)))
		sift_up(e, h, pos, before, track);
	else
		sift_down(e, h, *n, pos, before, track);
}

/* The open calls by start time, positions tracked. */
static void wm_push(struct gs_calls *e, uint32_t idx)
{
	if (e->wm_kept)
		heap_push(e, e->wm_heap, &e->wm_n, idx, wm_before, true);
}

static void wm_remove(struct gs_calls *e, uint32_t idx)
{
	if (e->wm_kept)
		heap_remove(e, e->wm_heap, &e->wm_n, e->calls[idx].heap_pos, wm_before, true);
}

/* The open calls' heap from here on (see wm_kept): built from the open calls
 * there are, in any order, since its order is total. */
static void wm_keep(struct gs_calls *e)
{
	if (e->wm_kept)
		return;
	e->wm_kept = true;
	for (uint32_t i = 0; i < e->call_hwm; i++)
		if (e->calls[i].where == GS_CALL_OPEN)
			wm_push(e, i);
}

/* The ended calls in output order: GS_OUT_RUNS runs, each of calls in that
 * order (most calls end about in the order they began: a call joins the run
 * whose last call comes latest before it, without a heap step), and the heap
 * for the rest.  The next call out is the first of all: the order is total,
 * so the calls come out as from one heap.  A queued call's keys stay as they
 * were (only an open call's start moves: gs_call_rekey_time), so the runs
 * read them from the call records; a queued call's heap_pos (the open calls'
 * heap's, free once it ended) links its run.  out_src caches where the next
 * call out is: the drain asks at every packet. */
static struct gs_heap_ent *out_base(struct gs_calls *e)
{
	return e->heap_mem + e->n_calls - 1;
}

static struct gs_heap_ent out_ent(const struct gs_calls *e, uint32_t idx)
{
	const struct gs_ocall *c = &e->calls[idx];
	struct gs_heap_ent v = { .t = c->t_request_first, .serial = c->serial, .idx = idx };
	return v;
}


/* Finds where the next call out is, after it left or when any queued call did
 * (inline: every call written asks). */
static inline __attribute__((always_inline)) void out_find_top(struct gs_calls *e)
{
	const struct gs_heap_ent *top = e->out_hn ? &e->heap_mem[e->n_calls - 1] : NULL;
	e->out_src = -1;
	for (int r = 0; r < GS_OUT_RUNS; r++) {
		if (e->run_n[r] && (!top || out_before(e, &e->run_first[r], top))) {
			top = &e->run_first[r];
			e->out_src = r;
		}
	}
}

static void out_push(struct gs_calls *e, uint32_t idx)
{
	struct gs_heap_ent v = out_ent(e, idx), top;
	int best = -1, empty = -1;
	bool first;
	if (e->out_n == 0) { /* the queue is empty: the first run takes it */
		e->out_n = 1;
		e->out_src = 0;
		e->calls[idx].heap_pos = GS_NONE;
		e->run_first[0] = e->run_tail[0] = v;
		e->run_last[0] = idx;
		e->run_n[0] = 1;
		return;
	}
	top = *gs_out_top(e);
	first = out_before(e, &v, &top);
	e->out_n++;
	/* the run whose last call is the latest before this one */
	for (int r = 0; r < GS_OUT_RUNS; r++) {
		if (e->run_n[r] == 0) {
			if (empty < 0)
				empty = r;
		} else if (out_before(e, &e->run_tail[r], &v) &&
			   (best < 0 || out_before(e, &e->run_tail[best], &e->run_tail[r]))) {
			best = r;
		}
	}
	if (best < 0)
		best = empty;
	if (first)
		e->out_src = best;
	if (best < 0) {
		heap_push(e, out_base(e), &e->out_hn, idx, out_before, false);
		return;
	}
	e->calls[idx].heap_pos = GS_NONE;
	if (e->run_n[best] == 0)
		e->run_first[best] = v;
	else
		e->calls[e->run_last[best]].heap_pos = idx;
	e->run_tail[best] = v;
	e->run_last[best] = idx;
	e->run_n[best]++;
}

/* Takes the next call out of the queue. */
static uint32_t out_pop(struct gs_calls *e)
{
	int r = e->out_src;
	uint32_t idx = gs_out_top(e)->idx;
	e->out_n--;
	if (r >= 0) {
		if (--e->run_n[r])
			e->run_first[r] = out_ent(e, e->calls[idx].heap_pos);
	} else {
		heap_remove(e, out_base(e), &e->out_hn, 0, out_before, false);
	}
	if (e->out_n)
		out_find_top(e);
	return idx;
}

/* Takes a queued call out from anywhere (rare: a walk). */
static void out_remove(struct gs_calls *e, uint32_t idx)
{
	for (uint32_t pos = 0; pos < e->out_hn; pos++) {
		if (out_base(e)[-(ptrdiff_t)pos].idx == idx) {
			heap_remove(e, out_base(e), &e->out_hn, pos, out_before, false);
			e->out_n--;
			out_find_top(e);
			return;
		}
	}
	for (int r = 0; r < GS_OUT_RUNS; r++) {
		uint32_t prev = GS_NONE, k;
		for (k = e->run_n[r] ? e->run_first[r].idx : GS_NONE; k != GS_NONE && k != idx;
		     k = e->calls[k].heap_pos)
			prev = k;
		if (k == GS_NONE)
			continue;
		e->out_n--;
		e->run_n[r]--;
		if (prev == GS_NONE) {
			if (e->run_n[r])
				e->run_first[r] = out_ent(e, e->calls[idx].heap_pos);
		} else {
			e->calls[prev].heap_pos = e->calls[idx].heap_pos;
		}
		if (e->run_last[r] == idx && prev != GS_NONE) {
			e->run_last[r] = prev;
			e->run_tail[r] = out_ent(e, prev);
		}
		out_find_top(e);
		return;
	}
}

/* ---- open index (linear probing, backward-shift deletion) ------------------ */

/* The index part of gs_pair_open_find (pairing.h). */
struct gs_ocall *gs_call_open_probe(struct gs_calls *e, uint32_t flow, uint32_t gen, int dir, uint32_t rid)
{
	uint32_t i = open_hash(flow, gen, dir, rid) & e->open_mask;
	for (; e->open_index[i]; i = (i + 1) & e->open_mask) {
		struct gs_ocall *c = &e->calls[e->open_index[i] - 1];
		if (c->request_id == rid && c->flow == flow && c->flow_gen == gen && c->dir == dir)
			return c;
	}
	return NULL;
}

/* The open call idx is in the index (open_remove's test, the other way). */
static bool indexed(const struct gs_calls *e, uint32_t idx)
{
	const struct gs_ocall *c = &e->calls[idx];
	const struct gs_calls_dir *oc;
	if (c->where != GS_CALL_OPEN)
		return false;
	if (!c->attached)
		return true;
	oc = gs_cf_oc(&e->fl, c->flow, c->dir);
	return !(gs_cf_live(&e->fl, c->flow, c->flow_gen) && oc->open_solo && oc->last_call == idx);
}

static void index_insert(struct gs_calls *e, uint32_t idx)
{
	uint32_t i = call_hash(&e->calls[idx]) & e->open_mask;
	while (e->open_index[i])
		i = (i + 1) & e->open_mask;
	e->open_index[i] = idx + 1;
}

/* The index in use doubles (see open_mask): what it held is put again from
 * the call records, which say which calls it holds.  A walk of the slots ever
 * used, a few times a run at most (log2 of the growth). */
static __attribute__((noinline)) void index_grow(struct gs_calls *e)
{
	memset(e->open_index, 0, ((size_t)e->open_mask + 1) * sizeof *e->open_index);
	e->open_mask = e->open_mask * 2 + 1;
	for (uint32_t k = 0; k < e->call_hwm; k++)
		if (indexed(e, k))
			index_insert(e, k);
}

/* Room for the two entries a call may bring (itself, and the call it joins on
 * its direction). */
static inline void index_room(struct gs_calls *e)
{
	if (e->open_indexed + 2 > (e->open_mask + 1) / 4 && e->open_mask < e->open_mask_max)
		index_grow(e);
}

static void index_put(struct gs_calls *e, uint32_t idx)
{
	e->open_indexed++;
	index_insert(e, idx);
}

static void index_del(struct gs_calls *e, uint32_t idx)
{
	uint32_t mask = e->open_mask;
	uint32_t i = call_hash(&e->calls[idx]) & mask;
	e->open_indexed--;
	while (e->open_index[i] != idx + 1)
		i = (i + 1) & mask;
	for (;;) {
		uint32_t j = i, k;
		for (;;) {
			j = (j + 1) & mask;
			if (e->open_index[j] == 0) {
				e->open_index[i] = 0;
				return;
			}
			k = call_hash(&e->calls[e->open_index[j] - 1]) & mask;
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		e->open_index[i] = e->open_index[j];
		i = j;
	}
}

/* A direction's only open call stays out of the index (open_solo): the
 * fast path of gs_pair_open_find finds it as last_call, and most connections
 * have one call out at a time.  A second call puts both in. */
void gs_call_open_insert(struct gs_calls *e, uint32_t idx)
{
	struct gs_ocall *c = &e->calls[idx];
	e->open_count++;
	/* index_room before the call is marked open: the records then say which
	 * calls the index holds (index_grow) */
	if (c->attached) {
		struct gs_calls_dir *dr = gs_cf_oc(&e->fl, c->flow, c->dir);
		if (dr->open_n == 0) {
			dr->open_solo = true;
		} else {
			index_room(e);
			if (dr->open_solo)
				index_put(e, dr->last_call);
			dr->open_solo = false;
			index_put(e, idx);
		}
		dr->open_n++;
		dr->last_call = idx;
	} else {
		index_room(e);
		index_put(e, idx);
	}
	c->where = GS_CALL_OPEN;
	wm_push(e, idx);
}

static inline __attribute__((always_inline)) void open_remove(struct gs_calls *e, uint32_t idx)
{
	const struct gs_ocall *c = &e->calls[idx];
	e->open_count--;
	/* an open call is attached to a live connection: it ends before its
	 * connection does (gs_pair_flow_ended) */
	if (c->attached && gs_cf_live(&e->fl, c->flow, c->flow_gen)) {
		struct gs_calls_dir *dr = gs_cf_oc(&e->fl, c->flow, c->dir);
		if (dr->open_solo && dr->last_call == idx)
			dr->open_solo = false;
		else
			index_del(e, idx);
		dr->open_n--;
	} else {
		index_del(e, idx);
	}
	wm_remove(e, idx);
}

/* ---- life of a call ------------------------------------------------------- */

struct gs_cext *gs_call_ext_new(struct gs_calls *e, struct gs_ocall *c)
{
	uint32_t k;
	struct gs_cext *x;
	if (e->cext_free != GS_NONE) {
		k = e->cext_free;
		e->cext_free = e->cext[k].next_free;
	} else {
		k = e->cext_hwm++; /* never past n_calls: a record a call at most */
	}
	x = &e->cext[k];
	gs_zero(x, GS_CEXT_ZEROED); /* the rest: see struct gs_cext */
	x->exception = GS_INTERN_EMPTY;
	c->ext = k;
	return x;
}

static void ext_free(struct gs_calls *e, struct gs_ocall *c)
{
	if (c->ext == GS_NONE)
		return;
	e->cext[c->ext].next_free = e->cext_free;
	e->cext_free = c->ext;
	c->ext = GS_NONE;
}

/* The call as the sinks see it. */
static void assemble(const struct gs_calls *e, const struct gs_ocall *o, struct gs_call *c)
{
	const struct gs_cext *x = gs_cx_peek(e, o);
	gs_zero(c, sizeof *c);
	if (x && x->has_ep) {
		c->client = x->client;
		c->server = x->server;
	} else {
		/* attached, or detached while finishing: the flow's ends are still there */
		c->client = *gs_cf_ep(&e->fl, o->flow, o->dir);
		c->server = *gs_cf_ep(&e->fl, o->flow, !o->dir);
	}
	c->request_id = o->request_id;
	c->major = o->major;
	c->minor = o->minor;
	c->kind = o->kind;
	c->outcome = o->outcome;
	c->dir = o->dir;
	c->priority = o->priority;
	c->flags = o->flags;
	c->op = o->op;
	c->object_key = o->object_key;
	c->request_bytes = o->request_bytes;
	c->t_request_first = o->t_request_first;
	c->t_request_last = o->t_request_last;
	c->req_off0 = o->req_off0;
	c->req_off1 = o->req_off1;
	c->req_seq_base = o->req_seq_base;
	c->conn_flow = o->flow;
	c->flow = o->attached ? o->flow : GS_NONE;
	c->flow_gen = o->flow_gen;
	c->flow_prev = o->attached ? o->flow_prev : GS_NONE;
	c->flow_next = o->attached ? o->flow_next : GS_NONE;
	c->heap_pos = o->heap_pos;
	c->serial = o->serial;
	c->where = o->where;
	c->scattered = o->scattered;
	c->exception = GS_INTERN_EMPTY;
	/* a queued call without a side record ended while finishing: *e->now
	 * moves no more then */
	c->t_done = o->where == GS_CALL_QUEUED ? *e->now : 0;
	if (!x)
		return;
	c->reply_type = x->reply_type;
	c->completion = x->completion;
	c->status = x->status;
	c->exception = x->exception;
	c->minor_code = x->minor_code;
	c->gap_fills = x->gap_fills;
	c->reply_bytes = x->reply_bytes;
	c->t_reply_first = x->t_reply_first;
	c->t_reply_last = x->t_reply_last;
	c->t_done = x->t_done;
	c->fill_wait_ns = x->fill_wait_ns;
	c->nagle_half = x->nagle_half;
	c->rep_off0 = x->rep_off0;
	c->rep_off1 = x->rep_off1;
	c->rep_seq_base = x->rep_seq_base;
	if (!x->ev_set) /* never written: 0, as c is */
		return;
	c->retransmits = x->retransmits;
	c->rtx_cost_ns = x->rtx_cost_ns;
	c->queued_ns = x->queued_ns;
	c->queued_rid = x->queued_rid;
	c->queued_op = x->queued_op;
	c->nagle_ns = x->nagle_ns;
	c->zero_window_ns = x->zero_window_ns;
	c->rtx_mark = x->rtx_mark;
}

/* The fields the summary reads (gs_engine_summary_records), into a record
 * whose other fields are 0 and stay so. */
static inline __attribute__((always_inline)) void assemble_summary(const struct gs_ocall *o,
								   const struct gs_cext *x, struct gs_call *c)
{
	c->op = o->op;
	c->kind = o->kind;
	c->flags = o->flags;
	c->outcome = o->outcome;
	c->t_request_first = o->t_request_first;
	c->t_request_last = o->t_request_last;
	if (!x) {
		c->reply_type = 0;
		c->status = 0;
		c->gap_fills = 0;
		c->fill_wait_ns = 0;
		c->t_reply_first = c->t_reply_last = 0;
		return;
	}
	c->reply_type = x->reply_type;
	c->status = x->status;
	c->gap_fills = x->gap_fills;
	c->fill_wait_ns = x->fill_wait_ns;
	c->t_reply_first = x->t_reply_first;
	c->t_reply_last = x->t_reply_last;
}

/* Frees a call's slot (and side record); inline where each written call goes. */
static inline __attribute__((always_inline)) void release(struct gs_calls *e, uint32_t idx)
{
	struct gs_ocall *c = &e->calls[idx];
	if (c->attached) {
		uint32_t *list = gs_cf_list(&e->fl, c->flow);
		if (c->flow_prev != GS_NONE)
			e->calls[c->flow_prev].flow_next = c->flow_next;
		else if (*list == idx)
			*list = c->flow_next;
		if (c->flow_next != GS_NONE)
			e->calls[c->flow_next].flow_prev = c->flow_prev;
	}
	ext_free(e, c);
	c->where = GS_CALL_FREE;
	c->attached = 0;
	c->flow = GS_NONE;
	c->flow_next = e->call_free;
	e->call_free = idx;
}

void gs_call_release(struct gs_calls *e, uint32_t idx)
{
	release(e, idx);
}

/* Drops an open call without writing it (a parked reply that found no request). */
void gs_call_discard(struct gs_calls *e, uint32_t idx)
{
	if (e->calls[idx].where == GS_CALL_OPEN) {
		open_remove(e, idx);
	} else if (e->calls[idx].where == GS_CALL_QUEUED) {
		/* the queue does not track positions: look for it (no caller drops a
		 * queued call today; this stays correct if one does) */
		out_remove(e, idx);
	}
	gs_call_release(e, idx);
}

/* An open call's start time changed (a parked reply adopted by its request). */
void gs_call_rekey_time(struct gs_calls *e, uint32_t idx, int64_t t)
{
	struct gs_ocall *c = &e->calls[idx];
	wm_remove(e, idx);
	c->t_request_first = t;
	wm_push(e, idx);
}

static void emit_top(struct gs_calls *e)
{
	uint32_t idx = out_pop(e);
	struct gs_call rec, *c = &rec;
	if (e->lean) {
		c = &e->lean_rec;
		assemble_summary(&e->calls[idx], gs_cx_peek(e, &e->calls[idx]), c);
	} else {
		assemble(e, &e->calls[idx], c);
	}
	e->hold.serial = 0; /* a hold is for the top until it changes: serials wrap */
	if (e->ordered && c->t_request_first < e->last_emitted_t)
		e->cnt->rows_out_of_order++; /* only an ordered output can be out of order */
	else
		e->last_emitted_t = c->t_request_first;
	if (c->flags & GS_CF_CAPTURE_LOSS)
		e->cnt->calls_capture_loss++;
	if (gs_call_gap_filled(c)) {
		e->cnt->calls_gap_filled++;
		e->cnt->gap_fill_wait_ns += (uint64_t)c->fill_wait_ns;
	}
	if (c->flags & GS_CF_REP_SEEN) {
		/* A message's instants are those of its own packets; where the
		 * capture lost some, they are bounds, and causality bounds them too:
		 * the request was whole before the reply began, and the reply did
		 * not end before the request began. Only a capture that lists
		 * packets out of time order gets here. */
		if (c->t_request_last > c->t_reply_first)
			c->t_request_last = c->t_reply_first;
		if (c->t_reply_last < c->t_request_first)
			c->t_reply_last = c->t_request_first;
	}
	switch (c->outcome) {
	case GS_OUT_NO_REPLY: e->cnt->no_reply++; break;
	case GS_OUT_CANCELLED: e->cnt->cancelled++; break;
	case GS_OUT_ONEWAY: e->cnt->oneways++; break;
	default: break;
	}
	if (e->emit)
		e->emit(e->emit_arg, e->engine, c);
	release(e, idx);
}

void gs_call_end(struct gs_calls *e, uint32_t idx, enum gs_outcome how)
{
	struct gs_ocall *c = &e->calls[idx];
	if (c->where != GS_CALL_OPEN)
		return;
	open_remove(e, idx);
	c->outcome = (uint8_t)how;
	/* only the linger of gs_calls_drain reads it, never while finishing: a
	 * call that ends unanswered then takes no side record */
	if (!e->finishing || c->ext != GS_NONE)
		gs_cx(e, c)->t_done = *e->now;
	c->where = GS_CALL_QUEUED;
	out_push(e, idx);
}

/* A queued call may still gain retransmissions until the other side has
 * acknowledged its last bytes (or `linger` has passed): a copy sent after that
 * would be a spurious retransmission, which the capture rarely holds. */
static inline __attribute__((always_inline)) bool settled(const struct gs_calls *e, const struct gs_ocall *c)
{
	if (!c->attached)
		return true;
	if (!gs_cf_live(&e->fl, c->flow, c->flow_gen))
		return true;
	if (c->flags & GS_CF_REP_SEEN)
		return gs_cf_ack_max(&e->fl, c->flow, !c->dir) >= gs_cx_peek(e, c)->rep_off1;
	return gs_cf_ack_max(&e->fl, c->flow, c->dir) >= c->req_off1;
}

/* Notes what the unsettled top (attached, with a side record) waits for. */
static void hold(struct gs_calls *e, const struct gs_ocall *c, const struct gs_cext *x)
{
	struct gs_drain_hold *h = &e->hold;
	bool rep = (c->flags & GS_CF_REP_SEEN) != 0;
	h->serial = c->serial;
	h->flow = c->flow;
	h->gen = c->flow_gen;
	h->dir = (uint8_t)(rep ? !c->dir : c->dir);
	h->need = rep ? x->rep_off1 : c->req_off1;
	h->t_done = x->t_done;
}

/* Writes the queued calls that can be written: settled (acknowledged, or ended
 * at least `linger` ago) and, when ordered, started before every call that may
 * still appear (unless more than `order_window` calls are queued). */
static inline __attribute__((always_inline)) void drain(struct gs_calls *e, bool all, bool tested)
{
	while (e->out_n > 0) {
		const struct gs_ocall *top;
		/* `tested`: the caller found the top not held (gs_calls_held) */
		if (!all && !tested && gs_calls_held(e))
			break;
		tested = false;
		top = &e->calls[gs_out_top(e)->idx];
		if (!all) {
			const struct gs_cext *x = gs_cx_peek(e, top);
			int64_t t_done = x ? x->t_done : *e->now;
			/* differences, not sums: hostile time stamps must not overflow */
			if (*e->now - t_done < e->linger_ns && !settled(e, top)) {
				if (x)
					hold(e, top, x);
				break;
			}
			/* past the window, memory matters more than order: a call
			 * that never ends must not hold every later one */
			if (e->ordered && e->out_n <= e->order_window) {
				if (e->wm_n > 0 && e->wm_heap[0].t <= top->t_request_first)
					break;
				if (e->pend->count && gs_pending_min(e->pend) <= top->t_request_first)
					break;
			}
		}
		emit_top(e);
	}
}

void gs_calls_drain(struct gs_calls *e, bool all)
{
	drain(e, all, false);
}

void gs_calls_drain_unheld(struct gs_calls *e)
{
	drain(e, false, true);
}

uint32_t gs_call_alloc(struct gs_calls *e)
{
	uint32_t idx;
	if (e->call_free == GS_NONE && e->call_hwm < e->n_calls) {
		e->calls[e->call_hwm].flow_next = GS_NONE;
		e->call_free = e->call_hwm++;
	}
	if (e->call_free == GS_NONE) {
		wm_keep(e);
		if (e->out_n == 0 && e->wm_n > 0) {
			/* every slot holds an open call: the oldest gives way */
			uint32_t old = e->wm_heap[0].idx;
			e->cnt->open_calls_evicted++;
			if (e->calls[old].flags & GS_CF_PARKED) {
				/* a reply still waiting for its request: nothing to write */
				e->cnt->orphan_replies++;
				gs_call_discard(e, old);
				goto take;
			}
			e->calls[old].flags |= GS_CF_EVICTED;
			gs_call_end(e, old, GS_OUT_NO_REPLY);
		}
		if (e->out_n > 0)
			emit_top(e);
	}
take:
	idx = e->call_free;
	e->call_free = e->calls[idx].flow_next;
	e->calls[idx].ext = GS_NONE;
	return idx;
}

/* ---- the pool ------------------------------------------------------------ */

int gs_calls_init(struct gs_calls *e, uint32_t n_calls, bool wm_kept)
{
	e->n_calls = n_calls;
	/* 96-byte records from a line: each lies on two lines, where from
	 * calloc's 16-byte alignment every other one lay on three */
	/* address space, made resident as it fills (table_mem.h): a limit is a
	 * ceiling, not an allocation */
	e->calls_mem = gs_table_new(((size_t)n_calls + 1) * sizeof *e->calls);
	e->calls = e->calls_mem ? (struct gs_ocall *)(((uintptr_t)e->calls_mem + 63) & ~(uintptr_t)63) : NULL;
	e->cext = gs_table_new((size_t)n_calls * sizeof *e->cext);
	e->cext_free = GS_NONE;
	e->open_mask_max = gs_table_pow2((uint64_t)n_calls * 2) - 1;
	e->open_mask = e->open_mask_max < GS_OPEN_INDEX_START - 1 ? e->open_mask_max : GS_OPEN_INDEX_START - 1;
	e->open_index = gs_table_new(((size_t)e->open_mask_max + 1) * sizeof *e->open_index);
	e->heap_mem = gs_table_new((size_t)n_calls * sizeof *e->heap_mem);
	e->wm_heap = e->heap_mem;
	e->wm_kept = wm_kept;
	/* Free lists start empty: slots are taken from the high-water mark first,
	 * so memory is touched (made resident) only as far as it is used. */
	e->call_free = GS_NONE;
	if (!e->calls || !e->cext || !e->open_index || !e->heap_mem)
		return ENOMEM;
	return 0;
}

void gs_calls_free(struct gs_calls *e)
{
	gs_table_free(e->calls_mem);
	gs_table_free(e->cext);
	gs_table_free(e->open_index);
	gs_table_free(e->heap_mem);
}
