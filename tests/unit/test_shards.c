/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads: the single-producer/single-consumer ring and the doorbell
 * (probe/spsc.h), the merge of ordered call streams (analysis/call_merge.h)
 * and what the merge reads of an engine (analysis/engine_shard.h). */
#include <errno.h>
#include <pthread.h>
#include "unit.h"
#include "../../analysis/call_merge.h"
#include "../../analysis/engine.h"
#include "../../analysis/engine_shard.h"
#include "../../analysis/flow_hash.h"
#include "../../analysis/intern.h"
#include "../../analysis/stats.h"
#include "../../probe/spsc.h"

#define TS(ms) (T0 + (int64_t)(ms) * MS)

/* ---- the ring --------------------------------------------------------- */

static void test_ring_bounds(void **state)
{
	struct gs_ring r;
	(void)state;
	assert_int_equal(gs_ring_init(&r, 0), EINVAL);
	assert_int_equal(gs_ring_init(&r, 1), EINVAL);
	assert_int_equal(gs_ring_init(&r, 6), EINVAL);
	assert_int_equal(gs_ring_init(&r, 4), 0);
	assert_null(gs_ring_pop(&r));
	/* first in, first out, across the wrap, never more than its capacity */
	for (uintptr_t round = 0; round < 5; round++) {
		for (uintptr_t i = 1; i <= 4; i++)
			assert_true(gs_ring_push(&r, (void *)(round * 10 + i)));
		assert_false(gs_ring_push(&r, (void *)99));
		for (uintptr_t i = 1; i <= 3; i++)
			assert_ptr_equal(gs_ring_pop(&r), (void *)(round * 10 + i));
		for (uintptr_t i = 5; i <= 7; i++)
			assert_true(gs_ring_push(&r, (void *)(round * 10 + i)));
		assert_false(gs_ring_push(&r, (void *)99));
		for (uintptr_t i = 4; i <= 7; i++)
			assert_ptr_equal(gs_ring_pop(&r), (void *)(round * 10 + i));
		assert_null(gs_ring_pop(&r));
	}
	gs_ring_free(&r);
}

/* Two threads: a producer pushes 1..N, waiting on its bell when the ring is
 * full; the consumer pops, waiting on its own when it is empty, and rings
 * the producer's after each pop.  Everything arrives once, in order. */
#define N_ITEMS 300000u
struct pc {
	struct gs_ring r;
	struct gs_bell prod, cons;
	uintptr_t got_bad, got_n, waits;
};

static void *producer(void *arg)
{
	struct pc *p = arg;
	for (uintptr_t i = 1; i <= N_ITEMS;) {
		unsigned seen = gs_bell_seq(&p->prod);
		if (gs_ring_push(&p->r, (void *)i)) {
			gs_bell_ring(&p->cons);
			i++;
			continue;
		}
		gs_bell_wait(&p->prod, seen);
	}
	return NULL;
}

static void test_ring_threads(void **state)
{
	struct pc p;
	pthread_t th;
	uintptr_t want = 1;
	(void)state;
	memset(&p, 0, sizeof p);
	assert_int_equal(gs_ring_init(&p.r, 8), 0);
	assert_int_equal(gs_bell_init(&p.prod), 0);
	assert_int_equal(gs_bell_init(&p.cons), 0);
	assert_int_equal(pthread_create(&th, NULL, producer, &p), 0);
	while (want <= N_ITEMS) {
		unsigned seen = gs_bell_seq(&p.cons);
		void *v = gs_ring_pop(&p.r);
		if (!v) {
			p.waits++;
			gs_bell_wait(&p.cons, seen);
			continue;
		}
		if ((uintptr_t)v != want)
			p.got_bad++;
		want++;
		gs_bell_ring(&p.prod);
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(p.got_bad, 0);
	assert_null(gs_ring_pop(&p.r));
	gs_bell_destroy(&p.prod);
	gs_bell_destroy(&p.cons);
	gs_ring_free(&p.r);
}

/* ---- the merge -------------------------------------------------------- */

static struct gs_call mk(int64_t t, const char *client, uint16_t port, uint32_t rid)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	c.t_request_first = t;
	c.request_id = rid;
	c.client.family = 4;
	c.client.port = port;
	assert_int_equal(inet_pton(AF_INET, client, c.client.addr), 1);
	return c;
}

