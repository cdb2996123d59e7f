/* SPDX-License-Identifier: BSD-2-Clause */
/* Aligned text output (`--pairs --format text`, analysis/sink_pairs.c): a header line
 * naming the columns, its names over the rows' values (left-aligned columns start where
 * their name starts, right-aligned ones end where it ends), from one table. */
#include "unit.h"
#include "../../analysis/sink_pairs.h"
#include "../../decoders/giop/giop.h"

struct tok {
	size_t start, end;
	char s[64];
};

/* the blank-separated words of a line, with their offsets */
static int tokens(const char *line, struct tok *t, int max)
{
	int n = 0;
	size_t i = 0;
	while (line[i] && line[i] != '\n' && n < max) {
		size_t b;
		while (line[i] == ' ')
			i++;
		if (!line[i] || line[i] == '\n')
			break;
		b = i;
		while (line[i] && line[i] != ' ' && line[i] != '\n')
			i++;
		t[n].start = b;
		t[n].end = i;
		snprintf(t[n].s, sizeof t[n].s, "%.*s", (int)(i - b), line + b);
		n++;
	}
	return n;
}

static struct gs_call base_call(void)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	c.client.family = c.server.family = 4;
	c.client.addr[0] = 10, c.client.addr[3] = 1;
	c.server.addr[0] = 10, c.server.addr[3] = 2;
	c.client.port = 40000;
	c.server.port = 2809;
	c.request_id = 7;
	c.major = 1;
	c.minor = 2;
	c.kind = GS_KIND_REQUEST;
	c.outcome = GS_OUT_REPLY;
	c.reply_type = GIOP_REPLY;
	c.flags = GS_CF_REP_SEEN | GS_CF_STATUS_KNOWN | GS_CF_OP_KNOWN | GS_CF_REQ_DONE | GS_CF_REP_DONE;
	c.status = GIOP_NO_EXCEPTION;
	c.t_request_first = 1700000000000000001LL;
	c.t_request_last = 1700000000000500000LL;
	c.t_reply_first = 1700000000001500000LL;
	c.t_reply_last = 1700000000001999999LL;
	return c;
}

static void text_row(const struct gs_intern *t, const struct gs_call *c, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");
	assert_non_null(f);
	gs_pairs_write_text(f, t, c);
	fclose(f);
}

static void assert_under_header(const char *hdr, const char *row)
{
	struct tok h[16], r[16];
	int nh = tokens(hdr, h, 16), nr = tokens(row, r, 16);
	assert_int_equal(nr, nh);
	for (int i = 0; i < nh; i++) {
		/* left-aligned: same start; right-aligned: same end */
		if (r[i].start != h[i].start && r[i].end != h[i].end)
			fail_msg("column %s: value '%s' at %zu..%zu, name at %zu..%zu\n%s%s", h[i].s, r[i].s,
				 r[i].start, r[i].end, h[i].start, h[i].end, hdr, row);
	}
}

static void test_pairs_text_header(void **state)
{
	static const char *const names[] = { "client", "server", "request_id", "kind", "operation",
					     "status", "total_us", "server_us" };
	struct tok h[16];
	char hdr[512];
	FILE *f = fmemopen(hdr, sizeof hdr, "w");
	int n;
	gs_pairs_header_text(f);
	fclose(f);
	assert_int_equal(hdr[strlen(hdr) - 1], '\n');
	n = tokens(hdr, h, 16);
	assert_int_equal(n, (int)(sizeof names / sizeof *names));
	for (int i = 0; i < n; i++)
		assert_string_equal(h[i].s, names[i]);
}

static void test_pairs_text_rows_align(void **state)
{
	struct gs_intern t;
	struct gs_call c = base_call();
	char hdr[512], row[512];
	FILE *f = fmemopen(hdr, sizeof hdr, "w");
	gs_pairs_header_text(f);
	fclose(f);
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);

	c.op = gs_intern(&t, "echoString", 10);
	text_row(&t, &c, row, sizeof row);
	assert_under_header(hdr, row);
	assert_non_null(strstr(row, " 1999.998 "));

	/* a long operation name is cut to its column: the rest stays aligned */
	c.op = gs_intern(&t, "aVeryLongOperationNameIndeed_x", 30);
	c.request_id = 4294967295u;
	c.status = GIOP_USER_EXCEPTION;
	text_row(&t, &c, row, sizeof row);
	assert_under_header(hdr, row);
	assert_non_null(strstr(row, " aVeryLongOperationName "));

	/* no reply: dashes in the time columns */
	c.flags = GS_CF_OP_KNOWN | GS_CF_REQ_DONE;
	c.outcome = GS_OUT_NO_REPLY;
	text_row(&t, &c, row, sizeof row);
	assert_under_header(hdr, row);

	/* a LocateRequest has no operation: its column is blank, so compare with the
	 * operation-less header */
	c = base_call();
	c.kind = GS_KIND_LOCATE_REQUEST;
	c.reply_type = GIOP_LOCATE_REPLY;
	c.status = GIOP_OBJECT_HERE;
	text_row(&t, &c, row, sizeof row);
	{
		struct tok h[16], r[16];
		int nh = tokens(hdr, h, 16), nr = tokens(row, r, 16);
		assert_int_equal(nr, nh - 1);
		assert_string_equal(r[3].s, "loc");
		assert_string_equal(r[4].s, "OBJECT_HERE");
		assert_int_equal(r[4].start, h[5].start);
	}
	gs_intern_free(&t);
}

/* the generic writer: widths at least the name's; cut only where asked */
static void test_text_cols_widths(void **state)
{
	static const struct gs_text_col cols[] = {
		{ "a", 4, true, false },
		{ "longname", 2, false, false },
		{ "cut", 3, true, true },
		{ "end", 5, false, false },
	};
	const char *v[] = { "xy", "7", "abcdef", "9" };
	char buf[256];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	gs_text_header(f, cols, 4);
	gs_text_row(f, cols, 4, v);
	v[0] = "toolong";
	gs_text_row(f, cols, 4, v);
	fclose(f);
	assert_string_equal(buf, "a    longname cut   end\n"
				 "xy          7 abc     9\n"
				 "toolong        7 abc     9\n");
	assert_int_equal(gs_text_width(&cols[1]), 8);
	assert_int_equal(gs_text_width(&cols[3]), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_pairs_text_header),
		UT(test_pairs_text_rows_align),
		UT(test_text_cols_widths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
