/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope merge's clock offset: estimated from the bounds causality gives
 * each matched call (never a midpoint that assumes equal delays each way),
 * the intersection of every call's interval or the stretch most of them
 * hold, and the hints about the order of the captures; and the matching of
 * connections (streams), NAT and drift included. */
#include <errno.h>
#include "unit.h"
#include "call_fixtures.h"
#include "../../analysis/merge_match.h"
/* the summary's text (probe/merge_out.c, from libgiopscope-probe.a) */
#include "../../probe/merge_out.h"

static void ut_merge_free(void *p) { gs_merge_free(p); }

/* max_calls 0: the default bound */
static struct gs_merge *merge_new(uint32_t max_calls)
{
	struct gs_merge *m = NULL;
	struct gs_merge_config cfg;
	gs_merge_config_default(&cfg);
	if (max_calls)
		cfg.max_calls = max_calls;
	assert_int_equal(gs_merge_new(&m, &cfg), 0);
	ut_keep(m, ut_merge_free);
	return m;
}

/* One call on the wire, in the client's clock.  The client's tap sees the
 * request's first byte leave at t and its last req_c later; the server's tap
 * sees them dq_first and dq_last after that; the server holds the call srv and
 * its tap sees the reply's bytes leave over rep_s; the client's tap sees the
 * reply's first byte dr_first after the server's did, its last dr_last after.
 * Every delay >= 0: causality holds, and the true offset is in every call's
 * interval. */
struct wire {
	int64_t t, req_c, dq_first, dq_last, srv, rep_s, dr_first, dr_last;
	uint64_t request_bytes;
	uint32_t flags;         /* added to both sides (GS_CF_CAPTURE_LOSS) */
};

static struct gs_call side_call(uint16_t cport, uint32_t rid, uint64_t request_bytes)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	c.client.addr[0] = 10, c.client.addr[3] = 1, c.client.port = cport, c.client.family = 4;
	c.server.addr[0] = 10, c.server.addr[3] = 2, c.server.port = 2809, c.server.family = 4;
	c.request_id = rid;
	c.major = 1;
	c.minor = 2;
	c.kind = GS_KIND_REQUEST;
	c.outcome = GS_OUT_REPLY;
	c.reply_type = GIOP_REPLY;
	c.flags = GS_CF_REQ_DONE | GS_CF_REP_SEEN | GS_CF_REP_DONE | GS_CF_STATUS_KNOWN | GS_CF_OP_KNOWN;
	c.status = GIOP_NO_EXCEPTION;
	c.request_bytes = request_bytes;
	c.reply_bytes = 60;
	return c;
}

/* The two sides' views of call w; the server's clock reads x ahead. */
static void wire_calls(const struct wire *w, uint32_t rid, int64_t x, struct gs_call *c, struct gs_call *s)
{
	*c = side_call(40000, rid, w->request_bytes);
	*s = side_call(40000, rid, w->request_bytes);
	c->flags |= w->flags;
	s->flags |= w->flags;
	c->flow = c->conn_flow = 1;
	s->flow = s->conn_flow = 999; /* the server's engine numbers connections its own way */
	c->retransmits = s->retransmits = rid; /* a tag: which call it really is */
	c->t_request_first = w->t;
	c->t_request_last = w->t + w->req_c;
	s->t_request_first = w->t + w->dq_first;
	s->t_request_last = c->t_request_last + w->dq_last;
	s->t_reply_first = s->t_request_last + w->srv;
	s->t_reply_last = s->t_reply_first + w->rep_s;
	c->t_reply_first = s->t_reply_first + w->dr_first;
	c->t_reply_last = s->t_reply_last + w->dr_last;
	s->t_request_first += x;
	s->t_request_last += x;
	s->t_reply_first += x;
	s->t_reply_last += x;
	c->t_done = c->t_reply_last;
	s->t_done = s->t_reply_last;
}

static void add_wire(struct gs_merge *m, const struct wire *w, uint32_t rid, int64_t x, bool swapped)
{
	struct gs_call c, s;
	const char *op = w->request_bytes > 1000 ? "big" : "small";
	wire_calls(w, rid, x, &c, &s);
	gs_merge_add_named(m, swapped ? GS_MERGE_SERVER : GS_MERGE_CLIENT, op, &c);
	gs_merge_add_named(m, swapped ? GS_MERGE_CLIENT : GS_MERGE_SERVER, op, &s);
}

