/* SPDX-License-Identifier: BSD-2-Clause */
/* The tail's `downstream` reason and its chain, on calls built here with their
 * nesting fields set as the nesting stage would (a client -> relay -> back end
 * chain whose times are known):
 *   ordered   the parent comes first (start order), its child later: the
 *             child joins the parent's chain
 *   live      the child ends first: the parent kept later finds it
 *   deep      three tiers: the reason names each tier's own reasons, nested
 *   own       the server's own time dominates: the reasons are as before
 *   unseen    the child never comes: named from the parent, "not seen"
 *   depth     a chain deeper than GS_TAIL_DEPTH ends in a hop "depth"
 *   ring      a child pushed out of the recent ring before its parent: not seen
 *   evicted   kept parents replaced by slower calls give their chains back
 *             (ASan: nothing leaks, nothing is read after it is freed) */
#include "unit.h"
#include "../../analysis/tail.h"

#define US 1000LL
#define T0 1700000000000000000LL

struct fix {
	struct gs_intern s;
	struct gs_tail t;
};

static void fix_free(void *p)
{
	struct fix *f = p;
	gs_tail_free(&f->t);
	gs_intern_free(&f->s);
	free(f);
}

static struct fix *fix_new(uint32_t keep)
{
	struct fix *f = calloc(1, sizeof *f);
	assert_non_null(f);
	assert_int_equal(gs_intern_init(&f->s, 64, 4096), 0);
	assert_int_equal(gs_tail_init(&f->t, keep), 0);
	ut_keep(f, fix_free);
	return f;
}

static void ep(struct gs_endpoint *e, uint8_t host, uint16_t port)
{
	memset(e, 0, sizeof *e);
	e->family = 4;
	e->addr[0] = 10;
	e->addr[3] = host;
	e->port = port;
}

/* An answered call from host `cl` to host `sv`, request at `t` us (100 us to
 * cross), the reply `srv` us after the request's end (100 us to cross). */
static struct gs_call mk(struct fix *f, uint8_t cl, uint16_t clport, uint8_t sv, uint32_t rid, const char *op,
			 int64_t t, int64_t srv)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	ep(&c.client, cl, clport);
	ep(&c.server, sv, 2809);
	c.request_id = rid;
	c.major = 1;
	c.minor = 2;
	c.kind = GS_KIND_REQUEST;
	c.outcome = GS_OUT_REPLY;
	c.flags = GS_CF_REQ_DONE | GS_CF_REP_SEEN | GS_CF_REP_DONE | GS_CF_OP_KNOWN;
	c.op = gs_intern(&f->s, op, strlen(op));
	c.t_request_first = T0 + t * US;
	c.t_request_last = c.t_request_first + 100 * US;
	c.t_reply_first = c.t_request_last + srv * US;
	c.t_reply_last = c.t_reply_first + 100 * US;
	c.t_done = c.t_reply_last;
	return c;
}

/* `p` was held `held` us by `c` (its nested call open longest), nested calls
 * open `down` us of its server time; `c` made while serving `p`. */
static void nest(struct fix *f, struct gs_call *p, struct gs_call *c, int64_t down, int64_t held)
{
	p->downstream_ns = down * US;
	p->hold_client = c->client;
	p->hold_server = c->server;
	p->hold_request_id = c->request_id;
	p->hold_op = c->op;
	p->hold_ns = held * US;
	c->parent_client = p->client;
	c->parent_server = p->server;
	c->parent_request_id = p->request_id;
	c->parent_basis = GS_PARENT_TIME;
	(void)f;
}

static char *tail_out(struct gs_tail *t, bool jsonl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	gs_tail_write(f, jsonl, t);
	assert_int_equal(fclose(f), 0);
	ut_keep(buf, free);
	return buf;
}

/* The relay's call (20.1 ms of server time, 20.0 ms of it waiting for the back
 * end) and the back end's (19.9 ms, all its own). */
static void relay_pair(struct fix *f, struct gs_call *top, struct gs_call *back)
{
	*top = mk(f, 1, 40000, 2, 1, "forward", 0, 20100);
	*back = mk(f, 2, 50000, 3, 7, "slow", 150, 19800);
	nest(f, top, back, 20000, 20000);
}

static const char RELAY_TEXT[] =
	"server 20100.0 us (99%); downstream 20000.0 us (100% of server) in nested calls, longest slow at "
	"10.0.0.3:2809 request 7, 20000.0 us -> [server 19800.0 us (99%)]";

