/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal state of the engine, shared by its modules (flows, reassembly,
 * framer, pairing, output).  Not for sinks: they see engine.h and call.h. */
#ifndef GS_ENGINE_IMPL_H
#define GS_ENGINE_IMPL_H

#include <stddef.h>
#include <string.h>

#include "engine.h"
#include "flow_hash.h"
#include "../decoders/giop/giop.h"

/* An out-of-order segment held until the bytes before it arrive. */
struct gs_ooo {
	struct gs_ooo *next;
	uint64_t off;       /* stream offset of the first byte */
	uint32_t len;       /* wire bytes */
	uint32_t cap;       /* captured bytes stored in data[] */
	int64_t ts;
	uint64_t packet;
	/* it brought bytes below the highest byte seen then (lost or reordered
	 * before the tap), and how long after the earliest held byte above it */
	int64_t fill_wait;  /* -1: not a gap fill */
	uint8_t data[];
};

/* Where a chunk of in-order bytes came from (reassembly -> framer). */
struct gs_src {
	int64_t ts;         /* capture time of the packet that brought them first */
	uint64_t packet;    /* that packet's number */
	int64_t fill_wait;  /* >= 0: the packet filled a gap, this long after the
	                     * earliest byte above the gap had arrived; -1: not a fill */
};

/* Retransmitted ranges remembered per direction while their bytes are held. */
#define GS_RTX_PENDING 256

struct gs_range {
	uint64_t off0, off1;
	int64_t ts;         /* when the retransmission came */
};

/* The extents of a direction's recent messages and the calls they belong to,
 * in stream order: who owns a retransmitted byte once GIOP 1.2 Fragments of
 * several messages interleave (then a call's first..last span encloses other
 * calls' bytes).  Only a message sent while a fragmented message of the
 * direction is unfinished can lie inside such a span, so only those are
 * logged (and the fragmented messages themselves); a call whose messages are
 * contiguous is charged by its span, which is exact.  A ring, allocated at the
 * direction's first fragmented message: the oldest entries give way.  Every
 * message of a fragmented request or reply that starts at or after `from` is
 * in it. */
#define GS_MSGLOG 256

struct gs_msg_ext {
	uint64_t off0, off1;
	uint32_t call, serial;
};

struct gs_msglog {
	uint64_t from;
	uint32_t head, n;        /* oldest entry, number of entries */
	struct gs_msg_ext ext[GS_MSGLOG];
};

enum gs_frame_state {
	GS_FR_SYNC = 0,  /* at a message boundary */
	GS_FR_MSG,       /* inside a message */
	GS_FR_LOST,      /* framing lost: looking for the next GIOP header */
	GS_FR_NOT_GIOP,  /* this connection does not carry GIOP */
};

/* One direction of a TCP connection.  Laid out by use, in 64-byte lines (a
 * flow starts on a line, its header takes one, each direction five): the
 * first line is what every packet reads or writes (reassembly's offsets, the
 * peer's ACK, the held/awaited test), the second and third what each GIOP
 * message of the whole-message pass and pairing's common steps use (a lean
 * engine's whole message touches no other line of its direction); the rest
 * is for the rare cases and the full records' evidence. */
struct gs_dir {
	/* line 1: reassembly, the peer's ACK, the pending test */
	_Alignas(64) uint32_t base_seq;       /* sequence number of stream offset 0 */
	bool started;            /* base_seq is known */
	bool syn_seen;
	bool fin_seen;
	bool fin_done;           /* every byte before the FIN was delivered */
	bool pending;            /* on the engine's pending list (pend_prev, pend_next below) */
	uint8_t fstate;          /* framer: enum gs_frame_state */
	bool decoded;            /* current message's head decoded (or given up) */
	bool missing;            /* current message lost bytes in the capture */
	bool more_frags;         /* current message continues in a Fragment */
	uint8_t mtype, mminor;
	bool open_solo;          /* last_call (below) is the only open call this way, and not in
	                          * the open index */
	uint64_t next;           /* stream offset of the next byte expected */
	uint64_t ack_max;        /* highest offset the peer acknowledged at all */
	int64_t acked_ts;        /* when the peer first acknowledged bytes we lack; 0: none */
	struct gs_ooo *ooo;
	int64_t peer_ack_ts;     /* when the peer last acknowledged new bytes of this direction */
	int64_t zero_window_ts;  /* this direction's receiver advertised 0 since then; 0: not
	                          * (read at every packet the other way) */

