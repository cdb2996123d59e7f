/* SPDX-License-Identifier: BSD-2-Clause */
/* Several engines over one capture: what the merge of their outputs reads
 * (engine_shard.h). */
#include "engine_impl.h"
#include "engine_shard.h"
#include "endpoint.h"

#include <string.h>

void gs_engine_set_packet_no(struct gs_engine *e, uint64_t no)
{
	/* gs_engine_frame counts the frame it is given */
	e->packet_no = no - 1;
}

int64_t gs_engine_order_floor(struct gs_engine *e)
{
	int64_t f = e->now;
	if (e->cs.wm_n > 0 && e->cs.wm_heap[0].t < f)
		f = e->cs.wm_heap[0].t;
	if (e->cs.out_n > 0 && gs_out_top(&e->cs)->t < f) /* output order is by start first */
		f = gs_out_top(&e->cs)->t;
	if (e->pend.count) {
		int64_t p = gs_pending_min(&e->pend);
		if (p < f)
			f = p;
	}
	return f;
}

/* A call's client, as calls.c reads it: its connection's, or its own once it
 * outlived it. */
static const struct gs_endpoint *ocall_client(const struct gs_engine *e, const struct gs_ocall *c)
{
	const struct gs_cext *x = gs_cx_peek(&e->cs, c);
	if (x && x->has_ep)
		return &x->client;
	return &e->fl.flows[c->flow].c.ep[c->dir];
}

bool gs_engine_holds_back(struct gs_engine *e, const struct gs_call *c)
{
	int64_t t = c->t_request_first;
	if (e->cs.wm_n > 0 && e->cs.wm_heap[0].t <= t)
		return true;
	if (e->pend.count && gs_pending_min(&e->pend) <= t)
		return true;
	if (e->cs.out_n > 0) {
		/* the queue's first (calls.c's output order: out_before) */
		const struct gs_heap_ent *top = gs_out_top(&e->cs);
		const struct gs_ocall *a = &e->cs.calls[top->idx];
		int k;
		if (top->t != t)
			return top->t < t;
		if ((k = gs_endpoint_text_cmp(ocall_client(e, a), &c->client)) != 0)
			return k < 0;
		if (a->request_id != c->request_id)
			return a->request_id < c->request_id;
		return top->serial < c->serial;
	}
	return false;
}

void gs_engine_set_order_window(struct gs_engine *e, uint32_t n)
{
	e->cfg.order_window = n;
	e->cs.order_window = n; /* the calls stage's copy, which its drain reads */
}

int64_t gs_engine_ended_min(const struct gs_engine *e)
{
	return e->cs.out_n > 0 ? gs_out_top(&e->cs)->t : INT64_MAX;
}

uint32_t gs_engine_queued(const struct gs_engine *e)
{
	return e->cs.out_n;
}

void gs_counters_add(struct gs_counters *dst, const struct gs_counters *src)
{
	_Static_assert(sizeof *dst % sizeof(uint64_t) == 0, "counters are uint64_t");
	uint64_t d[sizeof *dst / sizeof(uint64_t)], s[sizeof *dst / sizeof(uint64_t)];
	memcpy(d, dst, sizeof d);
	memcpy(s, src, sizeof s);
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
		d[i] += s[i];
	memcpy(dst, d, sizeof d);
}

static void first_problem(struct gs_problem *dst, const struct gs_problem *src)
{
	if (src->packet && (!dst->packet || src->packet < dst->packet))
		*dst = *src;
}

void gs_engine_absorb(struct gs_engine *dst, const struct gs_engine *src)
{
	uint64_t ooo = dst->cnt.rows_out_of_order;
	gs_counters_add(&dst->cnt, &src->cnt);
	dst->cnt.rows_out_of_order = ooo;
	first_problem(&dst->first_malformed, &src->first_malformed);
	first_problem(&dst->first_truncated, &src->first_truncated);
	if (src->packet_no > dst->packet_no)
		dst->packet_no = src->packet_no;
}

void gs_engine_set_times(struct gs_engine *dst, int64_t first_ts, int64_t last_ts)
{
	dst->first_ts = first_ts;
	dst->now = last_ts;
}

void gs_engine_set_rows_ooo(struct gs_engine *dst, uint64_t n)
{
	dst->cnt.rows_out_of_order = n;
}

struct gs_intern *gs_engine_strings_rw(struct gs_engine *e)
{
	return &e->strings;
}