static void check_relay(struct gs_tail *t)
{
	char *text = tail_out(t, false), *json = tail_out(t, true);
	assert_non_null(strstr(text, RELAY_TEXT));
	/* the relay's call first (slowest), then the back end's as a row of its own */
	assert_true(strstr(text, "forward") < strstr(text, "\n   20000.000"));
	assert_non_null(strstr(json, "\"operation\":\"forward\",\"total_us\":20300.000,\"server_us\":20100.000,"
				     "\"network_us\":200.000,\"downstream_us\":20000.000,\"tags\":[\"server\",\"downstream\"]"));
	assert_non_null(strstr(json, ",\"chain\":[{\"client\":\"10.0.0.2:50000\",\"server\":\"10.0.0.3:2809\","
				     "\"request_id\":7,\"operation\":\"slow\",\"held_us\":20000.000,\"seen\":true,"
				     "\"total_us\":20000.000,\"server_us\":19800.000,\"network_us\":200.000,"
				     "\"downstream_us\":0.000,\"tags\":[\"server\"],\"reasons\":\"server 19800.0 us (99%)\"}]}\n"));
}

static void test_ordered(void **state)
{
	struct fix *f = fix_new(4);
	struct gs_call top, back;
	(void)state;
	relay_pair(f, &top, &back);
	gs_tail_add_strings(&f->t, &f->s, &top, NULL);
	gs_tail_add_strings(&f->t, &f->s, &back, NULL);
	assert_int_equal(f->t.n, 2);
	check_relay(&f->t);
}

static void test_live(void **state)
{
	struct fix *f = fix_new(4);
	struct gs_call top, back, other;
	(void)state;
	relay_pair(f, &top, &back);
	/* another nested call of the relay, ended between: not the one that held it */
	other = mk(f, 2, 50001, 3, 7, "slow", 200, 50);
	other.parent_basis = GS_PARENT_TIME;
	gs_tail_add_strings(&f->t, &f->s, &back, NULL);
	gs_tail_add_strings(&f->t, &f->s, &other, NULL);
	gs_tail_add_strings(&f->t, &f->s, &top, NULL);
	check_relay(&f->t);
}

static void test_deep(void **state)
{
	struct fix *f = fix_new(1);
	struct gs_call a = mk(f, 1, 40000, 2, 1, "forward", 0, 30000);
	struct gs_call b = mk(f, 2, 50000, 3, 2, "relay2", 100, 29700);
	struct gs_call c = mk(f, 3, 60000, 4, 3, "slow", 200, 29000);
	char *text, *json;
	(void)state;
	nest(f, &a, &b, 29900, 29900);
	nest(f, &b, &c, 29200, 29200);
	/* live order: deepest first, and only the top kept as a row (tail of 1) */
	gs_tail_add_strings(&f->t, &f->s, &c, NULL);
	gs_tail_add_strings(&f->t, &f->s, &b, NULL);
	gs_tail_add_strings(&f->t, &f->s, &a, NULL);
	assert_int_equal(f->t.n, 1);
	text = tail_out(&f->t, false);
	assert_non_null(strstr(text, "longest relay2 at 10.0.0.3:2809 request 2, 29900.0 us -> [server 29700.0 us "
				     "(99%); downstream 29200.0 us (98% of server) in nested calls, longest slow at "
				     "10.0.0.4:2809 request 3, 29200.0 us -> [server 29000.0 us (99%)]]\n"));
	json = tail_out(&f->t, true);
	assert_non_null(strstr(json, "\"request_id\":2,\"operation\":\"relay2\",\"held_us\":29900.000,\"seen\":true"));
	assert_non_null(strstr(json, "\"tags\":[\"server\",\"downstream\"],\"reasons\":\"server 29700.0 us"));
	assert_non_null(strstr(json, "\"request_id\":3,\"operation\":\"slow\",\"held_us\":29200.000,\"seen\":true"));
	assert_non_null(strstr(json, "\"reasons\":\"server 29000.0 us (99%)\"}]}\n"));
}

static void test_own_time(void **state)
{
	struct fix *f = fix_new(2);
	struct gs_call top, back;
	char *text, *json;
	(void)state;
	top = mk(f, 1, 40000, 2, 1, "forward", 0, 20100);
	back = mk(f, 2, 50000, 3, 7, "lookup", 150, 4800);
	/* 5 ms of 20.1 with the nested call open: the relay's own time dominates */
	nest(f, &top, &back, 5000, 5000);
	gs_tail_add_strings(&f->t, &f->s, &top, NULL);
	gs_tail_add_strings(&f->t, &f->s, &back, NULL);
	text = tail_out(&f->t, false);
	assert_non_null(strstr(text, " server 20100.0 us (99%)\n"));
	assert_null(strstr(text, "downstream"));
	json = tail_out(&f->t, true);
	assert_non_null(strstr(json, "\"downstream_us\":5000.000,\"tags\":[\"server\"],\"reasons\":\"server 20100.0 us (99%)\""));
	/* the chain is there for a script all the same */
	assert_non_null(strstr(json, "\"chain\":[{\"client\":\"10.0.0.2:50000\""));
}

