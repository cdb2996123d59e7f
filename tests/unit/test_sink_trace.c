/* SPDX-License-Identifier: BSD-2-Clause */
/* The Chrome/Perfetto trace (analysis/sink_trace.c) and the JSON checker the output tests use. */
#include <unistd.h>

#include "call_fixtures.h"
#include "text_check.h"
#include "../../analysis/sink_trace.h"

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

/* A relay's call P (10.0.0.1 -> 10.0.0.2, 10..60 us) and the two calls the
 * relay made while serving it (10.0.0.2 -> 10.0.0.3, 20..30 and 35..50 us),
 * their nesting fields set as the nesting stage sets them. */
static void relay_calls(struct gs_call *p, struct gs_call *c1, struct gs_call *c2)
{
	*p = answered(40000, 1, T0 + 10 * US, 1 * US, 48 * US, 1 * US);
	*c1 = answered(50000, 7, T0 + 20 * US, 1 * US, 8 * US, 1 * US);
	*c2 = answered(50000, 8, T0 + 35 * US, 1 * US, 13 * US, 1 * US);
	c1->client = c2->client = ep4(10, 0, 0, 2, 50000);
	c1->server = c2->server = ep4(10, 0, 0, 3, 2809);
	p->downstream_ns = 25 * US;
	for (struct gs_call *c = c1; c; c = c == c1 ? c2 : NULL) {
		c->parent_client = p->client;
		c->parent_server = p->server;
		c->parent_request_id = p->request_id;
		c->parent_basis = GS_PARENT_TIME;
	}
}

/* The flow start on the parent's track inside its span (10..60 us, pid 1 tid 1)
 * at the child's start, the end inside the child's span (pid 2, tid 2). */
static void check_links(const struct mem *m)
{
	assert_int_equal(count(m->buf, "\"ph\":\"s\""), 2);
	assert_int_equal(count(m->buf, "\"ph\":\"f\",\"bp\":\"e\""), 2);
	assert_non_null(strstr(m->buf, "\"name\":\"slow\",\"pid\":2,\"tid\":2,\"ts\":20.000,\"dur\":10.000"));
	assert_non_null(strstr(m->buf, "\"name\":\"slow\",\"pid\":2,\"tid\":2,\"ts\":35.000,\"dur\":15.000"));
	assert_non_null(strstr(m->buf, "\"name\":\"forward\",\"pid\":1,\"tid\":1,\"ts\":10.000,\"dur\":50.000"));
	assert_non_null(strstr(m->buf, "\"downstream_us\":25.000}}"));
	assert_non_null(strstr(m->buf, "\"name\":\"nested call\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":"));
	assert_non_null(strstr(m->buf, "\"name\":\"nested call\",\"id\":2,\"pid\":1,\"tid\":1,\"ts\":"));
	assert_non_null(strstr(m->buf, "\"nested_links\":2,\"nested_unlinked\":0"));
}

static void test_trace_nested_start_order(void **state)
{
	struct mem m;
	struct gs_trace *t = trace_open(&m, NULL);
	struct gs_call p, c1, c2;
	relay_calls(&p, &c1, &c2);
	gs_trace_add_named(t, "forward", 7, &p);
	gs_trace_add_named(t, "slow", 4, &c1);
	gs_trace_add_named(t, "slow", 4, &c2);
	trace_close(t, &m);
	check_links(&m);
	assert_non_null(strstr(m.buf, "\"id\":1,\"pid\":1,\"tid\":1,\"ts\":20.000}"));
	assert_non_null(strstr(m.buf, "\"id\":1,\"pid\":2,\"tid\":2,\"ts\":25.000}"));
	assert_non_null(strstr(m.buf, "\"id\":2,\"pid\":1,\"tid\":1,\"ts\":35.000}"));
	assert_non_null(strstr(m.buf, "\"id\":2,\"pid\":2,\"tid\":2,\"ts\":42.500}"));
}

static void test_trace_nested_end_order(void **state)
{
	struct mem m;
	struct gs_trace *t = trace_open(&m, NULL);
	struct gs_call p, c1, c2, lone;
	relay_calls(&p, &c1, &c2);
	/* live and attach: the children end first; pid 1 is then the back end */
	gs_trace_add_named(t, "slow", 4, &c1);
	gs_trace_add_named(t, "slow", 4, &c2);
	gs_trace_add_named(t, "forward", 7, &p);
	/* a nested call whose parent is never drawn: unlinked, counted */
	lone = c1;
	lone.request_id = 9;
	lone.parent_request_id = 99;
	gs_trace_add_named(t, "slow", 4, &lone);
	trace_close(t, &m);
	assert_int_equal(count(m.buf, "\"ph\":\"s\""), 2);
	assert_non_null(strstr(m.buf, "\"id\":1,\"pid\":2,\"tid\":2,\"ts\":20.000}"));
	assert_non_null(strstr(m.buf, "\"id\":1,\"pid\":1,\"tid\":1,\"ts\":25.000}"));
	assert_non_null(strstr(m.buf, "\"id\":2,\"pid\":2,\"tid\":2,\"ts\":35.000}"));
	assert_non_null(strstr(m.buf, "\"id\":2,\"pid\":1,\"tid\":1,\"ts\":42.500}"));
	assert_non_null(strstr(m.buf, "\"nested_links\":2,\"nested_unlinked\":1"));
}

/* A parent with more nested calls than a family's bucket keeps, all ending
 * before it (end order): it links the last TR_FAMILY_WAYS (16), and the others
 * are counted unlinked, never linked to something else. */
static void test_trace_nested_many_children(void **state)
{
	struct mem m;
	struct gs_trace *t = trace_open(&m, NULL);
	struct gs_call p, c1, c2;
	relay_calls(&p, &c1, &c2);
	for (uint32_t i = 0; i < 20; i++) {
		struct gs_call c = c1;
		c.request_id = 100 + i;
		c.client.port = (uint16_t)(50000 + i); /* a connection each: one lane each */
		gs_trace_add_named(t, "slow", 4, &c);
	}
	gs_trace_add_named(t, "forward", 7, &p);
	trace_close(t, &m);
	assert_int_equal(count(m.buf, "\"ph\":\"s\""), 16);
	assert_non_null(strstr(m.buf, "\"nested_links\":16,\"nested_unlinked\":4"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_json_checker),
		UT(test_trace_spans_and_lanes),
		UT(test_trace_escapes_and_bounds),
		UT(test_trace_empty_and_file),
		UT(test_trace_nested_start_order),
		UT(test_trace_nested_end_order),
		UT(test_trace_nested_many_children),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