	/* line 2: the bytes seen, the current message (framer) */
	uint64_t high;           /* stream offset one past the highest byte seen (held included) */
	uint64_t msg_start, msg_end; /* msg_end valid once the 12-byte header is known */
	int64_t msg_t_first;
	/* the current message's own packets: the earliest and the latest that
	 * brought a byte of it first (its t_first and completion), the gap fills
	 * among them and the longest wait for one; a gap (bytes the capture never
	 * had) moves none of these */
	int64_t msg_t_min, msg_t_max;
	int64_t msg_prev_seg_ts; /* time of the previous segment of the current message */
	int64_t msg_last_seg_ts; /* time of its latest segment */

	/* line 3: the current message's fills and call, the open calls this way,
	 * a request's object key: with lines 1-2 all a whole-message packet
	 * touches this way (the fill packets and the previous message's fill are
	 * elsewhere: they are read only when the message has fills) */
	int64_t msg_fill_wait;
	uint32_t head_len;       /* bytes gathered in head[] */
	uint32_t head_slot;      /* pool slot, GS_NONE when none */
	uint32_t msg_call;       /* call the current message belongs to, GS_NONE if none */
	uint32_t msg_serial;     /* ... and that call's serial, in case the slot was reused */
	uint32_t msg_fills;
	uint32_t last_op;        /* interned operation of the last request: most repeat it */
	uint32_t open_n;         /* open calls whose request went this way */
	uint32_t last_call;      /* the latest of them: most lookups want it */
	/* messages of calls begun with the more-fragments flag whose last Fragment
	 * has not come: while there are any, every message goes to the log */
	uint32_t frag_open;
	uint16_t rtx_n;
	uint8_t msg_half;        /* 0 request side, 1 reply side */
	bool prev_fill_set;      /* prev_fill_* (below) hold the previous message's last fill */

	/* then (the end of line 3, line 4) the call answered last, written at
	 * each reply by the queued evidence only (not by a lean engine) */
	uint8_t frag_half;
	bool done_valid;
	bool served_concurrently; /* a later request was answered first: reply order shows no queue */
	/* the call answered last among requests sent this way, for `queued` */
	uint32_t done_rid, done_op;
	int64_t done_t_req_first, done_t_rep_last;

	/* the rest */
	uint64_t acked;          /* highest offset the peer acknowledged, when past `next`
	                          * (read only while acked_ts is set) */
	uint32_t ooo_bytes;
	uint64_t fin_off;
	uint32_t pend_prev, pend_next; /* on the engine's pending list (flow*2+dir) */
	uint64_t scanned;        /* bytes searched for a header without finding one */
	/* retransmitted ranges whose messages are not decoded yet (bytes held out
	 * of order, or a head still being gathered): charged to the calls whose
	 * messages they overlap once a decoded message reaches their end */
	struct gs_range *rtx;    /* allocated on first use, at most GS_RTX_PENDING */
	struct gs_msglog *mlog;  /* allocated at the first fragmented message, or NULL */
	/* packet numbers of the current message's first and last fill (valid
	 * while msg_fills > 0) */
	uint64_t msg_fill_first, msg_fill_last;
	/* the call and last fill packet of the previous message, when it had fills
	 * (prev_fill_set): a packet that fills bytes of two Fragments of one call
	 * counts once */
	uint32_t prev_fill_call, prev_fill_serial;
	uint64_t prev_fill_pkt;
	uint32_t frag_call;      /* GIOP 1.1: message that continues in the next Fragment */
	uint32_t frag_serial;
};

/* A connection's place in the LRU order and its last activity (e->lru[n],
 * parallel to the flows): 16 bytes a connection, so that moving one to the end
 * writes to its neighbours' links in this compact array, not into their
 * gs_flow lines. */
