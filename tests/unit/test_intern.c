/* Interned strings, endpoints as text, the pairs CSV/JSONL rows and statistics
 * groups.  (The command-line parsers are in test_opts.c.) */
#include <errno.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#else
#include <malloc.h>
#endif
#include "unit.h"
#include "../../analysis/endpoint.h"
#include "../../analysis/sink_pairs.h"
#include "../../analysis/stats.h"

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

/* ---- endpoints ----------------------------------------------------------------- */

static void test_endpoint_str(void **state)
{
	struct gs_endpoint ep;
	char buf[GS_ENDPOINT_STRLEN];
	memset(&ep, 0, sizeof ep);
	ep.family = 4;
	ep.addr[0] = 192, ep.addr[1] = 168, ep.addr[2] = 0, ep.addr[3] = 10;
	ep.port = 2809;
	assert_int_equal(gs_endpoint_str(&ep, buf, sizeof buf), strlen("192.168.0.10:2809"));
	assert_string_equal(buf, "192.168.0.10:2809");
	ep.family = 6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:0:0:1:0:0:1", ep.addr), 1);
	ep.port = 65535;
	gs_endpoint_str(&ep, buf, sizeof buf);
	assert_string_equal(buf, "[2001:db8::1:0:0:1]:65535");
	assert_int_equal(inet_pton(AF_INET6, "::1", ep.addr), 1);
	ep.port = 0;
	gs_endpoint_str(&ep, buf, sizeof buf);
	assert_string_equal(buf, "[::1]:0");
	assert_int_equal(inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ep.addr), 1);
	ep.port = 65535;
	assert_int_equal(gs_endpoint_str(&ep, buf, sizeof buf), 47);
	/* a short buffer: cut, terminated, the length written returned */
	assert_int_equal(gs_endpoint_str(&ep, buf, 8), 7);
	assert_string_equal(buf, "[ffff:f");
	gs_addr_str(&ep, buf, sizeof buf);
	assert_string_equal(buf, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

/* ---- pairs CSV / JSONL ---------------------------------------------------------- */

static struct gs_call base_call(void)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	c.client.family = c.server.family = 4;
	c.client.addr[0] = 10, c.client.addr[3] = 1;
	c.server.addr[0] = 10, c.server.addr[3] = 2;
	c.client.port = 40000;
	c.server.port = 2809;
	c.request_id = 4294967295u;
	c.major = 1;
	c.minor = 2;
	c.kind = GS_KIND_REQUEST;
	c.outcome = GS_OUT_REPLY;
	c.reply_type = GIOP_REPLY;
	c.flags = GS_CF_REP_SEEN | GS_CF_STATUS_KNOWN | GS_CF_OP_KNOWN | GS_CF_REQ_DONE | GS_CF_REP_DONE;
	c.status = GIOP_NO_EXCEPTION;
	c.request_bytes = 64;
	c.reply_bytes = 40;
	c.t_request_first = 1700000000000000001LL;
	c.t_request_last = 1700000000000500000LL;
	c.t_reply_first = 1700000000001500000LL;
	c.t_reply_last = 1700000000001999999LL;
	c.retransmits = 2;
	return c;
}

static char *row(const struct gs_intern *t, const struct gs_call *c, enum gs_pairs_format fmt)
{
	static char buf[16384];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	assert_non_null(f);
	gs_pairs_write(f, fmt, t, c);
	fclose(f);
	return buf;
}

