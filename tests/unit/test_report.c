/* SPDX-License-Identifier: BSD-2-Clause */
/* The output side of the tail analysis: the trace (JSON), the HTML report,
 * the Prometheus text and its HTTP responder.  (merge's matching: test_merge.c.) */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "unit.h"
#include "call_fixtures.h"
#include "../../analysis/report.h"
#include "../../analysis/report_impl.h"
#include "../../analysis/report_prom.h"
#include "../../analysis/sink_trace.h"
#include "../../analysis/stats.h"
/* The responder (probe/metrics.c, from libgiopscope-probe.a): its socket
 * handling is tested too. */
#include "../../probe/metrics.h"

/* ======================================================================== */
/* Helpers                                                                   */
/* ======================================================================== */

/* A memory stream whose buffer the teardown frees. */
struct mem {
	char *buf;
	size_t len;
	FILE *f;
};

static void mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
}

/* Closes the stream; the text stays in m->buf (NUL-terminated). */
static void mem_close(struct mem *m)
{
	assert_int_equal(fclose(m->f), 0);
	m->f = NULL;
	ut_keep(m->buf, free);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, k = strlen(needle);
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += k)
		n++;
	return n;
}

/* ---- a small JSON checker (RFC 8259 grammar, depth bounded) ---------------- */

struct js {
	const char *p, *end;
	int depth;
};

static bool js_value(struct js *j);

static void js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool js_lit(struct js *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return false;
	j->p += n;
	return true;
}

static bool js_string(struct js *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	for (j->p++; j->p < j->end; j->p++) {
		unsigned char ch = (unsigned char)*j->p;
		if (ch == '"') {
			j->p++;
			return true;
		}
		if (ch < 0x20 || ch >= 0x80) /* our writers escape everything else */
			return false;
		if (ch == '\\') {
			j->p++;
			if (j->p >= j->end)
				return false;
			if (*j->p == 'u') {
				for (int k = 0; k < 4; k++)
					if (++j->p >= j->end || !isxdigit((unsigned char)*j->p))
						return false;
			} else if (!strchr("\"\\/bfnrt", *j->p)) {
				return false;
			}
		}
	}
	return false;
}

static bool js_number(struct js *j)
{
	const char *s = j->p;
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || !isdigit((unsigned char)*j->p))
		return false;
	if (*j->p == '0')
		j->p++;
	else
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || !isdigit((unsigned char)*j->p))
			return false;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || !isdigit((unsigned char)*j->p))
			return false;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	}
	return j->p > s;
}

static bool js_container(struct js *j, char open, char close)
{
	bool first = true;
	if (++j->depth > 64)
		return false;
	j->p++; /* the opening bracket */
	js_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		if (!first) {
			js_ws(j);
			if (j->p < j->end && *j->p == close) {
				j->p++;
				j->depth--;
				return true;
			}
			if (j->p >= j->end || *j->p != ',')
				return false;
			j->p++;
		}
		first = false;
		js_ws(j);
		if (open == '{') {
			if (!js_string(j))
				return false;
			js_ws(j);
			if (j->p >= j->end || *j->p != ':')
				return false;
			j->p++;
		}
		if (!js_value(j))
			return false;
	}
}

static bool js_value(struct js *j)
{
	js_ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{': return js_container(j, '{', '}');
	case '[': return js_container(j, '[', ']');
	case '"': return js_string(j);
	case 't': return js_lit(j, "true");
	case 'f': return js_lit(j, "false");
	case 'n': return js_lit(j, "null");
	default: return js_number(j);
	}
}

static bool json_valid(const char *s, size_t n)
{
	struct js j = { s, s + n, 0 };
	if (!js_value(&j))
		return false;
	js_ws(&j);
	return j.p == j.end;
}

static void test_json_checker(void **state)
{
	static const char *const good[] = { "{}", "[]", "{\"a\":[1,-2.5e3,true,null,\"x\\u00e9\"]}", " 0 " };
	static const char *const bad[] = { "{", "[1,]", "{\"a\" 1}", "01", "\"\x01\"", "{} x", "[1.]" };
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		assert_true(json_valid(good[i], strlen(good[i])));
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_false(json_valid(bad[i], strlen(bad[i])));
}

/* ======================================================================== */
/* The trace                                                                 */
/* ======================================================================== */

static void ut_trace_close(void *p) { gs_trace_close(p); }

