/* SPDX-License-Identifier: BSD-2-Clause */
/* The lists of retransmitted ranges a direction keeps while the bytes they
 * cover are not decoded yet (a message head still being gathered, or bytes
 * held out of order) are a bounded pool like the message logs: at most
 * side_max directions (pairing.h) hold one; past it a retransmission is
 * counted in rtx_not_charged and no memory is taken; a list that drains gives
 * its slot back. Without the bound, a peer retransmitting into a half-sent
 * header on every connection cost GS_RTX_PENDING ranges per direction of the
 * whole flow table (65536 flows: 768 MiB). */
#include "unit.h"
#include "../../analysis/pairing.h"

#define TS(ms) (T0 + (int64_t)(ms) * MS)

/* Connection i: bytes [20, 40) of a request arrive before [0, 20) (held out of
 * order), then come again: a retransmission of bytes not decoded yet. (A head
 * gathered across segments is the other way in, but the head pool has the
 * same bound, so only held bytes can reach past it.) */
static void held_bytes_retransmitted(struct gs_engine *e, struct conn *c, uint32_t i,
				     const struct ub *w)
{
	uint32_t base0;
	conn_init(c, "10.0.0.1", (uint16_t)(20000 + i), "10.0.0.2", 2809, 1000 + i, 5000 + i);
	conn_handshake(e, c, TS(i));
	base0 = c->next[0];
	conn_raw(e, c, 0, TS(i) + 10 * US, base0 + 20, c->next[1], GS_TCP_ACK, w->b + 20, 20, CAP_ALL);
	conn_raw(e, c, 0, TS(i) + 20 * US, base0 + 20, c->next[1], GS_TCP_ACK, w->b + 20, 20, CAP_ALL);
}

static void test_rtx_lists_bounded_and_given_back(void **state)
{
	struct gs_config cfg;
	struct sink s;
	struct ub w;
	struct conn c;
	size_t lreq, orep, lrep;
	(void)state;
	gs_config_default(&cfg);
	cfg.max_flows = 1024;                     /* side tables: max(256, 1024/8) = 256 */
	struct gs_engine *e = engine_new(&cfg, &s);
	const struct gs_pairing *pr = gs_engine_pairing(e);
	const uint32_t cap = pr->side_max, n = cap + 44;
	assert_int_equal(cap, 256);

	ub_init(&w, false);
	lreq = ub_request(&w, 2, false, 7, "aRatherLongOperationName", 64);
	orep = w.n;
	lrep = ub_reply(&w, 2, false, 7, 8);
	assert_true(lreq > 40);

	for (uint32_t i = 0; i < n; i++) {
		held_bytes_retransmitted(e, &c, i, &w);
		conn_free(&c);
	}
	/* every direction past the pool went without a list, and said so */
	assert_int_equal(pr->rtx_lists, cap);
	assert_int_equal(gs_engine_counters(e)->rtx_not_charged, n - cap);
	assert_int_equal(gs_engine_counters(e)->retransmits, n);

	/* the first connection fills the hole and sends the rest of its request:
	 * its range is charged, the list drains and its slot is free again */
	conn_init(&c, "10.0.0.1", 20000, "10.0.0.2", 2809, 1000, 5000);
	conn_send(e, &c, 0, TS(n + 1), w.b, 20);
	c.next[0] += 20;
	conn_send(e, &c, 0, TS(n + 1) + US, w.b + 40, lreq - 40);
	assert_int_equal(pr->rtx_lists, cap - 1);
	conn_send(e, &c, 1, TS(n + 2), w.b + orep, lrep);
	conn_free(&c);

	/* a new connection can take the slot */
	held_bytes_retransmitted(e, &c, n, &w);
	conn_free(&c);
	assert_int_equal(pr->rtx_lists, cap);
	assert_int_equal(gs_engine_counters(e)->rtx_not_charged, n - cap);

	gs_engine_finish(e);
	const struct got *g = sink_find(&s, 7, 0);
	assert_non_null(g);
	/* the connection that completed: its call carries its one retransmission */
	bool found = false;
	for (size_t k = 0; k < s.n; k++)
		if (s.v[k].c.reply_bytes && s.v[k].c.retransmits == 1)
			found = true;
	assert_true(found);
	assert_int_equal(pr->rtx_lists, 0);       /* every flow ended: every list freed */
	engine_free(e);
	sink_free(&s);
	ub_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_rtx_lists_bounded_and_given_back),
	};
	return cmocka_run_group_tests_name("test_rtx_bound", tests, NULL, NULL);
}
