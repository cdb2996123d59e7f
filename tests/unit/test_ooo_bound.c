/* SPDX-License-Identifier: BSD-2-Clause */
/* The out-of-order hold bound (cfg.max_ooo_bytes per direction, cfg.max_ooo_total in all):
 * segments beyond a hole are held until the bound is reached; then the hole is given up
 * (ooo_dropped_bytes, one capture gap), the held bytes are delivered, the framer
 * resynchronises at the next GIOP header and the later calls pair normally. */
#include "unit.h"

#define TS(ms) (T0 + (int64_t)(ms) * MS)

/* every flag a cleanly answered call has */
#define F_ANSWERED (GS_CF_OP_KNOWN | GS_CF_REQ_DONE | GS_CF_REP_SEEN | GS_CF_REP_DONE | GS_CF_STATUS_KNOWN)

#define NREQ 7

struct msgs {
	struct ub w;
	size_t off[NREQ + 1], len[NREQ + 1];   /* requests 1..NREQ */
	size_t roff[NREQ + 1], rlen[NREQ + 1]; /* their replies */
};

/* Requests 1..NREQ (GIOP 1.2, bodies of different sizes) then their replies, in one buffer. */
static void build_msgs(struct msgs *m)
{
	ub_init(&m->w, false);
	for (uint32_t rid = 1; rid <= NREQ; rid++) {
		m->off[rid] = m->w.n;
		m->len[rid] = ub_request(&m->w, 2, false, rid, "op", 40 + 8 * rid);
	}
	for (uint32_t rid = 1; rid <= NREQ; rid++) {
		m->roff[rid] = m->w.n;
		m->rlen[rid] = ub_reply(&m->w, 2, false, rid, 8);
	}
}

static void cfg_bounds(struct gs_config *cfg, uint32_t per_dir, uint64_t total)
{
	gs_config_default(cfg);
	cfg->max_flows = 64;
	cfg->max_open_calls = 256;
	cfg->max_strings = 1024;
	cfg->max_ooo_bytes = per_dir;
	cfg->max_ooo_total = total;
}

static void check_call(const struct sink *s, uint32_t rid, uint16_t cport, int64_t rf, int64_t rl,
		       int64_t pf, int64_t pl, uint32_t flags)
{
	const struct got *g = sink_find(s, rid, cport);
	assert_non_null(g);
	assert_int_equal(g->c.outcome, GS_OUT_REPLY);
	assert_int_equal(g->c.status, GIOP_NO_EXCEPTION);
	assert_int_equal(g->c.t_request_first, rf);
	assert_int_equal(g->c.t_request_last, rl);
	assert_int_equal(g->c.t_reply_first, pf);
	assert_int_equal(g->c.t_reply_last, pl);
	assert_int_equal(g->c.flags, flags);
	assert_int_equal(g->oplen, 2);
	assert_memory_equal(g->op, "op", 2);
}

/* Per direction: a hole swallows the end of request 2 and the header of request 3;
 * requests 3 (the rest), 4 and 5 come beyond it and fill the bound exactly; request 6
 * would exceed it: the hole is given up then, not before. */
