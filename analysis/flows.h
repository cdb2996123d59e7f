// SPDX-License-Identifier: BSD-2-Clause
/* The flow table (flows.c): one entry per TCP connection, both directions.
 * Its state is struct gs_flows: the entries, the open-addressing index, the
 * LRU order and the front hint; ending a connection it tells pairing, then
 * gives back what each stage holds for it.  An entry (struct gs_flow) is the
 * connection's header (conn.h) and its two directions, each made of the
 * stages' parts (struct gs_reasm_dir, which holds the framer's, which holds
 * pairing's) and its link on the pending list (pending.h). */
#ifndef GS_FLOWS_H
#define GS_FLOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../decoders/packet.h"
#include "conn.h"
#include "counters.h"
#include "flow_hash.h"
#include "framer.h"
#include "pairing.h"
#include "pending.h"
#include "reasm.h"

/* One direction, in 64-byte lines laid out by use (a flow starts on a line,
 * its header takes one, each direction five): the first line is what every
 * packet reads or writes (reassembly's offsets, the peer's ACK, the framing
 * state and the pending flag: the held/awaited test), the second and third
 * what each GIOP message of the whole-message pass and pairing's common steps
 * use (a lean engine's whole message touches no other line of its
 * direction); the rest is for the rare cases and the full records' evidence.
 * The stages' parts nest so: reassembly's line 1, then `high` and the
 * framer's part from line 2, which starts with pairing's, which starts with
 * the framer's current message (struct gs_msg). */
struct gs_dir {
	_Alignas(64) struct gs_reasm_dir r;
	struct gs_pend_link pend;  /* on the engine's pending list (pending.h) */
};
/* each field on its line (the asserts name what each line must hold) */
_Static_assert(offsetof(struct gs_reasm_dir, fs) < 64 && offsetof(struct gs_reasm_dir, pending) < 64 &&
	       offsetof(struct gs_reasm_dir, zero_window_ts) + 8 <= 64, "line 1: reassembly, framing state, pending");
_Static_assert(offsetof(struct gs_reasm_dir, high) == 64 &&
	       offsetof(struct gs_reasm_dir, fr.pr.msg.last_seg_ts) + 8 <= 128, "line 2: the current message");
_Static_assert(offsetof(struct gs_reasm_dir, fr.pr.msg.fill_wait) == 128 &&
	       offsetof(struct gs_reasm_dir, fr.pr.prev_fill_set) < 192 &&
	       offsetof(struct gs_reasm_dir, fr.pr.oc) + sizeof(struct gs_calls_dir) <= 192,
	       "line 3: the message's fills and call, the open calls");

/* A connection's place in the LRU order and its last activity (lru[n],
 * parallel to the flows): 16 bytes a connection, so that moving one to the end
 * writes to its neighbours' links in this compact array, not into their
 * gs_flow lines. */
struct gs_lru {
	uint32_t prev, next;
	int64_t t_last;
};

/* Eleven 64-byte lines, the array line-aligned (gs_flows_init): the header
 * (what the lookup compares, the flags) in the first, then the directions. */
struct gs_flow {
	struct gs_conn c;
	struct gs_dir dir[2];
};
_Static_assert(sizeof(struct gs_flow) == 704 && sizeof(struct gs_flow) % 64 == 0 && offsetof(struct gs_flow, dir) % 64 == 0 &&
	       sizeof(struct gs_dir) % 64 == 0, "struct gs_flow: whole 64-byte lines");

/* flow number + 1 by the low bits of the hash, a hint checked before the
 * index: 4 KiB that stay in cache while the packets stream through it, where
 * the index (8 bytes a flow allowed) does not */
#define GS_FLOW_FRONT 1024

struct gs_flows {
	struct gs_flow *flows;      /* 64-byte aligned within flows_mem */
	void *flows_mem;
	uint32_t *flow_index;       /* open addressing: flow number + 1, 0 = free */
	uint32_t flow_mask;
	struct gs_lru *lru;         /* LRU links, max_flows entries */
	uint32_t flow_free;         /* free list through lru[].next */
	uint32_t flow_hwm;          /* slots ever used: the rest was never touched */
	uint32_t lru_head, lru_tail;/* least recently active first */
	uint32_t flow_front[GS_FLOW_FRONT];
	uint32_t active_flows;
	uint32_t max_flows;
	/* what a connection that ends gives back */
	struct gs_pairing *pr;
	struct gs_reasm *rs;
	struct gs_framer *fm;
	struct gs_pending *pend;
	struct gs_counters *cnt;
};