static struct gs_trace *trace_open(struct mem *m, const struct gs_trace_config *cfg)
{
	struct gs_trace *t = NULL;
	mem_open(m);
	assert_int_equal(gs_trace_open_stream(&t, m->f, cfg), 0);
	ut_keep(t, ut_trace_close);
	return t;
}

static void trace_close(struct gs_trace *t, struct mem *m)
{
	ut_forget(t);
	assert_int_equal(gs_trace_close(t), 0);
	mem_close(m);
	assert_true(json_valid(m->buf, m->len));
}

static void test_trace_spans_and_lanes(void **state)
{
	struct mem m;
	struct gs_trace *t = trace_open(&m, NULL);
	struct gs_trace_info info;
	struct gs_call a = answered(40000, 2, T0 + 10 * US, 1 * US, 8 * US, 1 * US);  /* 10..20 us */
	struct gs_call b = answered(40000, 4, T0 + 15 * US, 1 * US, 8 * US, 1 * US);  /* 15..25: overlaps a */
	struct gs_call c = answered(40000, 6, T0 + 21 * US, 1 * US, 2 * US, 1 * US);  /* 21..25: after a */
	struct gs_call d = answered(40001, 2, T0 + 12 * US, 1 * US, 2 * US, 1 * US);  /* another connection */
	struct gs_call o = oneway(40000, 8, T0 + 30 * US);

	gs_trace_add_named(t, "echoString", 10, &a);
	gs_trace_add_named(t, "slow", 4, &b);
	gs_trace_add_named(t, "echoString", 10, &c);
	gs_trace_add_named(t, "echoString", 10, &d);
	gs_trace_add_named(t, "fire", 4, &o);
	gs_trace_get_info(t, &info);
	assert_int_equal(info.events, 5);
	assert_int_equal(info.conns, 2);
	assert_int_equal(info.servers, 1);
	assert_int_equal(info.lanes_over_limit, 0);
	assert_int_equal(info.origin_ns, T0 - T0 % 1000000000);
	trace_close(t, &m);

	assert_non_null(strstr(m.buf, "{\"traceEvents\":["));
	assert_non_null(strstr(m.buf, "\"displayTimeUnit\":\"ns\""));
	/* one process per server, one track per connection, a second lane for b */
	assert_int_equal(count(m.buf, "\"name\":\"process_name\""), 1);
	assert_non_null(strstr(m.buf, "\"args\":{\"name\":\"server 10.0.0.2:2809\"}"));
	assert_int_equal(count(m.buf, "\"name\":\"thread_name\""), 3);
	assert_non_null(strstr(m.buf, "\"args\":{\"name\":\"10.0.0.1:40000 -> 10.0.0.2:2809\"}"));
	assert_non_null(strstr(m.buf, "\"args\":{\"name\":\"10.0.0.1:40000 -> 10.0.0.2:2809 #2\"}"));
	/* a: lane 1 (tid 1); b: lane 2 (tid 2); c after a ended: tid 1 again; d: tid 3 */
	assert_non_null(strstr(m.buf, "\"name\":\"echoString\",\"pid\":1,\"tid\":1,\"ts\":10.000,\"dur\":10.000"));
	assert_non_null(strstr(m.buf, "\"name\":\"slow\",\"pid\":1,\"tid\":2,\"ts\":15.000,\"dur\":10.000"));
	assert_non_null(strstr(m.buf, "\"name\":\"echoString\",\"pid\":1,\"tid\":1,\"ts\":21.000,\"dur\":4.000"));
	assert_non_null(strstr(m.buf, "\"name\":\"echoString\",\"pid\":1,\"tid\":3,\"ts\":12.000"));
	/* args */
	assert_non_null(strstr(m.buf, "\"args\":{\"request_id\":2,\"status\":\"NO_EXCEPTION\",\"total_us\":10.000,"
				      "\"server_us\":8.000,\"request_bytes\":100,\"reply_bytes\":60"));
	/* the oneway has no duration: an instant with its status */
	assert_non_null(strstr(m.buf, "{\"ph\":\"i\",\"cat\":\"giop\",\"name\":\"fire\""));
	assert_non_null(strstr(m.buf, "\"status\":\"ONEWAY\""));
	assert_int_equal(count(m.buf, "\"ph\":\"X\""), 4);
}