static void test_unseen(void **state)
{
	struct fix *f = fix_new(2);
	struct gs_call top, back;
	char *text, *json;
	(void)state;
	relay_pair(f, &top, &back);
	gs_tail_add_strings(&f->t, &f->s, &top, NULL);
	text = tail_out(&f->t, false);
	assert_non_null(strstr(text, "longest slow at 10.0.0.3:2809 request 7, 20000.0 us (not seen)\n"));
	json = tail_out(&f->t, true);
	assert_non_null(strstr(json, "\"operation\":\"slow\",\"held_us\":20000.000,\"seen\":false,\"why\":\"not seen\"}]}\n"));
}

static void test_depth(void **state)
{
	struct fix *f = fix_new(1);
	struct gs_call c[GS_TAIL_DEPTH + 2];
	char *json;
	const char *p;
	int seen = 0;
	(void)state;
	for (int i = 0; i < GS_TAIL_DEPTH + 2; i++)
		c[i] = mk(f, (uint8_t)(1 + i), (uint16_t)(40000 + i), (uint8_t)(2 + i), (uint32_t)i, "hop",
			  100 * i, 50000 - 300 * i);
	for (int i = 0; i + 1 < GS_TAIL_DEPTH + 2; i++)
		nest(f, &c[i], &c[i + 1], 50000 - 300 * (i + 1), 50000 - 300 * (i + 1));
	/* start order */
	for (int i = 0; i < GS_TAIL_DEPTH + 2; i++)
		gs_tail_add_strings(&f->t, &f->s, &c[i], NULL);
	json = tail_out(&f->t, true);
	for (p = json; (p = strstr(p, "\"seen\":true")) != NULL; p++)
		seen++;
	assert_int_equal(seen, GS_TAIL_DEPTH);
	assert_non_null(strstr(json, "\"seen\":false,\"why\":\"depth\"}]}\n"));
}

static void test_ring(void **state)
{
	struct fix *f = fix_new(1);
	struct gs_call top, back, o;
	char *text;
	(void)state;
	relay_pair(f, &top, &back);
	gs_tail_add_strings(&f->t, &f->s, &back, NULL);
	/* GS_TAIL_RECENT other nested calls end before the parent: its child is gone */
	for (uint32_t i = 0; i < GS_TAIL_RECENT; i++) {
		o = mk(f, 2, 50001, 3, 100 + i, "other", 200, 10);
		o.parent_basis = GS_PARENT_TIME;
		gs_tail_add_strings(&f->t, &f->s, &o, NULL);
	}
	gs_tail_add_strings(&f->t, &f->s, &top, NULL);
	text = tail_out(&f->t, false);
	assert_non_null(strstr(text, "request 7, 20000.0 us (not seen)\n"));
}

static void test_evicted(void **state)
{
	struct fix *f = fix_new(2);
	struct gs_call top, back, big;
	char *text;
	(void)state;
	for (uint32_t i = 0; i < 8; i++) {
		/* a parent and its child, each slower than the last: the kept ones
		 * are replaced, their chains reused */
		relay_pair(f, &top, &back);
		top.request_id = back.request_id = 10 + i;
		top.hold_request_id = back.request_id;
		top.t_reply_last += (int64_t)i * US;
		gs_tail_add_strings(&f->t, &f->s, &top, NULL);
		gs_tail_add_strings(&f->t, &f->s, &back, NULL);
	}
	big = mk(f, 1, 40001, 2, 99, "huge", 0, 90000);
	gs_tail_add_strings(&f->t, &f->s, &big, NULL);
	text = tail_out(&f->t, false);
	assert_non_null(strstr(text, "huge"));
	assert_non_null(strstr(text, "request 17, 20000.0 us -> [server 19800.0 us (99%)]"));
	assert_int_equal(f->t.chains_refused, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_ordered), UT(test_live), UT(test_deep), UT(test_own_time),
		UT(test_unseen), UT(test_depth), UT(test_ring), UT(test_evicted),
	};
	return cmocka_run_group_tests_name("test_tail", tests, NULL, NULL);
}