struct gs_lru {
	uint32_t prev, next;
	int64_t t_last;
};

enum { GS_FLOW_IGNORED = 1, GS_FLOW_FORCED = 2, GS_FLOW_GIOP = 4, GS_FLOW_CLOSED = 8, GS_FLOW_TLS = 16 };

/* Eleven 64-byte lines, the array line-aligned (gs_engine_new): the header
 * (what the lookup compares, the flags) in the first, then the directions. */
struct gs_flow {
	struct gs_endpoint ep[2];   /* ep[d] sends direction d */
	uint32_t hash;
	uint32_t gen;
	uint32_t calls;             /* live calls (open or queued), linked by flow_next */
	uint8_t flags;
	bool in_use;
	int64_t t_first;            /* the last activity is in e->lru[] */
	struct gs_dir dir[2];
};
_Static_assert(sizeof(struct gs_flow) == 704 && sizeof(struct gs_flow) % 64 == 0 && offsetof(struct gs_flow, dir) % 64 == 0 &&
	       sizeof(struct gs_dir) % 64 == 0, "struct gs_flow: whole 64-byte lines");

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

struct gs_engine {
	struct gs_config cfg;
	gs_call_fn emit;
	void *emit_arg;
	struct gs_counters cnt;
	struct gs_intern strings;
	int64_t now, first_ts;
	uint64_t packet_no;
	struct gs_problem first_malformed, first_truncated;

	/* flows */
	struct gs_flow *flows;      /* 64-byte aligned within flows_mem */
	void *flows_mem;
	uint32_t *flow_index;       /* open addressing: flow number + 1, 0 = free */
	uint32_t flow_mask;
	struct gs_lru *lru;         /* LRU links, max_flows entries */
	uint32_t flow_free;         /* free list through lru[].next */
	uint32_t flow_hwm;          /* slots ever used: the rest was never touched */
	uint32_t lru_head, lru_tail;/* least recently active first */
	/* flow number + 1 by the low bits of the hash, a hint checked before the
	 * index: 4 KiB that stay in cache while the packets stream through it,
	 * where the index (8 bytes a flow allowed) does not */
#define GS_FLOW_FRONT 1024
	uint32_t flow_front[GS_FLOW_FRONT];
	uint32_t active_flows;

	/* message heads that span segments */
	uint8_t *head_pool;
	uint32_t *head_free;
	uint32_t head_free_n, head_slots;

	uint64_t ooo_total;
	/* message logs (struct gs_msglog) allocated, at most max_flows/8 (256 at least) */
	uint32_t mlogs;
	uint32_t rtx_lists;      /* directions holding a list of retransmitted ranges (bounded like mlogs) */
	/* retransmitted ranges charged by a call's first..last span although its
	 * messages there are interleaved with others' (no log, or its entries were
	 * gone): such a charge may be wrong */
	uint32_t rtx_mark;          /* numbers retransmitted ranges: a call counts each once */
	/* Directions whose bytes may still yield calls that started earlier than
	 * what is queued: held out-of-order data, a head not yet decoded, bytes the
	 * peer acknowledged but we lack.  They hold back ordered output. */
	uint32_t pend_head;
	uint32_t pend_count;
	int64_t pend_min;           /* cached earliest start among them */
	bool pend_dirty;
	int64_t last_expire_scan;

	/* calls */
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
};

/* The next ended call out, in output order (out_n > 0): the first of a run
 * or the heap's top, as calls.c keeps them (out_src). */
static inline const struct gs_heap_ent *gs_out_top(const struct gs_engine *e)
{
	return e->out_src < 0 ? &e->heap_mem[e->n_calls - 1] : &e->run_first[e->out_src];
}

/* The top of the queue was not settled at the last drain: what it waits for
 * (see struct gs_drain_hold).  It is still the top, its connection is still
 * there and still lacks the acknowledgement, and the linger has not passed:
 * it still waits, as the drain's settled() would say, without reading the
 * call records.  Inline in the per-packet path: most packets find the top
 * held, and then cost no call of gs_calls_drain. */