static void test_trace_escapes_and_bounds(void **state)
{
	struct mem m;
	struct gs_trace_config cfg;
	struct gs_trace *t;
	struct gs_trace_info info;
	static const char nasty[] = "a\"b\\c\n\x01\xff";

	gs_trace_config_default(&cfg);
	cfg.max_conns = 2;
	cfg.max_lanes = 2;
	t = trace_open(&m, &cfg);
	for (uint16_t p = 0; p < 3; p++) {
		struct gs_call c = answered((uint16_t)(41000 + p), 2, T0 + p * US, US, US, US);
		gs_trace_add_named(t, nasty, sizeof nasty - 1, &c);
	}
	/* three overlapping calls on connection 1: the third finds no free lane */
	for (uint32_t k = 0; k < 3; k++) {
		struct gs_call c = answered(41000, 10 + k, T0 + 100 * US, 50 * US, 50 * US, 50 * US);
		gs_trace_add(t, NULL, &c);
	}
	gs_trace_get_info(t, &info);
	assert_int_equal(info.conns, 2);
	assert_int_equal(info.conns_over_limit, 1);
	assert_int_equal(info.lanes_over_limit, 1);
	trace_close(t, &m);
	assert_non_null(strstr(m.buf, "\"name\":\"a\\\"b\\\\c\\u000a\\u0001\\u00ff\""));
	assert_non_null(strstr(m.buf, "(other connections)"));
	assert_non_null(strstr(m.buf, "\"name\":\"(unknown)\""));
	assert_non_null(strstr(m.buf, "\"connections_over_limit\":1"));
	assert_non_null(strstr(m.buf, "\"calls_not_drawn_lanes_full\":1"));
}

static void test_trace_empty_and_file(void **state)
{
	struct mem m;
	struct gs_trace *t = trace_open(&m, NULL);
	char path[] = "/tmp/gs-test-trace-XXXXXX";
	int fd;
	trace_close(t, &m);
	/* a file: written through O_NOFOLLOW, valid once closed */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(gs_trace_open(&t, path, NULL), 0);
	{
		struct gs_call c = answered(40000, 2, T0, US, US, US);
		gs_trace_add_named(t, "x", 1, &c);
	}
	assert_int_equal(gs_trace_close(t), 0);
	{
		FILE *f = fopen(path, "r");
		char buf[4096];
		size_t n;
		assert_non_null(f);
		n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		assert_true(json_valid(buf, n));
	}
	unlink(path);
}

/* ======================================================================== */
/* The HTML report                                                            */
/* ======================================================================== */

static void ut_report_free(void *p) { gs_report_free(p); }

static struct gs_report *report_new(const struct gs_report_config *cfg)
{
	struct gs_report *r = NULL;
	assert_int_equal(gs_report_new(&r, cfg), 0);
	ut_keep(r, ut_report_free);
	return r;
}

static void report_free(struct gs_report *r)
{
	ut_forget(r);
	gs_report_free(r);
}

static char *report_html(struct gs_report *r, const char *title, const struct gs_counters *cnt)
{
	struct mem m;
	mem_open(&m);
	assert_int_equal(gs_report_write_stream(r, m.f, title, cnt), 0);
	mem_close(&m);
	return m.buf;
}

static void test_report_self_contained(void **state)
{
	struct gs_report *r = report_new(NULL);
	struct gs_counters cnt;
	struct gs_report_info info;
	char *html;

	memset(&cnt, 0, sizeof cnt);
	cnt.packets = 1234;
	cnt.calls = 300;
	for (uint32_t i = 0; i < 300; i++) {
		/* 20..~2000 us, one in ten slow on the far side */
		int64_t srv = (i % 10 == 9) ? 2000 * US : (int64_t)(20 + i % 7) * US;
		struct gs_call c = answered((uint16_t)(40000 + i % 3), 2 * i, T0 + (int64_t)i * MS, US, srv, US);
		if (i % 50 == 0)
			c.status = GIOP_SYSTEM_EXCEPTION;
		gs_report_add_named(r, i % 2 ? "echoString" : "<script>alert(1)</script>", i % 2 ? 10 : 25, &c, NULL);
	}
	{
		struct gs_call o = oneway(40000, 9999, T0 + 5 * MS);
		gs_report_add_named(r, "fire", 4, &o, NULL);
	}
	gs_report_note(r, "a note with <b>markup</b> & more");
	gs_report_get_info(r, &info);
	assert_int_equal(info.calls, 301);
	assert_int_equal(info.answered, 300);
	assert_int_equal(info.ops, 3);
	assert_int_equal(info.slow_kept, 20);
	assert_int_equal(info.samples_kept, 300);
	html = report_html(r, "test & <title>", &cnt);

	assert_true(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	assert_non_null(strstr(html, "</html>"));
	/* self-contained: nothing fetched, no script at all */
	assert_null(strstr(html, "http://"));
	assert_null(strstr(html, "https://"));
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<link"));
	assert_null(strstr(html, "src="));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(html, "<title>test &amp; &lt;title&gt;</title>"));
	assert_non_null(strstr(html, "a note with &lt;b&gt;markup&lt;/b&gt; &amp; more"));
	/* the plots are there and not empty */
	assert_int_equal(count(html, "<svg class=\"plot hist\""), 4); /* (all) + 3 operations */
	assert_int_equal(count(html, "<svg class=\"plot cdf\""), 4);
	assert_int_equal(count(html, "<svg class=\"plot time\""), 1);
	assert_int_equal(count(html, "<svg class=\"plot rate\""), 1);
	assert_int_equal(count(html, "<svg class=\"plot slow\""), 1);
	assert_true(count(html, "class=\"bar total\"") >= 6);
	assert_true(count(html, "<path class=\"cdf total\"") == 3); /* fire has no answered call */
	assert_int_equal(count(html, "<circle class=\"pt\""), 300);
	assert_true(count(html, "class=\"seg seg-") >= 20);
	assert_non_null(strstr(html, "no answered calls"));
	/* counters listed when non-zero */
	assert_non_null(strstr(html, "<td class=\"l\">packets</td><td>1234</td>"));
	assert_int_equal(count(html, "<svg"), count(html, "</svg>"));
}