/* Every matched call's figures: offset_ns in the call's own interval (when it
 * has one); the number of calls whose interval holds v. */
static uint32_t calls_holding(const struct gs_merge *m, int64_t v)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < gs_merge_count(m, GS_MERGE_CLIENT); i++) {
		struct gs_merge_figures f;
		gs_merge_call_figures(m, i, &f);
		if (!f.known)
			continue;
		assert_true(f.offset_known);
		if (f.offset_lo_ns <= f.offset_hi_ns)
			assert_true(f.offset_lo_ns <= f.offset_ns && f.offset_ns <= f.offset_hi_ns);
		if (f.offset_lo_ns <= v && v <= f.offset_hi_ns)
			n++;
	}
	return n;
}

/* The summary's offset line as text. */
static char *offset_line(const struct gs_merge_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	gs_merge_write_offset(f, r);
	fclose(f);
	ut_keep(buf, free);
	return buf;
}

/* "...: E us, the middle of LO..HI us": the printed estimate within the printed range */
static void assert_line_consistent(const char *line, int64_t want_e)
{
	const char *p = strstr(line, "): ");
	double e, lo, hi;
	assert_non_null(p);
	assert_int_equal(sscanf(p, "): %lf us, the middle of %lf..%lf us", &e, &lo, &hi), 3);
	assert_true(lo <= e && e <= hi);
	e -= (double)want_e / 1e3;
	assert_true(e < 0.0015 && e > -0.0015);
}

static void test_offset_asymmetric(void **state)
{
	/* the server's clock 3.21 s ahead; small calls (40 us each way, and 15 us
	 * for a request's last byte: its first packet waited in a queue the rest
	 * did not), big requests whose last byte crosses 5 ms after their first
	 * (a slow link stretches them between the taps), big replies whose last
	 * byte reaches the client 8 ms late; calls missing bytes in a capture
	 * whose last request byte the client's tap saw only when resent, 2 ms
	 * late (its last-byte bound would exclude x: not used) */
	const int64_t x = 3210000000LL + 777;
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	for (uint32_t k = 0; k < 60; k++) {
		struct wire w = { T0 + (int64_t)k * 20 * MS, 5 * US, 40 * US, 15 * US, 50 * US, 5 * US, 40 * US, 40 * US,
				  100, 0 };
		if (k % 5 == 1) { /* a big request, slowed between the taps */
			w.request_bytes = 60000;
			w.req_c = 300 * US;
			w.dq_last = 5 * MS;
		}
		if (k % 5 == 3) /* a big reply, slowed */
			w.dr_last = 8 * MS;
		if (k % 10 == 7) { /* capture loss: the last-byte instants are not first sightings */
			struct gs_call c, s;
			w.flags = GS_CF_CAPTURE_LOSS;
			w.srv = 3 * MS;
			wire_calls(&w, 2 + 2 * k, x, &c, &s);
			c.t_request_last += 2 * MS;
			gs_merge_add_named(m, GS_MERGE_CLIENT, "small", &c);
			gs_merge_add_named(m, GS_MERGE_SERVER, "small", &s);
			continue;
		}
		add_wire(m, &w, 2 + 2 * k, x, false);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.matched, 60);
	assert_int_equal(r.offset_n, 60);
	/* every call's interval holds x, so does their intersection */
	assert_true(r.offset_known);
	assert_true(r.offset_all);
	assert_int_equal(r.offset_agree, 60);
	assert_int_equal(r.offset_violating, 0);
	assert_true(r.offset_lo_ns <= x && x <= r.offset_hi_ns);
	assert_true(r.offset_lo_ns <= r.offset_ns && r.offset_ns <= r.offset_hi_ns);
	/* the request's last byte bounds it from above (15 us, not 40), the
	 * reply's first from below */
	assert_int_equal(r.offset_hi_ns, x + 15 * US);
	assert_int_equal(r.offset_lo_ns, x - 40 * US);
	assert_true(llabs(r.offset_ns - x) <= r.offset_hi_ns - r.offset_lo_ns);
	assert_int_equal(calls_holding(m, x), 60);
	assert_int_equal(calls_holding(m, r.offset_ns), 60);
	/* the slowed calls: their own figure is the common estimate, within
	 * 55 us of the truth, not a midpoint off by half the slowing (2.5, 4 ms) */
	for (uint32_t i = 0; i < 10; i++) {
		struct gs_merge_figures f;
		gs_merge_call_figures(m, i, &f);
		assert_true(f.known && f.offset_known);
		assert_int_equal(f.offset_ns, r.offset_ns);
		assert_true(llabs(f.offset_ns - x) <= 55 * US);
		assert_true(f.offset_lo_ns <= x && x <= f.offset_hi_ns);
	}
	/* one offset fits every call: no drift is claimed */
	assert_false(r.drift_known);
	assert_false(r.same_capture);
	assert_false(r.looks_swapped);
	assert_int_equal(gs_merge_check_order(m, &r), 0);
	assert_false(r.looks_swapped);
	assert_false(r.same_capture);
	{
		const char *line = offset_line(&r);
		assert_line_consistent(line, r.offset_ns);
		assert_non_null(strstr(line, "every one of the 60 answered matched calls allows"));
		assert_non_null(strstr(line, "nothing assumed but causality"));
	}
}