static inline bool gs_calls_held(const struct gs_engine *e)
{
	const struct gs_drain_hold *h = &e->hold;
	const struct gs_flow *f;
	if (h->serial == 0 || gs_out_top(e)->serial != h->serial)
		return false;
	if (e->now - h->t_done >= e->cfg.linger_ns)
		return false;
	f = &e->flows[h->flow];
	return f->in_use && f->gen == h->gen && f->dir[h->dir].ack_max < h->need;
}

/* flows.c: the connection of a packet whose connection hash (flow_hash.h) is
 * h, and the packet's direction in it; created when there is none and `create`
 * (the least recently active gives way when the table is full), else NULL. */
struct gs_flow *gs_flow_lookup(struct gs_engine *e, const struct gs_packet *pk, uint32_t h, int *dir,
			       bool create, bool *created);

/* Word compares: this runs for every packet, a memcmp call costs more. */
static inline bool gs_ep_is(const struct gs_endpoint *ep, const uint8_t *addr, uint16_t port, uint8_t family)
{
	return ep->port == port && ep->family == family &&
	       gs_load64(ep->addr) == gs_load64(addr) && gs_load64(ep->addr + 8) == gs_load64(addr + 8);
}

/* The front hint's connection, flow number + 1, if it is the packet's (the one
 * connection in use with these ends: what the index finds), else 0; inline, as
 * most packets stop here (gs_flow_lookup starts with it). */
static inline uint32_t gs_flow_front(struct gs_engine *e, const struct gs_packet *pk, uint32_t h, int *dir)
{
	const struct gs_ip *ip = &pk->ip;
	uint32_t n = e->flow_front[h & (GS_FLOW_FRONT - 1)];
	struct gs_flow *f;
	if (!n)
		return 0;
	f = &e->flows[n - 1];
	if (!f->in_use || f->hash != h)
		return 0;
	if (gs_ep_is(&f->ep[0], ip->src, pk->tcp.sport, ip->family) &&
	    gs_ep_is(&f->ep[1], ip->dst, pk->tcp.dport, ip->family)) {
		*dir = 0;
		return n;
	}
	if (gs_ep_is(&f->ep[1], ip->src, pk->tcp.sport, ip->family) &&
	    gs_ep_is(&f->ep[0], ip->dst, pk->tcp.dport, ip->family)) {
		*dir = 1;
		return n;
	}
	return 0;
}
void gs_flow_end(struct gs_engine *e, struct gs_flow *f, bool evicted);
/* How many directions may hold a side table at once (a message log, a list of
 * retransmitted ranges): like the head pool, an eighth of the flow table, at
 * least 256. Past it a direction goes without, and what that costs is counted. */
static inline uint32_t gs_side_tables_max(const struct gs_engine *e)
{
	return e->cfg.max_flows / 8 < 256 ? 256 : e->cfg.max_flows / 8;
}

static inline uint32_t gs_flow_no(const struct gs_engine *e, const struct gs_flow *f)
{
	return (uint32_t)(f - e->flows);
}

/* The LRU list of flows (flows.c), inline: every packet moves its flow last. */
static inline void gs_lru_unlink(struct gs_engine *e, uint32_t n)
{
	struct gs_lru *l = &e->lru[n];
	if (l->prev != GS_NONE)
		e->lru[l->prev].next = l->next;
	else
		e->lru_head = l->next;
	if (l->next != GS_NONE)
		e->lru[l->next].prev = l->prev;
	else
		e->lru_tail = l->prev;
	l->prev = l->next = GS_NONE;
}

static inline void gs_lru_append(struct gs_engine *e, uint32_t n)
{
	struct gs_lru *l = &e->lru[n];
	l->next = GS_NONE;
	l->prev = e->lru_tail;
	if (e->lru_tail != GS_NONE)
		e->lru[e->lru_tail].next = n;
	else
		e->lru_head = n;
	e->lru_tail = n;
}