static void test_ooo_bound_per_direction(void **state)
{
	struct msgs m;
	struct sink s;
	struct conn c;
	struct gs_config cfg;
	struct gs_engine *e;
	const struct gs_counters *k;
	size_t hole, seg3;
	build_msgs(&m);
	hole = (m.len[2] - 50) + 20;
	seg3 = m.len[3] - 20;
	cfg_bounds(&cfg, (uint32_t)(seg3 + m.len[4] + m.len[5]), 1u << 20);
	e = engine_new(&cfg, &s);
	k = gs_engine_counters(e);

	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), m.w.b + m.off[1], m.len[1]);
	conn_send(e, &c, 0, TS(2), m.w.b + m.off[2], 50);
	c.next[0] += (uint32_t)hole; /* never captured */
	conn_send(e, &c, 0, TS(3), m.w.b + m.off[3] + 20, seg3);
	conn_send(e, &c, 0, TS(4), m.w.b + m.off[4], m.len[4]);
	conn_send(e, &c, 0, TS(5), m.w.b + m.off[5], m.len[5]);
	/* at the bound, not past it: everything held, nothing given up */
	assert_int_equal(k->out_of_order, 3);
	assert_int_equal(k->ooo_dropped_bytes, 0);
	assert_int_equal(k->gaps, 0);
	assert_int_equal(k->giop_resync_bytes, 0);
	/* request 1, and the head of 2 (its first 50 bytes hold its whole header) */
	assert_int_equal(k->giop_by_type[GIOP_REQUEST], 2);

	conn_send(e, &c, 0, TS(6), m.w.b + m.off[6], m.len[6]);
	assert_int_equal(k->out_of_order, 4);
	assert_int_equal(k->ooo_dropped_bytes, hole);
	assert_int_equal(k->gaps, 1);
	assert_int_equal(k->gap_bytes, hole);
	/* the header of 3 was in the hole: its 20 lost bytes and its held rest are skipped */
	assert_int_equal(k->giop_resync_bytes, m.len[3]);
	assert_int_equal(k->giop_malformed, 0);
	/* then 4, 5 and 6 (3 is lost with its header) */
	assert_int_equal(k->giop_by_type[GIOP_REQUEST], 5);

	conn_send(e, &c, 0, TS(7), m.w.b + m.off[7], m.len[7]);
	for (uint32_t rid = 1; rid <= NREQ; rid++)
		conn_send(e, &c, 1, TS(10 + rid), m.w.b + m.roff[rid], m.rlen[rid]);
	gs_engine_finish(e);

	assert_int_equal(s.n, NREQ - 1);
	assert_null(sink_find(&s, 3, 0));
	assert_int_equal(k->orphan_replies, 1);
	assert_int_equal(k->gaps, 1);
	assert_int_equal(k->ooo_dropped_bytes, hole);
	assert_int_equal(k->calls_capture_loss, 1);
	check_call(&s, 1, 0, TS(1), TS(1), TS(11), TS(11), F_ANSWERED);
	/* the last byte of 2 was never seen: its time is when the hole was given up */
	/* the rest of request 2 never came: its instants are its own packet's, not the
	 * time the hole was given up (pairs-csv.md: never another message's packet) */
	check_call(&s, 2, 0, TS(2), TS(2), TS(12), TS(12), F_ANSWERED | GS_CF_CAPTURE_LOSS);
	assert_int_equal(sink_find(&s, 2, 0)->c.request_bytes, m.len[2]);
	/* held calls keep the time the capture first saw them */
	check_call(&s, 4, 0, TS(4), TS(4), TS(14), TS(14), F_ANSWERED);
	check_call(&s, 5, 0, TS(5), TS(5), TS(15), TS(15), F_ANSWERED);
	check_call(&s, 6, 0, TS(6), TS(6), TS(16), TS(16), F_ANSWERED);
	check_call(&s, 7, 0, TS(7), TS(7), TS(17), TS(17), F_ANSWERED);
	for (size_t i = 1; i < s.n; i++)
		assert_true(s.v[i - 1].c.t_request_first <= s.v[i].c.t_request_first);

	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&m.w);
}

/* In all: connection A holds request 2 beyond its hole; connection B's request 2 beyond
 * its own hole would take the total past max_ooo_total (the per-direction bound is far):
 * B's hole is given up, A keeps waiting (its hole is a gap only at the end of input, which
 * is not a bound drop). */