static void test_offset_disagreeing(void **state)
{
	/* 30 calls that agree, 4 whose server-side time stamps the capture moved
	 * 300 us late (their intervals miss the others'), one whose reply the
	 * server's tap stamped after the client's saw it (its own bounds cross) */
	const int64_t x = -500 * MS;
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	for (uint32_t k = 0; k < 35; k++) {
		struct wire w = { T0 + (int64_t)k * 10 * MS, 5 * US, 40 * US + (int64_t)(k % 3) * US, 40 * US, 50 * US,
				  5 * US, 30 * US, 30 * US, 100, 0 };
		struct gs_call c, s;
		wire_calls(&w, 2 + 2 * k, x, &c, &s);
		if (k % 9 == 4) { /* k = 4, 13, 22, 31 */
			s.t_request_first += 300 * US;
			s.t_request_last += 300 * US;
			s.t_reply_first += 300 * US;
			s.t_reply_last += 300 * US;
		}
		if (k == 17) { /* the server's tap stamped the reply after the client saw it: lo > hi */
			s.t_reply_first = c.t_reply_first + x + 200 * US;
			s.t_reply_last = s.t_reply_first + 5 * US;
		}
		gs_merge_add_named(m, GS_MERGE_CLIENT, "small", &c);
		gs_merge_add_named(m, GS_MERGE_SERVER, "small", &s);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.matched, 35);
	assert_int_equal(r.offset_n, 35);
	assert_true(r.offset_known);
	assert_false(r.offset_all);
	/* the stretch the 30 hold; the 5 others violated, and counted */
	assert_int_equal(r.offset_agree, 30);
	assert_int_equal(r.offset_violating, 5);
	assert_true(r.offset_lo_ns <= x && x <= r.offset_hi_ns);
	assert_true(r.offset_lo_ns <= r.offset_ns && r.offset_ns <= r.offset_hi_ns);
	assert_int_equal(calls_holding(m, r.offset_ns), 30);
	assert_int_equal(calls_holding(m, r.offset_lo_ns), 30);
	assert_int_equal(calls_holding(m, r.offset_hi_ns), 30);
	{
		/* a moved call's own figure: the nearest offset it allows */
		struct gs_merge_figures f;
		gs_merge_call_figures(m, 4, &f);
		assert_true(f.offset_known && f.offset_lo_ns <= f.offset_hi_ns);
		assert_true(r.offset_ns < f.offset_lo_ns);
		assert_int_equal(f.offset_ns, f.offset_lo_ns);
		gs_merge_call_figures(m, 17, &f);
		assert_true(f.offset_lo_ns > f.offset_hi_ns);
		assert_int_equal(f.offset_ns, r.offset_ns);
	}
	assert_int_equal(gs_merge_check_order(m, &r), 0);
	assert_false(r.looks_swapped);
	{
		const char *line = offset_line(&r);
		assert_line_consistent(line, r.offset_ns);
		assert_non_null(strstr(line, "the range most calls allow: 30 of 35"));
		assert_non_null(strstr(line, "the other 5 exclude it"));
		assert_null(strstr(line, "every one"));
	}
}

