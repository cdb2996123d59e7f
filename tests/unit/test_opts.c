/* SPDX-License-Identifier: BSD-2-Clause */
/* The command-line parsers (probe/opts.c, compiled in): numbers, seconds, and
 * the one comma-list parser behind --ports, --port and --pid. */
#include "unit.h"
#include "../../probe/opts.h"

/* ---- command-line numbers (probe/opts.c) ------------------------------------------- */

static void test_parse_u64(void **state)
{
	uint64_t v;
	assert_true(gs_parse_u64("0", 0, 10, false, &v));
	assert_int_equal(v, 0);
	assert_true(gs_parse_u64("18446744073709551615", 0, UINT64_MAX, false, &v));
	assert_int_equal(v, UINT64_MAX);
	assert_false(gs_parse_u64("18446744073709551616", 0, UINT64_MAX, false, &v));
	assert_false(gs_parse_u64("11", 0, 10, false, &v));
	assert_false(gs_parse_u64("1", 2, 10, false, &v));
	assert_false(gs_parse_u64("", 0, 10, false, &v));
	assert_false(gs_parse_u64(NULL, 0, 10, false, &v));
	assert_false(gs_parse_u64("-1", 0, UINT64_MAX, false, &v));
	assert_false(gs_parse_u64(" 1", 0, 10, false, &v));
	assert_false(gs_parse_u64("1 ", 0, 10, false, &v));
	assert_false(gs_parse_u64("1k", 0, UINT64_MAX, false, &v));
	assert_true(gs_parse_u64("1k", 0, UINT64_MAX, true, &v));
	assert_int_equal(v, 1024);
	assert_true(gs_parse_u64("3M", 0, UINT64_MAX, true, &v));
	assert_int_equal(v, 3u << 20);
	assert_true(gs_parse_u64("2gB", 0, UINT64_MAX, true, &v));
	assert_int_equal(v, 2ull << 30);
	assert_true(gs_parse_u64("256m", 0, UINT64_MAX, true, &v));
	assert_int_equal(v, 256ull << 20);
	assert_false(gs_parse_u64("1t", 0, UINT64_MAX, true, &v));
	assert_false(gs_parse_u64("1kx", 0, UINT64_MAX, true, &v));
	assert_false(gs_parse_u64("17179869184g", 0, UINT64_MAX, true, &v)); /* 2^34 * 2^30 */
	assert_true(gs_parse_u64("17179869183g", 0, UINT64_MAX, true, &v));
}

static void test_parse_seconds(void **state)
{
	int64_t ns;
	assert_true(gs_parse_seconds("1.5", INT64_MAX, &ns));
	assert_int_equal(ns, 1500000000);
	assert_true(gs_parse_seconds("0.000000001", INT64_MAX, &ns));
	assert_int_equal(ns, 1);
	assert_true(gs_parse_seconds("0.0000000019", INT64_MAX, &ns)); /* beyond ns: dropped */
	assert_int_equal(ns, 1);
	assert_true(gs_parse_seconds("2", INT64_MAX, &ns));
	assert_int_equal(ns, 2000000000);
	assert_false(gs_parse_seconds("2.", INT64_MAX, &ns));
	assert_false(gs_parse_seconds(".5", INT64_MAX, &ns));
	assert_false(gs_parse_seconds("1s", INT64_MAX, &ns));
	assert_false(gs_parse_seconds("-1", INT64_MAX, &ns));
	assert_true(gs_parse_seconds("10", 10000000000LL, &ns));
	assert_false(gs_parse_seconds("10.1", 10000000000LL, &ns));
	assert_false(gs_parse_seconds("11", 10000000000LL, &ns));
	assert_false(gs_parse_seconds("99999999999999999999", INT64_MAX, &ns));
}

static bool bit(const uint8_t *b, unsigned p) { return (b[p >> 3] >> (p & 7)) & 1; }

static unsigned bits(const uint8_t *b)
{
	unsigned n = 0;
	for (unsigned p = 0; p < 65536; p++)
		n += bit(b, p);
	return n;
}

static void test_parse_ports(void **state)
{
	static uint8_t b[8192];
	char why[320];
	assert_true(gs_parse_ports("2809,683,10000-10010", b, why, sizeof why));
	assert_int_equal(bits(b), 13);
	assert_true(bit(b, 2809));
	assert_true(bit(b, 683));
	assert_true(bit(b, 10000));
	assert_true(bit(b, 10010));
	assert_false(bit(b, 10011));
	assert_false(bit(b, 9999));
	assert_true(gs_parse_ports("0-65535", b, why, sizeof why));
	assert_true(bit(b, 0) && bit(b, 65535));
	assert_true(gs_parse_ports("7-7", b, why, sizeof why));
	assert_int_equal(bits(b), 1);
	static const char *const bad[] = {
		"65536", "10-5", "1,", ",1", "1,,2", ",", "1-", "-1", "1-2-3", "a", "", "1 2", " 1", "1 ",
		"99999999999999999999", "1-99999999999999999999", "2809;683",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		why[0] = '\0';
		b[0] = 0xff;
		assert_false(gs_parse_ports(bad[i], b, why, sizeof why));
		/* one line, saying something, and nothing half-set */
		assert_true(why[0] != '\0');
		assert_null(strchr(why, '\n'));
		assert_int_equal(bits(b), 0);
	}
	assert_false(gs_parse_ports(NULL, b, why, sizeof why));
}