static void test_ooo_bound_total(void **state)
{
	struct msgs m;
	struct sink s;
	struct conn a, b;
	struct gs_config cfg;
	struct gs_engine *e;
	const struct gs_counters *k;
	size_t hole;
	build_msgs(&m);
	hole = m.len[1] - 50;
	cfg_bounds(&cfg, 1u << 20, 2 * m.len[2] - 1);
	e = engine_new(&cfg, &s);
	k = gs_engine_counters(e);

	conn_init(&a, "10.0.0.1", 40001, "10.0.0.2", 2809, 1000, 5000);
	conn_init(&b, "10.0.0.1", 40002, "10.0.0.2", 2809, 7000, 9000);
	conn_handshake(e, &a, TS(0));
	conn_handshake(e, &b, TS(0));
	conn_send(e, &a, 0, TS(1), m.w.b + m.off[1], 50);
	a.next[0] += (uint32_t)hole;
	conn_send(e, &a, 0, TS(2), m.w.b + m.off[2], m.len[2]);
	conn_send(e, &b, 0, TS(3), m.w.b + m.off[1], 50);
	b.next[0] += (uint32_t)hole;
	assert_int_equal(k->ooo_dropped_bytes, 0);
	assert_int_equal(k->gaps, 0);
	conn_send(e, &b, 0, TS(4), m.w.b + m.off[2], m.len[2]);
	assert_int_equal(k->out_of_order, 2);
	assert_int_equal(k->ooo_dropped_bytes, hole);
	assert_int_equal(k->gaps, 1);
	assert_int_equal(k->gap_bytes, hole);
	/* B's request 1 ends in the hole (its extent is known): no resync needed */
	assert_int_equal(k->giop_resync_bytes, 0);
	/* 1 on A, 1 and 2 on B; A's 2 still held */
	assert_int_equal(k->giop_by_type[GIOP_REQUEST], 3);

	conn_send(e, &b, 1, TS(5), m.w.b + m.roff[1], m.rlen[1]);
	conn_send(e, &b, 1, TS(6), m.w.b + m.roff[2], m.rlen[2]);
	gs_engine_finish(e);

	/* A's hole, given up at the end of input, is a gap but not a bound drop */
	assert_int_equal(k->gaps, 2);
	assert_int_equal(k->gap_bytes, 2 * hole);
	assert_int_equal(k->ooo_dropped_bytes, hole);
	assert_int_equal(s.n, 4);
	check_call(&s, 1, 40002, TS(3), TS(3), TS(5), TS(5), F_ANSWERED | GS_CF_CAPTURE_LOSS);
	check_call(&s, 2, 40002, TS(4), TS(4), TS(6), TS(6), F_ANSWERED);
	assert_int_equal(sink_find(&s, 1, 40001)->c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(sink_find(&s, 2, 40001)->c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(sink_find(&s, 2, 40001)->c.t_request_first, TS(2));

	engine_free(e);
	conn_free(&a);
	conn_free(&b);
	sink_free(&s);
	ub_free(&m.w);
}

/* The segment that reaches the bound lies beyond a second hole: the first hole is given
 * up, the held bytes delivered, and that segment is held again (the bound has room now);
 * the second hole is a gap only when the receiver's ACK covers it (not a bound drop). */
static void test_ooo_bound_second_hole(void **state)
{
	struct msgs m;
	struct sink s;
	struct conn c;
	struct gs_config cfg;
	struct gs_engine *e;
	const struct gs_counters *k;
	size_t hole1, hole2;
	build_msgs(&m);
	hole1 = m.len[2] - 50;
	hole2 = m.len[4];
	cfg_bounds(&cfg, (uint32_t)(m.len[3] + m.len[5] - 1), 1u << 20);
	e = engine_new(&cfg, &s);
	k = gs_engine_counters(e);

	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 0xfffffff0u, 5000); /* seq wraps */
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), m.w.b + m.off[1], m.len[1]);
	conn_send(e, &c, 0, TS(2), m.w.b + m.off[2], 50);
	c.next[0] += (uint32_t)hole1;
	conn_send(e, &c, 0, TS(3), m.w.b + m.off[3], m.len[3]);
	c.next[0] += (uint32_t)hole2; /* request 4: never captured */
	assert_int_equal(k->gaps, 0);
	conn_send(e, &c, 0, TS(5), m.w.b + m.off[5], m.len[5]);
	assert_int_equal(k->out_of_order, 2);
	assert_int_equal(k->ooo_dropped_bytes, hole1);
	assert_int_equal(k->gaps, 1);
	assert_int_equal(k->gap_bytes, hole1);
	assert_int_equal(k->giop_resync_bytes, 0);
	assert_int_equal(k->giop_by_type[GIOP_REQUEST], 3); /* 1, 2, 3; 5 held again */

	/* the server acknowledges everything; past the grace the second hole is a gap */
	conn_ack(e, &c, 1, TS(10));
	conn_ack(e, &c, 0, TS(40));
	assert_int_equal(k->gaps, 2);
	assert_int_equal(k->gap_bytes, hole1 + hole2);
	assert_int_equal(k->ooo_dropped_bytes, hole1);
	assert_int_equal(k->giop_by_type[GIOP_REQUEST], 4); /* and 5 */
	/* a hole at a message boundary: its bytes are skipped looking for a header */
	assert_int_equal(k->giop_resync_bytes, hole2);

	for (uint32_t rid = 1; rid <= 5; rid++)
		conn_send(e, &c, 1, TS(50 + rid), m.w.b + m.roff[rid], m.rlen[rid]);
	gs_engine_finish(e);

	assert_int_equal(s.n, 4);
	assert_null(sink_find(&s, 4, 0));
	assert_int_equal(k->orphan_replies, 1);
	check_call(&s, 1, 0, TS(1), TS(1), TS(51), TS(51), F_ANSWERED);
	check_call(&s, 2, 0, TS(2), TS(2), TS(52), TS(52), F_ANSWERED | GS_CF_CAPTURE_LOSS);
	check_call(&s, 3, 0, TS(3), TS(3), TS(53), TS(53), F_ANSWERED);
	check_call(&s, 5, 0, TS(5), TS(5), TS(55), TS(55), F_ANSWERED);

	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&m.w);
}