static void test_order_swapped(void **state)
{
	/* the server's capture given first: in this order every call's bounds
	 * cross (its request arrives before it leaves); the other order fits them
	 * all to one offset */
	const int64_t x = 7 * MS;
	struct gs_merge *m = merge_new(0), *ok = merge_new(0);
	struct gs_merge_result r, rok;
	for (uint32_t k = 0; k < 40; k++) {
		struct wire w = { T0 + (int64_t)k * MS, 5 * US, 100 * US, 100 * US, 50 * US, 5 * US, 100 * US, 100 * US,
				  100, 0 };
		add_wire(m, &w, 2 + 2 * k, x, true);
		add_wire(ok, &w, 2 + 2 * k, x, false);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_true(r.offset_agree * 2 < r.offset_n || r.matched == 0);
	assert_int_equal(gs_merge_check_order(m, &r), 0);
	assert_true(r.looks_swapped);
	assert_false(r.same_capture);
	assert_int_equal(r.other_agree, 40);
	/* given the right way round: no hint */
	assert_int_equal(gs_merge_run(ok, &rok), 0);
	assert_int_equal(gs_merge_check_order(ok, &rok), 0);
	assert_false(rok.looks_swapped);
	assert_int_equal(rok.offset_agree, 40);
	assert_true(rok.offset_lo_ns <= x && x <= rok.offset_hi_ns);
	/* before gs_merge_run there is nothing to compare */
	{
		struct gs_merge *fresh = merge_new(0);
		assert_int_equal(gs_merge_check_order(fresh, &rok), EINVAL);
	}
}

static void test_order_same_capture(void **state)
{
	/* one capture given twice: every call has a twin at the very same instants */
	struct gs_merge *m = merge_new(0), *near = merge_new(0);
	struct gs_merge_result r, rn;
	for (uint32_t k = 0; k < 20; k++) {
		struct wire w = { T0 + (int64_t)k * MS, 5 * US, 100 * US, 100 * US, 50 * US, 5 * US, 100 * US, 100 * US,
				  100, 0 };
		struct gs_call c, s;
		wire_calls(&w, 2 + 2 * k, 0, &c, &s);
		gs_merge_add_named(m, GS_MERGE_CLIENT, "small", &c);
		gs_merge_add_named(m, GS_MERGE_SERVER, "small", &c);
		/* a loopback pair: one clock, 1 ns apart: two captures */
		gs_merge_add_named(near, GS_MERGE_CLIENT, "small", &c);
		c.t_request_first += 1;
		c.t_request_last += 1;
		c.t_reply_first -= 1;
		c.t_reply_last -= 1;
		gs_merge_add_named(near, GS_MERGE_SERVER, "small", &c);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.matched, 20);
	assert_true(r.same_capture);
	assert_int_equal(gs_merge_check_order(m, &r), 0);
	assert_true(r.same_capture);
	assert_false(r.looks_swapped);
	assert_true(r.offset_all && r.offset_lo_ns == 0 && r.offset_hi_ns == 0 && r.offset_ns == 0);
	assert_int_equal(gs_merge_run(near, &rn), 0);
	assert_int_equal(rn.matched, 20);
	assert_false(rn.same_capture);
	assert_int_equal(gs_merge_check_order(near, &rn), 0);
	assert_false(rn.looks_swapped);
}

/* One clock for both captures (true offset 0, no drift), but the calls' upper
 * bounds widen steadily over the capture (later calls wait longer between the
 * taps), so the time slices' votes climb 70 us over 0.63 s: a slope a fit
 * would take for drift (merge_tbf.sh's tbf-slowed calls once gave -64 ppm).
 * Every call's interval holds 0: one constant offset fits them all, so no
 * drift is claimed and none is corrected for. */
static void test_offset_no_false_drift(void **state)
{
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	(void)state;
	for (uint32_t k = 0; k < 64; k++) {
		int64_t t = T0 + (int64_t)k * 10 * MS;
		int64_t up = 1 * US + (int64_t)(k / 8) * 20 * US;
		struct wire w = { t, 0, up, up, 20 * US, 0, 1 * US, 1 * US, 100, 0 };
		add_wire(m, &w, 2 + 2 * k, 0, false);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.matched, 64);
	assert_false(r.drift_corrected);
	assert_false(r.drift_known);
	assert_true(r.offset_all);
	assert_int_equal(r.offset_violating, 0);
	assert_true(r.offset_lo_ns <= 0 && 0 <= r.offset_hi_ns);
}

static void test_offset_drift(void **state)
{
	/* the server's clock 2 s ahead and gaining 50 ppm: 1 ms over the 20 s,
	 * far more than a call's interval is wide; the calls are compared along
	 * the fitted drift, and the range (given at offset_tref) holds the true
	 * offset there */
	const int64_t x = 2000 * MS;
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	uint32_t far = 0;
	for (uint32_t k = 0; k < 200; k++) {
		int64_t t = T0 + (int64_t)k * 100 * MS;
		struct wire w = { t, 5 * US, 80 * US, 80 * US, 20 * US, 5 * US, 80 * US, 80 * US, 100, 0 };
		add_wire(m, &w, 2 + 2 * k, x + (int64_t)(50e-6 * (double)(t - T0)), false);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.matched, 200);
	assert_true(r.drift_known && r.drift_corrected);
	assert_true(r.drift_ppm > 49 && r.drift_ppm < 51);
	{
		int64_t truth = x + (int64_t)(50e-6 * (double)(r.offset_tref - T0));
		assert_true(r.offset_lo_ns <= truth && truth <= r.offset_hi_ns);
		assert_true(r.offset_lo_ns <= r.offset_ns && r.offset_ns <= r.offset_hi_ns);
		assert_true(2 * r.offset_agree > r.offset_n);
	}
	/* each call's figure: the estimate along the drift, in its own interval */
	for (uint32_t i = 0; i < gs_merge_count(m, GS_MERGE_CLIENT); i++) {
		struct gs_merge_figures f;
		int64_t t = gs_merge_get(m, GS_MERGE_CLIENT, i)->t_request_first;
		int64_t truth = x + (int64_t)(50e-6 * (double)(t - T0));
		gs_merge_call_figures(m, i, &f);
		assert_true(f.offset_known && f.offset_lo_ns <= f.offset_ns && f.offset_ns <= f.offset_hi_ns);
		if (llabs(f.offset_ns - truth) > 160 * US)
			far++;
	}
	assert_int_equal(far, 0);
	{
		const char *line = offset_line(&r);
		assert_line_consistent(line, r.offset_ns);
		assert_non_null(strstr(line, "calls compared along a drift of"));
	}
}

static void test_offset_none(void **state)
{
	/* no answered call: no estimate, said so */
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_false(r.offset_known);
	assert_non_null(strstr(offset_line(&r), "unknown (no answered call matched)"));
	r.offset_n = 3;
	r.offset_violating = 3;
	assert_non_null(strstr(offset_line(&r), "none of the 3 answered matched calls allows any"));
}

/* ======================================================================== */
/* the matching of connections                                              */
/* ======================================================================== */

/* What one call looks like from both hosts.  The network adds `net` each way;
 * the server's clock reads `offset` + drift * (t - T0) ahead.  `tag` (in
 * retransmits, which matching ignores) says which call it really is. */
struct twin_spec {
	int64_t offset;
	double drift;           /* ns per ns */
	int64_t net;
	int64_t srv;
};

static void add_twins(struct gs_merge *m, const struct twin_spec *sp, uint32_t flow, uint16_t cport,
		      uint16_t nat_port, uint32_t rid, int64_t t, const char *op, uint32_t tag, bool to_client,
		      bool to_server)
{
	struct gs_call c = answered(cport, rid, t, 5 * US, 2 * sp->net + sp->srv, 5 * US);
	struct gs_call s = answered(nat_port, rid, t + sp->net, 5 * US, sp->srv, 5 * US);
	int64_t shift = sp->offset + (int64_t)(sp->drift * (double)(t - T0));
	c.flow = c.conn_flow = flow;
	c.retransmits = tag;
	s.flow = s.conn_flow = 1000 - flow; /* the server's engine numbers connections its own way */
	s.retransmits = tag;
	/* NAT: the server sees another client address and port */
	s.client = ep4(192, 168, 7, 7, nat_port);
	s.t_request_first += shift;
	s.t_request_last += shift;
	s.t_reply_first += shift;
	s.t_reply_last += shift;
	if (to_client)
		gs_merge_add_named(m, GS_MERGE_CLIENT, op, &c);
	if (to_server)
		gs_merge_add_named(m, GS_MERGE_SERVER, op, &s);
}

/* Checks every client call matched its own twin (by tag). */
static void assert_twins(const struct gs_merge *m, uint64_t want_matched)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < gs_merge_count(m, GS_MERGE_CLIENT); i++) {
		uint32_t j = gs_merge_match(m, i);
		if (j == GS_MERGE_NONE)
			continue;
		n++;
		assert_int_equal(gs_merge_get(m, GS_MERGE_CLIENT, i)->retransmits,
				 gs_merge_get(m, GS_MERGE_SERVER, j)->retransmits);
	}
	assert_int_equal(n, want_matched);
}

