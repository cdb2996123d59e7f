/* SPDX-License-Identifier: BSD-2-Clause */
/* The nesting stage (analysis/nest.c) and the host address sets
 * (analysis/host_addrs.c): calls built by hand with the times the rule reads. */
#include <malloc.h>
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GS_SANITIZED_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GS_SANITIZED_HEAP 1
#endif
#endif
#ifdef GS_SANITIZED_HEAP
/* the sanitizers' runtime (compiler-rt's allocator_interface.h, which gcc does
 * not install): the bytes its allocator has handed out and not taken back */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

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
	/* a bound below the first sizes (merge: its number of calls) */
	o.n = 0;
	assert_int_equal(gs_nest_init(&n, true, 3, 0, collect, &o), 0);
	add(&n, &p);
	add(&n, &c);
	gs_nest_flush(&n);
	assert_parent(&o, 2, 1);
	assert_int_equal(o.c[0].downstream_ns, 50 * MS);
	assert_int_equal(n.n.early, 0);
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
	struct gs_call p = call(1, 40000, 2, 1000, 100, 101, 9999, 10000);
	(void)state;
	o.n = 0;
	assert_int_equal(gs_nest_init(&n, true, 4096, 0, collect, &o), 0);
	/* calls written before the ring grows: it wraps, and growing moves what wrapped */
	for (uint32_t i = 0; i < 100; i++) {
		struct gs_call q = call(7, 30000, 8, 5000 + i, i, i, i, i);
		add(&n, &q);
	}
	assert_int_equal(o.n, 99);
	add(&n, &p);
	assert_int_equal(o.n, 100);
	o.n = 0;
	for (uint32_t i = 0; i < 300; i++) {
		struct gs_call c = call(2, (uint16_t)(40001 + i), 3, i, 110 + 30 * i, 111 + 30 * i, 119 + 30 * i,
					120 + 30 * i);
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

/* Bytes the process has in use from the heap, as the allocator counts them:
 * glibc's, or the sanitizer's (which replaces it: mallinfo2 then reads 0). */
static size_t heap_in_use(void)
{
#ifdef GS_SANITIZED_HEAP
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 m = mallinfo2();
	/* from the heap and mapped on their own (the large blocks) */
	return m.uordblks + m.hblkhd;
#endif
}

/* What --max-memory sets aside for the stage (gs_nest_memory_bound) is at least
 * what it takes (the allocator's count of bytes in use, not the stage's own arithmetic):
 * the ring full, every held call a parent's nested call (the intervals' pool). */
static void test_memory_bound(void **state)
{
	static struct out o;
	struct gs_nest n;
	const uint32_t max = 4096;
	size_t a, used;
	struct gs_call p = call(1, 40000, 2, 100000, 0, 1, 999999, 1000000);
	(void)state;
	o.n = 0;
	a = heap_in_use();
	assert_int_equal(gs_nest_init(&n, true, max, 0, collect, &o), 0);
	add(&n, &p);
	for (uint32_t i = 0; i + 1 < max; i++) {
		/* p's nested calls: none goes before p's reply */
		struct gs_call c = call(2, (uint16_t)(1000 + i % 60000), 3, i, 10 + i, 10 + i, 10 + i, 10 + i);
		add(&n, &c);
	}
	assert_int_equal(n.tail - n.head, max);
	assert_int_equal(n.cap, max);
	assert_int_equal(o.n, 0);
	used = heap_in_use() - a;
	assert_true(used <= gs_nest_memory_bound(max, false, false));
	/* and not far off (a bound that is used) */
	assert_true(used >= gs_nest_memory_bound(max, false, false) / 2);
	gs_nest_free(&n); /* (not flushed: o holds 512) */
	o.n = 0;
}

/* Live: calls come as they end, the child before its parent; a call from a host
 * that serves calls waits the hold, the others go at once, in the order they came;
 * attach's thread parent kept, and its call goes once its parent came. */
static void test_unordered(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call p = call(1, 40000, 2, 1, 0, 1, 99, 100), c = call(2, 40001, 3, 2, 10, 11, 59, 60);
	struct gs_call q = call(1, 40005, 2, 5, 200, 201, 299, 300), d = call(2, 40006, 3, 6, 210, 211, 259, 260);
	struct gs_call w = call(1, 40009, 2, 9, -500, -499, -400, -399);
	struct gs_call_times t;
	(void)state;
	memset(&t, 0, sizeof t);
	assert_int_equal(gs_nest_init(&n, false, 1024, 500 * MS, collect, &o), 0);
	add(&n, &w); /* a client's call: at once; host 2 serves from now on */
	assert_int_equal(o.n, 1);
	add(&n, &c);
	add(&n, &p);
	assert_int_equal(o.n, 1);
	gs_nest_tick(&n, T0 + 400 * MS);
	assert_int_equal(o.n, 1);
	gs_nest_tick(&n, T0 + 700 * MS);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.c[1].request_id, 2); /* as they came */
	assert_parent(&o, 2, 1);
	assert_int_equal(find(&o, 1)->downstream_ns, 50 * MS);
	/* attach named d's parent by thread: kept, and it counts in q's downstream */
	d.parent_basis = GS_PARENT_THREAD;
	d.parent_client = q.client;
	d.parent_server = q.server;
	d.parent_request_id = 5;
	gs_nest_add(&n, NULL, &d, &t);
	assert_int_equal(o.n, 3);
	gs_nest_add(&n, NULL, &q, &t);
	assert_int_equal(o.n, 5); /* d's parent came: both go, no hold */
	gs_nest_flush(&n);
	assert_true(o.had_t[3]);
	assert_int_equal(find(&o, 6)->parent_basis, GS_PARENT_THREAD);
	assert_int_equal(find(&o, 5)->downstream_ns, 50 * MS);
	assert_int_equal(n.n.parent_thread, 1);
	assert_int_equal(n.n.parent_time, 1);
	gs_nest_free(&n);
	/* the bound in live: a child written before its hold passed gets no parent by
	 * time (an enclosing call may still end), counted */
	o.n = 0;
	assert_int_equal(gs_nest_init(&n, false, 2, 500 * MS, collect, &o), 0);
	add(&n, &w);
	add(&n, &c);
	add(&n, &p); /* p encloses c: one candidate so far */
	add(&n, &q); /* full: c goes early (then p and q, which do not wait) */
	assert_int_equal(o.n, 4);
	assert_int_equal(o.c[1].request_id, 2);
	assert_top(&o, 2);
	assert_int_equal(n.n.early, 1);
	gs_nest_flush(&n);
	gs_nest_free(&n);
}

