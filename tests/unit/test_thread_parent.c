/* SPDX-License-Identifier: BSD-2-Clause */
/* analysis/thread_parent.c: the parent of a call by the thread that sent it
 * (attach, parent_basis `thread`): thread-per-connection and pool threads,
 * many calls open at once, the reply that ends the serving, ties, oneways,
 * --orb's upcall edges, and the bounds (replaced requests and threads). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../analysis/thread_parent.h"

#define US 1000LL

static struct gs_endpoint ep(uint8_t host, uint16_t port)
{
	struct gs_endpoint e;
	memset(&e, 0, sizeof e);
	e.family = 4;
	e.addr[0] = 10;
	e.addr[3] = host;
	e.port = port;
	return e;
}

static const enum gs_tpar_upcall NO_ORB = GS_TPAR_UPCALL_UNKNOWN;

/* Four client connections into one relay, each read and served by its own
 * thread (thread-per-connection), all open at once: each thread's send names
 * the request that thread read, however many are open. */
static void per_thread_many_open(void **state)
{
	struct gs_tparent p;
	const struct gs_tpar_req *r;
	struct gs_endpoint relay = ep(2, 5000);
	(void)state;
	assert_int_equal(gs_tparent_init(&p, 64, 16), 0);
	for (uint32_t i = 0; i < 4; i++) {
		struct gs_endpoint cl = ep(1, (uint16_t)(40000 + i));
		gs_tparent_read(&p, &cl, &relay, 7, GS_TPAR_READ_TWOWAY, 100 + i, (10 + i) * US);
	}
	/* thread 102 sends its back-end call after all four were read */
	assert_int_equal(gs_tparent_decide(&p, 102, 50 * US, NO_ORB, 0, &r), GS_TPAR_PARENT);
	assert_non_null(r);
	assert_int_equal(r->client.port, 40002);
	assert_int_equal(r->rid, 7);
	assert_int_equal(r->tid, 102);
	/* thread 100 likewise, even after 101's request was answered */
	{
		struct gs_endpoint cl = ep(1, 40001);
		gs_tparent_replied(&p, &cl, &relay, 7, 60 * US);
	}
	assert_int_equal(gs_tparent_decide(&p, 100, 70 * US, NO_ORB, 0, &r), GS_TPAR_PARENT);
	assert_int_equal(r->client.port, 40000);
	/* 101 answered its request at 60: its send at 70 serves nothing */
	assert_int_equal(gs_tparent_decide(&p, 101, 70 * US, NO_ORB, 0, &r), GS_TPAR_TOP);
	assert_null(r);
	/* ... but its send at 55, before the reply, was made for it */
	assert_int_equal(gs_tparent_decide(&p, 101, 55 * US, NO_ORB, 0, &r), GS_TPAR_PARENT);
	assert_int_equal(r->client.port, 40001);
	/* a thread that never read a request: the application's own */
	assert_int_equal(gs_tparent_decide(&p, 999, 70 * US, NO_ORB, 0, &r), GS_TPAR_TOP);
	assert_int_equal(p.verdicts[GS_TPAR_PARENT], 3);
	assert_int_equal(p.verdicts[GS_TPAR_TOP], 2);
	gs_tparent_free(&p);
}

/* A pool thread serves requests of several connections one after the
 * other: the request read last before the send decides, not the first. */
static void pool_thread_latest_read(void **state)
{
	struct gs_tparent p;
	const struct gs_tpar_req *r;
	struct gs_endpoint relay = ep(2, 5000), a = ep(1, 40000), b = ep(1, 40001);
	(void)state;
	assert_int_equal(gs_tparent_init(&p, 64, 16), 0);
	gs_tparent_read(&p, &a, &relay, 1, GS_TPAR_READ_TWOWAY, 100, 10 * US);
	gs_tparent_replied(&p, &a, &relay, 1, 30 * US);
	gs_tparent_read(&p, &b, &relay, 1, GS_TPAR_READ_TWOWAY, 100, 40 * US);
	assert_int_equal(gs_tparent_decide(&p, 100, 45 * US, NO_ORB, 0, &r), GS_TPAR_PARENT);
	assert_int_equal(r->client.port, 40001);
	/* a send between the two: the first was answered, the second not read */
	assert_int_equal(gs_tparent_decide(&p, 100, 35 * US, NO_ORB, 0, &r), GS_TPAR_TOP);
	/* a send during the first */
	assert_int_equal(gs_tparent_decide(&p, 100, 20 * US, NO_ORB, 0, &r), GS_TPAR_PARENT);
	assert_int_equal(r->client.port, 40000);
	gs_tparent_free(&p);
}