static void test_merge_identical_connections(void **state)
{
	/* eight "threads", each on its own connection with the same calls (request
	 * ids 2, 4, 6, ..., same operation and size), started 150 us apart and
	 * interleaved: only the time tells them apart */
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	struct twin_spec sp = { 5 * 1000000000LL + 123456, 0, 100 * US, 50 * US };
	for (uint32_t k = 0; k < 40; k++)
		for (uint32_t th = 0; th < 8; th++)
			add_twins(m, &sp, th, (uint16_t)(40000 + th), (uint16_t)(50000 + th), 2 + 2 * k,
				  T0 + (int64_t)k * MS + (int64_t)th * 150 * US + (int64_t)((k * 7 + th * 3) % 5) * 20 * US,
				  "echoString", th * 1000 + k, true, true);
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.streams[0], 8);
	assert_int_equal(r.streams[1], 8);
	assert_int_equal(r.streams_matched, 8);
	assert_int_equal(r.matched, 320);
	assert_int_equal(r.unmatched[0], 0);
	assert_int_equal(r.unmatched[1], 0);
	assert_twins(m, 320);
	/* symmetric network: the offset is exact, network is 2 x 100 us */
	assert_true(r.offset_known);
	assert_int_equal(r.offset_ns, sp.offset);
	assert_true(r.offset_all);
	assert_int_equal(r.offset_agree, 320);
	assert_int_equal(r.offset_violating, 0);
	assert_true(r.offset_lo_ns <= sp.offset && sp.offset <= r.offset_hi_ns);
	assert_false(r.looks_swapped);
	{
		struct gs_merge_figures f;
		gs_merge_call_figures(m, 0, &f);
		assert_true(f.known);
		assert_int_equal(f.network_ns, 200 * US);
		assert_int_equal(f.server_server_ns, 50 * US);
		assert_int_equal(f.server_total_ns, 60 * US);
		assert_int_equal(f.offset_ns, sp.offset);
	}
}

