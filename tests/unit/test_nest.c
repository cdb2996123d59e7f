/* SPDX-License-Identifier: BSD-2-Clause */
/* The nesting stage (analysis/nest.c) and the host address sets
 * (analysis/host_addrs.c): calls built by hand with the times the rule reads. */
#include "unit.h"
#include "../../analysis/nest.h"

#define MS 1000000LL
#define T0 1700000000000000000LL

/* what the stage wrote, in order */
struct out {
	struct gs_call c[512];
	bool had_t[512];
	unsigned n;
};

static void collect(void *arg, const struct gs_engine *e, const struct gs_call *c, const struct gs_call_times *t)
{
	struct out *o = arg;
	(void)e;
	assert_true(o->n < 512);
	o->had_t[o->n] = t != NULL;
	o->c[o->n++] = *c;
}

static bool ep_equal(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	return a->family == b->family && a->port == b->port && memcmp(a->addr, b->addr, 16) == 0;
}

static void ep(struct gs_endpoint *p, unsigned host, uint16_t port)
{
	memset(p, 0, sizeof *p);
	p->family = 4;
	p->addr[0] = 10;
	p->addr[3] = (uint8_t)host;
	p->port = port;
}

/* A two-way call from host `from` to host `to`, times in ms after T0: request
 * first/last, reply first/last. */
static struct gs_call call(unsigned from, uint16_t cport, unsigned to, uint32_t rid, int64_t q0, int64_t q1,
			   int64_t r0, int64_t r1)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	ep(&c.client, from, cport);
	ep(&c.server, to, 2809);
	c.request_id = rid;
	c.op = rid;
	c.outcome = GS_OUT_REPLY;
	c.flags = GS_CF_REQ_DONE | GS_CF_REP_SEEN | GS_CF_REP_DONE;
	c.t_request_first = T0 + q0 * MS;
	c.t_request_last = T0 + q1 * MS;
	c.t_reply_first = T0 + r0 * MS;
	c.t_reply_last = T0 + r1 * MS;
	c.t_done = c.t_reply_last;
	return c;
}

static const struct gs_call *find(const struct out *o, uint32_t rid)
{
	for (unsigned i = 0; i < o->n; i++)
		if (o->c[i].request_id == rid)
			return &o->c[i];
	fail_msg("call %u not written", rid);
	return NULL;
}

static void assert_parent(const struct out *o, uint32_t rid, uint32_t prid)
{
	const struct gs_call *c = find(o, rid);
	assert_int_equal(c->parent_basis, GS_PARENT_TIME);
	assert_int_equal(c->parent_request_id, prid);
}

static void assert_top(const struct out *o, uint32_t rid)
{
	assert_int_equal(find(o, rid)->parent_basis, GS_PARENT_NONE);
}

static void add(struct gs_nest *n, const struct gs_call *c)
{
	gs_nest_add(n, NULL, c, NULL);
}

/* client 1 -> relay 2 (rid 1, 0..100 ms); relay 2 -> backend 3 (rid 2, 10..60):
 * nested, downstream 50 ms, hold = rid 2 */
static void test_enclosure(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p = call(1, 40000, 2, 1, 0, 1, 99, 100), c = call(2, 40001, 3, 2, 10, 11, 59, 60);
	(void)state;
	assert_int_equal(gs_nest_init(&n, true, 1024, 0, collect, &o), 0);
	add(&n, &p);
	add(&n, &c);
	assert_int_equal(o.n, 0); /* the parent waits: a child may still come */
	gs_nest_flush(&n);
	assert_int_equal(o.n, 2);
	assert_int_equal(o.c[0].request_id, 1); /* the order stays */
	assert_parent(&o, 2, 1);
	assert_true(ep_equal(&o.c[1].parent_client, &p.client));
	assert_true(ep_equal(&o.c[1].parent_server, &p.server));
	assert_top(&o, 1);
	assert_int_equal(o.c[0].downstream_ns, 50 * MS);
	assert_int_equal(o.c[0].hold_request_id, 2);
	assert_int_equal(o.c[0].hold_ns, 50 * MS);
	assert_int_equal(o.c[1].downstream_ns, 0);
	assert_int_equal(n.n.parent_time, 1);
	assert_int_equal(n.n.undecided, 0);
	gs_nest_free(&n);
}

/* Not enclosed: the child's request began before the parent's was whole; the
 * child's reply ended after the parent's reply began; another host made it. */
