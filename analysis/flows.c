/* SPDX-License-Identifier: BSD-2-Clause */
/* The flow table: one entry per TCP connection, both directions.
 *
 * Sized once (--max-flows).  Lookup is open addressing with linear probing and
 * backward-shift deletion, so it never degrades with churn.  Entries are kept
 * on an LRU list by last activity; when the table is full the least recently
 * active connection is evicted, its open calls ended and counted.
 */
#include "flows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table_mem.h"

static void endpoint_of(struct gs_endpoint *ep, const struct gs_ip *ip, bool src, uint16_t port)
{
	memcpy(ep->addr, src ? ip->src : ip->dst, 16);
	ep->port = port;
	ep->family = ip->family;
}


int gs_flows_init(struct gs_flows *ft, uint32_t max_flows)
{
	ft->max_flows = max_flows;
	/* Sized once, as address space: pages are made resident only as they are
	 * used (table_mem.h), so a limit is a ceiling, not an allocation.  On a
	 * 64-byte line each (struct gs_flow is whole lines): the hot fields of a
	 * flow then share the fewest lines. */
	ft->flows_mem = gs_table_new((size_t)max_flows * sizeof *ft->flows + 63);
	ft->flows = ft->flows_mem ? (struct gs_flow *)(((uintptr_t)ft->flows_mem + 63) & ~(uintptr_t)63) : NULL;
	ft->lru = gs_table_new((size_t)max_flows * sizeof *ft->lru);
	ft->flow_mask = gs_table_pow2((uint64_t)max_flows * 2) - 1;
	ft->flow_index = gs_table_new(((size_t)ft->flow_mask + 1) * sizeof *ft->flow_index);
	/* Free lists start empty: slots are taken from the high-water mark first,
	 * so memory is touched (made resident) only as far as it is used. */
	ft->flow_free = GS_NONE;
	ft->lru_head = ft->lru_tail = GS_NONE;
	return ft->flows && ft->lru && ft->flow_index ? 0 : ENOMEM;
}

void gs_flows_free(struct gs_flows *ft)
{
	if (ft->flows)
		for (uint32_t i = 0; i < ft->flow_hwm; i++)
			if (ft->flows[i].c.in_use)
				for (int d = 0; d < 2; d++)
					gs_reasm_free(ft->rs, &ft->flows[i].dir[d].r);
	gs_table_free(ft->flows_mem);
	gs_table_free(ft->lru);
	gs_table_free(ft->flow_index);
	ft->flows = NULL;
	ft->flows_mem = ft->lru = NULL;
	ft->flow_index = NULL;
}

static void index_remove(struct gs_flows *ft, uint32_t n)
{
	uint32_t mask = ft->flow_mask;
	uint32_t i = ft->flows[n].c.hash & mask;
	while (ft->flow_index[i] != n + 1)
		i = (i + 1) & mask;
	for (;;) {
		uint32_t j = i, k;
		for (;;) {
			j = (j + 1) & mask;
			if (ft->flow_index[j] == 0) {
				ft->flow_index[i] = 0;
				return;
			}
			k = ft->flows[ft->flow_index[j] - 1].c.hash & mask;
			/* stop at an entry whose home is not cyclically in (i, j] */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		ft->flow_index[i] = ft->flow_index[j];
		i = j;
	}
}

static void reset_dirs(struct gs_flows *ft, struct gs_flow *f)
{
	for (int d = 0; d < 2; d++) {
		gs_dir_pend_remove(ft, f, d);
		gs_reasm_free(ft->rs, &f->dir[d].r);
		gs_framer_release(ft->fm, &f->dir[d].r.fr);
		memset(&f->dir[d], 0, sizeof f->dir[d]);
		gs_reasm_dir_init(&f->dir[d].r);
	}
}

/* Ends a connection: its calls end, its buffers go back, its slot is freed. */
void gs_flow_end(struct gs_flows *ft, struct gs_flow *f, bool evicted)
{
	uint32_t n = f->c.no;
	if (!f->c.in_use)
		return;
	if (evicted)
		ft->cnt->flows_evicted++;
	gs_pair_flow_ended(ft->pr, &f->c, &f->dir[0].r.fr.pr, evicted);
	reset_dirs(ft, f);
	index_remove(ft, n);
	gs_lru_unlink(ft, n);
	f->c.in_use = false;
	f->c.gen++;
	ft->lru[n].next = ft->flow_free;
	ft->flow_free = n;
	ft->active_flows--;
}

struct gs_flow *gs_flow_lookup(struct gs_flows *ft, const struct gs_packet *pk, uint32_t h, int *dir,
			       bool create, bool *created)
{
	const struct gs_ip *ip = &pk->ip;
	uint16_t sport = pk->tcp.sport, dport = pk->tcp.dport;
	uint32_t i, n;
	struct gs_flow *f;

	*created = false;
	n = gs_flow_front(ft, pk, h, dir);
	if (n)
		return &ft->flows[n - 1];
	for (i = h & ft->flow_mask; ft->flow_index[i]; i = (i + 1) & ft->flow_mask) {
		f = &ft->flows[ft->flow_index[i] - 1];
		if (f->c.hash != h)
			continue;
		if (gs_ep_is(&f->c.ep[0], ip->src, sport, ip->family) && gs_ep_is(&f->c.ep[1], ip->dst, dport, ip->family)) {
			*dir = 0;
			ft->flow_front[h & (GS_FLOW_FRONT - 1)] = ft->flow_index[i];
			return f;
		}
		if (gs_ep_is(&f->c.ep[1], ip->src, sport, ip->family) && gs_ep_is(&f->c.ep[0], ip->dst, dport, ip->family)) {
			*dir = 1;
			ft->flow_front[h & (GS_FLOW_FRONT - 1)] = ft->flow_index[i];
			return f;
		}
	}
	if (!create)
		return NULL;
	if (ft->flow_free == GS_NONE && ft->flow_hwm < ft->max_flows) {
		ft->lru[ft->flow_hwm].next = GS_NONE;
		ft->flow_free = ft->flow_hwm++;
	}
	if (ft->flow_free == GS_NONE) {
		/* full: evict the connection idle the longest */
		gs_flow_end(ft, &ft->flows[ft->lru_head], true);
		/* the probe position may have moved: search for a free slot again */
		for (i = h & ft->flow_mask; ft->flow_index[i]; i = (i + 1) & ft->flow_mask)
			;
	}
	n = ft->flow_free;
	f = &ft->flows[n];
	ft->flow_free = ft->lru[n].next;
	{
		uint32_t gen = f->c.gen;
		memset(f, 0, sizeof *f);
		f->c.gen = gen;
	}
	f->c.in_use = true;
	f->c.hash = h;
	f->c.no = n;
	endpoint_of(&f->c.ep[0], ip, true, sport);
	endpoint_of(&f->c.ep[1], ip, false, dport);
	f->c.calls = GS_NONE;
	ft->lru[n].t_last = pk->ts_ns;
	for (int d = 0; d < 2; d++)
		gs_reasm_dir_init(&f->dir[d].r);
	ft->flow_index[i] = n + 1;
	ft->flow_front[h & (GS_FLOW_FRONT - 1)] = n + 1;
	gs_lru_append(ft, n);
	ft->active_flows++;
	ft->cnt->flows++;
	*dir = 0;
	*created = true;
	return f;
}