/* One recv returned two requests: which the thread served is not seen. */
static void one_read_two_requests(void **state)
{
	struct gs_tparent p;
	const struct gs_tpar_req *r;
	struct gs_endpoint relay = ep(2, 5000), a = ep(1, 40000);
	(void)state;
	assert_int_equal(gs_tparent_init(&p, 64, 16), 0);
	gs_tparent_read(&p, &a, &relay, 1, GS_TPAR_READ_TWOWAY, 100, 10 * US);
	gs_tparent_read(&p, &a, &relay, 2, GS_TPAR_READ_TWOWAY, 100, 10 * US);
	assert_int_equal(gs_tparent_decide(&p, 100, 20 * US, NO_ORB, 0, &r), GS_TPAR_TIE);
	assert_null(r);
	gs_tparent_free(&p);
}

/* A oneway has no reply to end its serving: only --orb's edges decide. */
static void oneway_needs_orb(void **state)
{
	struct gs_tparent p;
	const struct gs_tpar_req *r;
	struct gs_endpoint relay = ep(2, 5000), a = ep(1, 40000);
	(void)state;
	assert_int_equal(gs_tparent_init(&p, 64, 16), 0);
	gs_tparent_read(&p, &a, &relay, 3, GS_TPAR_READ_ONEWAY, 100, 10 * US);
	assert_int_equal(gs_tparent_decide(&p, 100, 20 * US, NO_ORB, 0, &r), GS_TPAR_ONEWAY);
	assert_int_equal(gs_tparent_decide(&p, 100, 20 * US, GS_TPAR_UPCALL_RUNNING, 12 * US, &r), GS_TPAR_PARENT);
	assert_int_equal(r->rid, 3);
	/* the upcall had ended: a send outside any upcall is top level */
	assert_int_equal(gs_tparent_decide(&p, 100, 20 * US, GS_TPAR_UPCALL_NONE, 0, &r), GS_TPAR_TOP);
	gs_tparent_free(&p);
}

/* --orb: an upcall running on a thread that read nothing before it began
 * serves a request another thread read: not named. */
static void orb_upcall_not_reader(void **state)
{
	struct gs_tparent p;
	const struct gs_tpar_req *r;
	struct gs_endpoint relay = ep(2, 5000), a = ep(1, 40000);
	(void)state;
	assert_int_equal(gs_tparent_init(&p, 64, 16), 0);
	gs_tparent_read(&p, &a, &relay, 1, GS_TPAR_READ_TWOWAY, 100, 10 * US);
	/* thread 200 runs an upcall from 12 on, read nothing */
	assert_int_equal(gs_tparent_decide(&p, 200, 20 * US, GS_TPAR_UPCALL_RUNNING, 12 * US, &r),
			 GS_TPAR_NOT_READER);
	/* thread 100 read request 1 at 10, an upcall from 12: it is 1's */
	assert_int_equal(gs_tparent_decide(&p, 100, 20 * US, GS_TPAR_UPCALL_RUNNING, 12 * US, &r), GS_TPAR_PARENT);
	/* its next upcall from 40, after 1 was answered at 30: another's */
	gs_tparent_replied(&p, &a, &relay, 1, 30 * US);
	assert_int_equal(gs_tparent_decide(&p, 100, 50 * US, GS_TPAR_UPCALL_RUNNING, 40 * US, &r),
			 GS_TPAR_NOT_READER);
	/* a request read after the upcall began is not the upcall's */
	gs_tparent_read(&p, &a, &relay, 2, GS_TPAR_READ_TWOWAY, 100, 45 * US);
	assert_int_equal(gs_tparent_decide(&p, 100, 50 * US, GS_TPAR_UPCALL_RUNNING, 40 * US, &r),
			 GS_TPAR_NOT_READER);
	gs_tparent_free(&p);
}

/* Bounds: a thread's requests pushed out of its ring, a request pushed out
 * of the table, a thread pushed out of its table: never a wrong parent. */