static void test_not_enclosed(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p = call(1, 40000, 2, 1, 0, 10, 99, 100);
	struct gs_call a = call(2, 40001, 3, 2, 5, 11, 50, 60);    /* starts before p's request whole */
	struct gs_call b = call(2, 40002, 3, 3, 20, 21, 98, 100); /* ends after p's reply began */
	struct gs_call d = call(4, 40003, 3, 4, 20, 21, 30, 31);   /* another host */
	(void)state;
	assert_int_equal(gs_nest_init(&n, true, 1024, 0, collect, &o), 0);
	add(&n, &a); /* in start order: a first */
	add(&n, &p);
	add(&n, &b);
	add(&n, &d);
	gs_nest_flush(&n);
	assert_int_equal(o.n, 4);
	assert_top(&o, 2);
	assert_top(&o, 3);
	assert_top(&o, 4);
	assert_int_equal(find(&o, 1)->downstream_ns, 0);
	gs_nest_free(&n);
}

/* The host serves two calls at once that both enclose the child: undecided,
 * counted, no parent; the one it serves alone gets its child. */
static void test_undecided(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p1 = call(1, 40000, 2, 1, 0, 1, 99, 100), p2 = call(5, 40000, 2, 2, 2, 3, 97, 98);
	struct gs_call c = call(2, 40001, 3, 3, 10, 11, 59, 60);
	(void)state;
	assert_int_equal(gs_nest_init(&n, true, 1024, 0, collect, &o), 0);
	add(&n, &p1);
	add(&n, &p2);
	add(&n, &c);
	gs_nest_flush(&n);
	assert_top(&o, 3);
	assert_int_equal(n.n.undecided, 1);
	assert_int_equal(n.n.parent_time, 0);
	assert_int_equal(find(&o, 1)->downstream_ns, 0);
	assert_int_equal(find(&o, 2)->downstream_ns, 0);
	gs_nest_free(&n);
}

/* A callback: client 1 calls callMeBack on server 2, which calls ping on a
 * server of host 1 (its own connection, or the same one, bidirectional GIOP). */
static void test_callback(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p = call(1, 40000, 2, 7, 0, 1, 49, 50);
	struct gs_call own = call(2, 41000, 1, 1, 10, 11, 19, 20);
	struct gs_call bidir = call(2, 2809, 1, 2, 25, 26, 29, 30);
	(void)state;
	/* bidirectional: the ping goes from the server's end of p's connection to the client's */
	bidir.client = p.server;
	bidir.server = p.client;
	assert_int_equal(gs_nest_init(&n, true, 1024, 0, collect, &o), 0);
	add(&n, &p);
	add(&n, &own);
	add(&n, &bidir);
	gs_nest_flush(&n);
	assert_parent(&o, 1, 7);
	assert_parent(&o, 2, 7);
	assert_top(&o, 7);
	assert_int_equal(find(&o, 7)->downstream_ns, 15 * MS);
	gs_nest_free(&n);
}

/* downstream: the union of the nested calls, clipped to the server time. */
static void test_downstream_union(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p = call(1, 40000, 2, 1, 0, 10, 90, 100);
	struct gs_call c1 = call(2, 40001, 3, 2, 10, 11, 39, 40); /* 10..40 */
	struct gs_call c2 = call(2, 40002, 4, 3, 30, 31, 49, 50); /* 30..50: overlaps */
	struct gs_call c3 = call(2, 40003, 3, 4, 70, 71, 89, 90); /* 70..90 */
	(void)state;
	assert_int_equal(gs_nest_init(&n, true, 1024, 0, collect, &o), 0);
	add(&n, &p);
	add(&n, &c1);
	add(&n, &c2);
	add(&n, &c3);
	gs_nest_flush(&n);
	assert_int_equal(find(&o, 1)->downstream_ns, 60 * MS);
	assert_int_equal(find(&o, 1)->hold_request_id, 2);
	assert_int_equal(find(&o, 1)->hold_ns, 30 * MS);
	assert_int_equal(n.n.parent_time, 3);
	assert_true(find(&o, 1)->downstream_ns <= find(&o, 1)->t_reply_first - find(&o, 1)->t_request_last);
	gs_nest_free(&n);
}

