/* SPDX-License-Identifier: BSD-2-Clause */
/* The text forms the outputs share (analysis/text_out.c): aligned columns, a JSON string, a
 * call's status. */
#include "unit.h"
#include "../../analysis/text_out.h"
#include "../../decoders/giop/giop.h"

static char *capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, arg);
	assert_int_equal(fclose(f), 0);
	ut_keep(buf, free);
	return buf;
}

static void json_of(FILE *f, const void *s) { gs_json_str(f, s); }

static void test_json_str(void **state)
{
	assert_string_equal(capture(json_of, "plain"), "\"plain\"");
	assert_string_equal(capture(json_of, "a\"b\\c"), "\"a\\\"b\\\\c\"");
	assert_string_equal(capture(json_of, "\x01\n\x1f"), "\"\\u0001\\u000a\\u001f\"");
	assert_string_equal(capture(json_of, "caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

static const struct gs_text_col cols[3] = {
	{ "name", 6, true, true },
	{ "n", 4, false, false },
	{ "last", 0, true, false },
};

static void rows_of(FILE *f, const void *arg)
{
	const char *const a[3] = { "abcdefghij", "7", "tail" };
	(void)arg;
	gs_text_header(f, cols, 3);
	gs_text_row(f, cols, 3, a);
}

static void test_text_columns(void **state)
{
	/* a left column padded to its width and cut; a right one ends where its width does; the
	 * last left one is not padded */
	assert_string_equal(capture(rows_of, NULL), "name      n last\n"
						     "abcdef    7 tail\n");
	assert_int_equal(gs_text_width(&cols[0]), 6);
	assert_int_equal(gs_text_width(&cols[2]), 4);
}

static void test_call_status(void **state)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	c.outcome = GS_OUT_ONEWAY;
	assert_string_equal(gs_call_status(&c), "ONEWAY");
	c.outcome = GS_OUT_NO_REPLY;
	assert_string_equal(gs_call_status(&c), "NO_REPLY");
	c.outcome = GS_OUT_CANCELLED;
	assert_string_equal(gs_call_status(&c), "CANCELLED");
	c.outcome = GS_OUT_REPLY;
	c.reply_type = GIOP_REPLY;
	assert_string_equal(gs_call_status(&c), "");
	c.flags = GS_CF_STATUS_KNOWN;
	c.status = 0;
	assert_string_equal(gs_call_status(&c), giop_reply_status_name(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_json_str),
		UT(test_text_columns),
		UT(test_call_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
