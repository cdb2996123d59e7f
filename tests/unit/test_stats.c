/* SPDX-License-Identifier: BSD-2-Clause */
/* Statistics groups (analysis/stats.c): grouping, the "(other)" group and
 * its release, what counts as an error. */
#include <errno.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#else
#include <malloc.h>
#endif
#include "unit.h"
#include "call_fixtures.h"
#include "../../analysis/stats.h"

/* ---- statistics groups ------------------------------------------------------------- */

static void test_stats_groups(void **state)
{
	struct gs_stats st;
	struct gs_call c = base_call();
	assert_int_equal(gs_stats_init(&st, 2, 16), 0);
	c.op = 1;
	gs_stats_add(&st, &c); /* total 1999.998 us, server 1000 us */
	c.op = 2;
	c.status = GIOP_USER_EXCEPTION;
	gs_stats_add(&st, &c);
	c.op = 3; /* a third operation: (other) */
	c.status = GIOP_NO_EXCEPTION;
	gs_stats_add(&st, &c);
	c.op = 1;
	c.outcome = GS_OUT_NO_REPLY;
	c.flags = GS_CF_OP_KNOWN;
	gs_stats_add(&st, &c);
	c.outcome = GS_OUT_ONEWAY;
	c.flags = GS_CF_ONEWAY;
	gs_stats_add(&st, &c);
	assert_int_equal(st.n, 2);
	assert_int_equal(st.groups[0].key, 1);
	assert_int_equal(st.groups[0].calls, 3);
	assert_int_equal(st.groups[0].answered, 1);
	assert_int_equal(st.groups[0].errors, 1);
	assert_int_equal(st.groups[0].no_reply, 1);
	assert_int_equal(st.groups[0].oneways, 1);
	assert_int_equal(st.groups[0].total.total, 1);
	assert_int_equal(st.groups[0].total.max, 1999998);
	assert_int_equal(st.groups[0].server.max, 1000000);
	assert_int_equal(st.groups[1].key, 2);
	assert_int_equal(st.groups[1].errors, 1);
	assert_int_equal(st.other, 2);
	assert_int_equal(st.other_calls, 1);
	assert_int_equal(st.groups[2].calls, 1);
	assert_int_equal(st.all.calls, 5);
	assert_int_equal(st.all.answered, 3);
	assert_int_equal(st.all.errors, 2);
	/* LocateRequests go to a group of their own */
	{
		struct gs_stats s2;
		struct gs_call l = base_call();
		assert_int_equal(gs_stats_init(&s2, 4, 16), 0);
		l.kind = GS_KIND_LOCATE_REQUEST;
		l.reply_type = GIOP_LOCATE_REPLY;
		l.status = GIOP_UNKNOWN_OBJECT;
		l.op = 0;
		gs_stats_add(&s2, &l);
		l.kind = GS_KIND_REQUEST;
		l.reply_type = GIOP_REPLY;
		l.status = GIOP_NO_EXCEPTION;
		gs_stats_add(&s2, &l);
		assert_int_equal(s2.n, 2);
		assert_int_equal(s2.groups[0].kind, GS_KIND_LOCATE_REQUEST);
		assert_int_equal(s2.groups[0].errors, 1);
		assert_int_equal(s2.groups[1].kind, GS_KIND_REQUEST);
		assert_int_equal(s2.groups[1].errors, 0);
		gs_stats_free(&s2);
	}
	gs_stats_free(&st);
}

/* gs_stats_free gives back every histogram, the "(other)" group's included.
 * Under ASan the leak checker says; otherwise glibc's heap accounting. */
static void stats_with_other_group(void)
{
	struct gs_stats st;
	struct gs_call c = base_call();
	assert_int_equal(gs_stats_init(&st, 1, 16), 0);
	c.op = 1;
	gs_stats_add(&st, &c);
	c.op = 2; /* no room for a second group: (other) */
	gs_stats_add(&st, &c);
	assert_int_equal(st.other, 1);
	assert_int_equal(st.groups[1].calls, 1);
	gs_stats_free(&st);
}

static void test_stats_free_releases_other_group(void **state)
{
#ifdef HAVE_LSAN
	stats_with_other_group();
	assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
#else
	/* A leaked "(other)" group is two histograms (~72 KiB): a hundred rounds
	 * would leave megabytes behind, where the allocator's own bookkeeping
	 * moves by a few hundred bytes at most. */
	struct mallinfo2 a, b;
	stats_with_other_group(); /* once, so that the allocator's own state settles */
	a = mallinfo2();
	for (int i = 0; i < 100; i++)
		stats_with_other_group();
	b = mallinfo2();
	assert_true(b.uordblks + b.hblkhd < a.uordblks + a.hblkhd + 64 * 1024);
#endif
}