static void test_order_cmp(void **state)
{
	struct gs_call a = mk(10, "10.0.0.9", 5, 1), b = mk(11, "10.0.0.1", 5, 0);
	(void)state;
	/* the time first */
	assert_true(gs_call_order_cmp(&a, &b) < 0);
	assert_true(gs_call_order_cmp(&b, &a) > 0);
	/* then the client as text: "10.0.0.10:5" < "10.0.0.9:5", "1.2.3.4:10000" < "1.2.3.4:9" */
	b = mk(10, "10.0.0.10", 5, 0);
	assert_true(gs_call_order_cmp(&b, &a) < 0);
	a = mk(10, "1.2.3.4", 9, 0);
	b = mk(10, "1.2.3.4", 10000, 0);
	assert_true(gs_call_order_cmp(&b, &a) < 0);
	/* then the request id */
	a = mk(10, "1.2.3.4", 9, 7);
	b = mk(10, "1.2.3.4", 9, 6);
	assert_true(gs_call_order_cmp(&b, &a) < 0);
	b.request_id = 7;
	assert_int_equal(gs_call_order_cmp(&a, &b), 0);
}

static void test_merge_pick(void **state)
{
	struct gs_call a = mk(100, "10.0.0.1", 1, 1), b = mk(200, "10.0.0.1", 2, 1), c = mk(100, "10.0.0.1", 1, 1);
	const struct gs_call *heads[3] = { NULL, NULL, NULL };
	int64_t floors[3] = { 0, 0, 0 };
	bool ready = true;
	(void)state;
	assert_int_equal(gs_call_merge_pick(heads, floors, 3, &ready), -1);
	assert_false(ready);
	heads[1] = &b;
	heads[2] = &a;
	/* stream 0 has nothing waiting and may still bring a call at 100 */
	floors[0] = 100;
	assert_int_equal(gs_call_merge_pick(heads, floors, 3, &ready), 2);
	assert_false(ready);
	floors[0] = 101;
	assert_int_equal(gs_call_merge_pick(heads, floors, 3, &ready), 2);
	assert_true(ready);
	/* a tie goes to the lower stream; an ended stream holds nothing back */
	heads[0] = &c;
	floors[0] = INT64_MIN;
	assert_int_equal(gs_call_merge_pick(heads, floors, 3, &ready), 0);
	assert_true(ready);
	heads[0] = NULL;
	heads[2] = NULL;
	floors[0] = INT64_MAX;
	floors[2] = 150;
	assert_int_equal(gs_call_merge_pick(heads, floors, 3, &ready), 1);
	assert_false(ready);
	floors[2] = INT64_MAX;
	assert_int_equal(gs_call_merge_pick(heads, floors, 3, &ready), 1);
	assert_true(ready);
}

/* Three ordered streams of random calls, revealed a few at a time with
 * floors that hold (each stream's next call starts at its floor or later):
 * the merge writes every call once, in order, and only when ready. */
static int cmp_calls(const void *x, const void *y)
{
	return gs_call_order_cmp(x, y);
}

static void test_merge_streams(void **state)
{
	enum { S = 3, PER = 400 };
	static struct gs_call v[S][PER], all[S * PER], out[S * PER];
	size_t shown[S] = { 0 }, pos[S] = { 0 }, n_out = 0;
	unsigned seed = 12345;
	(void)state;
	for (int s = 0; s < S; s++) {
		int64_t t = 1000;
		for (int i = 0; i < PER; i++) {
			seed = seed * 1103515245u + 12345u;
			t += (seed >> 16) % 4; /* ties in time, across streams too */
			v[s][i] = mk(t, (seed >> 20) & 1 ? "10.0.0.1" : "10.0.0.2", (uint16_t)(1000 + s), (uint32_t)i);
		}
		/* each stream in the engines' order */
		qsort(v[s], PER, sizeof v[s][0], cmp_calls);
		memcpy(&all[s * PER], v[s], sizeof v[s]);
	}
	qsort(all, S * PER, sizeof all[0], cmp_calls);
	while (n_out < S * PER) {
		const struct gs_call *heads[S];
		int64_t floors[S];
		bool ready;
		int k;
		for (int s = 0; s < S; s++) {
			seed = seed * 1103515245u + 12345u;
			if (shown[s] < PER && (seed >> 16) % 3 == 0)
				shown[s]++;
			heads[s] = pos[s] < shown[s] ? &v[s][pos[s]] : NULL;
			floors[s] = shown[s] < PER ? v[s][shown[s]].t_request_first : INT64_MAX;
		}
		k = gs_call_merge_pick(heads, floors, S, &ready);
		if (k < 0 || !ready)
			continue;
		out[n_out++] = v[k][pos[k]++];
	}
	for (size_t i = 0; i < S * PER; i++) {
		assert_int_equal(out[i].t_request_first, all[i].t_request_first);
		assert_int_equal(gs_call_order_cmp(&out[i], &all[i]), 0);
		if (i)
			assert_true(gs_call_order_cmp(&out[i - 1], &out[i]) <= 0);
	}
}

