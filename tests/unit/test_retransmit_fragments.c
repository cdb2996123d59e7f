/* SPDX-License-Identifier: BSD-2-Clause */
/* Retransmissions are charged to the calls whose own messages they overlap
 * (Request, Reply and their Fragments), once per call and segment, as
 * Wireshark's per-frame retransmission flags are (tests/oracle/tshark_pairs.py):
 * not to a call whose first..last span merely encloses them, which it does
 * when GIOP 1.2 Fragments of several messages interleave on a connection. */
#include "unit.h"
#include "../../analysis/evidence.h"

#define TS(ms) (T0 + (int64_t)(ms) * MS)

static const struct gs_call *call_of(const struct sink *s, uint32_t rid)
{
	const struct got *g = sink_find(s, rid, 0);
	assert_non_null(g);
	return &g->c;
}

/* A connection whose requests 21 and 22, and replies, interleave their fragments:
 *   client: R21(more) R22(more) F22a(more) F21(last) F22b(last)
 *   server: P21(more) P22(more) P21f(last) P22f(last)                        */
struct two {
	struct ub w;
	size_t o[9], l[9];
};
enum { R21, R22, F22A, F21, F22B, P21, P22, P21F, P22F };

static void two_build(struct two *t)
{
	ub_init(&t->w, false);
#define PUT(i, expr) (t->o[i] = t->w.n, t->l[i] = (expr))
	PUT(R21, ub_request_ex(&t->w, 2, false, 21, 3, "key1", "a", 40, true));
	PUT(R22, ub_request_ex(&t->w, 2, false, 22, 3, "key1", "b", 40, true));
	PUT(F22A, ub_fragment(&t->w, 2, false, 22, 50, true));
	PUT(F21, ub_fragment(&t->w, 2, false, 21, 60, false));
	PUT(F22B, ub_fragment(&t->w, 2, false, 22, 70, false));
	PUT(P21, ub_reply_ex(&t->w, 2, false, 21, GIOP_NO_EXCEPTION, 24, true));
	PUT(P22, ub_reply_ex(&t->w, 2, false, 22, GIOP_NO_EXCEPTION, 24, true));
	PUT(P21F, ub_fragment(&t->w, 2, false, 21, 30, false));
	PUT(P22F, ub_fragment(&t->w, 2, false, 22, 36, false));
#undef PUT
}

/* Stream offset (from the first payload byte) of message i in its direction. */
static uint32_t two_off(const struct two *t, int i)
{
	return (uint32_t)(t->o[i] - (i >= P21 ? t->o[P21] : 0));
}

static void test_interleaved_fragments_charge_their_owner(void **state)
{
	struct two t;
	struct sink s;
	struct conn c;
	struct gs_engine *e = engine_new(NULL, &s);
	uint32_t base0, base1;
	(void)state;
	two_build(&t);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	base0 = c.next[0];
	base1 = c.next[1];
	for (int i = R21; i <= F22B; i++)
		conn_send(e, &c, 0, TS(1 + i), t.w.b + t.o[i], t.l[i]);
	/* F22a again: inside 21's span (R21..F21), but 22's bytes only */
	conn_raw(e, &c, 0, TS(10), base0 + two_off(&t, F22A), c.next[1], GS_TCP_ACK,
		 t.w.b + t.o[F22A], t.l[F22A], CAP_ALL);
	/* F21 again: inside 22's span (R22..F22b), but 21's bytes only */
	conn_raw(e, &c, 0, TS(11), base0 + two_off(&t, F21), c.next[1], GS_TCP_ACK,
		 t.w.b + t.o[F21], t.l[F21], CAP_ALL);
	/* everything again in one segment: once per call, however many of its
	 * messages the segment holds */
	conn_raw(e, &c, 0, TS(12), base0, c.next[1], GS_TCP_ACK, t.w.b, t.o[P21], CAP_ALL);
	for (int i = P21; i <= P22F; i++)
		conn_send(e, &c, 1, TS(20 + i), t.w.b + t.o[i], t.l[i]);
	/* P22 again: between P21 and P21f, 22's reply only */
	conn_raw(e, &c, 1, TS(30), base1 + two_off(&t, P22), c.next[0], GS_TCP_ACK,
		 t.w.b + t.o[P22], t.l[P22], CAP_ALL);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	assert_int_equal(call_of(&s, 21)->request_bytes, t.l[R21] + t.l[F21]);
	assert_int_equal(call_of(&s, 22)->reply_bytes, t.l[P22] + t.l[P22F]);
	assert_int_equal(call_of(&s, 21)->retransmits, 2);     /* F21, all */
	assert_int_equal(call_of(&s, 22)->retransmits, 3);     /* F22a, all, P22 */
	assert_int_equal(gs_engine_counters(e)->retransmits, 4);
	assert_int_equal(gs_engine_counters(e)->rtx_charged_by_span, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&t.w);
}

/* A retransmission of bytes held out of order is charged when its messages are
 * decoded: once per call, though it holds two of 22's fragments. */
