/* SPDX-License-Identifier: BSD-2-Clause */
/* gs_engine_segment: segments known by their metadata and the heads of the
 * GIOP messages that start in them (what the eBPF tap of `attach` ships). */
#include "unit.h"

#define TS(ms) (T0 + (int64_t)(ms) * MS)
#define HEAD 64   /* bytes of each message head given, as the tap's GS_TAP_HEAD_MAX */

static void check_op_eq(const struct got *g, const char *op)
{
	assert_non_null(g);
	assert_int_equal(g->oplen, strlen(op));
	assert_memory_equal(g->op, op, g->oplen);
}

static void ep_of(struct gs_endpoint *ep, const struct conn *c, int side)
{
	memset(ep, 0, sizeof *ep);
	memcpy(ep->addr, c->addr[side], 16);
	ep->port = c->port[side];
	ep->family = (uint8_t)c->ipv;
}

/* Payload [0, len) of side d at seq, with heads at the given offsets (each
 * HEAD bytes at most, never past the segment); n_heads may be 0. */
static void seg(struct gs_engine *e, struct conn *c, int d, int64_t ts, uint32_t seq, const uint8_t *data,
		uint32_t len, const uint32_t *heads, uint32_t n_heads, uint8_t flags)
{
	struct gs_piece pc[8];
	struct gs_segment s;
	memset(&s, 0, sizeof s);
	ep_of(&s.src, c, d);
	ep_of(&s.dst, c, !d);
	s.seq = seq;
	s.ack = c->next[!d];
	s.len = len;
	s.window = 1000;
	s.tcp_flags = flags;
	for (uint32_t i = 0; i < n_heads; i++) {
		pc[i].off = heads[i];
		pc[i].len = len - heads[i] < HEAD ? len - heads[i] : HEAD;
		pc[i].data = data + heads[i];
	}
	s.pieces = pc;
	s.n_pieces = n_heads;
	gs_engine_segment(e, ts, &s);
}

static struct gs_engine *new_heads(struct sink *s)
{
	struct gs_config cfg;
	gs_config_default(&cfg);
	cfg.max_flows = 64;
	cfg.max_open_calls = 256;
	cfg.max_strings = 1024;
	cfg.heads_only = true;
	return engine_new(&cfg, s);
}

/* Two requests in one segment, the second one starting mid-segment, and a
 * request whose body spans three segments: found, decoded, not "lost". */