/* ---- what the merge reads of an engine ----------------------------------- */

static void test_counters_add(void **state)
{
	struct gs_counters a, b;
	uint64_t *pa = (uint64_t *)(void *)&a, *pb = (uint64_t *)(void *)&b;
	size_t n = sizeof a / sizeof(uint64_t);
	(void)state;
	for (size_t i = 0; i < n; i++) {
		pa[i] = i * 3;
		pb[i] = i + 1000;
	}
	gs_counters_add(&a, &b);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(pa[i], i * 3 + i + 1000);
	assert_int_equal(a.rows_out_of_order, b.rows_out_of_order + (offsetof(struct gs_counters, rows_out_of_order) / 8) * 3);
}

static void test_order_floor(void **state)
{
	struct ub w;
	struct sink s = { 0 };
	struct conn c;
	struct gs_config cfg;
	struct gs_engine *e;
	size_t l1, l2, o2;
	(void)state;
	gs_config_default(&cfg);
	cfg.max_flows = 64;
	cfg.max_open_calls = 64;
	assert_int_equal(gs_engine_new(&e, &cfg, sink_fn, &s), 0);
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 7, "echoString", 16);
	o2 = w.n;
	l2 = ub_reply(&w, 2, false, 7, 8);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	/* nothing open: the clock */
	gs_engine_tick(e, TS(0));
	assert_int_equal(gs_engine_order_floor(e), TS(0));
	/* packet numbers are the capture's: the handshake is packets 41..43 */
	gs_engine_set_packet_no(e, 41);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	gs_engine_tick(e, TS(9));
	/* a call open since 1 ms holds every later one back */
	assert_int_equal(gs_engine_order_floor(e), TS(1));
	conn_send(e, &c, 1, TS(10), w.b + o2, l2);
	conn_ack(e, &c, 0, TS(11));
	/* written (acknowledged): back to the clock */
	assert_int_equal(s.n, 1);
	assert_int_equal(gs_engine_order_floor(e), TS(11));
	assert_int_equal(gs_engine_counters(e)->packets, 6);
	gs_engine_finish(e);
	gs_engine_free(e);
	conn_free(&c);
	ub_free(&w);
	sink_free(&s);
}

/* An engine with an order window of 0 (read --threads) writes a call once
 * settled; gs_engine_holds_back says whether one writing in order would still
 * hold it: behind an open call that started no later, not once that ended. */
static void test_holds_back(void **state)
{
	struct ub w;
	struct sink s = { 0 };
	struct conn a, b;
	struct gs_config cfg;
	struct gs_engine *e;
	size_t l1, l2, o2;
	(void)state;
	gs_config_default(&cfg);
	cfg.max_flows = 64;
	cfg.max_open_calls = 64;
	assert_true(cfg.ordered);
	assert_int_equal(gs_engine_new(&e, &cfg, sink_fn, &s), 0);
	gs_engine_set_order_window(e, 0);
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 7, "echoString", 16);
	o2 = w.n;
	l2 = ub_reply(&w, 2, false, 7, 8);
	conn_init(&a, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_init(&b, "10.0.0.3", 40001, "10.0.0.2", 2809, 3000, 7000);
	conn_handshake(e, &a, TS(0));
	conn_handshake(e, &b, TS(0));
	conn_send(e, &a, 0, TS(1), w.b, l1);          /* a's call opens at 1 ms */
	conn_send(e, &b, 0, TS(2), w.b, l1);          /* b's at 2 ms */
	conn_send(e, &b, 1, TS(3), w.b + o2, l2);
	conn_ack(e, &b, 0, TS(4));
	/* b's call is settled and written at once, though a's started first */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.t_request_first, TS(2));
	assert_true(gs_engine_holds_back(e, &s.v[0].c));
	conn_send(e, &a, 1, TS(5), w.b + o2, l2);
	conn_ack(e, &a, 0, TS(6));
	assert_int_equal(s.n, 2);
	/* nothing before it any more: in order, b's call goes now */
	assert_false(gs_engine_holds_back(e, &s.v[0].c));
	assert_false(gs_engine_holds_back(e, &s.v[1].c));
	/* the engine itself counted a's call, written after b's, out of order (with
	 * threads the merge's count is the one kept: gs_engine_absorb) */
	assert_int_equal(gs_engine_counters(e)->rows_out_of_order, 1);
	gs_engine_finish(e);
	gs_engine_free(e);
	conn_free(&a);
	conn_free(&b);
	ub_free(&w);
	sink_free(&s);
}