/* One segment larger than the whole per-direction bound, nothing held: its hole is given
 * up at once and it is delivered in order. */
static void test_ooo_segment_larger_than_bound(void **state)
{
	struct msgs m;
	struct sink s;
	struct conn c;
	struct gs_config cfg;
	struct gs_engine *e;
	const struct gs_counters *k;
	size_t hole;
	build_msgs(&m);
	hole = m.len[2];
	cfg_bounds(&cfg, (uint32_t)(m.len[3] - 1), 1u << 20);
	e = engine_new(&cfg, &s);
	k = gs_engine_counters(e);

	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), m.w.b + m.off[1], m.len[1]);
	c.next[0] += (uint32_t)hole; /* request 2, whole */
	conn_send(e, &c, 0, TS(3), m.w.b + m.off[3], m.len[3]);
	assert_int_equal(k->out_of_order, 1);
	assert_int_equal(k->ooo_dropped_bytes, hole);
	assert_int_equal(k->gaps, 1);
	assert_int_equal(k->gap_bytes, hole);
	/* a hole at a message boundary: the lost bytes are skipped while looking for a header */
	assert_int_equal(k->giop_resync_bytes, hole);
	assert_int_equal(k->giop_by_type[GIOP_REQUEST], 2);
	conn_send(e, &c, 1, TS(4), m.w.b + m.roff[1], m.rlen[1]);
	conn_send(e, &c, 1, TS(5), m.w.b + m.roff[3], m.rlen[3]);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	check_call(&s, 1, 0, TS(1), TS(1), TS(4), TS(4), F_ANSWERED);
	check_call(&s, 3, 0, TS(3), TS(3), TS(5), TS(5), F_ANSWERED);

	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&m.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_ooo_bound_per_direction),
		UT(test_ooo_bound_total),
		UT(test_ooo_bound_second_hole),
		UT(test_ooo_segment_larger_than_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