static void test_parse_pids(void **state)
{
	uint32_t pids[4];
	uint32_t n = 0;
	char why[320];
	assert_true(gs_parse_pids("12", pids, &n, 4, why, sizeof why));
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], 12);
	/* appended: --pid is repeatable */
	assert_true(gs_parse_pids("34,2147483647", pids, &n, 4, why, sizeof why));
	assert_int_equal(n, 3);
	assert_int_equal(pids[1], 34);
	assert_int_equal(pids[2], 2147483647u);
	/* a refused list adds nothing, not even its good items */
	static const char *const bad[] = {
		"12,", ",12", "12,,34", ",", "", "0", "2147483648", "-1", "1x", "x", "5 ", "+5", "0x10",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		why[0] = '\0';
		assert_false(gs_parse_pids(bad[i], pids, &n, 4, why, sizeof why));
		assert_int_equal(n, 3);
		assert_true(why[0] != '\0');
	}
	/* full: the list is refused whole */
	assert_false(gs_parse_pids("5,6", pids, &n, 4, why, sizeof why));
	assert_int_equal(n, 3);
	assert_non_null(strstr(why, "too many"));
	assert_true(gs_parse_pids("5", pids, &n, 4, why, sizeof why));
	assert_int_equal(n, 4);
}

/* what the one line says: which item, and why */
static void test_parse_list_messages(void **state)
{
	static uint8_t b[8192];
	char why[320];
	assert_false(gs_parse_ports("40123,", b, why, sizeof why));
	assert_string_equal(why, "an empty item in '40123,' (a comma at the end)");
	assert_false(gs_parse_ports(",40123", b, why, sizeof why));
	assert_string_equal(why, "an empty item in ',40123' (a comma at the start)");
	assert_false(gs_parse_ports("1,,2", b, why, sizeof why));
	assert_string_equal(why, "an empty item in '1,,2' (two commas in a row)");
	assert_false(gs_parse_ports("", b, why, sizeof why));
	assert_string_equal(why, "an empty list");
	assert_false(gs_parse_ports("1,70000,3", b, why, sizeof why));
	assert_non_null(strstr(why, "'70000' in '1,70000,3': not a port"));
	assert_false(gs_parse_ports("9-3", b, why, sizeof why));
	assert_string_equal(why, "'9-3': a range ends below its start");
	/* an item longer than GS_LIST_ITEM_MAX: refused, not cut */
	{
		char longest[GS_LIST_ITEM_MAX + 2];
		memset(longest, '1', sizeof longest - 1);
		longest[sizeof longest - 1] = '\0';
		assert_false(gs_parse_ports(longest, b, why, sizeof why));
		assert_non_null(strstr(why, "too long"));
	}
	/* a short buffer: cut, still terminated */
	assert_false(gs_parse_ports("40123,", b, why, 8));
	assert_int_equal(strlen(why), 7);
}

struct seen {
	char items[8][GS_LIST_ITEM_MAX + 1];
	int n;
};

static const char *collect(void *arg, const char *item)
{
	struct seen *s = arg;
	if (strcmp(item, "no") == 0)
		return "refused here";
	snprintf(s->items[s->n++], sizeof s->items[0], "%s", item);
	return NULL;
}

static void test_parse_list_items(void **state)
{
	struct seen s = { .n = 0 };
	char why[320];
	assert_true(gs_parse_list("a,bc,d-e", collect, &s, why, sizeof why));
	assert_int_equal(s.n, 3);
	assert_string_equal(s.items[0], "a");
	assert_string_equal(s.items[1], "bc");
	assert_string_equal(s.items[2], "d-e");
	s.n = 0;
	assert_false(gs_parse_list("a,no,b", collect, &s, why, sizeof why));
	assert_string_equal(why, "'no' in 'a,no,b': refused here");
	assert_int_equal(s.n, 1); /* stops at the refused item */
	s.n = 0;
	/* an empty item is refused before the callback sees anything after it */
	assert_false(gs_parse_list("a,,b", collect, &s, why, sizeof why));
	assert_int_equal(s.n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_parse_u64),
		UT(test_parse_seconds),
		UT(test_parse_ports),
		UT(test_parse_pids),
		UT(test_parse_list_messages),
		UT(test_parse_list_items),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
