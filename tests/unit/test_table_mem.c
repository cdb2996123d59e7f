// SPDX-License-Identifier: BSD-2-Clause
/* analysis/table_mem.c: a table larger than the host's memory is given (the
 * limit is a ceiling: address space, resident as written), zeroed, 64-byte
 * aligned, writable where it is used; a size beyond any address space is
 * refused; NULL frees. */
#include "unit.h"
#include "../../analysis/table_mem.h"

static void test_large_table(void **state)
{
	size_t big = (size_t)64 << 30; /* 64 GiB: more than these hosts have */
	uint8_t *p = gs_table_new(big);
	(void)state;
	assert_non_null(p);
	assert_int_equal((uintptr_t)p % 64, 0);
	assert_int_equal(p[0], 0);
	assert_int_equal(p[big / 2], 0);
	assert_int_equal(p[big - 1], 0);
	/* a few pages written: the rest is never made resident */
	p[0] = 1;
	p[big / 2] = 2;
	p[big - 1] = 3;
	assert_int_equal(p[0] + p[big / 2] + p[big - 1], 6);
	gs_table_free(p);
}

static void test_refused_and_null(void **state)
{
	(void)state;
	assert_null(gs_table_new(SIZE_MAX));
	assert_null(gs_table_new(SIZE_MAX - 100));
	gs_table_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_large_table),
		UT(test_refused_and_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