/* Live: a parent named after the hold, then a second call that enclosed the nested
 * call too ends: the row is out, the count says so. */
static void test_unordered_late(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call w = call(1, 40009, 2, 9, -500, -499, -400, -399);
	struct gs_call c = call(2, 40001, 3, 2, 10, 11, 59, 60), p1 = call(1, 40000, 2, 1, 0, 1, 99, 100);
	struct gs_call p2 = call(5, 40000, 2, 5, 5, 6, 1998, 2000), q = call(5, 40000, 2, 7, 2100, 2101, 2199, 2200);
	(void)state;
	assert_int_equal(gs_nest_init(&n, false, 1024, 500 * MS, collect, &o), 0);
	add(&n, &w);
	add(&n, &c);
	add(&n, &p1);
	gs_nest_tick(&n, T0 + 700 * MS);
	assert_parent(&o, 2, 1);
	assert_int_equal(n.n.late, 0);
	add(&n, &p2); /* encloses c too: named too early */
	assert_int_equal(n.n.late, 1);
	add(&n, &q);  /* encloses nothing */
	gs_nest_flush(&n);
	assert_int_equal(n.n.late, 1);
	gs_nest_free(&n);
}

/* One address for clients and their server (loopback): a call to the server's own
 * endpoint during a slow call is another client's, not nested; a call from there
 * to another endpoint is.  Live: the clients' calls to that server do not wait. */