static void bounded_never_wrong(void **state)
{
	struct gs_tparent p;
	const struct gs_tpar_req *r;
	struct gs_endpoint relay = ep(2, 5000);
	const uint32_t reads = GS_TPAR_PER_THREAD + 2;
	(void)state;
	assert_int_equal(gs_tparent_init(&p, 2048, 16), 0);
	/* thread 100 reads more requests than its ring keeps, at 10, 20, ...:
	 * a send at 15 falls before the ring's oldest (30): unknown, not top
	 * level */
	for (uint32_t i = 0; i < reads; i++) {
		struct gs_endpoint cl = ep(1, (uint16_t)(40000 + i));
		gs_tparent_read(&p, &cl, &relay, 1, GS_TPAR_READ_TWOWAY, 100, (10 + 10 * (int64_t)i) * US);
	}
	assert_int_equal(gs_tparent_decide(&p, 100, 15 * US, NO_ORB, 0, &r), GS_TPAR_UNKNOWN);
	assert_int_equal(gs_tparent_decide(&p, 100, 35 * US, NO_ORB, 0, &r), GS_TPAR_PARENT);
	assert_int_equal(r->client.port, 40002);
	assert_int_equal(gs_tparent_decide(&p, 100, (10 + 10 * (int64_t)reads) * US, NO_ORB, 0, &r), GS_TPAR_PARENT);
	assert_int_equal(r->client.port, 40000 + reads - 1);
	gs_tparent_free(&p);

	/* 40 requests through a 16-slot table: thread 100's latest is pushed
	 * out, so it cannot be named, and is not named wrong */
	assert_int_equal(gs_tparent_init(&p, 16, 16), 0);
	{
		struct gs_endpoint cl = ep(1, 40000);
		gs_tparent_read(&p, &cl, &relay, 1, GS_TPAR_READ_TWOWAY, 100, 10 * US);
		gs_tparent_read(&p, &cl, &relay, 2, GS_TPAR_READ_TWOWAY, 100, 60 * US);
	}
	for (uint32_t i = 0; i < 40; i++) {
		struct gs_endpoint cl = ep(3, (uint16_t)(30000 + i));
		gs_tparent_read(&p, &cl, &relay, i, GS_TPAR_READ_TWOWAY, 500 + (i % 8), (100 + (int64_t)i) * US);
	}
	assert_true(p.replaced_open > 0);
	if (gs_tparent_decide(&p, 100, 65 * US, NO_ORB, 0, &r) == GS_TPAR_PARENT)
		assert_int_equal(r->rid, 2);
	else
		assert_null(r);
	/* many threads through a 16-slot thread table: a thread pushed out is
	 * unknown, not top level, once any was replaced */
	for (uint32_t i = 0; i < 64; i++) {
		struct gs_endpoint cl = ep(4, (uint16_t)(20000 + i));
		gs_tparent_read(&p, &cl, &relay, 1, GS_TPAR_READ_TWOWAY, 1000 + i, (200 + (int64_t)i) * US);
	}
	assert_true(p.threads_replaced > 0);
	assert_int_equal(gs_tparent_decide(&p, 77777, 300 * US, NO_ORB, 0, &r), GS_TPAR_UNKNOWN);
	gs_tparent_free(&p);
}

/* A LocateRequest the thread read makes it known (attach waits for the reads
 * of such a thread before deciding) but is never a parent: no upcall runs. */
static void locate_known_never_parent(void **state)
{
	struct gs_tparent p;
	const struct gs_tpar_req *r;
	struct gs_endpoint relay = ep(2, 5000), a = ep(1, 40000);
	(void)state;
	assert_int_equal(gs_tparent_init(&p, 64, 16), 0);
	assert_false(gs_tparent_knows(&p, 300));
	assert_false(gs_tparent_knows(&p, 0));
	gs_tparent_read(&p, &a, &relay, 2, GS_TPAR_READ_LOCATE, 300, 5 * US);
	assert_true(gs_tparent_knows(&p, 300));
	assert_int_equal(gs_tparent_decide(&p, 300, 10 * US, NO_ORB, 0, &r), GS_TPAR_TOP);
	gs_tparent_read(&p, &a, &relay, 4, GS_TPAR_READ_TWOWAY, 300, 20 * US);
	assert_int_equal(gs_tparent_decide(&p, 300, 25 * US, NO_ORB, 0, &r), GS_TPAR_PARENT);
	assert_int_equal(r->rid, 4);
	gs_tparent_free(&p);
}

static void init_checks(void **state)
{
	struct gs_tparent p;
	(void)state;
	assert_int_equal(gs_tparent_init(&p, 100, 16), EINVAL);
	assert_int_equal(gs_tparent_init(&p, 16, 8), EINVAL);
	assert_int_equal(gs_tparent_init(&p, 16, 16), 0);
	assert_string_equal(gs_tparent_verdict_name(GS_TPAR_PARENT), "named");
	gs_tparent_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(per_thread_many_open),
		cmocka_unit_test(pool_thread_latest_read),
		cmocka_unit_test(one_read_two_requests),
		cmocka_unit_test(oneway_needs_orb),
		cmocka_unit_test(orb_upcall_not_reader),
		cmocka_unit_test(bounded_never_wrong),
		cmocka_unit_test(locate_known_never_parent),
		cmocka_unit_test(init_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
