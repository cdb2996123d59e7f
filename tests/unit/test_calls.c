/* SPDX-License-Identifier: BSD-2-Clause */
/* The calls stage on its own (analysis/calls.c): a pool, a stand-in flow
 * table seen through the view the engine would give it, calls opened, found,
 * ended and written in start order once their connection acknowledged them. */
#include "unit.h"
#include "../../analysis/calls.h"

struct dir { uint64_t ack_max; struct gs_calls_dir oc; };
struct flow { struct gs_endpoint ep[2]; uint32_t gen, list; bool in_use; struct dir dir[2]; };

static int64_t now;
static struct gs_counters cnt;
static struct gs_pending pend = { .head = GS_NONE };
static uint32_t out_rid[8], n_out;

static void emit(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	(void)arg;
	(void)e;
	if (n_out < 8)
		out_rid[n_out] = c->request_id;
	n_out++;
}

static void setup(struct gs_calls *k, struct flow *f)
{
	memset(k, 0, sizeof *k);
	assert_int_equal(gs_calls_init(k, 64, true), 0);
	k->fl = (struct gs_calls_flows){
		.base = (char *)f, .stride = sizeof *f,
		.in_use = offsetof(struct flow, in_use), .gen = offsetof(struct flow, gen),
		.list = offsetof(struct flow, list),
		.ep = { offsetof(struct flow, ep[0]), offsetof(struct flow, ep[1]) },
		.ack_max = { offsetof(struct flow, dir[0].ack_max), offsetof(struct flow, dir[1].ack_max) },
		.oc = { offsetof(struct flow, dir[0].oc), offsetof(struct flow, dir[1].oc) },
	};
	k->now = &now;
	k->cnt = &cnt;
	k->pend = &pend;
	k->ordered = true;
	k->order_window = 100;
	k->linger_ns = 1000;
	k->emit = emit;
	k->last_emitted_t = INT64_MIN;
}

static uint32_t open_call(struct gs_calls *k, struct flow *f, uint32_t rid, int64_t t)
{
	uint32_t idx = gs_call_alloc(k);
	struct gs_ocall *c = &k->calls[idx];
	memset(c, 0, sizeof *c);
	c->ext = GS_NONE;
	c->attached = 1;
	c->request_id = rid;
	c->flow = 0;
	c->flow_gen = f->gen;
	c->serial = ++k->serial;
	c->t_request_first = t;
	c->req_off1 = 100;
	c->flow_prev = c->flow_next = GS_NONE;
	gs_call_open_insert(k, idx);
	return idx;
}

static void test_open_end_drain(void **state)
{
	struct flow f[1];
	struct gs_calls k;
	uint32_t a, b;
	(void)state;
	memset(f, 0, sizeof f);
	f[0].in_use = true;
	f[0].gen = 3;
	f[0].list = GS_NONE;
	setup(&k, f);
	now = 10;
	a = open_call(&k, f, 7, 10);
	b = open_call(&k, f, 8, 5);
	/* the view's part of direction 0: two open, the latest last */
	assert_int_equal(f[0].dir[0].oc.open_n, 2);
	assert_int_equal(f[0].dir[0].oc.last_call, b);
	assert_ptr_equal(gs_call_open_probe(&k, 0, 3, 0, 7), &k.calls[a]);
	assert_null(gs_call_open_probe(&k, 0, 3, 1, 7));
	gs_call_end(&k, a, GS_OUT_NO_REPLY);
	gs_call_end(&k, b, GS_OUT_NO_REPLY);
	assert_int_equal(f[0].dir[0].oc.open_n, 0);
	/* not acknowledged yet, within the linger: held */
	n_out = 0;
	gs_calls_drain(&k, false);
	assert_int_equal(n_out, 0);
	/* the peer's ACK covers the requests: written, in start order */
	f[0].dir[0].ack_max = 100;
	gs_calls_drain(&k, false);
	assert_int_equal(n_out, 2);
	assert_int_equal(out_rid[0], 8);
	assert_int_equal(out_rid[1], 7);
	gs_calls_free(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_open_end_drain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