/* The table for max_flows connections (address space: table_mem.h). Returns 0
 * or ENOMEM; gs_flows_free gives it back (also after a failure). */
int gs_flows_init(struct gs_flows *ft, uint32_t max_flows);
void gs_flows_free(struct gs_flows *ft);

/* The connection of a packet whose connection hash (flow_hash.h) is h, and
 * the packet's direction in it; created when there is none and `create` (the
 * least recently active gives way when the table is full), else NULL. */
struct gs_flow *gs_flow_lookup(struct gs_flows *ft, const struct gs_packet *pk, uint32_t h, int *dir,
			       bool create, bool *created);
/* Ends a connection: its calls end, its buffers go back, its slot is freed. */
void gs_flow_end(struct gs_flows *ft, struct gs_flow *f, bool evicted);

/* Word compares: this runs for every packet, a memcmp call costs more. */
static inline bool gs_ep_is(const struct gs_endpoint *ep, const uint8_t *addr, uint16_t port, uint8_t family)
{
	return ep->port == port && ep->family == family &&
	       gs_load64(ep->addr) == gs_load64(addr) && gs_load64(ep->addr + 8) == gs_load64(addr + 8);
}

/* The front hint's connection, flow number + 1, if it is the packet's (the one
 * connection in use with these ends: what the index finds), else 0; inline, as
 * most packets stop here (gs_flow_lookup starts with it). */
static inline uint32_t gs_flow_front(const struct gs_flows *ft, const struct gs_packet *pk, uint32_t h, int *dir)
{
	const struct gs_ip *ip = &pk->ip;
	uint32_t n = ft->flow_front[h & (GS_FLOW_FRONT - 1)];
	const struct gs_conn *c;
	if (!n)
		return 0;
	c = &ft->flows[n - 1].c;
	if (!c->in_use || c->hash != h)
		return 0;
	if (gs_ep_is(&c->ep[0], ip->src, pk->tcp.sport, ip->family) &&
	    gs_ep_is(&c->ep[1], ip->dst, pk->tcp.dport, ip->family)) {
		*dir = 0;
		return n;
	}
	if (gs_ep_is(&c->ep[1], ip->src, pk->tcp.sport, ip->family) &&
	    gs_ep_is(&c->ep[0], ip->dst, pk->tcp.dport, ip->family)) {
		*dir = 1;
		return n;
	}
	return 0;
}

/* The LRU list of flows, inline: every packet moves its flow last. */
static inline void gs_lru_unlink(struct gs_flows *ft, uint32_t n)
{
	struct gs_lru *l = &ft->lru[n];
	if (l->prev != GS_NONE)
		ft->lru[l->prev].next = l->next;
	else
		ft->lru_head = l->next;
	if (l->next != GS_NONE)
		ft->lru[l->next].prev = l->prev;
	else
		ft->lru_tail = l->prev;
	l->prev = l->next = GS_NONE;
}

static inline void gs_lru_append(struct gs_flows *ft, uint32_t n)
{
	struct gs_lru *l = &ft->lru[n];
	l->next = GS_NONE;
	l->prev = ft->lru_tail;
	if (ft->lru_tail != GS_NONE)
		ft->lru[ft->lru_tail].next = n;
	else
		ft->lru_head = n;
	ft->lru_tail = n;
}

/* Connection n was active: last in the LRU order. */
static inline void gs_flow_touch(struct gs_flows *ft, uint32_t n)
{
	if (ft->lru_tail == n)
		return;
	gs_lru_unlink(ft, n);
	gs_lru_append(ft, n);
}

/* True when the direction holds back output: bytes held out of order, a hole
 * the peer acknowledged, or a head not decoded yet.  Tested for both
 * directions of every packet: inline. */
static inline bool gs_dir_pending(const struct gs_dir *dr)
{
	return dr->r.ooo || dr->r.acked_ts || (dr->r.fs.fstate == GS_FR_MSG && !dr->r.fs.decoded);
}
/* The direction joins or leaves the pending list (pending.h), its flag with it. */
static inline void gs_dir_pend_insert(struct gs_flows *ft, struct gs_flow *f, int d)
{
	if (f->dir[d].r.pending)
		return;
	gs_pending_insert(ft->pend, f->c.no * 2 + (uint32_t)d);
	f->dir[d].r.pending = true;
}
static inline void gs_dir_pend_remove(struct gs_flows *ft, struct gs_flow *f, int d)
{
	if (!f->dir[d].r.pending)
		return;
	gs_pending_remove(ft->pend, f->c.no * 2 + (uint32_t)d);
	f->dir[d].r.pending = false;
}

#endif
