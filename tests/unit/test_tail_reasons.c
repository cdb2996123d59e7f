/* SPDX-License-Identifier: BSD-2-Clause */
/* The tail's reasons on crafted connections whose cause is known:
 *   queued       a short call sent while a long one is served on a connection
 *                answered in order waits for it (the culprit is the long one, the
 *                wait is the culprit's reply end - this request's end); not when
 *                its reply comes long after the culprit's, nor between two calls
 *                served at the same time (a connection whose replies came out of
 *                request order), nor behind a call sent after it;
 *   zero-window  the client advertises a zero window in the middle of a reply,
 *                then opens it: the call is charged the time it was shut;
 * and the split the tail writes (network_us, attach's process times). */
#include "unit.h"
#include "../../analysis/tail.h"

#define TS(ms) (T0 + (int64_t)((ms) * (double)MS))

/* Every call goes to the sink (for its fields) and to a tail of 16. */
struct run {
	struct sink s;
	struct gs_tail t;
};

static void run_fn(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	struct run *r = arg;
	sink_fn(&r->s, e, c);
	gs_tail_add(&r->t, e, c);
}

/* On the heap, as the teardown frees what a failed test left (a tail's array
 * is one block: freeing it is gs_tail_free). */
static struct gs_engine *run_new(struct run **rp)
{
	struct gs_engine *e = NULL;
	struct gs_config cfg;
	struct run *r = calloc(1, sizeof *r);
	assert_non_null(r);
	ut_keep(r, free);
	gs_config_default(&cfg);
	assert_int_equal(gs_tail_init(&r->t, 16), 0);
	ut_keep(r->t.v, free);
	assert_int_equal(gs_engine_new(&e, &cfg, run_fn, r), 0);
	ut_keep(e, ut_engine_free);
	*rp = r;
	return e;
}

static const struct gs_call *call_of(const struct run *r, uint32_t rid)
{
	const struct got *g = sink_find(&r->s, rid, 0);
	assert_non_null(g);
	return &g->c;
}

/* One GIOP 1.2 message per segment, built in w. */
static void request(struct gs_engine *e, struct conn *c, struct ub *w, double ms, uint32_t rid, const char *op)
{
	ub_reset(w);
	ub_request(w, 2, false, rid, op, 8);
	conn_send(e, c, 0, TS(ms), w->b, w->n);
}

static void reply(struct gs_engine *e, struct conn *c, struct ub *w, double ms, uint32_t rid)
{
	ub_reset(w);
	ub_reply(w, 2, false, rid, 8);
	conn_send(e, c, 1, TS(ms), w->b, w->n);
}

/* The tail as JSON lines. */
static char *tail_json(struct gs_tail *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	gs_tail_write(f, true, t);
	assert_int_equal(fclose(f), 0);
	ut_keep(buf, free);
	return buf;
}

/* The JSON line of request rid in a tail's output. */
static const char *line_of(const char *json, uint32_t rid, char *out, size_t len)
{
	char key[40];
	const char *p, *end;
	snprintf(key, sizeof key, "\"request_id\":%u,", rid);
	p = strstr(json, key);
	assert_non_null(p);
	while (p > json && p[-1] != '\n')
		p--;
	end = strchr(p, '\n');
	assert_non_null(end);
	assert_true((size_t)(end - p) < len);
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return out;
}

/* Short request 2 sent 1 ms after long request 1; the server answers in order:
 * 1 at 21 ms, 2 right after (0.2 ms).  2 waited 21 - 1 = 20 ms behind 1. */