/* Absorbing shards: counters add, the first problem by packet number. */
static void test_absorb(void **state)
{
	struct gs_config cfg;
	struct gs_engine *dst, *a, *b;
	uint8_t junk[60];
	(void)state;
	gs_config_default(&cfg);
	cfg.max_flows = 16;
	cfg.max_open_calls = 16;
	assert_int_equal(gs_engine_new(&dst, &cfg, NULL, NULL), 0);
	assert_int_equal(gs_engine_new(&a, &cfg, NULL, NULL), 0);
	assert_int_equal(gs_engine_new(&b, &cfg, NULL, NULL), 0);
	memset(junk, 0, sizeof junk); /* Ethernet type 0: not IP */
	gs_engine_set_packet_no(a, 5);
	gs_engine_frame(a, GS_DLT_EN10MB, TS(1), junk, sizeof junk, sizeof junk);
	gs_engine_frame(a, GS_DLT_EN10MB, TS(2), junk, sizeof junk, sizeof junk);
	gs_engine_set_packet_no(b, 3);
	gs_engine_frame(b, GS_DLT_EN10MB, TS(0), junk, sizeof junk, sizeof junk);
	gs_engine_absorb(dst, a);
	gs_engine_absorb(dst, b);
	gs_engine_set_times(dst, TS(0), TS(2));
	assert_int_equal(gs_engine_counters(dst)->packets, 3);
	assert_int_equal(gs_engine_counters(dst)->non_ip, 3);
	assert_int_equal(gs_engine_counters(dst)->bytes, 3 * sizeof junk);
	assert_int_equal(gs_engine_first_ts(dst), TS(0));
	assert_int_equal(gs_engine_last_ts(dst), TS(2));
	gs_engine_set_rows_ooo(dst, 4);
	assert_int_equal(gs_engine_counters(dst)->rows_out_of_order, 4);
	gs_engine_free(dst);
	gs_engine_free(a);
	gs_engine_free(b);
}

/* ---- the summary's statistics, one set a thread, added together ----------- */

static void answered(struct gs_call *c, uint32_t op, int64_t total_us)
{
	memset(c, 0, sizeof *c);
	c->op = op;
	c->kind = GS_KIND_REQUEST;
	c->outcome = GS_OUT_REPLY;
	c->flags = GS_CF_REP_SEEN;
	c->t_request_first = TS(0);
	c->t_request_last = TS(0);
	c->t_reply_first = TS(0) + total_us * 1000;
	c->t_reply_last = TS(0) + total_us * 1000;
}

struct key_map {
	const struct gs_intern *from;
	struct gs_intern *to;
};

static uint32_t map_key(void *arg, uint32_t key)
{
	struct key_map *m = arg;
	size_t len;
	const char *p = gs_intern_get(m->from, key, &len);
	return gs_intern(m->to, p, len);
}