static void test_report_bounds(void **state)
{
	struct gs_report_config cfg;
	struct gs_report *r;
	struct gs_report_info info;
	char *html;
	gs_report_config_default(&cfg);
	cfg.max_ops = 2;
	cfg.slowest = 3;
	cfg.samples = 50;
	cfg.time_bins = 10;
	cfg.first_bin_ns = MS;
	r = report_new(&cfg);
	for (uint32_t i = 0; i < 1000; i++) {
		/* over 10 s: the bins widen to at least 1 s */
		char op[16];
		int n = snprintf(op, sizeof op, "op%u", i % 5);
		struct gs_call c = answered(40000, i, T0 + (int64_t)i * 10 * MS, US, (int64_t)(i + 1) * US, US);
		gs_report_add_named(r, op, (size_t)n, &c, NULL);
	}
	gs_report_get_info(r, &info);
	assert_int_equal(info.ops, 2);
	assert_int_equal(info.other_calls, 600);
	assert_int_equal(info.slow_kept, 3);
	assert_int_equal(info.samples_kept, 50);
	assert_true(info.bin_width_ns >= 1000 * MS);
	assert_true(info.bins_used <= 10);
	html = report_html(r, "bounds", NULL);
	/* the three slowest are the last three calls, slowest first */
	{
		/* op2..op4 are beyond max_ops: (other) */
		const char *a = strstr(html, "1. (other) #999"), *b = strstr(html, "2. (other) #998");
		const char *c = strstr(html, "3. (other) #997");
		assert_non_null(a);
		assert_non_null(b);
		assert_non_null(c);
		assert_true(a < b && b < c);
		assert_null(strstr(html, "4. "));
	}
	assert_non_null(strstr(html, "(other)"));
	report_free(r);
}

static void test_report_split(void **state)
{
	struct gs_report *r = report_new(NULL);
	struct gs_report_split sp;
	struct gs_call c = answered(40000, 2, T0, 10 * US, 500 * US, 10 * US);
	char *html;
	gs_report_split_unknown(&sp);
	sp.network_ns = 300 * US;
	sp.server_host_ns = 200 * US;
	sp.server_proc_ns = 150 * US;
	gs_report_add_split(r, NULL, &c, &sp);
	html = report_html(r, "split", NULL);
	/* network 300, host 50 + process 150, and 20 us of bytes passing the server's host */
	assert_non_null(strstr(html, "class=\"seg seg-net\""));
	assert_non_null(strstr(html, "<title>network (merge: client total - server total): 300.0 us</title>"));
	assert_non_null(strstr(html, "server process (ORB + servant): 150.0 us"));
	assert_non_null(strstr(html, "server side&#39;s server_us): 50.0 us"));
	assert_non_null(strstr(html, "passing the server&#39;s host: 20.0 us"));
	assert_null(strstr(html, "side's"));
	assert_non_null(strstr(html, "network_us"));
	report_free(r);
}

