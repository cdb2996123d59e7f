// SPDX-License-Identifier: BSD-2-Clause
/* The calls stage (calls.c): the calls while the engine holds them, their
 * side records, the open index, the output order and the drain.  Its state is
 * struct gs_calls, which the engine holds and passes it; it reads the
 * connections only through the view the engine gives it (struct
 * gs_calls_flows: where a connection's liveness, call list, ends, each
 * direction's ACK and open calls lie), so it does not include the flow table
 * (flows come before it in the data flow). */
#ifndef GS_CALLS_H
#define GS_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../decoders/bytes.h"
#include "call.h"
#include "counters.h"
#include "endpoint.h"
#include "intern.h"
#include "pending.h"

struct gs_engine;

/* A call while the engine holds it.  Split so that a call waiting for its
 * reply costs little (at most 128 bytes an open call with its index and heap
 * entries: a capture may hold many calls open at once): the fields every call
 * needs from its request on are here; the reply's, the evidence for the tail
 * analysis and the endpoints of a call outlived by its connection go to a side
 * record (struct gs_cext),
 * taken from a pool the size of the call pool when one of them is first
 * written.  A call that never sees a reply, a retransmission or a stall never
 * takes one.  The record the sinks see (struct gs_call, call.h) is assembled
 * from both when the call is written. */
struct gs_ocall {
	int64_t t_request_first, t_request_last;
	uint64_t request_bytes;
	/* stream offsets of the request bytes, for retransmission attribution */
	uint64_t req_off0, req_off1;
	uint32_t request_id;
	uint32_t op;           /* interned operation name */
	uint32_t object_key;   /* interned object key */
	/* the connection: while `attached`, the call is on the flow's list
	 * (flow_prev, flow_next) and its endpoints are the flow's; once detached
	 * (its connection ended) `flow` still names it, for the record's conn_flow */
	uint32_t flow, flow_gen;
	uint32_t flow_prev, flow_next;
	uint32_t heap_pos;     /* place in the open calls' heap (open calls only); once
	                        * queued, the next call of its run (calls.c) */
	uint32_t serial;       /* creation order: stable tie-break */
	uint32_t req_seq_base; /* TCP sequence number of stream offset 0 of the request's direction */
	uint32_t ext;          /* side record (e->cext), GS_NONE when none */
	uint16_t flags;        /* GS_CF_* */
	int16_t priority;
	uint8_t major, minor;
	uint8_t kind, outcome;
	uint8_t dir;           /* direction of the request within its flow */
	uint8_t where;         /* free, open, queued */
	/* bit 0: the request's messages are not contiguous (a Fragment came after
	 * another message), bit 1: the reply's; their span is then not theirs alone */
	uint8_t scattered;
	uint8_t attached;
};

/* The rest of a call (see struct gs_ocall); zero but for `exception` when taken.
 * Its first 60 bytes are what a queued call is read for when it is written
 * (the drain's linger and settled tests, the summary's fields, the free list):
 * a record then costs one or two cache lines, not three (calls that wait
 * behind many connections' are cold when written). */
struct gs_cext {
	int64_t t_reply_first, t_reply_last;
	int64_t t_done;        /* capture time at which the call ended (not kept while finishing) */
	uint64_t rep_off1;
	int64_t fill_wait_ns;
	uint32_t status, gap_fills;
	uint32_t next_free;
	uint32_t exception;
	uint8_t reply_type, completion, nagle_half, has_ep;
	uint32_t minor_code;
	/* the rest of the reply */
	uint64_t reply_bytes;
	uint64_t rep_off0;
	uint32_t rep_seq_base;
	bool ev_set;           /* the evidence below is written (else it reads 0) */
	/* Evidence, zeroed when first written (gs_cx_ev) and read only when ev_set;
	 * the endpoints, read only when has_ep.  A record is zeroed up to here
	 * when taken: 88 bytes, two cache lines or three, where the whole 176 were
	 * three or four, written for every call, for fields most calls never set
	 * (each line written is a write miss on a cold record). */
	int64_t rtx_cost_ns, queued_ns, nagle_ns, zero_window_ns;
	uint32_t retransmits;
	uint32_t queued_rid, queued_op;
	uint32_t rtx_mark;     /* the last retransmitted range charged to this call */
	struct gs_endpoint client, server; /* when has_ep: the call outlived its connection's slot */
};
_Static_assert(offsetof(struct gs_cext, minor_code) + 4 <= 64, "struct gs_cext: its first line");
_Static_assert(sizeof(struct gs_cext) == 176, "struct gs_cext: --max-memory sizes the call pool by it");
#define GS_CEXT_ZEROED offsetof(struct gs_cext, rtx_cost_ns)
#define GS_CEXT_EV_END offsetof(struct gs_cext, client)

