/* SPDX-License-Identifier: BSD-2-Clause */
/* The first malformed / truncated message of a run (analysis/problems.c). */
#include "unit.h"
#include "../../analysis/problems.h"

static void test_first_kept(void **state)
{
	struct gs_problem p;
	struct gs_endpoint a, b;
	memset(&p, 0, sizeof p);
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.family = b.family = 4;
	a.addr[0] = 10, a.addr[3] = 1, a.port = 40000;
	b.addr[0] = 10, b.addr[3] = 2, b.port = 2809;
	gs_problem_note(&p, 7, &a, &b, "malformed GIOP at stream offset %d", 12);
	assert_int_equal(p.packet, 7);
	assert_string_equal(p.what, "10.0.0.1:40000 -> 10.0.0.2:2809: malformed GIOP at stream offset 12");
	/* the first stays */
	gs_problem_note(&p, 9, NULL, NULL, "later");
	assert_int_equal(p.packet, 7);
	memset(&p, 0, sizeof p);
	gs_problem_note(&p, 3, NULL, NULL, "no connection");
	assert_string_equal(p.what, "no connection");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_first_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