static void test_loopback(void **state)
{
	struct gs_nest n;
	struct out o = { .n = 0 };
	struct gs_call slow = call(1, 40000, 1, 1, 0, 1, 99, 100), other = call(1, 40001, 1, 2, 10, 11, 19, 20);
	struct gs_call out_ = call(1, 40002, 3, 3, 30, 31, 39, 40);
	(void)state;
	for (int ordered = 1; ordered >= 0; ordered--) {
		o.n = 0;
		assert_int_equal(gs_nest_init(&n, ordered, 1024, 500 * MS, collect, &o), 0);
		if (ordered) {
			add(&n, &slow);
			add(&n, &other);
			add(&n, &out_);
		} else {
			struct gs_call w = call(1, 40009, 1, 9, -500, -499, -400, -399);
			add(&n, &w); /* host 1 serves 10.0.0.1:2809 from now on */
			add(&n, &other);
			assert_int_equal(o.n, 2); /* to that very endpoint: no wait */
			add(&n, &out_);
			add(&n, &slow);
			assert_int_equal(o.n, 2); /* to another: waits */
		}
		gs_nest_flush(&n);
		assert_top(&o, 2);
		assert_parent(&o, 3, 1);
		assert_int_equal(find(&o, 1)->downstream_ns, 10 * MS);
		gs_nest_free(&n);
	}
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

/* Random traffic among a few hosts, in start order, against the rule worked out
 * by brute force over all pairs: every parent named is the one enclosing call,
 * none missing (no bound reached); downstream within server time; order kept.
 * Then the same with a small bound: whatever is named is still right. */
#define RN 600
static void rnd_calls(struct gs_call *v, unsigned seed)
{
	unsigned r = seed;
	int64_t t = 0;
	for (uint32_t i = 0; i < RN; i++) {
		int64_t q0, q1, r0, r1;
		unsigned from, to;
		r = r * 1103515245u + 12345u;
		t += (r >> 16) % 7;
		from = 1 + (r >> 8) % 4;
		to = 1 + (r >> 20) % 4;
		if (to == from)
			to = to % 4 + 1;
		q0 = t;
		q1 = q0 + (r >> 4) % 3;
		r0 = q1 + (r >> 12) % 40;
		r1 = r0 + (r >> 24) % 3;
		v[i] = call(from, (uint16_t)(40000 + i), to, i, q0, q1, r0, r1);
		if ((r >> 28) == 0) { /* a few not answered */
			v[i].flags = GS_CF_REQ_DONE;
			v[i].outcome = GS_OUT_NO_REPLY;
		}
	}
}

static bool rule_encloses(const struct gs_call *p, const struct gs_call *c)
{
	return (p->flags & GS_CF_REP_SEEN) && (c->flags & GS_CF_REP_SEEN) && p != c &&
	       memcmp(p->server.addr, c->client.addr, 4) == 0 && p->t_request_last <= c->t_request_first &&
	       c->t_reply_last <= p->t_reply_first &&
	       !(p->server.port == c->server.port && memcmp(p->server.addr, c->server.addr, 4) == 0);
}

static struct gs_call rnd_out[RN];
static unsigned rnd_n;

static void rnd_collect(void *arg, const struct gs_engine *e, const struct gs_call *c, const struct gs_call_times *t)
{
	(void)arg;
	(void)e;
	(void)t;
	assert_true(rnd_n < RN);
	rnd_out[rnd_n++] = *c;
}

static void test_random_against_rule(void **state)
{
	static struct gs_call v[RN];
	(void)state;
	for (unsigned seed = 1; seed <= 8; seed++) {
		for (int bounded = 0; bounded < 2; bounded++) {
			struct gs_nest n;
			uint64_t named = 0;
			rnd_n = 0;
			rnd_calls(v, seed);
			assert_int_equal(gs_nest_init(&n, true, bounded ? 8 : 4096, 0, rnd_collect, NULL), 0);
			for (uint32_t i = 0; i < RN; i++)
				add(&n, &v[i]);
			gs_nest_flush(&n);
			assert_int_equal(rnd_n, RN);
			for (uint32_t i = 0; i < RN; i++) {
				const struct gs_call *c = &rnd_out[i];
				uint32_t cnt = 0, which = 0;
				int64_t srv = c->t_reply_first - c->t_request_last;
				assert_int_equal(c->request_id, i); /* the order kept */
				for (uint32_t j = 0; j < RN; j++)
					if (rule_encloses(&v[j], &v[i])) {
						cnt++;
						which = j;
					}
				if (c->parent_basis == GS_PARENT_TIME) {
					/* named: always the one enclosing call */
					assert_int_equal(cnt, 1);
					assert_int_equal(c->parent_request_id, which);
					named++;
				} else if (!bounded) {
					/* no bound reached: every call with one enclosing call is named */
					assert_true(cnt != 1);
				}
				if (c->flags & GS_CF_REP_SEEN)
					assert_true(c->downstream_ns >= 0 && c->downstream_ns <= srv);
				else
					assert_int_equal(c->downstream_ns, 0);
			}
			if (!bounded) {
				assert_int_equal(n.n.parent_time, named);
				assert_int_equal(n.n.early, 0);
				assert_true(named > 10);
			}
			gs_nest_free(&n);
		}
	}
}

static int by_end(const void *a, const void *b)
{
	const struct gs_call *x = a, *y = b;
	return x->t_done < y->t_done ? -1 : x->t_done > y->t_done;
}

/* Live order (as calls end), a hold longer than any call: whatever is named is the
 * one enclosing call, and most are named. */
static void test_random_unordered(void **state)
{
	static struct gs_call v[RN];
	(void)state;
	for (unsigned seed = 1; seed <= 8; seed++) {
		struct gs_nest n;
		uint64_t named = 0, want = 0;
		rnd_n = 0;
		rnd_calls(v, seed);
		for (uint32_t i = 0; i < RN; i++)
			v[i].t_done = (v[i].flags & GS_CF_REP_SEEN) ? v[i].t_reply_last : v[i].t_request_last;
		qsort(v, RN, sizeof v[0], by_end);
		assert_int_equal(gs_nest_init(&n, false, 4096, 1000 * MS, rnd_collect, NULL), 0);
		for (uint32_t i = 0; i < RN; i++)
			add(&n, &v[i]);
		gs_nest_flush(&n);
		assert_int_equal(rnd_n, RN);
		for (uint32_t i = 0; i < RN; i++) {
			const struct gs_call *c = &rnd_out[i];
			uint32_t cnt = 0, which = 0;
			assert_int_equal(c->request_id, v[i].request_id); /* as they came */
			for (uint32_t j = 0; j < RN; j++)
				if (rule_encloses(&v[j], &v[i])) {
					cnt++;
					which = v[j].request_id;
				}
			want += cnt == 1;
			if (c->parent_basis == GS_PARENT_TIME) {
				assert_int_equal(cnt, 1);
				assert_int_equal(c->parent_request_id, which);
				named++;
			}
		}
		/* missed: only the calls of a host before its first served call ended */
		assert_true(named + 8 >= want);
		assert_true(named > 10);
		gs_nest_free(&n);
	}
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
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_unordered_late),
		cmocka_unit_test(test_memory_bound),
		cmocka_unit_test(test_random_against_rule),
		cmocka_unit_test(test_random_unordered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
