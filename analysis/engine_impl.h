/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal state of the engine, shared by its modules (flows, reassembly,
 * framer, pairing, output).  Not for sinks: they see engine.h and call.h. */
#ifndef GS_ENGINE_IMPL_H
#define GS_ENGINE_IMPL_H

#include <stddef.h>
#include <string.h>

#include "engine.h"
#include "pending.h"
#include "calls.h"
#include "evidence.h"
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
	struct gs_calls_dir oc;  /* the open calls this way (calls.h) */
	/* messages of calls begun with the more-fragments flag whose last Fragment
	 * has not come: while there are any, every message goes to the log */
	uint32_t frag_open;
	uint16_t rtx_n;
	uint8_t msg_half;        /* 0 request side, 1 reply side */
	bool prev_fill_set;      /* prev_fill_* (below) hold the previous message's last fill */

	uint8_t frag_half;
	/* then (the end of line 3, line 4) the call answered last, written at
	 * each reply by the queued evidence only (not by a lean engine) */
	struct gs_ev_dir ev;     /* evidence.h */

	/* the rest */
	uint64_t acked;          /* highest offset the peer acknowledged, when past `next`
	                          * (read only while acked_ts is set) */
	uint32_t ooo_bytes;
	uint64_t fin_off;
	struct gs_pend_link pend; /* on the engine's pending list (pending.h) */
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

struct gs_engine {
	struct gs_config cfg;
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
	struct gs_evidence ev;      /* evidence.h */
	/* Directions whose bytes may still yield calls that started earlier than
	 * what is queued: held out-of-order data, a head not yet decoded, bytes the
	 * peer acknowledged but we lack.  They hold back ordered output. */
	struct gs_pending pend;
	int64_t last_expire_scan;

	/* calls (calls.h) */
	struct gs_calls cs;
};

/* gs_calls_held (calls.h) with the connection read from the flow table at
 * constant offsets: every packet with calls queued asks it. */
static inline bool gs_engine_calls_held(const struct gs_engine *e)
{
	const struct gs_drain_hold *h = &e->cs.hold;
	const struct gs_flow *f;
	if (!gs_calls_hold_stands(&e->cs))
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

/* the directions that hold back output (the list: pending.h) */
/* True when the direction holds back output: bytes held out of order, a hole
 * the peer acknowledged, or a head not decoded yet.  Tested for both
 * directions of every packet: inline. */
static inline bool gs_dir_pending(const struct gs_dir *dr)
{
	return dr->ooo || dr->acked_ts || (dr->fstate == GS_FR_MSG && !dr->decoded);
}
/* The direction joins or leaves the pending list (pending.h), its flag with it. */
static inline void gs_dir_pend_insert(struct gs_engine *e, struct gs_flow *f, int d)
{
	if (f->dir[d].pending)
		return;
	gs_pending_insert(&e->pend, (uint32_t)(f - e->flows) * 2 + (uint32_t)d);
	f->dir[d].pending = true;
}
static inline void gs_dir_pend_remove(struct gs_engine *e, struct gs_flow *f, int d)
{
	if (!f->dir[d].pending)
		return;
	gs_pending_remove(&e->pend, (uint32_t)(f - e->flows) * 2 + (uint32_t)d);
	f->dir[d].pending = false;
}

/* The open call of (connection, direction, request id), or NULL.  The common
 * cases inline, without touching the index: nothing open this way, or the
 * latest request's call (a reply to it); else the index (calls.c). */
static inline struct gs_ocall *gs_call_open_find(struct gs_engine *e, uint32_t flow, uint32_t gen, int dir,
						 uint32_t rid)
{
	const struct gs_dir *dr = &e->flows[flow].dir[dir];
	if (e->flows[flow].gen == gen) {
		if (dr->oc.open_n == 0)
			return NULL;
		if (dr->oc.last_call < e->cs.n_calls) {
			struct gs_ocall *c = &e->cs.calls[dr->oc.last_call];
			if (c->where == GS_CALL_OPEN && c->request_id == rid && c->flow == flow &&
			    c->flow_gen == gen && c->dir == dir)
				return c;
		}
	}
	return gs_call_open_probe(&e->cs, flow, gen, dir, rid);
}

#endif