static void test_pairs_csv_rows(void **state)
{
	struct gs_intern t;
	struct gs_call c = base_call();
	char hdr[1024];
	FILE *f;
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);
	c.op = gs_intern(&t, "echoString", 10);

	f = fmemopen(hdr, sizeof hdr, "w");
	gs_pairs_header(f, GS_PAIRS_CSV);
	fclose(f);
	assert_string_equal(hdr, "client,server,request_id,giop,kind,operation,oneway,status,request_bytes,"
				 "reply_bytes,t_request_first,t_request_last,t_reply_first,t_reply_last,"
				 "total_us,server_us,retransmits,gap_fills,capture_loss\n");

	assert_string_equal(row(&t, &c, GS_PAIRS_CSV),
			    "10.0.0.1:40000,10.0.0.2:2809,4294967295,1.2,Request,echoString,0,NO_EXCEPTION,64,40,"
			    "1700000000.000000001,1700000000.000500000,1700000000.001500000,1700000000.001999999,"
			    "1999.998,1000.000,2,0,0\n");
	/* gap fills counted; where the capture lost bytes, unknown and flagged */
	c.gap_fills = 3;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1000.000,2,3,0\n"));
	c.flags |= GS_CF_CAPTURE_LOSS;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1000.000,2,,1\n"));
	c.gap_fills = 0;

	/* oneway: empty reply columns */
	c.flags = GS_CF_ONEWAY | GS_CF_OP_KNOWN | GS_CF_REQ_DONE;
	c.outcome = GS_OUT_ONEWAY;
	c.retransmits = 0;
	c.minor = 0;
	assert_string_equal(row(&t, &c, GS_PAIRS_CSV),
			    "10.0.0.1:40000,10.0.0.2:2809,4294967295,1.0,Request,echoString,1,ONEWAY,64,,"
			    "1700000000.000000001,1700000000.000500000,,,,,0,0,0\n");
	c.flags = GS_CF_OP_KNOWN;
	c.outcome = GS_OUT_NO_REPLY;
	assert_string_equal(row(&t, &c, GS_PAIRS_CSV),
			    "10.0.0.1:40000,10.0.0.2:2809,4294967295,1.0,Request,echoString,0,NO_REPLY,64,,"
			    "1700000000.000000001,1700000000.000500000,,,,,0,0,0\n");
	c.outcome = GS_OUT_CANCELLED;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",0,CANCELLED,64,,"));

	/* LocateRequest: no operation; LocateReply status names */
	c = base_call();
	c.kind = GS_KIND_LOCATE_REQUEST;
	c.reply_type = GIOP_LOCATE_REPLY;
	c.status = GIOP_OBJECT_FORWARD;
	c.op = gs_intern(&t, "ignored", 7);
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1.2,LocateRequest,,0,OBJECT_FORWARD,64,40,"));

	/* a reply seen but its status not: empty status */
	c = base_call();
	c.flags &= ~(uint32_t)GS_CF_STATUS_KNOWN;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",Request,,0,,64,40,"));

	/* quoting per RFC 4180 */
	c = base_call();
	c.op = gs_intern(&t, "a,\"b\"", 5);
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",Request,\"a,\"\"b\"\"\",0,"));

	/* the sink formats a negative difference (the engine never emits one: it
	 * bounds the instants by causality, calls.c) */
	c = base_call();
	c.t_reply_first = c.t_request_last - 1500;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1999.998,-1.500,2,0,0\n"));
	c.t_reply_first = c.t_request_last - 500;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1999.998,-0.500,2,0,0\n"));

	/* IPv6 endpoints */
	c = base_call();
	c.client.family = c.server.family = 6;
	assert_int_equal(inet_pton(AF_INET6, "fe80::1", c.client.addr), 1);
	assert_int_equal(inet_pton(AF_INET6, "fe80::2", c.server.addr), 1);
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), "[fe80::1]:40000,[fe80::2]:2809,4294967295,"));
	gs_intern_free(&t);
}