/* A middle tier with two addresses: calls in on one, out on the other. */
static void test_host_addrs(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p = call(1, 40000, 2, 1, 0, 1, 99, 100), c = call(12, 40001, 3, 2, 10, 11, 59, 60);
	uint8_t a2[4] = { 10, 0, 0, 2 }, a12[4] = { 10, 0, 0, 12 };
	(void)state;
	/* one address, one host: no parent */
	assert_int_equal(gs_nest_init(&n, true, 1024, 0, collect, &o), 0);
	add(&n, &p);
	add(&n, &c);
	gs_nest_flush(&n);
	assert_top(&o, 2);
	gs_nest_free(&n);
	/* both the relay's */
	o.n = 0;
	assert_int_equal(gs_nest_init(&n, true, 1024, 0, collect, &o), 0);
	gs_nest_own_addr(&n, 4, a2);
	gs_nest_own_addr(&n, 4, a12);
	gs_nest_own_addr(&n, 4, a12); /* again: kept once */
	assert_int_equal(n.own.n, 2);
	add(&n, &p);
	add(&n, &c);
	gs_nest_flush(&n);
	assert_parent(&o, 2, 1);
	gs_nest_free(&n);
}

static void test_host_addrs_parse(void **state)
{
	struct gs_host_addrs h;
	char why[128];
	struct gs_endpoint e6;
	char many[64 * 16 + 32];
	size_t k = 0;
	(void)state;
	assert_int_equal(gs_host_addrs_parse(&h, "10.0.1.5,10.0.2.5,fd00::5", why, sizeof why), 0);
	assert_int_equal(h.n, 3);
	memset(&e6, 0, sizeof e6);
	e6.family = 6;
	e6.addr[0] = 0xfd;
	e6.addr[15] = 5;
	e6.port = 1234; /* the port does not matter */
	assert_true(gs_host_addrs_has(&h, &e6));
	e6.addr[15] = 6;
	assert_false(gs_host_addrs_has(&h, &e6));
	/* bad lists: a one-line reason each */
	assert_int_equal(gs_host_addrs_parse(&h, "", why, sizeof why), -1);
	assert_int_equal(gs_host_addrs_parse(&h, "10.0.0.1,", why, sizeof why), -1);
	assert_int_equal(gs_host_addrs_parse(&h, ",10.0.0.1", why, sizeof why), -1);
	assert_int_equal(gs_host_addrs_parse(&h, "10.0.0.256", why, sizeof why), -1);
	assert_non_null(strstr(why, "10.0.0.256"));
	assert_null(strchr(why, '\n'));
	assert_int_equal(gs_host_addrs_parse(&h, "host.example", why, sizeof why), -1);
	assert_int_equal(gs_host_addrs_parse(&h, "10.0.0.1:2809", why, sizeof why), -1);
	assert_int_equal(gs_host_addrs_parse(&h, "1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa", why,
					     sizeof why), -1);
	/* the bound: 64 addresses, not 65 */
	for (int i = 0; i < 65; i++)
		k += (size_t)snprintf(many + k, sizeof many - k, "%s10.1.%d.%d", i ? "," : "", i / 200, i % 200);
	assert_int_equal(gs_host_addrs_parse(&h, many, why, sizeof why), -1);
	assert_non_null(strstr(why, "more than"));
}

/* The bound: the oldest call goes before its nesting is decided, counted; a
 * child whose parent went early is not given a wrong one. */
static void test_bound_early(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p1 = call(1, 40000, 2, 1, 0, 1, 99, 100), p2 = call(5, 40000, 2, 2, 2, 3, 97, 98);
	struct gs_call c = call(2, 40001, 3, 3, 10, 11, 59, 60);
	(void)state;
	assert_int_equal(gs_nest_init(&n, true, 2, 0, collect, &o), 0);
	add(&n, &p1);
	add(&n, &p2);
	add(&n, &c); /* full: p1 goes first, undecided; c then sees p2 alone */
	gs_nest_flush(&n);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.c[0].request_id, 1);
	assert_top(&o, 3); /* not p2: p1 might have enclosed it too */
	assert_true(n.n.early >= 2);
	assert_int_equal(n.n.parent_time, 0);
	assert_int_equal(n.n.max_held, 2);
	gs_nest_free(&n);
}

