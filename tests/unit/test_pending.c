/* SPDX-License-Identifier: BSD-2-Clause */
/* The pending list on its own (analysis/pending.c): links found by the
 * strides it is given, the minimum worked out again only when dirty. */
#include "unit.h"
#include "../../analysis/pending.h"
#include "../../analysis/call.h"

/* a stand-in for the engine's flows: two directions a flow, the link inside */
struct dir { int64_t held; struct gs_pend_link link; char pad[20]; };
struct flow { char head[24]; struct dir dir[2]; };

static int64_t earliest(const void *arg, uint32_t id)
{
	const struct flow *f = arg;
	return f[id >> 1].dir[id & 1].held;
}

static void setup(struct gs_pending *p, struct flow *f)
{
	memset(p, 0, sizeof *p);
	p->head = GS_NONE;
	p->links = (char *)f + offsetof(struct flow, dir) + offsetof(struct dir, link);
	p->flow_stride = sizeof *f;
	p->dir_stride = sizeof f->dir[0];
	p->earliest = earliest;
	p->arg = f;
}

static void test_insert_remove_min(void **state)
{
	struct flow f[3];
	struct gs_pending p;
	(void)state;
	memset(f, 0, sizeof f);
	setup(&p, f);
	f[0].dir[1].held = 50;
	f[2].dir[0].held = 20;
	f[1].dir[1].held = 70;
	gs_pending_insert(&p, 1);
	gs_pending_insert(&p, 4);
	gs_pending_insert(&p, 3);
	assert_int_equal(p.count, 3);
	assert_int_equal(gs_pending_min(&p), 20);
	/* cached until the list changes */
	f[2].dir[0].held = 5;
	assert_int_equal(gs_pending_min(&p), 20);
	gs_pending_remove(&p, 4); /* from the middle */
	assert_int_equal(gs_pending_min(&p), 50);
	gs_pending_remove(&p, 3); /* the head */
	assert_int_equal(p.head, 1);
	assert_int_equal(gs_pending_min(&p), 50);
	gs_pending_remove(&p, 1);
	assert_int_equal(p.count, 0);
	assert_int_equal(p.head, GS_NONE);
	assert_true(gs_pending_min(&p) == INT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_insert_remove_min),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