static void test_merge_partial_and_unmatched(void **state)
{
	/* the server capture starts later (the first calls are missing), a client
	 * connection goes elsewhere (not on the server side), the server sees a
	 * connection of another client host with the same calls (at its own
	 * pace), and oneways have no timing */
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	struct twin_spec sp = { -777 * MS, 0, 40 * US, 30 * US };
	for (uint32_t k = 0; k < 30; k++) {
		int64_t t = T0 + (int64_t)k * MS;
		add_twins(m, &sp, 1, 40001, 50001, 2 + 2 * k, t, "echoString", 1000 + k, true, k >= 10);
		add_twins(m, &sp, 2, 40002, 50002, 2 + 2 * k, t + 300 * US, "slow", 2000 + k, true, false);
		add_twins(m, &sp, 3, 40003, 50003, 2 + 2 * k, T0 + 7 * MS + (int64_t)k * 1300 * US, "echoString",
			  3000 + k, false, true);
	}
	{
		/* a oneway on connection 1, seen on both sides */
		struct gs_call c = oneway(40001, 100, T0 + 50 * MS), s = oneway(50001, 100, T0 + 50 * MS + 40 * US - 777 * MS);
		c.flow = c.conn_flow = 1;
		s.flow = s.conn_flow = 999;
		c.retransmits = s.retransmits = 77;
		gs_merge_add_named(m, GS_MERGE_CLIENT, "fire", &c);
		gs_merge_add_named(m, GS_MERGE_SERVER, "fire", &s);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.streams_matched, 1);
	assert_int_equal(r.matched, 21);
	assert_int_equal(r.unmatched[0], 40);
	assert_int_equal(r.unmatched[1], 30);
	assert_twins(m, 21);
	assert_int_equal(r.offset_n, 20);
	assert_int_equal(r.offset_ns, -777 * MS);
}

static void test_merge_drift(void **state)
{
	/* 50 ppm over 20 s: 1 ms of drift, more than the tolerance; two identical
	 * connections 400 us apart */
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	struct twin_spec sp = { 2 * 1000000000LL, 50e-6, 80 * US, 20 * US };
	for (uint32_t k = 0; k < 200; k++)
		for (uint32_t th = 0; th < 2; th++)
			add_twins(m, &sp, th, (uint16_t)(40000 + th), (uint16_t)(50000 + th), 2 + 2 * k,
				  T0 + (int64_t)k * 100 * MS + th * 400 * US, "echoString", th * 1000 + k, true, true);
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.matched, 400);
	assert_twins(m, 400);
	assert_true(r.drift_ppm > 49 && r.drift_ppm < 51);
}