/* Connection n was active: last in the LRU order. */
static inline void gs_flow_touch(struct gs_engine *e, uint32_t n)
{
	if (e->lru_tail == n)
		return;
	gs_lru_unlink(e, n);
	gs_lru_append(e, n);
}

/* reasm.c */
void gs_reasm_segment(struct gs_engine *e, struct gs_flow *f, int d, const struct gs_packet *pk);
void gs_reasm_pieces(struct gs_engine *e, struct gs_flow *f, int d, const struct gs_packet *pk,
		     const struct gs_piece *pc, uint32_t n);
/* The stream offset of sequence number `seq` (64-bit: wrap-around is handled here). */
static inline int64_t gs_stream_off(const struct gs_dir *dr, uint32_t seq)
{
	uint32_t expect = dr->base_seq + (uint32_t)dr->next;
	return (int64_t)dr->next + (int32_t)(seq - expect);
}

/* An ACK from direction d acknowledges the bytes of the other direction.  Past
 * what we have, it is evidence the capture missed bytes; the hole is declared
 * only after a grace period (gs_reasm_expire), as a capture may list a segment
 * after the ACK that covers it.  Inline: every packet but a few carries an ACK. */
static inline void gs_reasm_ack(struct gs_engine *e, struct gs_flow *f, int d, uint32_t ack)
{
	struct gs_dir *rd = &f->dir[!d];
	int64_t acked;
	if (!rd->started)
		return;
	acked = gs_stream_off(rd, ack);
	if (acked > (int64_t)rd->ack_max && acked <= (int64_t)rd->next + 1) {
		rd->ack_max = (uint64_t)acked;
		rd->peer_ack_ts = e->now;
	}
	if (acked <= (int64_t)rd->next)
		return;
	if (rd->fin_seen && (uint64_t)acked > rd->fin_off)
		acked = (int64_t)rd->fin_off;
	if ((uint64_t)acked <= rd->next)
		return;
	/* one past everything we have, nothing held: the ACK of a FIN we missed */
	if ((uint64_t)acked == rd->next + 1 && !rd->ooo && !rd->fin_seen)
		return;
	if (rd->acked_ts == 0 || (uint64_t)acked > rd->acked) {
		if (rd->acked_ts == 0)
			rd->acked_ts = e->now;
		if ((uint64_t)acked > rd->acked)
			rd->acked = (uint64_t)acked;
	}
}

void gs_reasm_flush(struct gs_engine *e, struct gs_flow *f, int d);
void gs_reasm_free(struct gs_engine *e, struct gs_dir *dr);
void gs_reasm_expire(struct gs_engine *e, struct gs_flow *f, int d);

/* A hole the peer acknowledged is declared lost after this long (the wait
 * absorbs capture reordering: the missing segment may just come later). */
#define GS_ACK_GAP_GRACE_NS (10 * 1000 * 1000LL)
/* Held out-of-order data with no such evidence waits this long for the hole. */
#define GS_REORDER_TIMEOUT_NS (1000 * 1000 * 1000LL)

/* framer.c: in-order bytes of one direction; data holds `cap` of `len` bytes */
void gs_framer_bytes(struct gs_engine *e, struct gs_flow *f, int d, uint64_t off,
		     const uint8_t *data, uint32_t cap, uint32_t len, const struct gs_src *src);
void gs_framer_release(struct gs_engine *e, struct gs_dir *dr);

/* pairing.c */
void gs_pair_message(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m,
		     enum giop_res r);
void gs_pair_message_end(struct gs_engine *e, struct gs_flow *f, int d, int64_t ts);
void gs_pair_held_retransmits(struct gs_engine *e, struct gs_flow *f, int d, uint64_t upto);
void gs_pair_direction_closed(struct gs_engine *e, struct gs_flow *f, int d);
void gs_pair_flow_ended(struct gs_engine *e, struct gs_flow *f, bool evicted);
void gs_pair_unpark(struct gs_engine *e, struct gs_flow *f, int requester_dir);

/* evidence.c: what the wire shows about a call's wait (the tail's reasons) */
void gs_evidence_retransmit(struct gs_engine *e, struct gs_flow *f, int d, uint64_t off0, uint64_t off1,
			    int64_t ts);
