/* SPDX-License-Identifier: BSD-2-Clause */
/* The evidence stage on its own (analysis/evidence.c), with a pool of calls
 * and no engine: what it is given as arguments is all it reads. */
#include "unit.h"
#include "../../analysis/evidence.h"

static int64_t now;
static struct gs_counters cnt;

static struct gs_ocall *call(struct gs_calls *k, uint32_t rid, int64_t t_req_first, int64_t t_req_last)
{
	uint32_t idx = gs_call_alloc(k);
	struct gs_ocall *c = &k->calls[idx];
	memset(c, 0, sizeof *c);
	c->ext = GS_NONE;
	c->request_id = rid;
	c->t_request_first = t_req_first;
	c->t_request_last = t_req_last;
	c->flow_prev = c->flow_next = GS_NONE;
	c->where = GS_CALL_OPEN;
	return c;
}

static void test_nagle_queued_window(void **state)
{
	struct gs_calls k;
	struct gs_evidence ev = { &k, &cnt, 0 };
	struct gs_ev_dir rq;
	struct gs_ocall *a, *b;
	(void)state;
	memset(&k, 0, sizeof k);
	memset(&rq, 0, sizeof rq);
	assert_int_equal(gs_calls_init(&k, 16, false), 0);
	k.now = &now;
	k.cnt = &cnt;
	a = call(&k, 1, 0, 10);
	b = call(&k, 2, 20, 30);
	/* a 40 ms wait ended right after the peer's ACK: Nagle */
	gs_evidence_nagle(&ev, a, 1000, 40999000, 41000000, 1);
	assert_int_equal(gs_cx_peek(&k, a)->nagle_ns, 40999000);
	/* an ACK long before the last segment proves nothing */
	gs_evidence_nagle(&ev, b, 1000, 2000, 41000000, 1);
	assert_null(gs_cx_peek(&k, b));
	/* b's reply came right after a's, which it waited behind */
	gs_cx(&k, a)->t_reply_first = gs_cx(&k, a)->t_reply_last = 1000;
	gs_evidence_queued(&ev, &rq, a);
	gs_cx(&k, b)->t_reply_first = gs_cx(&k, b)->t_reply_last = 1010;
	gs_evidence_queued(&ev, &rq, b);
	assert_int_equal(gs_cx_peek(&k, b)->queued_ns, 1000 - 30);
	assert_int_equal(gs_cx_peek(&k, b)->queued_rid, 1);
	/* the connection's open calls, linked from a, waited for a window */
	k.calls[a - k.calls].flow_next = (uint32_t)(b - k.calls);
	gs_evidence_zero_window(&ev, (uint32_t)(a - k.calls), 500);
	assert_int_equal(gs_cx_peek(&k, a)->zero_window_ns, 500);
	assert_int_equal(gs_cx_peek(&k, b)->zero_window_ns, 500);
	gs_calls_free(&k);
}

/* omniORB answering one connection's calls out of order (the multiplexed
 * corpus capture): a fast call whose reply came right after another's, long
 * after its request, looks on the wire exactly like a request that waited in
 * the receive queue, and exactly like two calls served at the same time that
 * ended together. Reply order cannot tell them apart, so once the connection
 * was answered out of order the capture names no wait: the call stays
 * `server` (attach's server_queued_us measures the wait: docs/output.md). */
static void test_out_of_order_not_queued(void **state)
{
	struct gs_calls k;
	struct gs_evidence ev = { &k, &cnt, 0 };
	struct gs_ev_dir rq;
	struct gs_ocall *a, *b, *q, *fast;
	(void)state;
	memset(&k, 0, sizeof k);
	memset(&rq, 0, sizeof rq);
	assert_int_equal(gs_calls_init(&k, 16, false), 0);
	k.now = &now;
	k.cnt = &cnt;
	/* a then b; b answered first: out of order */
	a = call(&k, 2, 0, 10);
	b = call(&k, 4, 20, 30);
	gs_cx(&k, b)->t_reply_first = gs_cx(&k, b)->t_reply_last = 100;
	gs_evidence_queued(&ev, &rq, b);
	gs_cx(&k, a)->t_reply_first = gs_cx(&k, a)->t_reply_last = 500;
	gs_evidence_queued(&ev, &rq, a);
	assert_true(rq.served_concurrently);
	/* q (slow) then the fast call; the fast one's reply 16 us after q's,
	 * 23.6 ms after its own request: not tagged */
	q = call(&k, 6, 1000, 1010);
	fast = call(&k, 8, 1100, 1110);
	gs_cx(&k, q)->t_reply_first = gs_cx(&k, q)->t_reply_last = 24700;
	gs_evidence_queued(&ev, &rq, q);
	gs_cx(&k, fast)->t_reply_first = gs_cx(&k, fast)->t_reply_last = 24716;
	gs_evidence_queued(&ev, &rq, fast);
	assert_true(gs_cx_peek(&k, fast)->queued_ns == 0);
	assert_true(gs_cx_peek(&k, q)->queued_ns == 0);
	gs_calls_free(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_nagle_queued_window),
		UT(test_out_of_order_not_queued),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
