/* SPDX-License-Identifier: BSD-2-Clause */
/* The flow table: one entry per TCP connection, both directions.
 *
 * Sized once (--max-flows).  Lookup is open addressing with linear probing and
 * backward-shift deletion, so it never degrades with churn.  Entries are kept
 * on an LRU list by last activity; when the table is full the least recently
 * active connection is evicted, its open calls ended and counted.
 */
#include "engine_impl.h"
#include "flow_hash.h"

#include <string.h>

static void endpoint_of(struct gs_endpoint *ep, const struct gs_ip *ip, bool src, uint16_t port)
{
	memcpy(ep->addr, src ? ip->src : ip->dst, 16);
	ep->port = port;
	ep->family = ip->family;
}


static void index_remove(struct gs_engine *e, uint32_t n)
{
	uint32_t mask = e->flow_mask;
	uint32_t i = e->flows[n].hash & mask;
	while (e->flow_index[i] != n + 1)
		i = (i + 1) & mask;
	for (;;) {
		uint32_t j = i, k;
		for (;;) {
			j = (j + 1) & mask;
			if (e->flow_index[j] == 0) {
				e->flow_index[i] = 0;
				return;
			}
			k = e->flows[e->flow_index[j] - 1].hash & mask;
			/* stop at an entry whose home is not cyclically in (i, j] */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		e->flow_index[i] = e->flow_index[j];
		i = j;
	}
}

static void gs_flow_reset_dirs(struct gs_engine *e, struct gs_flow *f)
{
	for (int d = 0; d < 2; d++) {
		gs_pending_remove(e, f, d);
		gs_reasm_free(e, &f->dir[d]);
		gs_framer_release(e, &f->dir[d]);
		memset(&f->dir[d], 0, sizeof f->dir[d]);
		f->dir[d].head_slot = GS_NONE;
		f->dir[d].msg_call = GS_NONE;
		f->dir[d].frag_call = GS_NONE;
	}
}

/* Ends a connection: its calls end, its buffers go back, its slot is freed. */
void gs_flow_end(struct gs_engine *e, struct gs_flow *f, bool evicted)
{
	uint32_t n = gs_flow_no(e, f);
	if (!f->in_use)
		return;
	if (evicted)
		e->cnt.flows_evicted++;
	gs_pair_flow_ended(e, f, evicted);
	gs_flow_reset_dirs(e, f);
	index_remove(e, n);
	gs_lru_unlink(e, n);
	f->in_use = false;
	f->gen++;
	e->lru[n].next = e->flow_free;
	e->flow_free = n;
	e->active_flows--;
}

struct gs_flow *gs_flow_lookup(struct gs_engine *e, const struct gs_packet *pk, uint32_t h, int *dir,
			       bool create, bool *created)
{
	const struct gs_ip *ip = &pk->ip;
	uint16_t sport = pk->tcp.sport, dport = pk->tcp.dport;
	uint32_t i, n;
	struct gs_flow *f;

	*created = false;
	n = gs_flow_front(e, pk, h, dir);
	if (n)
		return &e->flows[n - 1];
	for (i = h & e->flow_mask; e->flow_index[i]; i = (i + 1) & e->flow_mask) {
		f = &e->flows[e->flow_index[i] - 1];
		if (f->hash != h)
			continue;
		if (gs_ep_is(&f->ep[0], ip->src, sport, ip->family) && gs_ep_is(&f->ep[1], ip->dst, dport, ip->family)) {
			*dir = 0;
			e->flow_front[h & (GS_FLOW_FRONT - 1)] = e->flow_index[i];
			return f;
		}
		if (gs_ep_is(&f->ep[1], ip->src, sport, ip->family) && gs_ep_is(&f->ep[0], ip->dst, dport, ip->family)) {
			*dir = 1;
			e->flow_front[h & (GS_FLOW_FRONT - 1)] = e->flow_index[i];
			return f;
		}
	}
	if (!create)
		return NULL;
	if (e->flow_free == GS_NONE && e->flow_hwm < e->cfg.max_flows) {
		e->lru[e->flow_hwm].next = GS_NONE;
		e->flow_free = e->flow_hwm++;
	}
	if (e->flow_free == GS_NONE) {
		/* full: evict the connection idle the longest */
		gs_flow_end(e, &e->flows[e->lru_head], true);
		/* the probe position may have moved: search for a free slot again */
		for (i = h & e->flow_mask; e->flow_index[i]; i = (i + 1) & e->flow_mask)
			;
	}
	n = e->flow_free;
	f = &e->flows[n];
	e->flow_free = e->lru[n].next;
	{
		uint32_t gen = f->gen;
		memset(f, 0, sizeof *f);
		f->gen = gen;
	}
	f->in_use = true;
	f->hash = h;
	endpoint_of(&f->ep[0], ip, true, sport);
	endpoint_of(&f->ep[1], ip, false, dport);
	f->calls = GS_NONE;
	f->t_first = e->lru[n].t_last = pk->ts_ns;
	for (int d = 0; d < 2; d++) {
		f->dir[d].head_slot = GS_NONE;
		f->dir[d].msg_call = GS_NONE;
		f->dir[d].frag_call = GS_NONE;
	}
	e->flow_index[i] = n + 1;
	e->flow_front[h & (GS_FLOW_FRONT - 1)] = n + 1;
	gs_lru_append(e, n);
	e->active_flows++;
	e->cnt.flows++;
	*dir = 0;
	*created = true;
	return f;
}