/* attach --sched / --orb: per operation, the mean split of server_process_us */
static void test_report_where(void **state)
{
	struct gs_report *r = report_new(NULL);
	struct gs_report_split sp;
	struct gs_call c = answered(40000, 2, T0, 10 * US, 500 * US, 10 * US);
	char *html;
	gs_report_split_unknown(&sp);
	html = NULL;
	/* without the figures: no such section */
	gs_report_add_named(r, "echo", 4, &c, &sp);
	html = report_html(r, "where", NULL);
	assert_null(strstr(html, "Where the server"));
	report_free(r);
	r = report_new(NULL);
	sp.sched_ns[0] = 100 * US, sp.sched_ns[1] = 50 * US, sp.sched_ns[2] = 250 * US;
	sp.orb_ns[0] = 20 * US, sp.orb_ns[1] = 370 * US, sp.orb_ns[2] = 10 * US;
	gs_report_add_named(r, "echo", 4, &c, &sp);
	sp.sched_ns[0] = 300 * US, sp.sched_ns[1] = 150 * US, sp.sched_ns[2] = 350 * US;
	sp.orb_ns[0] = 40 * US, sp.orb_ns[1] = 740 * US, sp.orb_ns[2] = 20 * US;
	gs_report_add_named(r, "echo", 4, &c, &sp);
	html = report_html(r, "where", NULL);
	assert_non_null(strstr(html, "<h2>Where the server&#39;s time went</h2>"));
	/* the means of the two calls */
	assert_non_null(strstr(html, "class=\"seg seg-oncpu\""));
	assert_non_null(strstr(html, "<title>on CPU: 200.0 us</title>"));
	assert_non_null(strstr(html, "<title>runnable, in the run queue: 100.0 us</title>"));
	assert_non_null(strstr(html, "<title>blocked (off CPU): 300.0 us</title>"));
	assert_non_null(strstr(html, "<title>ORB in (t4 -&gt; upcall start): 30.0 us</title>"));
	assert_non_null(strstr(html, "<title>servant (upcall): 555.0 us</title>"));
	assert_non_null(strstr(html, "<title>ORB out (upcall end -&gt; t5): 15.0 us</title>"));
	assert_non_null(strstr(html, "echo (sched, 2)"));
	assert_int_equal(count(html, "<svg"), count(html, "</svg>"));
	report_free(r);
}

static void test_report_empty(void **state)
{
	struct gs_report *r = report_new(NULL);
	char *html = report_html(r, NULL, NULL);
	assert_non_null(strstr(html, "No calls."));
	assert_int_equal(count(html, "<svg"), count(html, "</svg>"));
	assert_null(strstr(html, "http"));
	report_free(r);
}

/* One call, one error: "1 call", "1 error", "The slowest call" -- never "1 calls" */
static void test_report_plurals(void **state)
{
	struct gs_report *r = report_new(NULL);
	struct gs_call c = answered(40000, 2, T0, US, 50 * US, US);
	char *html;
	c.status = GIOP_SYSTEM_EXCEPTION;
	gs_report_add_named(r, "echoString", 10, &c, NULL);
	html = report_html(r, "plurals", NULL);
	assert_non_null(strstr(html, ">1 call (1 answered, 1 error) starting between"));
	assert_non_null(strstr(html, ">1 call, 1 answered, 1 error</div>"));
	assert_non_null(strstr(html, "<title>1 call, 1 error</title>"));
	assert_non_null(strstr(html, "<h2>The slowest call</h2>"));
	assert_non_null(strstr(html, "1 of 1 answered call drawn"));
	assert_null(strstr(html, " 1 calls"));
	assert_null(strstr(html, " 1 errors"));
	assert_null(strstr(html, ">1 calls"));
	assert_null(strstr(html, ">1 errors"));
	report_free(r);

	/* two of each: plural again */
	r = report_new(NULL);
	gs_report_add_named(r, "echoString", 10, &c, NULL);
	c.t_request_first += MS;
	c.t_request_last += MS;
	c.t_reply_first += MS;
	c.t_reply_last += MS;
	gs_report_add_named(r, "echoString", 10, &c, NULL);
	html = report_html(r, "plurals", NULL);
	assert_non_null(strstr(html, ">2 calls (2 answered, 2 errors) starting between"));
	assert_non_null(strstr(html, "<h2>The 2 slowest calls</h2>"));
	report_free(r);
}

/* Calls that come later in time first (read later.pcap earlier.pcap): the time
 * bins start at the earliest call and each call is in its own bin, not all of
 * the earlier ones piled into the first. */