static void test_queued_short_behind_long(void **state)
{
	struct run *r;
	struct conn c;
	struct ub w;
	struct gs_engine *e = run_new(&r);
	const struct gs_call *c1, *c2;
	char buf[512], line[1024];
	const char *json;
	unsigned tags;
	(void)state;
	ub_init(&w, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	request(e, &c, &w, 1, 1, "long");
	request(e, &c, &w, 2, 2, "short");
	reply(e, &c, &w, 22, 1);
	reply(e, &c, &w, 22.2, 2);
	gs_engine_finish(e);
	c1 = call_of(r, 1);
	c2 = call_of(r, 2);
	assert_int_equal(c1->queued_ns, 0);
	assert_int_equal(c2->queued_ns, 20 * MS);
	assert_int_equal(c2->queued_rid, 1);
	tags = gs_call_reasons(c2, "long", buf, sizeof buf);
	assert_true(tags & GS_TAG_QUEUED);
	assert_non_null(strstr(buf, "queued 20000.0 us behind request 1 (long)"));
	/* through the tail: the culprit's operation, the tag */
	json = tail_json(&r->t);
	line_of(json, 2, line, sizeof line);
	assert_non_null(strstr(line, "\"queued\""));
	assert_non_null(strstr(line, "behind request 1 (long)"));
	line_of(json, 1, line, sizeof line);
	assert_null(strstr(line, "queued"));
	ub_free(&w);
	conn_free(&c);
}

/* Request 2's reply comes 20 ms after the culprit's (it waited 20 ms, then was
 * served as long itself): its reply is not right after the culprit's, so the
 * wait is not what made it slow, and no tag; nor for a call whose culprit
 * ended 0.1 ms after it was sent. */
static void test_queued_not_when_reply_late(void **state)
{
	struct run *r;
	struct conn c;
	struct ub w;
	struct gs_engine *e = run_new(&r);
	(void)state;
	ub_init(&w, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	request(e, &c, &w, 1, 1, "long");
	request(e, &c, &w, 2, 2, "long");
	reply(e, &c, &w, 22, 1);
	reply(e, &c, &w, 42, 2);
	request(e, &c, &w, 50, 3, "short");
	request(e, &c, &w, 50.9, 4, "long");
	reply(e, &c, &w, 51, 3);
	reply(e, &c, &w, 71, 4);
	gs_engine_finish(e);
	for (uint32_t rid = 1; rid <= 4; rid++)
		assert_int_equal(call_of(r, rid)->queued_ns, 0);
	ub_free(&w);
	conn_free(&c);
}

/* The server answered 2 (sent after 1) before 1: it serves this connection's
 * calls concurrently.  Then two slow calls 3 and 4, sent 1 ms apart and served
 * at the same time, end 0.5 ms apart -- on the wire exactly like 2 queued
 * behind 1 in test_queued_short_behind_long -- and must not tag each other;
 * nor is 1 queued behind 2 (sent after it). */
static void test_concurrent_slow_calls_not_queued(void **state)
{
	struct run *r;
	struct conn c;
	struct ub w;
	struct gs_engine *e = run_new(&r);
	(void)state;
	ub_init(&w, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	request(e, &c, &w, 1, 1, "slow");
	request(e, &c, &w, 2, 2, "fast");
	reply(e, &c, &w, 3, 2);
	reply(e, &c, &w, 21, 1);
	request(e, &c, &w, 30, 3, "slow");
	request(e, &c, &w, 31, 4, "slow");
	reply(e, &c, &w, 50, 3);
	reply(e, &c, &w, 50.5, 4);
	gs_engine_finish(e);
	for (uint32_t rid = 1; rid <= 4; rid++)
		assert_int_equal(call_of(r, rid)->queued_ns, 0);
	ub_free(&w);
	conn_free(&c);
}

/* Like conn_send, with the TCP window field given. */
static void send_win(struct gs_engine *e, struct conn *c, int d, int64_t ts, const void *data, size_t len,
		     uint16_t window)
{
	struct pk p;
	size_t n;
	uint8_t *copy;
	pk_defaults4(&p);
	memcpy(p.src, c->addr[d], 16);
	memcpy(p.dst, c->addr[!d], 16);
	p.sport = c->port[d];
	p.dport = c->port[!d];
	p.seq = c->next[d];
	p.ack = c->next[!d];
	p.flags = GS_TCP_ACK | (len ? GS_TCP_PSH : 0);
	p.window = window;
	p.payload = data;
	p.len = len;
	n = pk_build(c->frame, &p);
	copy = exact_copy(c->frame, n);
	gs_engine_frame(e, c->dlt, ts, copy, (uint32_t)n, (uint32_t)n);
	free(copy);
	c->next[d] += (uint32_t)len;
}

/* A 3000-byte reply: its first 1000 bytes at 2 ms, then the client's receive
 * window is 0 (its ACK at 3 ms) until its window update at 33 ms, and the rest
 * comes at 34 ms.  The call is tagged zero-window for the 30 ms. */
static void test_zero_window_mid_reply(void **state)
{
	struct run *r;
	struct conn c;
	struct ub w;
	struct gs_engine *e = run_new(&r);
	const struct gs_call *c1;
	char buf[512], line[1024];
	unsigned tags;
	int64_t net;
	(void)state;
	ub_init(&w, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	request(e, &c, &w, 1, 1, "bulk");
	ub_reset(&w);
	ub_reply(&w, 2, false, 1, 3000 - 24);
	assert_int_equal(w.n, 3000);
	send_win(e, &c, 1, TS(2), w.b, 1000, 65535);
	send_win(e, &c, 0, TS(3), NULL, 0, 0);        /* the client stopped reading */
	send_win(e, &c, 1, TS(13), NULL, 0, 65535);   /* the server's window probe: no change */
	send_win(e, &c, 0, TS(33), NULL, 0, 65535);   /* window update: reading again */
	send_win(e, &c, 1, TS(34), w.b + 1000, 2000, 65535);
	gs_engine_finish(e);
	c1 = call_of(r, 1);
	assert_int_equal(c1->zero_window_ns, 30 * MS);
	tags = gs_call_reasons(c1, "", buf, sizeof buf);
	assert_true(tags & GS_TAG_ZERO_WINDOW);
	assert_non_null(strstr(buf, "zero-window 30.000 ms"));
	/* the reply crossed in 32 ms (first to last byte), the request in 0 */
	assert_true(gs_tail_network_ns(c1, &net));
	assert_int_equal(net, 32 * MS);
	line_of(tail_json(&r->t), 1, line, sizeof line);
	assert_non_null(strstr(line, "\"zero-window\""));
	assert_non_null(strstr(line, "\"total_us\":33000.000,\"server_us\":1000.000,\"network_us\":32000.000,"));
	/* no attach: no process keys */
	assert_null(strstr(line, "server_process_us"));
	ub_free(&w);
	conn_free(&c);
}

/* The split with attach's instants: server_process_us = t5 - t4 where the
 * server was followed, null for the client (not followed); the text table gets
 * the two columns, "-" where unknown. */
static void test_split_with_attach_times(void **state)
{
	struct run *r;
	struct conn c;
	struct ub w;
	struct gs_engine *e = run_new(&r);
	struct gs_tail t;
	struct gs_call_times tm = { .client_send = 0, .server_recv = TS(1.1), .server_send = TS(20.9), .client_recv = 0 };
	char line[1024], *text = NULL;
	const char *json;
	size_t len = 0;
	FILE *f;
	(void)state;
	ub_init(&w, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	request(e, &c, &w, 1, 1, "op");
	reply(e, &c, &w, 21, 1);
	gs_engine_finish(e);
	assert_int_equal(gs_tail_init(&t, 4), 0);
	ut_keep(t.v, free);
	gs_tail_add_times(&t, e, call_of(r, 1), &tm);
	json = tail_json(&t);
	line_of(json, 1, line, sizeof line);
	assert_non_null(strstr(line, "\"network_us\":0.000,\"server_process_us\":19800.000,"
				     "\"client_syscall_us\":null,"));
	f = open_memstream(&text, &len);
	assert_non_null(f);
	gs_tail_write(f, false, &t);
	assert_int_equal(fclose(f), 0);
	ut_keep(text, free);
	assert_non_null(strstr(text, "network_us server_process_us client_syscall_us  operation"));
	assert_non_null(strstr(text, "   20000.000    20000.000        0.000         19800.000                 -  op"));
	ut_forget(t.v);
	gs_tail_free(&t);
	ub_free(&w);
	conn_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_queued_short_behind_long),
		UT(test_queued_not_when_reply_late),
		UT(test_concurrent_slow_calls_not_queued),
		UT(test_zero_window_mid_reply),
		UT(test_split_with_attach_times),
	};
	return cmocka_run_group_tests_name("test_tail_reasons", tests, NULL, NULL);
}
