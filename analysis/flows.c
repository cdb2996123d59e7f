/* The flow table: one entry per TCP connection, both directions.
 *
 * Sized once (--max-flows).  Lookup is open addressing with linear probing and
 * backward-shift deletion, so it never degrades with churn.  Entries are kept
 * on an LRU list by last activity; when the table is full the least recently
 * active connection is evicted, its open calls ended and counted.
 */
#include "engine_impl.h"

#include <string.h>

static void endpoint_of(struct gs_endpoint *ep, const struct gs_ip *ip, bool src, uint16_t port)
{
	memcpy(ep->addr, src ? ip->src : ip->dst, 16);
	ep->port = port;
	ep->family = ip->family;
}

static bool ep_eq(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	return a->port == b->port && a->family == b->family && memcmp(a->addr, b->addr, 16) == 0;
}

static int ep_cmp(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	int c = memcmp(a->addr, b->addr, 16);
	if (c)
		return c;
	return (int)a->port - (int)b->port;
}

static inline uint32_t mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x7feb352dU;
	h ^= h >> 15;
	h *= 0x846ca68bU;
	h ^= h >> 16;
	return h;
}

static uint32_t ep_hash(uint32_t h, const struct gs_endpoint *ep)
{
	/* multiply-add over the words, one mix at the end: cheap per packet */
	uint64_t acc = h;
	for (int i = 0; i < 16; i += 8) {
		uint64_t w;
		memcpy(&w, ep->addr + i, 8);
		acc = (acc ^ w) * 0x9e3779b97f4a7c15ULL;
	}
	acc ^= ((uint64_t)ep->port << 8) ^ ep->family;
	acc *= 0xbf58476d1ce4e5b9ULL;
	return mix32((uint32_t)(acc >> 32) ^ (uint32_t)acc);
}

static uint32_t flow_hash(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	/* order the two ends so both directions hash alike */
	if (ep_cmp(a, b) > 0) {
		const struct gs_endpoint *t = a;
		a = b;
		b = t;
	}
	return ep_hash(ep_hash(0x12345u, a), b);
}

static void lru_unlink(struct gs_engine *e, uint32_t n)
{
	struct gs_flow *f = &e->flows[n];
	if (f->lru_prev != GS_NONE)
		e->flows[f->lru_prev].lru_next = f->lru_next;
	else
		e->lru_head = f->lru_next;
	if (f->lru_next != GS_NONE)
		e->flows[f->lru_next].lru_prev = f->lru_prev;
	else
		e->lru_tail = f->lru_prev;
	f->lru_prev = f->lru_next = GS_NONE;
}

static void lru_append(struct gs_engine *e, uint32_t n)
{
	struct gs_flow *f = &e->flows[n];
	f->lru_next = GS_NONE;
	f->lru_prev = e->lru_tail;
	if (e->lru_tail != GS_NONE)
		e->flows[e->lru_tail].lru_next = n;
	else
		e->lru_head = n;
	e->lru_tail = n;
}

void gs_flow_touch(struct gs_engine *e, struct gs_flow *f)
{
	uint32_t n = gs_flow_no(e, f);
	if (e->lru_tail == n)
		return;
	lru_unlink(e, n);
	lru_append(e, n);
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

void gs_flow_reset_dirs(struct gs_engine *e, struct gs_flow *f)
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
	lru_unlink(e, n);
	f->in_use = false;
	f->gen++;
	f->lru_next = e->flow_free;
	e->flow_free = n;
	e->active_flows--;
}

struct gs_flow *gs_flow_lookup(struct gs_engine *e, const struct gs_packet *pk, int *dir, bool create,
			       bool *created)
{
	struct gs_endpoint src, dst;
	uint32_t h, i, n;
	struct gs_flow *f;

	endpoint_of(&src, &pk->ip, true, pk->tcp.sport);
	endpoint_of(&dst, &pk->ip, false, pk->tcp.dport);
	h = flow_hash(&src, &dst);
	*created = false;
	for (i = h & e->flow_mask; e->flow_index[i]; i = (i + 1) & e->flow_mask) {
		f = &e->flows[e->flow_index[i] - 1];
		if (f->hash != h)
			continue;
		if (ep_eq(&f->ep[0], &src) && ep_eq(&f->ep[1], &dst)) {
			*dir = 0;
			return f;
		}
		if (ep_eq(&f->ep[1], &src) && ep_eq(&f->ep[0], &dst)) {
			*dir = 1;
			return f;
		}
	}
	if (!create)
		return NULL;
	if (e->flow_free == GS_NONE && e->flow_hwm < e->cfg.max_flows) {
		e->flows[e->flow_hwm].lru_next = GS_NONE;
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
	e->flow_free = f->lru_next;
	{
		uint32_t gen = f->gen;
		memset(f, 0, sizeof *f);
		f->gen = gen;
	}
	f->in_use = true;
	f->hash = h;
	f->ep[0] = src;
	f->ep[1] = dst;
	f->calls = GS_NONE;
	f->t_first = f->t_last = pk->ts_ns;
	for (int d = 0; d < 2; d++) {
		f->dir[d].head_slot = GS_NONE;
		f->dir[d].msg_call = GS_NONE;
		f->dir[d].frag_call = GS_NONE;
	}
	e->flow_index[i] = n + 1;
	lru_append(e, n);
	e->active_flows++;
	e->cnt.flows++;
	*dir = 0;
	*created = true;
	return f;
}