static void test_stats_merge(void **state)
{
	struct gs_intern na, nb, nd;
	struct gs_stats a, b, d;
	struct gs_call c;
	struct key_map m;
	uint32_t echo_a, ping_a, echo_b, only_b;
	(void)state;
	assert_int_equal(gs_intern_init(&na, 16, 256), 0);
	assert_int_equal(gs_intern_init(&nb, 16, 256), 0);
	assert_int_equal(gs_intern_init(&nd, 16, 256), 0);
	/* the same name, numbered otherwise in each thread */
	ping_a = gs_intern(&na, "ping", 4);
	echo_a = gs_intern(&na, "echo", 4);
	only_b = gs_intern(&nb, "only_b", 6);
	echo_b = gs_intern(&nb, "echo", 4);
	assert_int_equal(gs_stats_init(&a, 2, 17), 0);
	assert_int_equal(gs_stats_init(&b, 2, 17), 0);
	assert_int_equal(gs_stats_init(&d, 2, 17), 0);
	answered(&c, echo_a, 100);
	gs_stats_add(&a, &c);
	gs_stats_add(&a, &c);
	answered(&c, ping_a, 5);
	gs_stats_add(&a, &c);
	answered(&c, echo_b, 300);
	gs_stats_add(&b, &c);
	answered(&c, only_b, 7);
	c.outcome = GS_OUT_NO_REPLY;
	c.flags = 0;
	gs_stats_add(&b, &c);
	m = (struct key_map){ &na, &nd };
	gs_stats_merge(&d, &a, map_key, &m);
	m = (struct key_map){ &nb, &nd };
	gs_stats_merge(&d, &b, map_key, &m);
	/* two groups at most: echo and ping, only_b's call in (other) */
	assert_int_equal(d.n, 2);
	assert_int_equal(d.all.calls, 5);
	assert_int_equal(d.all.answered, 4);
	assert_int_equal(d.all.no_reply, 1);
	assert_int_equal(d.all.total.total, 4);
	assert_int_equal(d.all.total.max, 300000);
	for (uint32_t g = 0; g < d.n; g++) {
		size_t len;
		const char *p = gs_intern_get(&nd, d.groups[g].key, &len);
		if (len == 4 && memcmp(p, "echo", 4) == 0) {
			assert_int_equal(d.groups[g].calls, 3);
			assert_int_equal(d.groups[g].total.total, 3);
			assert_int_equal(d.groups[g].total.min, 100000);
			assert_int_equal(d.groups[g].total.max, 300000);
		} else {
			assert_memory_equal(p, "ping", 4);
			assert_int_equal(d.groups[g].calls, 1);
		}
	}
	assert_int_not_equal(d.other, GS_NONE);
	assert_int_equal(d.other_calls, 1);
	assert_int_equal(d.groups[d.other].calls, 1);
	assert_int_equal(d.groups[d.other].no_reply, 1);
	gs_stats_free(&a);
	gs_stats_free(&b);
	gs_stats_free(&d);
	gs_intern_free(&na);
	gs_intern_free(&nb);
	gs_intern_free(&nd);
}

/* ---- the hash that picks a connection's engine ---------------------------- */

/* read_shards.c reads IPv4 addresses in place (gs_flow_hash_v4) and anything
 * else through the decoder (gs_flow_hash, 16-byte addresses): one connection
 * must hash alike either way, in both directions. */
static void test_flow_hash_v4(void **state)
{
	uint64_t x = 0x243f6a8885a308d3ULL;
	unsigned differ = 0;
	uint32_t prev = 0;
	(void)state;
	for (int i = 0; i < 100000; i++) {
		uint8_t a[16] = { 0 }, b[16] = { 0 };
		uint16_t sp, dp;
		uint32_t h;
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		memcpy(a, &x, 4);
		memcpy(b, (const uint8_t *)&x + 4, 4);
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sp = (uint16_t)x;
		dp = (uint16_t)(i % 7 == 0 ? sp : x >> 16); /* equal ports too */
		if (i % 11 == 0)
			memcpy(b, a, 4);                    /* and equal addresses */
		h = gs_flow_hash(a, sp, b, dp, 4);
		assert_int_equal(gs_flow_hash_v4(a, sp, b, dp), h);
		assert_int_equal(gs_flow_hash_v4(b, dp, a, sp), h);
		differ += h != prev;
		prev = h;
	}
	/* (not a constant) */
	assert_true(differ > 99000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_bounds),
		cmocka_unit_test(test_ring_threads),
		cmocka_unit_test(test_order_cmp),
		cmocka_unit_test(test_merge_pick),
		cmocka_unit_test(test_merge_streams),
		cmocka_unit_test(test_counters_add),
		cmocka_unit_test(test_order_floor),
		cmocka_unit_test(test_holds_back),
		cmocka_unit_test(test_absorb),
		cmocka_unit_test(test_stats_merge),
		cmocka_unit_test(test_flow_hash_v4),
	};
	return cmocka_run_group_tests(tests, NULL, ut_cleanup);
}
