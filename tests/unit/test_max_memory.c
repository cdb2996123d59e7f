/* SPDX-License-Identifier: BSD-2-Clause */
/* --max-memory SIZE: gs_config_for_memory() sizes every bound of the engine
 * (connections with their head pool, message logs and retransmitted-range
 * lists, open calls with their side records, the order window, held
 * out-of-order bytes, strings) so that the tables' worst case,
 * gs_config_memory_bound(), fits the budget; and the budget is used, not
 * left idle. An engine so sized hits its open-call bound at the count it was
 * given and says so (open_calls_evicted), in the summary's text, in its JSON
 * ({"type":"max_memory",...,"bounds_hit":{...}}) and in the metrics
 * (giopscope_bound_hits_total{bound=...}). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"
#include "../../analysis/calls.h"
#include "../../analysis/flows.h"
#include "../../analysis/report_prom.h"
#include "../../analysis/summary.h"

static void test_sizes_fit_and_grow(void **state)
{
	static const uint64_t budgets[] = { 16ull << 20, 40ull << 20, 64ull << 20, 160ull << 20,
					    1ull << 30, 8ull << 30 };
	struct gs_config prev;
	(void)state;
	for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++) {
		struct gs_config c;
		uint64_t b = budgets[i], used;
		gs_config_default(&c);
		assert_int_equal(gs_config_for_memory(&c, b), 0);
		used = gs_config_memory_bound(&c);
		assert_true(used <= b);
		/* most of it is given out (the power-of-two index sizes cost the rest) */
		assert_true(used >= b / 10 * 7);
		assert_true(c.order_window >= 1 && c.order_window <= c.max_open_calls);
		assert_true(c.max_ooo_bytes <= c.max_ooo_total);
		assert_true(c.max_flows >= 2 && c.max_open_calls >= 2);
		if (i > 0) {
			assert_true(c.max_flows >= prev.max_flows);
			assert_true(c.max_open_calls > prev.max_open_calls);
			assert_true(c.max_ooo_total > prev.max_ooo_total);
			assert_true(c.max_strings >= prev.max_strings);
		}
		if (b <= (160ull << 20)) {
			/* the sized configuration is one the engine takes */
			struct gs_engine *e = NULL;
			assert_int_equal(gs_engine_new(&e, &c, NULL, NULL), 0);
			gs_engine_free(e);
		}
		prev = c;
	}
	/* the default configuration's worst case, for scale: over 512 MiB (the
	 * tables are made resident only as they are used) */
	gs_config_default(&prev);
	assert_true(gs_config_memory_bound(&prev) > (512ull << 20));
}

static void test_too_small_refused(void **state)
{
	struct gs_config c;
	(void)state;
	gs_config_default(&c);
	assert_int_equal(gs_config_for_memory(&c, GS_MIN_MEMORY - 1), EINVAL);
	assert_int_equal(gs_config_for_memory(&c, 0), EINVAL);
	assert_int_equal(gs_config_for_memory(&c, GS_MIN_MEMORY), 0);
}

/* Requests never answered on one connection, more than the sized bound:
 * the oldest give way, exactly as many as went past it, and are counted. */
static void test_open_call_bound_hit_and_counted(void **state)
{
	struct gs_config c;
	struct sink s;
	struct ub w;
	struct conn cn;
	struct gs_engine *e;
	uint32_t n, extra = 25;
	(void)state;
	gs_config_default(&c);
	assert_int_equal(gs_config_for_memory(&c, GS_MIN_MEMORY), 0);
	n = c.max_open_calls;
	assert_true(n > 1000 && n < 100000);
	e = engine_new(&c, &s);
	ub_init(&w, false);
	conn_init(&cn, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &cn, T0);
	for (uint32_t i = 0; i < n + extra; i++) {
		size_t l;
		ub_reset(&w);
		l = ub_request(&w, 2, false, i + 1, "op", 0);
		conn_send(e, &cn, 0, T0 + MS + (int64_t)i * US, w.b, l);
	}
	assert_int_equal(gs_engine_open_calls(e), n);
	assert_int_equal(gs_engine_counters(e)->open_calls_evicted, extra);
	gs_engine_finish(e);
	assert_int_equal(s.n, n + extra);
	assert_int_equal(gs_engine_counters(e)->no_reply, n + extra);
	engine_free(e);
	conn_free(&cn);
	sink_free(&s);
	ub_free(&w);
}

/* What the summary (format fmt) and the metrics say of the engine e run
 * under --max-memory `budget` sized as c (0: no --max-memory): one string
 * each, to be freed. */
static char *summary_of(const struct gs_engine *e, const struct gs_config *c, uint64_t budget,
			enum gs_summary_format fmt)
{
	struct gs_stats *st = calloc(1, sizeof *st);
	struct gs_summary_info info;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(st);
	assert_non_null(f);
	assert_int_equal(gs_stats_init(st, 16, 1024), 0);
	memset(&info, 0, sizeof info);
	info.source = "test";
	info.max_memory = budget;
	info.max_flows = c->max_flows;
	info.max_open_calls = c->max_open_calls;
	info.order_window = c->order_window;
	info.max_ooo_total = c->max_ooo_total;
	gs_summary_write(f, fmt, st, gs_engine_counters(e), gs_engine_strings(e), &info);
	assert_int_equal(fclose(f), 0);
	gs_stats_free(st);
	free(st);
	return buf;
}