/* What the first call in output order waits for, noted when gs_calls_drain
 * found it unsettled: the peer's acknowledgement of `need` on direction `dir`
 * of its connection (flow, gen), or the linger after t_done.  Every packet
 * drains, and most find the same call still waiting: this answers without
 * reading its records.  The offsets a queued call waits for only grow (a later
 * Fragment of its messages), so a `need` noted earlier never lets it go early;
 * its connection's end (in_use, gen) is all that settles it otherwise. */
struct gs_drain_hold {
	uint32_t serial;    /* the call's serial (serials start at 1: 0 is none) */
	uint32_t flow, gen;
	uint8_t dir;
	uint64_t need;
	int64_t t_done;
};

/* An entry of the call heaps: the call and its first keys (calls.c). */
struct gs_heap_ent {
	int64_t t;          /* the call's t_request_first */
	uint32_t serial;    /* ... and its serial */
	uint32_t idx;
};

/* The open calls whose request went one way of a connection: the calls'
 * part of a direction (struct gs_dir, on its third line, which a request or
 * reply touches anyway). */
struct gs_calls_dir {
	uint32_t open_n;         /* open calls whose request went this way */
	uint32_t last_call;      /* the latest of them: most lookups want it */
	bool open_solo;          /* last_call is the only open call this way, and not in the open index */
};

/* Where the calls stage finds what it reads of connection n (the flow table is
 * the engine's): offsets into the table, filled once by the engine. */
struct gs_calls_flows {
	char *base;              /* connection 0 */
	size_t stride;           /* bytes a connection */
	/* from the start of a connection, so that each costs one load (the drain
	 * reads the liveness and an ACK at most packets) */
	uint16_t in_use, gen, list; /* bool, uint32_t, uint32_t (the head of its calls, by flow_next) */
	uint16_t ep[2];          /* struct gs_endpoint: ep[d] sends direction d */
	uint16_t ack_max[2];     /* uint64_t: the highest offset of direction d the peer acknowledged */
	uint16_t oc[2];          /* struct gs_calls_dir of direction d */
};

static inline char *gs_cf_at(const struct gs_calls_flows *v, uint32_t n)
{
	return v->base + (size_t)n * v->stride;
}
/* Connection n is still the one of generation gen. */
static inline bool gs_cf_live(const struct gs_calls_flows *v, uint32_t n, uint32_t gen)
{
	const char *f = gs_cf_at(v, n);
	return *(const bool *)(f + v->in_use) && *(const uint32_t *)(f + v->gen) == gen;
}
static inline uint32_t *gs_cf_list(const struct gs_calls_flows *v, uint32_t n)
{
	return (uint32_t *)(gs_cf_at(v, n) + v->list);
}
static inline const struct gs_endpoint *gs_cf_ep(const struct gs_calls_flows *v, uint32_t n, int d)
{
	return (const struct gs_endpoint *)(gs_cf_at(v, n) + v->ep[d]);
}
static inline struct gs_calls_dir *gs_cf_oc(const struct gs_calls_flows *v, uint32_t n, int d)
{
	return (struct gs_calls_dir *)(gs_cf_at(v, n) + v->oc[d]);
}
static inline uint64_t gs_cf_ack_max(const struct gs_calls_flows *v, uint32_t n, int d)
{
	return *(const uint64_t *)(gs_cf_at(v, n) + v->ack_max[d]);
}