static void test_call_is_error(void **state)
{
	struct gs_call c = base_call();
	assert_false(gs_call_is_error(&c));
	c.status = GIOP_USER_EXCEPTION;
	assert_true(gs_call_is_error(&c));
	c.status = GIOP_SYSTEM_EXCEPTION;
	assert_true(gs_call_is_error(&c));
	c.status = GIOP_LOCATION_FORWARD;
	assert_false(gs_call_is_error(&c));
	c.reply_type = GIOP_LOCATE_REPLY;
	c.status = GIOP_UNKNOWN_OBJECT;
	assert_true(gs_call_is_error(&c));
	c.status = GIOP_LOC_SYSTEM_EXCEPTION;
	assert_true(gs_call_is_error(&c));
	c.status = GIOP_OBJECT_HERE;
	assert_false(gs_call_is_error(&c));
	c.flags &= ~(uint32_t)GS_CF_STATUS_KNOWN;
	c.status = GIOP_UNKNOWN_OBJECT;
	assert_false(gs_call_is_error(&c));
	c.outcome = GS_OUT_NO_REPLY;
	assert_true(gs_call_is_error(&c));
	c.outcome = GS_OUT_ONEWAY;
	assert_false(gs_call_is_error(&c));
	c.outcome = GS_OUT_CANCELLED;
	assert_false(gs_call_is_error(&c));
}

/* ---- the nesting split: server time into own and downstream ---------------------- */

static uint32_t same_key(void *arg, uint32_t key)
{
	(void)arg;
	return key;
}

static void test_stats_nesting(void **state)
{
	struct gs_stats st, dst;
	struct gs_call c = base_call(); /* server 1000 us */
	(void)state;
	assert_int_equal(gs_stats_init(&st, 4, 16), 0);
	gs_stats_nesting(&st, true);
	c.op = 1;
	c.downstream_ns = 800000;            /* 800 us of it with nested calls open */
	gs_stats_add_call(&st, NULL, &c);
	c.downstream_ns = 0;
	c.parent_basis = GS_PARENT_TIME;     /* a nested call itself, all its own */
	gs_stats_add_call(&st, NULL, &c);
	c.op = 2;
	c.parent_basis = GS_PARENT_NONE;
	c.downstream_ns = 5000000;           /* more than its server time: clamped to it */
	gs_stats_add_call(&st, NULL, &c);
	c.outcome = GS_OUT_ONEWAY;           /* not answered: counted as nested, no split */
	c.flags = GS_CF_ONEWAY;
	c.parent_basis = GS_PARENT_THREAD;
	gs_stats_add_call(&st, NULL, &c);
	assert_non_null(st.groups[0].nest);
	assert_int_equal(st.groups[0].nest->nested, 1);
	assert_int_equal(st.groups[0].nest->with_down, 1);
	assert_int_equal(st.groups[0].nest->own.total, 2);
	assert_int_equal(st.groups[0].nest->own.min, 200000);
	assert_int_equal(st.groups[0].nest->own.max, 1000000);
	assert_int_equal(st.groups[0].nest->down.max, 800000);
	assert_int_equal(st.groups[0].nest->down.min, 0);
	assert_int_equal(st.groups[1].nest->nested, 1);
	assert_int_equal(st.groups[1].nest->own.max, 0);
	assert_int_equal(st.groups[1].nest->down.max, 1000000);
	assert_int_equal(st.all.nest->nested, 2);
	assert_int_equal(st.all.nest->with_down, 2);
	assert_int_equal(st.all.nest->own.total, 3);
	/* read --threads: a thread's split merged into the whole's */
	assert_int_equal(gs_stats_init(&dst, 4, 16), 0);
	gs_stats_merge(&dst, &st, same_key, NULL);
	assert_true(dst.nesting);
	assert_int_equal(dst.groups[0].nest->nested, 1);
	assert_int_equal(dst.groups[0].nest->own.total, 2);
	assert_int_equal(dst.all.nest->down.max, 1000000);
	gs_stats_free(&dst);
	/* without the stage no group has a split */
	gs_stats_free(&st);
	assert_int_equal(gs_stats_init(&st, 4, 16), 0);
	gs_stats_add_call(&st, NULL, &c);
	assert_null(st.groups[0].nest);
	assert_null(st.all.nest);
	gs_stats_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_stats_groups),
		UT(test_stats_free_releases_other_group),
		UT(test_call_is_error),
		UT(test_stats_nesting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