void gs_evidence_zero_window(struct gs_engine *e, struct gs_flow *f, int64_t ns);
void gs_evidence_nagle(struct gs_engine *e, struct gs_ocall *c, const struct gs_dir *dr, int64_t ts,
		       uint8_t half);
void gs_evidence_queued(struct gs_engine *e, struct gs_flow *f, struct gs_ocall *c);

/* pending.c: the directions that hold back output */
/* True when the direction holds back output: bytes held out of order, a hole
 * the peer acknowledged, or a head not decoded yet.  Tested for both
 * directions of every packet: inline. */
static inline bool gs_dir_pending(const struct gs_dir *dr)
{
	return dr->ooo || dr->acked_ts || (dr->fstate == GS_FR_MSG && !dr->decoded);
}
bool gs_dir_holds_before(const struct gs_dir *dr, int64_t t);
void gs_pending_insert(struct gs_engine *e, struct gs_flow *f, int d);
void gs_pending_remove(struct gs_engine *e, struct gs_flow *f, int d);
/* The earliest time a call not created yet may start at. */
int64_t gs_pending_min(struct gs_engine *e);

/* calls.c */
uint32_t gs_call_alloc(struct gs_engine *e);
/* A call slot's `where`: free, open (waiting for its messages), or queued
 * (ended, waiting for its turn in the output). */
#define GS_CALL_FREE 0
#define GS_CALL_OPEN 1
#define GS_CALL_QUEUED 2
/* The call in slot idx if it is still the one with this serial, else NULL.
 * Inline: every message end looks its call up so. */
static inline struct gs_ocall *gs_call_live(struct gs_engine *e, uint32_t idx, uint32_t serial)
{
	struct gs_ocall *c;
	if (idx >= e->n_calls)
		return NULL;
	c = &e->calls[idx];
	return (c->where != GS_CALL_FREE && c->serial == serial) ? c : NULL;
}
/* The call's side record, taken now if it has none (the pool never runs out:
 * a record a call slot). */
struct gs_cext *gs_call_ext_new(struct gs_engine *e, struct gs_ocall *c);
static inline struct gs_cext *gs_cx(struct gs_engine *e, struct gs_ocall *c)
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
static inline const struct gs_cext *gs_cx_peek(const struct gs_engine *e, const struct gs_ocall *c)
{
	return c->ext != GS_NONE ? &e->cext[c->ext] : NULL;
}
/* The open call of (connection, direction, request id), or NULL.  The common
 * cases inline, without touching the index: nothing open this way, or the
 * latest request's call (a reply to it); else the index (calls.c). */
struct gs_ocall *gs_call_open_probe(struct gs_engine *e, uint32_t flow, uint32_t gen, int dir, uint32_t rid);
static inline struct gs_ocall *gs_call_open_find(struct gs_engine *e, uint32_t flow, uint32_t gen, int dir,
						 uint32_t rid)
{
	const struct gs_dir *dr = &e->flows[flow].dir[dir];
	if (e->flows[flow].gen == gen) {
		if (dr->open_n == 0)
			return NULL;
		if (dr->last_call < e->n_calls) {
			struct gs_ocall *c = &e->calls[dr->last_call];
			if (c->where == GS_CALL_OPEN && c->request_id == rid && c->flow == flow &&
			    c->flow_gen == gen && c->dir == dir)
				return c;
		}
	}
	return gs_call_open_probe(e, flow, gen, dir, rid);
}
void gs_call_open_insert(struct gs_engine *e, uint32_t idx);
void gs_call_end(struct gs_engine *e, uint32_t idx, enum gs_outcome how);
void gs_calls_drain(struct gs_engine *e, bool all);
/* gs_calls_drain(e, false) once the caller found gs_calls_held false. */
void gs_calls_drain_unheld(struct gs_engine *e);
void gs_call_release(struct gs_engine *e, uint32_t idx);
void gs_call_discard(struct gs_engine *e, uint32_t idx);
void gs_call_rekey_time(struct gs_engine *e, uint32_t idx, int64_t t_request_first);


#endif