static void test_report_out_of_order_range(void **state)
{
	struct gs_report_config cfg;
	struct gs_report *r;
	struct gs_report_info info;
	const int64_t later = T0 + 10000 * MS, earlier = T0;
	gs_report_config_default(&cfg);
	cfg.time_bins = 20;
	cfg.first_bin_ns = MS;
	r = report_new(&cfg);
	/* "later.pcap": 100 calls over 1 s from T0 + 10 s */
	for (uint32_t i = 0; i < 100; i++) {
		struct gs_call c = answered(40000, 2 * i, later + (int64_t)i * 10 * MS, US, 20 * US, US);
		gs_report_add_named(r, "op", 2, &c, NULL);
	}
	/* "earlier.pcap": 50 calls over 5 s from T0 */
	for (uint32_t i = 0; i < 50; i++) {
		struct gs_call c = answered(40001, 2 * i, earlier + (int64_t)i * 100 * MS, US, 20 * US, US);
		gs_report_add_named(r, "op", 2, &c, NULL);
	}
	gs_report_get_info(r, &info);
	assert_int_equal(info.calls, 150);
	assert_int_equal(info.before_origin, 0);
	assert_int_equal(info.t_first_ns, earlier);
	assert_int_equal(info.t_last_ns, later + 99 * 10 * MS);
	assert_true(info.origin_ns <= earlier);
	assert_true(info.origin_ns > earlier - info.bin_width_ns);
	assert_true(info.origin_ns + (int64_t)info.bins_used * info.bin_width_ns > info.t_last_ns);
	assert_true(info.bins_used <= 20);
	{
		/* per bin, as many calls as began in it */
		uint32_t want[20] = { 0 }, total = 0;
		for (uint32_t i = 0; i < 100; i++)
			want[(later + (int64_t)i * 10 * MS - info.origin_ns) / info.bin_width_ns]++;
		for (uint32_t i = 0; i < 50; i++)
			want[(earlier + (int64_t)i * 100 * MS - info.origin_ns) / info.bin_width_ns]++;
		for (uint32_t i = 0; i < 20; i++) {
			assert_int_equal(r->bins[i].calls, want[i]);
			total += r->bins[i].calls;
		}
		assert_int_equal(total, 150);
		/* the earlier calls are not piled into the first bin */
		assert_true(r->bins[0].calls < 50);
	}
	report_free(r);

	/* the same calls in time order: the same bins */
	{
		struct gs_report *o = report_new(&cfg);
		struct gs_report_info oi;
		for (uint32_t i = 0; i < 50; i++) {
			struct gs_call c = answered(40001, 2 * i, earlier + (int64_t)i * 100 * MS, US, 20 * US, US);
			gs_report_add_named(o, "op", 2, &c, NULL);
		}
		for (uint32_t i = 0; i < 100; i++) {
			struct gs_call c = answered(40000, 2 * i, later + (int64_t)i * 10 * MS, US, 20 * US, US);
			gs_report_add_named(o, "op", 2, &c, NULL);
		}
		gs_report_get_info(o, &oi);
		assert_int_equal(oi.before_origin, 0);
		assert_true(oi.origin_ns <= earlier);
		assert_true(oi.origin_ns + (int64_t)oi.bins_used * oi.bin_width_ns > oi.t_last_ns);
		report_free(o);
	}
}

/* ======================================================================== */
/* Prometheus text                                                             */
/* ======================================================================== */

static bool metric_name(const char **p)
{
	const char *s = *p;
	if (!(isalpha((unsigned char)*s) || *s == '_' || *s == ':'))
		return false;
	while (isalnum((unsigned char)*s) || *s == '_' || *s == ':')
		s++;
	*p = s;
	return true;
}

/* One line of the text format 0.0.4: comment, or name{labels} value. */
static bool prom_line(const char *line)
{
	const char *p = line;
	if (*p == '#') {
		if (strncmp(p, "# HELP ", 7) == 0) {
			p += 7;
			return metric_name(&p) && *p == ' ';
		}
		if (strncmp(p, "# TYPE ", 7) == 0) {
			p += 7;
			if (!metric_name(&p) || *p++ != ' ')
				return false;
			return !strcmp(p, "counter") || !strcmp(p, "gauge") || !strcmp(p, "histogram");
		}
		return false;
	}
	if (!metric_name(&p))
		return false;
	if (*p == '{') {
		p++;
		for (;;) {
			if (!metric_name(&p) || *p++ != '=' || *p++ != '"')
				return false;
			while (*p && *p != '"') {
				if (*p == '\\') {
					p++;
					if (*p != '\\' && *p != '"' && *p != 'n')
						return false;
				}
				p++;
			}
			if (*p++ != '"')
				return false;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p++ != '}')
				return false;
			break;
		}
	}
	if (*p++ != ' ')
		return false;
	if (!strcmp(p, "+Inf") || !strcmp(p, "-Inf") || !strcmp(p, "NaN"))
		return true;
	{
		char *end;
		strtod(p, &end);
		return end != p && *end == '\0';
	}
}