static void test_pairs_jsonl_rows(void **state)
{
	struct gs_intern t;
	struct gs_call c = base_call();
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);
	c.op = gs_intern(&t, "e\"\\\x01", 4);
	assert_string_equal(row(&t, &c, GS_PAIRS_JSONL),
			    "{\"client\":\"10.0.0.1:40000\",\"server\":\"10.0.0.2:2809\",\"request_id\":4294967295,"
			    "\"giop\":\"1.2\",\"kind\":\"Request\",\"operation\":\"e\\\"\\\\\\u0001\",\"oneway\":0,"
			    "\"status\":\"NO_EXCEPTION\",\"request_bytes\":64,\"reply_bytes\":40,"
			    "\"t_request_first\":\"1700000000.000000001\",\"t_request_last\":\"1700000000.000500000\","
			    "\"t_reply_first\":\"1700000000.001500000\",\"t_reply_last\":\"1700000000.001999999\","
			    "\"total_us\":1999.998,\"server_us\":1000.000,\"retransmits\":2,\"gap_fills\":0,"
			    "\"capture_loss\":0}\n");
	c.flags = GS_CF_OP_KNOWN | GS_CF_HAS_PRIORITY | GS_CF_CAPTURE_LOSS;
	c.outcome = GS_OUT_NO_REPLY;
	c.priority = -3;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_JSONL),
			       "\"reply_bytes\":null,\"t_request_first\":\"1700000000.000000001\","
			       "\"t_request_last\":\"1700000000.000500000\",\"t_reply_first\":null,"
			       "\"t_reply_last\":null,\"total_us\":null,\"server_us\":null,\"retransmits\":2,"
			       "\"gap_fills\":null,\"capture_loss\":1,\"priority\":-3}\n"));
	c = base_call();
	c.status = GIOP_SYSTEM_EXCEPTION;
	c.flags |= GS_CF_HAS_EXCEPTION;
	c.exception = gs_intern(&t, "IDL:omg.org/CORBA/TRANSIENT:1.0", 31);
	c.minor_code = 0x4f4d0001;
	c.completion = 1;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_JSONL),
			       "\"retransmits\":2,\"gap_fills\":0,\"capture_loss\":0,"
			       "\"exception\":\"IDL:omg.org/CORBA/TRANSIENT:1.0\","
			       "\"minor_code\":1330446337,\"completed\":1}\n"));
	gs_intern_free(&t);
}

/* The longest operation and exception names, every byte escaped to \u00XX:
 * the whole row is written, closing brace and newline included. */
static void test_pairs_jsonl_longest_row(void **state)
{
	static char big[65536];
	char op[4096], exc[1024];
	struct gs_intern t;
	struct gs_call c = base_call();
	FILE *f;
	size_t n;
	(void)state;
	memset(op, 0x01, sizeof op);
	memset(exc, 0x1f, sizeof exc);
	assert_int_equal(gs_intern_init(&t, 16, 16384), 0);
	c.op = gs_intern(&t, op, sizeof op);
	c.status = GIOP_SYSTEM_EXCEPTION;
	c.flags |= GS_CF_HAS_EXCEPTION | GS_CF_HAS_PRIORITY | GS_CF_CAPTURE_LOSS;
	c.exception = gs_intern(&t, exc, sizeof exc);
	c.priority = -32768;
	memset(big, 0, sizeof big);
	f = fmemopen(big, sizeof big, "w");
	assert_non_null(f);
	gs_pairs_write(f, GS_PAIRS_JSONL, &t, &c);
	fclose(f);
	n = strlen(big);
	assert_true(n > 6 * (sizeof op + sizeof exc));
	assert_string_equal(big + n - 2, "}\n");
	assert_non_null(strstr(big, "\"capture_loss\":1,"));
	assert_non_null(strstr(big, "\"priority\":-32768}\n"));
	gs_intern_free(&t);
}

static void test_call_status_names(void **state)
{
	struct gs_call c = base_call();
	for (uint32_t s = 0; s <= 5; s++) {
		c.status = s;
		c.reply_type = GIOP_REPLY;
		assert_string_equal(gs_call_status(&c), giop_reply_status_name(s));
		c.reply_type = GIOP_LOCATE_REPLY;
		assert_string_equal(gs_call_status(&c), giop_locate_status_name(s));
	}
	c.status = 6;
	assert_string_equal(gs_call_status(&c), "");
	c.outcome = GS_OUT_ONEWAY;
	assert_string_equal(gs_call_status(&c), "ONEWAY");
	c.outcome = GS_OUT_CANCELLED;
	assert_string_equal(gs_call_status(&c), "CANCELLED");
	c.outcome = GS_OUT_NO_REPLY;
	assert_string_equal(gs_call_status(&c), "NO_REPLY");
}

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_intern_basic),
		UT(test_intern_bounds),
		UT(test_intern_many),
		UT(test_endpoint_str),
		UT(test_pairs_csv_rows),
		UT(test_pairs_jsonl_rows),
		UT(test_pairs_jsonl_longest_row),
		UT(test_call_status_names),
		UT(test_stats_groups),
		UT(test_stats_free_releases_other_group),
		UT(test_call_is_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