/* Growth on demand past the first ring, the order kept, parents found. */
static void test_grows(void **state)
{
	struct gs_nest n;
	static struct out o;
	/* (static: 512 calls) */
	struct gs_call p = call(1, 40000, 2, 1000, 0, 1, 9999, 10000);
	(void)state;
	o.n = 0;
	assert_int_equal(gs_nest_init(&n, true, 4096, 0, collect, &o), 0);
	add(&n, &p);
	for (uint32_t i = 0; i < 300; i++) {
		struct gs_call c = call(2, (uint16_t)(40001 + i), 3, i, 10 + 30 * i, 11 + 30 * i, 19 + 30 * i,
					20 + 30 * i);
		add(&n, &c);
	}
	assert_int_equal(o.n, 0);
	gs_nest_flush(&n);
	assert_int_equal(o.n, 301);
	assert_int_equal(o.c[0].request_id, 1000);
	for (uint32_t i = 0; i < 300; i++) {
		assert_int_equal(o.c[i + 1].request_id, i);
		assert_parent(&o, i, 1000);
	}
	assert_int_equal(find(&o, 1000)->downstream_ns, 300 * 10 * MS);
	assert_true(n.cap >= 512);
	assert_int_equal(n.n.early, 0);
	gs_nest_free(&n);
}

/* Live: calls come as they end, the child before its parent; written after
 * the hold, in the order they came; attach's thread parent kept. */
static void test_unordered(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p = call(1, 40000, 2, 1, 0, 1, 99, 100), c = call(2, 40001, 3, 2, 10, 11, 59, 60);
	struct gs_call q = call(1, 40005, 2, 5, 200, 201, 299, 300), d = call(2, 40006, 3, 6, 210, 211, 259, 260);
	struct gs_call_times t;
	(void)state;
	memset(&t, 0, sizeof t);
	assert_int_equal(gs_nest_init(&n, false, 1024, 500 * MS, collect, &o), 0);
	add(&n, &c);
	add(&n, &p);
	assert_int_equal(o.n, 0);
	gs_nest_tick(&n, T0 + 700 * MS);
	assert_int_equal(o.n, 2);
	assert_int_equal(o.c[0].request_id, 2); /* as they came */
	assert_parent(&o, 2, 1);
	assert_int_equal(find(&o, 1)->downstream_ns, 50 * MS);
	/* attach named d's parent by thread: kept, and it counts in q's downstream */
	d.parent_basis = GS_PARENT_THREAD;
	d.parent_client = q.client;
	d.parent_server = q.server;
	d.parent_request_id = 5;
	gs_nest_add(&n, NULL, &d, &t);
	gs_nest_add(&n, NULL, &q, &t);
	gs_nest_flush(&n);
	assert_int_equal(o.n, 4);
	assert_true(o.had_t[2]);
	assert_int_equal(find(&o, 6)->parent_basis, GS_PARENT_THREAD);
	assert_int_equal(find(&o, 5)->downstream_ns, 50 * MS);
	assert_int_equal(n.n.parent_thread, 1);
	assert_int_equal(n.n.parent_time, 1);
	gs_nest_free(&n);
}

/* A oneway sent while serving: nested (its request whole before the reply). */
static void test_oneway_child(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p = call(1, 40000, 2, 1, 0, 1, 99, 100), c = call(2, 40001, 3, 2, 10, 11, 0, 0);
	struct gs_call nr = call(2, 40002, 3, 3, 20, 21, 0, 0);
	(void)state;
	c.flags = GS_CF_REQ_DONE | GS_CF_ONEWAY;
	c.outcome = GS_OUT_ONEWAY;
	c.t_reply_first = c.t_reply_last = 0;
	nr.flags = GS_CF_REQ_DONE; /* no reply came: it cannot be enclosed */
	nr.outcome = GS_OUT_NO_REPLY;
	nr.t_reply_first = nr.t_reply_last = 0;
	assert_int_equal(gs_nest_init(&n, true, 1024, 0, collect, &o), 0);
	add(&n, &p);
	add(&n, &c);
	add(&n, &nr);
	gs_nest_flush(&n);
	assert_parent(&o, 2, 1);
	assert_top(&o, 3);
	assert_int_equal(find(&o, 1)->downstream_ns, 1 * MS);
	gs_nest_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enclosure),
		cmocka_unit_test(test_not_enclosed),
		cmocka_unit_test(test_undecided),
		cmocka_unit_test(test_callback),
		cmocka_unit_test(test_downstream_union),
		cmocka_unit_test(test_host_addrs),
		cmocka_unit_test(test_host_addrs_parse),
		cmocka_unit_test(test_bound_early),
		cmocka_unit_test(test_grows),
		cmocka_unit_test(test_unordered),
		cmocka_unit_test(test_oneway_child),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