static void test_held_retransmission_once_per_call(void **state)
{
	struct two t;
	struct sink s;
	struct conn c;
	struct gs_engine *e = engine_new(NULL, &s);
	uint32_t base0;
	size_t x0, xn;
	(void)state;
	two_build(&t);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	base0 = c.next[0];
	x0 = t.o[F22A];
	xn = t.o[P21] - x0; /* F22a F21 F22b */
	conn_send(e, &c, 0, TS(1), t.w.b, t.l[R21]);
	/* R22 is late: F22a..F22b are held, and come again while held */
	conn_raw(e, &c, 0, TS(2), base0 + (uint32_t)x0, c.next[1], GS_TCP_ACK, t.w.b + x0, xn, CAP_ALL);
	conn_raw(e, &c, 0, TS(3), base0 + (uint32_t)x0, c.next[1], GS_TCP_ACK, t.w.b + x0, xn, CAP_ALL);
	assert_int_equal(gs_engine_counters(e)->retransmits, 1);
	conn_raw(e, &c, 0, TS(4), base0 + (uint32_t)t.o[R22], c.next[1], GS_TCP_ACK, t.w.b + t.o[R22],
		 t.l[R22], CAP_ALL);
	c.next[0] = base0 + (uint32_t)t.o[P21];
	for (int i = P21; i <= P22F; i++)
		conn_send(e, &c, 1, TS(20 + i), t.w.b + t.o[i], t.l[i]);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	assert_int_equal(call_of(&s, 21)->retransmits, 1);
	assert_int_equal(call_of(&s, 22)->retransmits, 1);
	/* its cost is timed at the retransmission, not at the decode */
	assert_int_equal(call_of(&s, 21)->rtx_cost_ns, TS(3) - TS(1));
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&t.w);
}

/* A retransmission of the first bytes of a message whose head is still being
 * gathered (it spans segments) is charged once the head is decoded. */
static void test_retransmission_before_head_decoded(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = engine_new(NULL, &s);
	size_t l1, or1, lr1;
	uint32_t base0;
	(void)state;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 31, "longOperationName", 100);
	or1 = w.n;
	lr1 = ub_reply(&w, 2, false, 31, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	base0 = c.next[0];
	conn_send(e, &c, 0, TS(1), w.b, 20);               /* not the operation yet */
	conn_raw(e, &c, 0, TS(2), base0, c.next[1], GS_TCP_ACK, w.b, 20, CAP_ALL);
	conn_send(e, &c, 0, TS(3), w.b + 20, l1 - 20);
	conn_send(e, &c, 1, TS(4), w.b + or1, lr1);
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.retransmits, 1);
	assert_int_equal(gs_engine_counters(e)->retransmits, 1);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* The message log is bounded: bytes of messages it no longer holds are charged
 * by spans again, and a span that encloses other calls' messages is counted as
 * a guess. */
static void test_log_bound_falls_back_on_spans(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = engine_new(NULL, &s);
	size_t la, lf, of, o100, l100;
	const uint32_t n = GS_MSGLOG + 10;
	uint32_t base0;
	(void)state;
	ub_init(&w, false);
	la = ub_request_ex(&w, 2, false, 1, 3, "key1", "big", 16, true);
	o100 = w.n;
	l100 = ub_request_ex(&w, 2, false, 100, 0, "key1", "note", 8, false);
	for (uint32_t i = 1; i < n; i++)
		ub_request_ex(&w, 2, false, 100 + i, 0, "key1", "note", 8, false);
	of = w.n;
	lf = ub_fragment(&w, 2, false, 1, 16, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	base0 = c.next[0];
	conn_send(e, &c, 0, TS(1), w.b, la);
	conn_send(e, &c, 0, TS(2), w.b + o100, of - o100);
	conn_send(e, &c, 0, TS(3), w.b + of, lf);
	/* oneway 100 again: logged no more, inside call 1's span */
	conn_raw(e, &c, 0, TS(4), base0 + (uint32_t)o100, c.next[1], GS_TCP_ACK, w.b + o100, l100,
		 CAP_ALL);
	/* the last oneway again: still logged, charged to it alone */
	conn_raw(e, &c, 0, TS(5), base0 + (uint32_t)(of - l100), c.next[1], GS_TCP_ACK,
		 w.b + of - l100, l100, CAP_ALL);
	assert_int_equal(gs_engine_counters(e)->rtx_charged_by_span, 1);
	gs_engine_finish(e);
	assert_int_equal(s.n, n + 1);
	assert_int_equal(call_of(&s, 100)->retransmits, 1);
	assert_int_equal(call_of(&s, 100 + n - 1)->retransmits, 1);
	assert_int_equal(call_of(&s, 1)->retransmits, 1); /* the guess */
	assert_int_equal(call_of(&s, 1)->request_bytes, la + lf);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_interleaved_fragments_charge_their_owner),
		UT(test_held_retransmission_once_per_call),
		UT(test_retransmission_before_head_decoded),
		UT(test_log_bound_falls_back_on_spans),
	};
	return cmocka_run_group_tests_name("test_retransmit_fragments", tests, NULL, NULL);
}