static void test_heads_at_offsets(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_heads(&s);
	const struct gs_counters *k = gs_engine_counters(e);
	size_t l1, l2, l3, r1, r2, r3, o2, o3, p2, p3;
	uint32_t h[2];
	(void)state;
	ub_init(&w, true);
	l1 = ub_request(&w, 2, true, 2, "first", 300);
	o2 = w.n;
	l2 = ub_request(&w, 2, true, 4, "second", 100);
	o3 = w.n;
	l3 = ub_request(&w, 2, true, 6, "third", 5000);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	/* segment 1: request 2 and request 4 */
	h[0] = 0;
	h[1] = (uint32_t)o2;
	seg(e, &c, 0, TS(1), c.next[0], w.b, (uint32_t)(l1 + l2), h, 2, GS_TCP_ACK | GS_TCP_PSH);
	c.next[0] += (uint32_t)(l1 + l2);
	/* request 6 in three segments: its head in the first only */
	h[0] = 0;
	seg(e, &c, 0, TS(2), c.next[0], w.b + o3, 2000, h, 1, GS_TCP_ACK);
	seg(e, &c, 0, TS(2) + 1, c.next[0] + 2000, w.b + o3 + 2000, 2000, NULL, 0, GS_TCP_ACK);
	seg(e, &c, 0, TS(2) + 2, c.next[0] + 4000, w.b + o3 + 4000, (uint32_t)l3 - 4000, NULL, 0,
	    GS_TCP_ACK | GS_TCP_PSH);
	c.next[0] += (uint32_t)l3;
	/* the three replies in one segment */
	ub_reset(&w);
	r1 = ub_reply(&w, 2, true, 2, 8);
	p2 = w.n;
	r2 = ub_reply(&w, 2, true, 4, 8);
	p3 = w.n;
	r3 = ub_reply(&w, 2, true, 6, 3000);
	{
		uint32_t hh[3] = { 0, (uint32_t)p2, (uint32_t)p3 };
		struct gs_piece pc[3];
		struct gs_segment sg;
		memset(&sg, 0, sizeof sg);
		ep_of(&sg.src, &c, 1);
		ep_of(&sg.dst, &c, 0);
		sg.seq = c.next[1];
		sg.ack = c.next[0];
		sg.len = (uint32_t)(r1 + r2 + r3);
		sg.tcp_flags = GS_TCP_ACK | GS_TCP_PSH;
		for (int i = 0; i < 3; i++) {
			pc[i].off = hh[i];
			pc[i].len = HEAD < sg.len - hh[i] ? HEAD : sg.len - hh[i];
			pc[i].data = w.b + hh[i];
		}
		sg.pieces = pc;
		sg.n_pieces = 3;
		gs_engine_segment(e, TS(5), &sg);
		c.next[1] += sg.len;
	}
	conn_ack(e, &c, 0, TS(6));
	gs_engine_finish(e);
	assert_int_equal(s.n, 3);
	for (uint32_t rid = 2; rid <= 6; rid += 2) {
		const struct got *g = sink_find(&s, rid, 0);
		assert_non_null(g);
		assert_int_equal(g->c.outcome, GS_OUT_REPLY);
		assert_int_equal(g->c.status, GIOP_NO_EXCEPTION);
		assert_int_equal(g->c.flags & GS_CF_CAPTURE_LOSS, 0);
		assert_int_equal(g->c.t_reply_first, TS(5));
		/* the request's first byte: its sequence number is base + offset */
		assert_int_equal((uint32_t)(g->c.req_seq_base + g->c.req_off0),
				 1001u + (rid == 2 ? 0 : rid == 4 ? (uint32_t)o2 : (uint32_t)(l1 + l2)));
		assert_int_equal((uint32_t)(g->c.rep_seq_base + g->c.rep_off0),
				 5001u + (rid == 2 ? 0 : rid == 4 ? (uint32_t)p2 : (uint32_t)p3));
	}
	check_op_eq(sink_find(&s, 2, 0), "first");
	check_op_eq(sink_find(&s, 4, 0), "second");
	check_op_eq(sink_find(&s, 6, 0), "third");
	assert_int_equal(sink_find(&s, 6, 0)->c.request_bytes, l3);
	assert_int_equal(sink_find(&s, 6, 0)->c.t_request_last, TS(2) + 2);
	assert_int_equal(sink_find(&s, 6, 0)->c.reply_bytes, r3);
	/* one segment each on the wire, nothing lost, nothing truncated */
	assert_int_equal(k->segments, 5);
	assert_int_equal(k->giop_messages, 6);
	assert_int_equal(k->payload_truncated + k->giop_truncated + k->gaps + k->retransmits, 0);
	assert_int_equal(k->calls_capture_loss, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* A header cut by a segment's end: the next segment gives the rest of the head. */
static void test_head_across_segments(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_heads(&s);
	size_t l1, r1;
	uint32_t h0 = 0;
	(void)state;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 9, "split", 40);
	conn_init(&c, "10.0.0.1", 40001, "10.0.0.2", 2809, 7000, 9000);
	conn_handshake(e, &c, TS(0));
	/* 7 bytes (not even the 12-byte header), then the rest; the tap ships
	 * both parts of the head */
	seg(e, &c, 0, TS(1), c.next[0], w.b, 7, &h0, 1, GS_TCP_ACK);
	seg(e, &c, 0, TS(2), c.next[0] + 7, w.b + 7, (uint32_t)l1 - 7, &h0, 1, GS_TCP_ACK | GS_TCP_PSH);
	c.next[0] += (uint32_t)l1;
	ub_reset(&w);
	r1 = ub_reply(&w, 2, false, 9, 0);
	seg(e, &c, 1, TS(3), c.next[1], w.b, (uint32_t)r1, &h0, 1, GS_TCP_ACK | GS_TCP_PSH);
	c.next[1] += (uint32_t)r1;
	conn_ack(e, &c, 0, TS(4));
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	check_op_eq(&s.v[0], "split");
	assert_int_equal(s.v[0].c.t_request_first, TS(1));
	assert_int_equal(s.v[0].c.t_request_last, TS(2));
	assert_int_equal(s.v[0].c.flags & GS_CF_CAPTURE_LOSS, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* A segment sent again whole counts as one retransmission of its call. */
static void test_retransmission_counts_once(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_heads(&s);
	const struct gs_counters *k = gs_engine_counters(e);
	size_t l1, l2, r1;
	uint32_t h[2] = { 0, 0 };
	(void)state;
	ub_init(&w, true);
	l1 = ub_request_ex(&w, 2, true, 2, 3, UB_KEY, "op", 10, true);
	h[1] = (uint32_t)w.n;
	l2 = ub_fragment(&w, 2, true, 2, 30, false);
	conn_init(&c, "10.0.0.1", 40002, "10.0.0.2", 2809, 100, 200);
	conn_handshake(e, &c, TS(0));
	/* a request continued in a Fragment, both in one segment, sent twice */
	seg(e, &c, 0, TS(1), c.next[0], w.b, (uint32_t)(l1 + l2), h, 2, GS_TCP_ACK | GS_TCP_PSH);
	seg(e, &c, 0, TS(2), c.next[0], w.b, (uint32_t)(l1 + l2), h, 2, GS_TCP_ACK | GS_TCP_PSH);
	c.next[0] += (uint32_t)(l1 + l2);
	ub_reset(&w);
	r1 = ub_reply(&w, 2, true, 2, 0);
	h[0] = 0;
	seg(e, &c, 1, TS(3), c.next[1], w.b, (uint32_t)r1, h, 1, GS_TCP_ACK | GS_TCP_PSH);
	c.next[1] += (uint32_t)r1;
	conn_ack(e, &c, 0, TS(4));
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.retransmits, 1);
	assert_int_equal(s.v[0].c.request_bytes, l1 + l2);
	assert_int_equal(s.v[0].c.t_request_last, TS(1));
	assert_int_equal(k->retransmits, 1);
	assert_int_equal(k->segments, 3);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* A stream the tap saw open whose first data brings no head (the tap found no
 * GIOP header there: TLS, another protocol) is not IIOP: ignored, not counted
 * as truncated, nothing framed later in it. */
static void test_no_head_at_start(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c, g;
	struct gs_engine *e = new_heads(&s);
	const struct gs_counters *k = gs_engine_counters(e);
	uint8_t hello[300];
	uint32_t h0 = 0;
	size_t l1;
	(void)state;
	memset(hello, 0x16, sizeof hello);
	ub_init(&w, true);
	l1 = ub_request(&w, 2, true, 2, "first", 30);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_init(&g, "10.0.0.1", 40001, "10.0.0.2", 2809, 3000, 7000);
	conn_handshake(e, &c, TS(0));
	conn_handshake(e, &g, TS(0));
	seg(e, &c, 0, TS(1), c.next[0], hello, sizeof hello, NULL, 0, GS_TCP_ACK | GS_TCP_PSH);
	c.next[0] += sizeof hello;
	/* a GIOP head later in it: the connection is not looked at again */
	seg(e, &c, 0, TS(2), c.next[0], w.b, (uint32_t)l1, &h0, 1, GS_TCP_ACK | GS_TCP_PSH);
	/* beside it, a GIOP connection whose first segment has its head */
	seg(e, &g, 0, TS(3), g.next[0], w.b, (uint32_t)l1, &h0, 1, GS_TCP_ACK | GS_TCP_PSH);
	gs_engine_finish(e);
	assert_int_equal(k->non_giop_flows, 1);
	assert_int_equal(k->giop_truncated, 0);
	assert_int_equal(k->giop_resync_bytes, 0);
	assert_int_equal(k->giop_messages, 1);
	assert_int_equal(k->requests, 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.client.port, 40001);
	engine_free(e);
	conn_free(&c);
	conn_free(&g);
	sink_free(&s);
	ub_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_heads_at_offsets, ut_cleanup),
		cmocka_unit_test_teardown(test_head_across_segments, ut_cleanup),
		cmocka_unit_test_teardown(test_retransmission_counts_once, ut_cleanup),
		cmocka_unit_test_teardown(test_no_head_at_start, ut_cleanup),
	};
	return cmocka_run_group_tests_name("test_segment", tests, NULL, NULL);
}
