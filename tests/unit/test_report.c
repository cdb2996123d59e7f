/* SPDX-License-Identifier: BSD-2-Clause */
/* The HTML report (analysis/report.c and its plots).  (merge's matching: test_merge.c.) */
#include <unistd.h>

#include "call_fixtures.h"
#include "text_check.h"
#include "../../analysis/report.h"
#include "../../analysis/report_impl.h"

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

/* A relay's call P (10.0.0.1 -> 10.0.0.2, 10..510 us), the two calls the relay
 * made while serving it (10.0.0.2 -> 10.0.0.3, 100..200 and 250..450 us), and
 * one call the back end made while serving the second (300..400 us). */
static void tree_calls(struct gs_call *p, struct gs_call *c1, struct gs_call *c2, struct gs_call *g)
{
	*p = answered(40000, 1, T0 + 10 * US, 1 * US, 498 * US, 1 * US);
	*c1 = answered(50000, 7, T0 + 100 * US, 1 * US, 98 * US, 1 * US);
	*c2 = answered(50000, 8, T0 + 250 * US, 1 * US, 198 * US, 1 * US);
	*g = answered(60000, 9, T0 + 300 * US, 1 * US, 98 * US, 1 * US);
	c1->client = c2->client = ep4(10, 0, 0, 2, 50000);
	c1->server = c2->server = g->client = ep4(10, 0, 0, 3, 2809);
	g->client.port = 60000;
	g->server = ep4(10, 0, 0, 4, 2809);
	p->downstream_ns = 300 * US;
	c2->downstream_ns = 100 * US;
	for (struct gs_call *c = c1; c; c = c == c1 ? c2 : NULL) {
		c->parent_client = p->client;
		c->parent_server = p->server;
		c->parent_request_id = 1;
		c->parent_basis = GS_PARENT_TIME;
	}
	g->parent_client = c2->client;
	g->parent_server = c2->server;
	g->parent_request_id = 8;
	g->parent_basis = GS_PARENT_TIME;
}

static void check_waterfall(const char *html)
{
	const char *from = strstr(html, "<svg class=\"plot waterfall\""), *to;
	char *w;
	assert_non_null(from);
	to = strstr(from, "</svg>");
	assert_non_null(to);
	/* the first waterfall alone (the slowest call's) */
	w = strndup(from, (size_t)(to - from));
	assert_non_null(w);
	ut_keep(w, free);
	assert_non_null(strstr(w, "1. forward #1 and its nested calls (500.0 us)"));
	/* rows depth first: P, c1, c2, then g under c2, indented by depth */
	assert_non_null(strstr(w, "x=\"10.0\" y=\"43.0\">forward at 10.0.0.2:2809 #1<title>"));
	assert_non_null(strstr(w, "x=\"24.0\" y=\"63.0\">slow at 10.0.0.3:2809 #7<title>"));
	assert_non_null(strstr(w, "x=\"24.0\" y=\"83.0\">slow at 10.0.0.3:2809 #8<title>"));
	assert_non_null(strstr(w, "x=\"38.0\" y=\"103.0\">back at 10.0.0.4:2809 #9<title>"));
	assert_non_null(strstr(w, "<title>10.0.0.3:60000 -&gt; 10.0.0.4:2809 request 9</title></text>"));
	/* downstream shading: P's two stretches (100..200, 250..450 us), c2's one (300..400) */
	assert_int_equal(count(w, "class=\"wf wf-down\""), 3);
	assert_int_equal(count(w, "<title>downstream: nested calls open: 100.0 us</title>"), 2);
	assert_int_equal(count(w, "<title>downstream: nested calls open: 200.0 us</title>"), 1);
}

static void test_report_waterfall_start_order(void **state)
{
	struct gs_report *r = report_new(NULL);
	struct gs_call p, c1, c2, g;
	tree_calls(&p, &c1, &c2, &g);
	gs_report_add_named(r, "forward", 7, &p, NULL);
	gs_report_add_named(r, "slow", 4, &c1, NULL);
	gs_report_add_named(r, "slow", 4, &c2, NULL);
	gs_report_add_named(r, "back", 4, &g, NULL);
	check_waterfall(report_html(r, "nested", NULL));
	report_free(r);
}

static void test_report_waterfall_end_order(void **state)
{
	struct gs_report *r = report_new(NULL);
	struct gs_call p, c1, c2, g, plain = answered(40001, 3, T0, 1 * US, 50 * US, 1 * US);
	char *html;
	tree_calls(&p, &c1, &c2, &g);
	gs_report_add_named(r, "slow", 4, &c1, NULL);
	gs_report_add_named(r, "back", 4, &g, NULL);
	gs_report_add_named(r, "slow", 4, &c2, NULL);
	gs_report_add_named(r, "forward", 7, &p, NULL);
	gs_report_add_named(r, "plain", 5, &plain, NULL);
	html = report_html(r, "nested", NULL);
	check_waterfall(html);
	/* c2 is slow and has its own nested call: a waterfall of its own; P's is the only other */
	assert_int_equal(count(html, "<svg class=\"plot waterfall\""), 2);
	assert_non_null(strstr(html, "2. slow #8 and its nested calls (200.0 us)"));
	report_free(r);
	/* no nesting: no waterfall section */
	r = report_new(NULL);
	gs_report_add_named(r, "plain", 5, &plain, NULL);
	html = report_html(r, "plain", NULL);
	assert_null(strstr(html, "waterfall"));
	report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_report_self_contained),
		UT(test_report_bounds),
		UT(test_report_split),
		UT(test_report_where),
		UT(test_report_empty),
		UT(test_report_plurals),
		UT(test_report_out_of_order_range),
		UT(test_report_waterfall_start_order),
		UT(test_report_waterfall_end_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