/* The value of the sample line `prefix VALUE` (the first at or after text). */
static uint64_t sample_value(const char *text, const char *prefix)
{
	size_t k = strlen(prefix);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, k) == 0 && p[k] == ' ')
			return strtoull(p + k + 1, NULL, 10);
	fail_msg("no sample %s", prefix);
	return 0;
}

static void ut_stats_free(void *p) { gs_stats_free(p); free(p); }

static void test_prom_text(void **state)
{
	struct gs_stats *st = calloc(1, sizeof *st);
	struct gs_intern strings;
	struct gs_counters cnt;
	struct gs_prom_input in;
	struct mem m;
	uint32_t op_echo, op_odd;
	size_t lines = 0;

	assert_non_null(st);
	assert_int_equal(gs_stats_init(st, 16, 1024), 0);
	ut_keep(st, ut_stats_free);
	assert_int_equal(gs_intern_init(&strings, 64, 4096), 0);
	op_echo = gs_intern(&strings, "echoString", 10);
	op_odd = gs_intern(&strings, "we\"ird\\op", 9);
	for (uint32_t i = 0; i < 100; i++) {
		/* total i+3.5 us: 3.5..102.5 us, away from the bucket bounds (a value
		 * within 0.8% below a bound may count in the next bucket) */
		struct gs_call c = answered(40000, i, T0 + i * MS, US, (int64_t)(i + 1) * US + 500, US);
		c.op = i % 4 ? op_echo : op_odd;
		gs_stats_add_call(st, &strings, &c);
	}
	{
		struct gs_call o = oneway(40000, 500, T0);
		o.op = op_echo;
		gs_stats_add_call(st, &strings, &o);
	}
	memset(&cnt, 0, sizeof cnt);
	cnt.packets = 777;
	cnt.retransmits = 3;
	memset(&in, 0, sizeof in);
	in.stats = st;
	in.counters = &cnt;
	in.strings = &strings;
	in.kernel_drops = 5;
	in.open_calls = 2;
	in.last_ts = T0 + 123;
	mem_open(&m);
	gs_prom_write(m.f, &in);
	mem_close(&m);
	gs_intern_free(&strings);

	/* every line follows the format */
	for (char *line = m.buf, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		*nl = '\0';
		if (!prom_line(line))
			fail_msg("not Prometheus text: %s", line);
		*nl = '\n';
		lines++;
	}
	assert_true(lines > 100);
	assert_non_null(strstr(m.buf, "# TYPE giopscope_call_duration_seconds histogram\n"));
	assert_non_null(strstr(m.buf, "operation=\"we\\\"ird\\\\op\""));
	/* counts: 75 echoString answered + 1 oneway; 25 of the other */
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_count{operation=\"echoString\"}"), 75);
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_bucket{operation=\"echoString\",le=\"+Inf\"}"), 75);
	assert_int_equal(sample_value(m.buf, "giopscope_calls_total{operation=\"echoString\"}"), 76);
	assert_int_equal(sample_value(m.buf, "giopscope_calls_oneway_total{operation=\"echoString\"}"), 1);
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_count{operation=\"we\\\"ird\\\\op\"}"), 25);
	/* echoString is i % 4 != 0: below 10 us i = 1, 2, 3, 5, 6; below 100 us i <= 96 */
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_bucket{operation=\"echoString\",le=\"0.00001\"}"), 5);
	assert_int_equal(sample_value(m.buf, "giopscope_call_duration_seconds_bucket{operation=\"echoString\",le=\"0.0001\"}"), 72);
	assert_int_equal(sample_value(m.buf, "giopscope_packets_total"), 777);
	assert_int_equal(sample_value(m.buf, "giopscope_retransmissions_total"), 3);
	assert_int_equal(sample_value(m.buf, "giopscope_dropped_packets_total{where=\"kernel\"}"), 5);
	assert_int_equal(sample_value(m.buf, "giopscope_open_calls"), 2);
	/* buckets never decrease */
	{
		uint64_t prev = 0;
		const char *p = m.buf;
		const char *key = "giopscope_server_duration_seconds_bucket{operation=\"echoString\"";
		while ((p = strstr(p, key)) != NULL) {
			uint64_t v = strtoull(strchr(p, ' ') + 1, NULL, 10);
			assert_true(v >= prev);
			prev = v;
			p += strlen(key);
		}
		assert_int_equal(prev, 75);
	}
}