static void test_merge_swapped_and_bounded(void **state)
{
	/* the server capture given as the client one: nothing plausible matches */
	struct gs_merge *m = merge_new(0);
	struct gs_merge *b;
	struct gs_merge_result r;
	struct twin_spec sp = { 0, 0, 100 * US, 50 * US };
	for (uint32_t k = 0; k < 20; k++) {
		struct gs_call c = answered(40000, 2 + 2 * k, T0 + (int64_t)k * MS, 5 * US, 250 * US, 5 * US);
		struct gs_call s = answered(40000, 2 + 2 * k, T0 + (int64_t)k * MS + 100 * US, 5 * US, 50 * US, 5 * US);
		gs_merge_add_named(m, GS_MERGE_CLIENT, "x", &s);
		gs_merge_add_named(m, GS_MERGE_SERVER, "x", &c);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_true(r.matched == 0 || r.looks_swapped);
	assert_int_equal(gs_merge_run(m, &r), EALREADY);

	/* at most 10 calls per side are kept, the rest counted */
	b = merge_new(10);
	for (uint32_t k = 0; k < 25; k++)
		add_twins(b, &sp, 1, 40000, 50000, 2 + 2 * k, T0 + (int64_t)k * MS, "x", k, true, true);
	assert_int_equal(gs_merge_run(b, &r), 0);
	assert_int_equal(r.calls[0], 10);
	assert_int_equal(r.dropped[0], 15);
	assert_int_equal(r.dropped[1], 15);
	assert_int_equal(r.matched, 10);
	assert_twins(b, 10);
}

static void test_merge_unrelated(void **state)
{
	/* the same program run twice, captured once each: same operations, request
	 * ids and sizes, but its calls come at another pace (1.07 ms apart instead
	 * of 1 ms) and the offsets they suggest drift apart: nothing may match */
	struct gs_merge *m = merge_new(0);
	struct gs_merge_result r;
	for (uint32_t k = 0; k < 200; k++) {
		struct gs_call c = answered(40000, 2 + 2 * k, T0 + (int64_t)k * MS, 5 * US, 100 * US, 5 * US);
		struct gs_call s = answered(40000, 2 + 2 * k, T0 + 3600 * 1000 * MS + (int64_t)k * 1070 * US, 5 * US,
					    60 * US, 5 * US);
		gs_merge_add_named(m, GS_MERGE_CLIENT, k % 3 ? "echoString" : "slow", &c);
		gs_merge_add_named(m, GS_MERGE_SERVER, k % 3 ? "echoString" : "slow", &s);
	}
	assert_int_equal(gs_merge_run(m, &r), 0);
	assert_int_equal(r.matched, 0);
	assert_int_equal(r.streams_matched, 0);
	assert_false(r.offset_known);
}

static void test_merge_to_call(void **state)
{
	struct gs_merge *m = merge_new(0);
	struct gs_call c = answered(40000, 7, T0, US, 2 * US, 3 * US), back;
	size_t n;
	c.flags |= GS_CF_CAPTURE_LOSS;
	gs_merge_add_named(m, GS_MERGE_CLIENT, "opname", &c);
	gs_merge_to_call(gs_merge_get(m, GS_MERGE_CLIENT, 0), &back);
	assert_int_equal(back.request_id, 7);
	assert_int_equal(back.flags, c.flags);
	assert_int_equal(back.t_reply_last, c.t_reply_last);
	assert_int_equal(back.request_bytes, 100);
	assert_memory_equal(gs_intern_get(gs_merge_strings(m), back.op, &n), "opname", 6);
	assert_int_equal(n, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_offset_asymmetric),
		UT(test_offset_disagreeing),
		UT(test_order_swapped),
		UT(test_order_same_capture),
		UT(test_offset_drift),
		UT(test_offset_no_false_drift),
		UT(test_offset_none),
		UT(test_merge_identical_connections),
		UT(test_merge_partial_and_unmatched),
		UT(test_merge_drift),
		UT(test_merge_swapped_and_bounded),
		UT(test_merge_unrelated),
		UT(test_merge_to_call),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
