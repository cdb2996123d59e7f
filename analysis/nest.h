/* SPDX-License-Identifier: BSD-2-Clause */
/* The nesting stage: between the calls' source (engine, shards, attach) and the
 * sinks.  It names each call's parent (the call its client host was serving
 * while it made it: pairs-csv.md, parent_*), and for every call the time its
 * nested calls were open inside its server time (downstream_ns) and the one
 * open longest (hold_*).  Calls come out in the order they came in. */
#ifndef GS_NEST_H
#define GS_NEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "host_addrs.h"
#include "sink_pairs.h"

struct gs_engine;

/* What the stage did, for the summary and the metrics. */
struct gs_nest_counts {
	uint64_t parent_time;   /* calls written with a parent decided by time */
	uint64_t parent_thread; /* ... kept as attach decided it (thread) */
	uint64_t undecided;     /* two or more calls enclosed it at its host */
	uint64_t early;         /* written before its nesting was decided: the stage's bound
	                         * (a call held too long, the table full), or a call
	                         * that might enclose it had gone already */
	uint64_t max_held;      /* the most calls held at once */
	uint64_t late;          /* unordered: named a parent by time, then another call that
	                         * encloses it ended (after its hold): that parent may be wrong */
};

typedef void (*gs_nest_fn)(void *arg, const struct gs_engine *e, const struct gs_call *c,
			   const struct gs_call_times *t);

struct gs_nest_ent;
struct gs_nest_span;
struct gs_nest_server;
struct gs_nest_ghost;

struct gs_nest {
	gs_nest_fn fn;
	void *arg;
	bool ordered;        /* calls come in t_request_first order (read) */
	uint32_t max_held;   /* the bound on calls held */
	int64_t hold_ns;     /* unordered: a call waits this long (capture clock) for the
	                      * calls that may enclose it to end */
	/* the held calls: a ring indexed by arrival number (seq & mask) */
	struct gs_nest_ent *ent;
	struct gs_call_times *times; /* attach's instants of the held calls, the same slots
	                              * (NULL until a call comes with them) */
	uint32_t cap;        /* power of two */
	uint64_t head, tail; /* seqs held: [head, tail) */
	/* host index: per bucket, the held calls served by and made by its hosts */
	uint64_t *served, *made; /* list heads (seq + 1; 0: empty), GS_NEST_BUCKETS each */
	struct gs_nest_server *servers; /* unordered: per bucket, the endpoints its hosts
	                      * served calls on (ended): only calls to another one wait */
	/* nested calls' intervals, per parent (a pool with a free list) */
	struct gs_nest_span *span;
	uint32_t span_cap, span_free, span_used;
	int64_t max_start;   /* latest t_request_first seen */
	int64_t clock;       /* latest capture time seen (t_done, ticks) */
	int64_t horizon;     /* latest t_reply_first of a call written: a call ending
	                      * before it may have been enclosed by one gone already */
	struct gs_host_addrs own;
	/* unordered: the calls written lately with a parent by time, to see a second
	 * enclosing call that ends after them (a ring; per bucket, how many it holds) */
	struct gs_nest_ghost *ghost;
	uint32_t ghost_next;
	uint16_t *ghosts_in;
	struct gs_nest_counts n;
};

/* How long (capture clock) an unordered source's call waits for the calls that
 * may enclose it to end: a parent replies after its nested call's reply. */
#define GS_NEST_HOLD_NS 1000000000LL

/* The most the stage allocates holding max_held calls (times: with attach's
 * instants): its ring, the nested calls' intervals, the host index; what
 * --max-memory's budget sets aside for it (session_opts.c). */
uint64_t gs_nest_memory_bound(uint32_t max_held, bool times, bool ordered);
/* What each held call adds to it (max_held 0: the fixed part). */
uint64_t gs_nest_memory_per_held(bool times);

/* ordered: read's order; max_held: the bound (grows on demand up to it);
 * hold_ns: unordered only.  0 or ENOMEM. */
int gs_nest_init(struct gs_nest *n, bool ordered, uint32_t max_held, int64_t hold_ns, gs_nest_fn fn, void *arg);
void gs_nest_free(struct gs_nest *n);
/* One ended call (t: attach's instants or NULL; copied). */
void gs_nest_add(struct gs_nest *n, const struct gs_engine *e, const struct gs_call *c,
		 const struct gs_call_times *t);
/* Unordered: the capture clock moved (no call came); writes the calls whose hold passed. */
void gs_nest_tick(struct gs_nest *n, int64_t now_ns);
/* End of input: every held call decided and written. */
void gs_nest_flush(struct gs_nest *n);
/* An address the capture host sends from (an outgoing packet's source): from
 * now on it is the same host as the others (the held calls are indexed again). */
void gs_nest_own_addr(struct gs_nest *n, uint8_t family, const uint8_t *addr);

#endif