/* ======================================================================== */
/* The /metrics responder                                                      */
/* ======================================================================== */

static void test_metrics_refuses(void **state)
{
	static const char *const bad[] = { "localhost:9464", "127.0.0.1", "::1:9464", "[::1]", "127.0.0.1:99999",
					   "127.0.0.1:http", ":9464", "[::1]:", "1.2.3.4.5:80", "" };
	char err[256];
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct gs_metrics *mt = NULL;
		err[0] = '\0';
		assert_int_equal(gs_metrics_open(&mt, bad[i], err, sizeof err), EINVAL);
		assert_null(mt);
		assert_true(strlen(err) > 10);
	}
}

static void ut_metrics_close(void *p) { gs_metrics_close(p); }

/* Sends a request and polls the responder until the reply is complete. */
static char *scrape(struct gs_metrics *mt, const struct gs_engine *e, const struct gs_stats *st, const char *req)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	static char buf[1 << 20];
	size_t n = 0;
	assert_true(fd >= 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons(gs_metrics_port(mt));
	a.sin_addr.s_addr = htonl(0x7f000001);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	for (int i = 0; i < 2000; i++) { /* bounded: 2 s */
		struct pollfd p = { fd, POLLIN, 0 };
		gs_metrics_poll(mt, e, st, NULL);
		if (poll(&p, 1, 1) == 1) {
			ssize_t r = recv(fd, buf + n, sizeof buf - 1 - n, 0);
			if (r <= 0)
				break;
			n += (size_t)r;
		}
	}
	close(fd);
	buf[n] = '\0';
	return buf;
}

static void test_metrics_serves(void **state)
{
	struct gs_metrics *mt = NULL;
	struct gs_metrics_info info;
	struct gs_stats *st = calloc(1, sizeof *st);
	char err[256];
	char *resp, *body;

	assert_non_null(st);
	assert_int_equal(gs_stats_init(st, 16, 1024), 0);
	ut_keep(st, ut_stats_free);
	struct sink sk;
	struct gs_engine *e = engine_new(NULL, &sk);
	for (uint32_t i = 0; i < 10; i++) {
		struct gs_call c = answered(40000, i, T0, US, 5 * US, US);
		gs_stats_add(st, &c);
	}
	assert_int_equal(gs_metrics_open(&mt, "127.0.0.1:0", err, sizeof err), 0);
	ut_keep(mt, ut_metrics_close);
	assert_true(gs_metrics_port(mt) > 0);

	resp = scrape(mt, e, st, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
	assert_non_null(strstr(resp, "Content-Type: text/plain; version=0.0.4"));
	body = strstr(resp, "\r\n\r\n");
	assert_non_null(body);
	body += 4;
	assert_int_equal((size_t)atoi(strstr(resp, "Content-Length: ") + 16), strlen(body));
	assert_int_equal(sample_value(body, "giopscope_call_duration_seconds_count{operation=\"(unknown)\"}"), 10);

	resp = scrape(mt, e, st, "GET /nothing HTTP/1.0\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 404", 12) == 0);
	resp = scrape(mt, e, st, "POST /metrics HTTP/1.0\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 405", 12) == 0);
	resp = scrape(mt, e, st, "garbage\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 400", 12) == 0);
	resp = scrape(mt, e, st, "HEAD /metrics HTTP/1.0\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 200", 12) == 0);
	assert_non_null(strstr(resp, "\r\n\r\n"));
	assert_int_equal(strlen(strstr(resp, "\r\n\r\n")), 4); /* no body */

	gs_metrics_get_info(mt, &info);
	assert_int_equal(info.scrapes, 2);
	assert_int_equal(info.bad, 3);
	ut_forget(mt);
	gs_metrics_close(mt);
	engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_json_checker),
		UT(test_trace_spans_and_lanes),
		UT(test_trace_escapes_and_bounds),
		UT(test_trace_empty_and_file),
		UT(test_report_self_contained),
		UT(test_report_bounds),
		UT(test_report_split),
		UT(test_report_where),
		UT(test_report_empty),
		UT(test_report_plurals),
		UT(test_report_out_of_order_range),
		UT(test_prom_text),
		UT(test_metrics_refuses),
		UT(test_metrics_serves),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