static char *metrics_of(const struct gs_engine *e)
{
	struct gs_stats *st = calloc(1, sizeof *st);
	struct gs_prom_input in;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(st);
	assert_non_null(f);
	assert_int_equal(gs_stats_init(st, 16, 1024), 0);
	memset(&in, 0, sizeof in);
	in.stats = st;
	in.counters = gs_engine_counters(e);
	in.strings = gs_engine_strings(e);
	gs_prom_write(f, &in);
	assert_int_equal(fclose(f), 0);
	gs_stats_free(st);
	free(st);
	return buf;
}

/* The line of `text` that contains `key`, as its own string (NULL: none). */
static char *line_with(const char *text, const char *key)
{
	const char *p = strstr(text, key), *b, *eol;
	char *l;
	if (!p)
		return NULL;
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	eol = strchr(p, '\n');
	if (!eol)
		eol = p + strlen(p);
	l = strndup(b, (size_t)(eol - b));
	assert_non_null(l);
	return l;
}

/* The same engine as above: the JSON summary says which bound was hit and
 * how often, the bounds it set, and only with --max-memory; the text and
 * the metrics name the same bound with the same count. */
static void test_bound_hit_in_json_text_and_metrics(void **state)
{
	struct gs_config c, d;
	struct sink s, s2;
	struct ub w;
	struct conn cn;
	struct gs_engine *e, *quiet;
	uint32_t n, extra = 25;
	char *out, *l, want[256];
	(void)state;
	gs_config_default(&c);
	assert_int_equal(gs_config_for_memory(&c, GS_MIN_MEMORY), 0);
	n = c.max_open_calls;
	e = engine_new(&c, &s);
	ub_init(&w, false);
	conn_init(&cn, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &cn, T0);
	for (uint32_t i = 0; i < n + extra; i++) {
		size_t k;
		ub_reset(&w);
		k = ub_request(&w, 2, false, i + 1, "op", 0);
		conn_send(e, &cn, 0, T0 + MS + (int64_t)i * US, w.b, k);
	}
	gs_engine_finish(e);
	assert_int_equal(gs_engine_counters(e)->open_calls_evicted, extra);

	/* JSON lines: one max_memory object, with the bound hit and its count */
	out = summary_of(e, &c, GS_MIN_MEMORY, GS_SUM_JSONL);
	l = line_with(out, "\"type\":\"max_memory\"");
	assert_non_null(l);
	snprintf(want, sizeof want, "{\"type\":\"max_memory\",\"max_memory\":%llu,\"connections\":%u,"
		 "\"open_calls\":%u,\"order_window\":%u,\"ooo_bytes\":%llu,\"bounds_hit\":{\"open_calls\":%u}}",
		 (unsigned long long)GS_MIN_MEMORY, c.max_flows, n, c.order_window,
		 (unsigned long long)c.max_ooo_total, extra);
	assert_string_equal(l, want);
	/* one line each, the counters' line unchanged beside it */
	assert_null(strstr(strstr(out, l) + strlen(l), "\"type\":\"max_memory\""));
	assert_non_null(strstr(out, "\"type\":\"counters\""));
	free(l);
	free(out);

	/* the text names the same bound */
	out = summary_of(e, &c, GS_MIN_MEMORY, GS_SUM_TEXT);
	snprintf(want, sizeof want, "bounds hit: open calls (%u)\n", extra);
	assert_non_null(strstr(out, want));
	free(out);

	/* without --max-memory: no such line */
	out = summary_of(e, &c, 0, GS_SUM_JSONL);
	assert_null(strstr(out, "max_memory"));
	free(out);

	/* the metrics: every bound, the one hit with its count */
	out = metrics_of(e);
	snprintf(want, sizeof want, "\ngiopscope_bound_hits_total{bound=\"open_calls\"} %u\n", extra);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "\ngiopscope_bound_hits_total{bound=\"connections\"} 0\n"));
	assert_non_null(strstr(out, "\ngiopscope_bound_hits_total{bound=\"strings\"} 0\n"));
	free(out);

	/* a run under the bounds: none hit, said as an empty object */
	gs_config_default(&d);
	assert_int_equal(gs_config_for_memory(&d, GS_MIN_MEMORY), 0);
	quiet = engine_new(&d, &s2);
	gs_engine_finish(quiet);
	out = summary_of(quiet, &d, GS_MIN_MEMORY, GS_SUM_JSONL);
	assert_non_null(strstr(out, "\"bounds_hit\":{}}\n"));
	free(out);
	out = summary_of(quiet, &d, GS_MIN_MEMORY, GS_SUM_TEXT);
	assert_non_null(strstr(out, "bounds hit: none\n"));
	free(out);
	engine_free(quiet);
	sink_free(&s2);

	engine_free(e);
	conn_free(&cn);
	sink_free(&s);
	ub_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_sizes_fit_and_grow),
		UT(test_too_small_refused),
		UT(test_open_call_bound_hit_and_counted),
		UT(test_bound_hit_in_json_text_and_metrics),
	};
	return cmocka_run_group_tests_name("test_max_memory", tests, NULL, NULL);
}
