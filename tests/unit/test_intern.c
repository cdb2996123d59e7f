/* SPDX-License-Identifier: BSD-2-Clause */
/* Interned strings (analysis/intern.c): lookups, bounds, many strings. */
#include <errno.h>
#include "unit.h"
#include "../../analysis/intern.h"

/* ---- intern ---------------------------------------------------------------- */

static void test_intern_basic(void **state)
{
	struct gs_intern t;
	size_t n;
	const char *p;
	uint32_t a, b, c;
	assert_int_equal(gs_intern_init(&t, 0, 100), EINVAL);
	assert_int_equal(gs_intern_init(&t, (1u << 28) + 1, 100), EINVAL);
	assert_int_equal(gs_intern_init(&t, 10, 100), 0);
	assert_int_equal(gs_intern(&t, "", 0), GS_INTERN_EMPTY);
	assert_int_equal(gs_intern(&t, "whatever", 0), GS_INTERN_EMPTY);
	a = gs_intern(&t, "echo", 4);
	b = gs_intern(&t, "echoString", 10);
	c = gs_intern(&t, "ech", 3);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(c, 3);
	assert_int_equal(gs_intern(&t, "echo", 4), a);
	assert_int_equal(gs_intern(&t, "echoString!", 10), b);
	p = gs_intern_get(&t, a, &n);
	assert_int_equal(n, 4);
	assert_memory_equal(p, "echo", 4);
	p = gs_intern_get(&t, c, &n);
	assert_int_equal(n, 3);
	assert_memory_equal(p, "ech", 3);
	p = gs_intern_get(&t, GS_INTERN_EMPTY, &n);
	assert_int_equal(n, 0);
	p = gs_intern_get(&t, GS_INTERN_FULL, &n);
	assert_int_equal(n, 0);
	assert_string_equal(p, "");
	p = gs_intern_get(&t, 4, &n); /* never given */
	assert_int_equal(n, 0);
	/* binary strings with NULs */
	a = gs_intern(&t, "\0\1\0", 3);
	assert_int_equal(gs_intern(&t, "\0\1\0", 3), a);
	assert_int_not_equal(gs_intern(&t, "\0\1\1", 3), a);
	assert_int_equal(t.used, 4 + 10 + 3 + 3 + 3);
	assert_int_equal(t.refused, 0);
	gs_intern_free(&t);
}

static void test_intern_bounds(void **state)
{
	struct gs_intern t;
	char s[16];
	/* 4 entries: the empty string and 3 others */
	assert_int_equal(gs_intern_init(&t, 4, 1000), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(s, sizeof s, "s%d", i);
		assert_int_equal(gs_intern(&t, s, strlen(s)), (uint32_t)i + 1);
	}
	assert_int_equal(gs_intern(&t, "more", 4), GS_INTERN_FULL);
	assert_int_equal(gs_intern(&t, "more", 4), GS_INTERN_FULL);
	assert_int_equal(t.refused, 2);
	assert_int_equal(gs_intern(&t, "s1", 2), 2); /* known strings still found */
	assert_int_equal(gs_intern(&t, "", 0), GS_INTERN_EMPTY);
	gs_intern_free(&t);

	/* bytes bound */
	assert_int_equal(gs_intern_init(&t, 100, 10), 0);
	assert_int_equal(gs_intern(&t, "0123456", 7), 1);
	assert_int_equal(gs_intern(&t, "abcd", 4), GS_INTERN_FULL);
	assert_int_equal(gs_intern(&t, "abc", 3), 2);
	assert_int_equal(t.used, 10);
	assert_int_equal(gs_intern(&t, "x", 1), GS_INTERN_FULL);
	assert_int_equal(t.refused, 2);
	gs_intern_free(&t);
}

static void test_intern_many(void **state)
{
	struct gs_intern t;
	char s[32];
	enum { N = 50000 };
	assert_int_equal(gs_intern_init(&t, N + 1, (size_t)N * 16), 0);
	for (uint32_t i = 0; i < N; i++) {
		int n = snprintf(s, sizeof s, "op_%u", i * 7919u);
		assert_int_equal(gs_intern(&t, s, (size_t)n), i + 1);
	}
	for (uint32_t i = 0; i < N; i++) {
		size_t len;
		const char *p;
		int n = snprintf(s, sizeof s, "op_%u", i * 7919u);
		assert_int_equal(gs_intern(&t, s, (size_t)n), i + 1);
		p = gs_intern_get(&t, i + 1, &len);
		assert_int_equal(len, (size_t)n);
		assert_memory_equal(p, s, len);
	}
	assert_int_equal(t.count, N + 1);
	assert_int_equal(gs_intern(&t, "one more", 8), GS_INTERN_FULL);
	gs_intern_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_intern_basic),
		UT(test_intern_bounds),
		UT(test_intern_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