/* A call written out: the engine's sink (engine.h's gs_call_fn). */
typedef void (*gs_calls_emit_fn)(void *arg, const struct gs_engine *e, const struct gs_call *c);

struct gs_calls {
	struct gs_ocall *calls;     /* 64-byte aligned within calls_mem */
	void *calls_mem;
	struct gs_cext *cext;       /* side records, as many as call slots */
	uint32_t cext_free;         /* free list through next_free */
	uint32_t cext_hwm;          /* records ever used */
	uint32_t n_calls;
	uint32_t call_free;         /* free list through flow_next */
	uint32_t call_hwm;          /* slots ever used */
	uint32_t *open_index;       /* (flow, gen, dir, request id) -> call + 1 */
	/* The index is allocated for every call slot (open_mask_max + 1 entries,
	 * twice the slots) but used from its start, open_mask + 1 entries, doubled
	 * as it fills past a quarter (calls.c): the blocks its hash spreads request
	 * ids over then lie in a few pages, not all over 8 MiB (by default), where
	 * each probe would be a TLB miss and each first touch of a page two faults
	 * (figure: docs/benchmarks.md, "Figures behind the code"). */
	uint32_t open_mask, open_mask_max;
	uint32_t open_indexed;      /* entries in the index */
#define GS_OPEN_INDEX_START 4096
	uint32_t open_count;
	/* One array of n_calls entries holds both heaps: the open calls' from its
	 * start, the ended calls' from its end (out_heap[i] is heap_mem[n_calls-1-i]
	 * in calls.c), since a call is in one of them at most: what is touched
	 * (resident) is the most calls held at once, not twice that. */
	struct gs_heap_ent *heap_mem;
	struct gs_heap_ent *wm_heap;   /* open calls by t_request_first (= heap_mem) */
	uint32_t wm_n;
	/* The heap is kept only when something reads it: the ordered output's
	 * watermark, the reply timeout, the oldest call giving way to a full
	 * pool (calls.c builds it then, once).  Unordered `read` never needs
	 * it until the pool fills, and a call then costs no heap entry. */
	bool wm_kept;
	uint32_t out_n;                /* ended calls waiting for output order */
	/* The ended calls are a few sorted runs and a heap (calls.c): a call
	 * joins the run whose last call comes just before it (most do: calls end
	 * about in the order they began), linked through their heap_pos in that
	 * order; the others go to the heap (out_hn entries from the end of
	 * heap_mem).  The next call out is the first of them all. */
#define GS_OUT_RUNS 2
	uint32_t out_hn;
	uint32_t run_n[GS_OUT_RUNS];
	uint32_t run_last[GS_OUT_RUNS];  /* call index of each run's last call */
	struct gs_heap_ent run_first[GS_OUT_RUNS], run_tail[GS_OUT_RUNS];
	int out_src;                     /* where the next call out is: run, or -1 the heap */
	struct gs_drain_hold hold;
	uint32_t serial;
	int64_t last_emitted_t;
	bool finishing;
	/* gs_engine_summary_records: the calls go out in lean_rec, whose other
	 * fields stay 0 (calloc'd with the engine) */
	bool lean;
	struct gs_call lean_rec;
	/* what the stage is given by the engine */
	struct gs_calls_flows fl;
	const int64_t *now;         /* the capture's clock */
	struct gs_counters *cnt;
	struct gs_pending *pend;    /* the earliest start a call not created yet may have */
	bool ordered;               /* the configuration's */
	uint32_t order_window;
	int64_t linger_ns;
	gs_calls_emit_fn emit;
	void *emit_arg;
	const struct gs_engine *engine; /* handed to emit as it is */
};

/* The next ended call out, in output order (out_n > 0): the first of a run
 * or the heap's top, as calls.c keeps them (out_src). */
static inline const struct gs_heap_ent *gs_out_top(const struct gs_calls *e)
{
	return e->out_src < 0 ? &e->heap_mem[e->n_calls - 1] : &e->run_first[e->out_src];
}

uint32_t gs_call_alloc(struct gs_calls *e);
/* A call slot's `where`: free, open (waiting for its messages), or queued
 * (ended, waiting for its turn in the output). */
#define GS_CALL_FREE 0
#define GS_CALL_OPEN 1
#define GS_CALL_QUEUED 2
/* The call in slot idx if it is still the one with this serial, else NULL.
 * Inline: every message end looks its call up so. */
static inline struct gs_ocall *gs_call_live(struct gs_calls *e, uint32_t idx, uint32_t serial)
{
	struct gs_ocall *c;
	if (idx >= e->n_calls)
		return NULL;
	c = &e->calls[idx];
	return (c->where != GS_CALL_FREE && c->serial == serial) ? c : NULL;
}
/* The call's side record, taken now if it has none (the pool never runs out:
 * a record a call slot). */
struct gs_cext *gs_call_ext_new(struct gs_calls *e, struct gs_ocall *c);
static inline struct gs_cext *gs_cx(struct gs_calls *e, struct gs_ocall *c)
{
	return c->ext != GS_NONE ? &e->cext[c->ext] : gs_call_ext_new(e, c);
}
/* The evidence fields of a side record, zeroed now if they were never written. */
static inline struct gs_cext *gs_cx_ev(struct gs_cext *x)
{
	if (!x->ev_set) {
		memset((char *)x + GS_CEXT_ZEROED, 0, GS_CEXT_EV_END - GS_CEXT_ZEROED);
		x->ev_set = true;
	}
	return x;
}
/* ... or NULL when it has none (every field of it then reads 0). */
static inline const struct gs_cext *gs_cx_peek(const struct gs_calls *e, const struct gs_ocall *c)
{
	return c->ext != GS_NONE ? &e->cext[c->ext] : NULL;
}
/* The top of the queue was not settled at the last drain: what it waits for
 * (see struct gs_drain_hold).  It is still the top, its connection is still
 * there and still lacks the acknowledgement, and the linger has not passed:
 * it still waits, as the drain's settled() would say, without reading the
 * call records.  Inline in the per-packet path: most packets find the top
 * held, and then cost no call of gs_calls_drain. */
static inline bool gs_calls_hold_stands(const struct gs_calls *e)
{
	const struct gs_drain_hold *h = &e->hold;
	return h->serial != 0 && gs_out_top(e)->serial == h->serial && *e->now - h->t_done < e->linger_ns;
}
/* ... and the acknowledgement is still lacking.  The engine, which lays out
 * the connections, has its own inline copy of this test for every packet
 * (gs_engine_calls_held, engine_impl.h): through the view it costs a few
 * loads more. */
static inline bool gs_calls_held(const struct gs_calls *e)
{
	const struct gs_drain_hold *h = &e->hold;
	return gs_calls_hold_stands(e) && gs_cf_live(&e->fl, h->flow, h->gen) &&
	       gs_cf_ack_max(&e->fl, h->flow, h->dir) < h->need;
}

/* The index part of the open-call lookup (gs_pair_open_find, pairing.h). */
struct gs_ocall *gs_call_open_probe(struct gs_calls *e, uint32_t flow, uint32_t gen, int dir, uint32_t rid);
void gs_call_open_insert(struct gs_calls *e, uint32_t idx);
void gs_call_end(struct gs_calls *e, uint32_t idx, enum gs_outcome how);
void gs_calls_drain(struct gs_calls *e, bool all);
/* gs_calls_drain(e, false) once the caller found gs_calls_held false. */
void gs_calls_drain_unheld(struct gs_calls *e);
void gs_call_release(struct gs_calls *e, uint32_t idx);
void gs_call_discard(struct gs_calls *e, uint32_t idx);
void gs_call_rekey_time(struct gs_calls *e, uint32_t idx, int64_t t_request_first);

/* The pool of n_calls calls, their side records, the open index and the
 * heaps (0 or ENOMEM: then gs_calls_free gives back what was taken);
 * wm_kept: the open calls' heap is kept from the start (calls.c). */
int gs_calls_init(struct gs_calls *e, uint32_t n_calls, bool wm_kept);
void gs_calls_free(struct gs_calls *e);

#endif
