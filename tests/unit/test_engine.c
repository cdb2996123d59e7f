/* SPDX-License-Identifier: BSD-2-Clause */
/* The analysis engine: synthetic TCP/IP frames in, calls out. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"

#define TS(ms) (T0 + (int64_t)(ms) * MS)

/* every flag a cleanly answered call has */
#define F_ANSWERED (GS_CF_OP_KNOWN | GS_CF_REQ_DONE | GS_CF_REP_SEEN | GS_CF_REP_DONE | GS_CF_STATUS_KNOWN)

static void small_cfg(struct gs_config *cfg)
{
	gs_config_default(cfg);
	cfg->max_flows = 64;
	cfg->max_open_calls = 256;
	cfg->max_strings = 1024;
}

static struct gs_engine *new_small(struct sink *s)
{
	struct gs_config cfg;
	small_cfg(&cfg);
	return engine_new(&cfg, s);
}

static void check_ep(const struct gs_endpoint *ep, const char *addr, uint16_t port)
{
	uint8_t a[16] = { 0 };
	if (strchr(addr, ':')) {
		assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
		assert_int_equal(ep->family, 6);
	} else {
		assert_int_equal(inet_pton(AF_INET, addr, a), 1);
		assert_int_equal(ep->family, 4);
	}
	assert_memory_equal(ep->addr, a, 16);
	assert_int_equal(ep->port, port);
}

static void check_times(const struct gs_call *c, int64_t rf, int64_t rl, int64_t pf, int64_t pl)
{
	assert_int_equal(c->t_request_first, rf);
	assert_int_equal(c->t_request_last, rl);
	assert_int_equal(c->t_reply_first, pf);
	assert_int_equal(c->t_reply_last, pl);
}

static void check_op(const struct got *g, const char *op)
{
	assert_int_equal(g->oplen, strlen(op));
	assert_memory_equal(g->op, op, g->oplen);
}

/* ---- basics ---------------------------------------------------------------- */

static void test_engine_new_bounds(void **state)
{
	struct gs_config cfg;
	struct gs_engine *e = (struct gs_engine *)1;
	gs_config_default(&cfg);
	cfg.max_flows = 1;
	assert_int_equal(gs_engine_new(&e, &cfg, NULL, NULL), EINVAL);
	assert_null(e);
	gs_config_default(&cfg);
	cfg.max_open_calls = 1;
	assert_int_equal(gs_engine_new(&e, &cfg, NULL, NULL), EINVAL);
	gs_config_default(&cfg);
	cfg.head_max = 63;
	assert_int_equal(gs_engine_new(&e, &cfg, NULL, NULL), EINVAL);
	gs_config_default(&cfg);
	cfg.max_flows = 2;
	cfg.max_open_calls = 2;
	cfg.head_max = 64;
	assert_int_equal(gs_engine_new(&e, &cfg, NULL, NULL), 0);
	gs_engine_finish(e);
	gs_engine_free(e);
	gs_engine_free(NULL);
}

static void test_request_reply_12(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = engine_new(NULL, &s);
	const struct gs_counters *k = gs_engine_counters(e);
	size_t l1, l2, o2;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 7, "echoString", 16);
	o2 = w.n;
	l2 = ub_reply(&w, 2, false, 7, 8);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	assert_int_equal(gs_engine_open_calls(e), 1);
	conn_send(e, &c, 1, TS(3), w.b + o2, l2);
	assert_int_equal(gs_engine_open_calls(e), 0);
	/* an ended call waits for late retransmissions until the peer has
	 * acknowledged the reply */
	assert_int_equal(s.n, 0);
	conn_ack(e, &c, 0, TS(3) + 1);
	assert_int_equal(s.n, 1);
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	{
		const struct gs_call *g = &s.v[0].c;
		check_ep(&g->client, "10.0.0.1", 40000);
		check_ep(&g->server, "10.0.0.2", 2809);
		assert_int_equal(g->request_id, 7);
		assert_int_equal(g->major, 1);
		assert_int_equal(g->minor, 2);
		assert_int_equal(g->kind, GS_KIND_REQUEST);
		assert_int_equal(g->outcome, GS_OUT_REPLY);
		assert_int_equal(g->reply_type, GIOP_REPLY);
		assert_int_equal(g->status, GIOP_NO_EXCEPTION);
		assert_int_equal(g->flags, F_ANSWERED);
		assert_int_equal(g->dir, 0);
		assert_int_equal(g->request_bytes, l1);
		assert_int_equal(g->reply_bytes, l2);
		check_times(g, TS(1), TS(1), TS(3), TS(3));
		assert_int_equal(g->t_done, TS(3));
		assert_int_equal(g->retransmits, 0);
		check_op(&s.v[0], "echoString");
		assert_int_equal(s.v[0].keylen, 4);
		assert_memory_equal(s.v[0].key, "key1", 4);
		assert_int_equal(s.v[0].exclen, 0);
	}
	assert_int_equal(k->packets, 6); /* handshake, request, reply, one ACK */
	assert_int_equal(k->segments, 2);
	assert_int_equal(k->flows, 1);
	assert_int_equal(k->calls, 1);
	assert_int_equal(k->requests, 1);
	assert_int_equal(k->replies_paired, 1);
	assert_int_equal(k->giop_messages, 2);
	assert_int_equal(k->giop_by_type[GIOP_REQUEST], 1);
	assert_int_equal(k->giop_by_type[GIOP_REPLY], 1);
	assert_int_equal(k->retransmits + k->gaps + k->giop_malformed + k->giop_truncated + k->no_reply, 0);
	assert_int_equal(gs_engine_first_ts(e), TS(0));
	assert_int_equal(gs_engine_last_ts(e), TS(3) + 1);
	assert_null(gs_engine_first_malformed(e));
	assert_null(gs_engine_first_truncated(e));
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* Every version and byte order, with exceptions and RT priority carried over. */
static void test_request_reply_every_version(void **state)
{
	for (unsigned minor = 0; minor <= 3; minor++)
		for (int le = 0; le < 2; le++) {
			struct ub w;
			struct sink s;
			struct conn c;
			struct gs_engine *e = new_small(&s);
			size_t l1, l2, o2, l3, o3, l4, o4;
			ub_init(&w, le);
			/* a request with an RT priority */
			ub_giop_begin(&w, minor, le, GIOP_REQUEST, false);
			if (minor <= 1) {
				ub_u32(&w, 1);
				ub_ctx_priority(&w, !le, 300);
				ub_u32(&w, 100);
				ub_u8(&w, 1);
				if (minor == 1)
					ub_fill(&w, 0, 3);
				ub_octets(&w, "objA", 4);
				ub_str(&w, "opA");
				ub_octets(&w, "", 0);
			} else {
				ub_u32(&w, 100);
				ub_u8(&w, 3);
				ub_fill(&w, 0, 3);
				ub_u16(&w, 0);
				ub_octets(&w, "objA", 4);
				ub_str(&w, "opA");
				ub_u32(&w, 1);
				ub_ctx_priority(&w, !le, 300);
			}
			l1 = ub_giop_end(&w);
			o2 = w.n;
			l2 = ub_reply_sysex(&w, minor, le, 100, "IDL:omg.org/CORBA/TRANSIENT:1.0", 0x4f4d0002, 1);
			o3 = w.n;
			l3 = ub_request(&w, minor, le, 101, "opB", 0);
			o4 = w.n;
			l4 = ub_reply_ex(&w, minor, le, 101, GIOP_LOCATION_FORWARD, 12, false);
			conn_init(&c, "192.168.1.5", 1234, "192.168.1.6", 683, 77, 99);
			conn_handshake(e, &c, TS(0));
			conn_send(e, &c, 0, TS(1), w.b, l1);
			conn_send(e, &c, 0, TS(2), w.b + o3, l3);
			conn_send(e, &c, 1, TS(3), w.b + o4, l4);
			conn_send(e, &c, 1, TS(4), w.b + o2, l2);
			gs_engine_finish(e);
			assert_int_equal(s.n, 2);
			/* output order: t_request_first */
			assert_int_equal(s.v[0].c.request_id, 100);
			assert_int_equal(s.v[0].c.minor, minor);
			assert_int_equal(s.v[0].c.status, GIOP_SYSTEM_EXCEPTION);
			assert_int_equal(s.v[0].c.flags, F_ANSWERED | GS_CF_HAS_EXCEPTION | GS_CF_HAS_PRIORITY);
			assert_int_equal(s.v[0].c.priority, 300);
			assert_int_equal(s.v[0].c.minor_code, 0x4f4d0002);
			assert_int_equal(s.v[0].c.completion, 1);
			assert_int_equal(s.v[0].exclen, strlen("IDL:omg.org/CORBA/TRANSIENT:1.0"));
			assert_memory_equal(s.v[0].exc, "IDL:omg.org/CORBA/TRANSIENT:1.0", s.v[0].exclen);
			check_op(&s.v[0], "opA");
			assert_memory_equal(s.v[0].key, "objA", 4);
			assert_int_equal(s.v[0].c.request_bytes, l1);
			assert_int_equal(s.v[0].c.reply_bytes, l2);
			check_times(&s.v[0].c, TS(1), TS(1), TS(4), TS(4));
			assert_int_equal(s.v[1].c.request_id, 101);
			assert_int_equal(s.v[1].c.status, GIOP_LOCATION_FORWARD);
			assert_int_equal(s.v[1].c.flags, F_ANSWERED);
			check_op(&s.v[1], "opB");
			assert_int_equal(s.v[1].c.reply_bytes, l4);
			check_times(&s.v[1].c, TS(2), TS(2), TS(3), TS(3));
			engine_free(e);
			conn_free(&c);
			sink_free(&s);
			ub_free(&w);
		}
}

static void test_several_messages_in_one_segment(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t reqs, reps;
	ub_init(&w, false);
	ub_request(&w, 2, false, 3, "third", 0);
	ub_request(&w, 2, true, 1, "first", 5);
	ub_request(&w, 1, false, 2, "second", 3);
	ub_close(&w, 2, false);
	reqs = w.n;
	ub_reply(&w, 2, false, 1, 0);
	ub_reply(&w, 1, false, 2, 4);
	ub_reply(&w, 2, true, 3, 0);
	reps = w.n - reqs;
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, reqs);
	assert_int_equal(gs_engine_open_calls(e), 3);
	conn_send(e, &c, 1, TS(2), w.b + reqs, reps);
	gs_engine_finish(e);
	assert_int_equal(s.n, 3);
	for (uint32_t i = 0; i < 3; i++) {
		/* same time, same client: by request id */
		assert_int_equal(s.v[i].c.request_id, i + 1);
		assert_int_equal(s.v[i].c.outcome, GS_OUT_REPLY);
		assert_int_equal(s.v[i].c.flags, F_ANSWERED);
		check_times(&s.v[i].c, TS(1), TS(1), TS(2), TS(2));
	}
	check_op(&s.v[0], "first");
	check_op(&s.v[1], "second");
	check_op(&s.v[2], "third");
	assert_int_equal(s.v[1].c.minor, 1);
	assert_int_equal(gs_engine_counters(e)->giop_by_type[GIOP_CLOSE_CONNECTION], 1);
	assert_int_equal(gs_engine_counters(e)->giop_messages, 7);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* ---- messages across segments ---------------------------------------------------- */

/* The request split in two at every byte, then the reply split at every byte. */
static void test_split_at_every_byte(void **state)
{
	struct ub w;
	size_t l1, l2, o2;
	for (int variant = 0; variant < 2; variant++) {
		ub_init(&w, false);
		if (variant == 0) {
			/* 1.0 little-endian with a context and a principal */
			ub_giop_begin(&w, 0, true, GIOP_REQUEST, false);
			ub_u32(&w, 1);
			ub_ctx_priority(&w, false, 12);
			ub_u32(&w, 0xabcdef01);
			ub_u8(&w, 1);
			ub_octets(&w, "the-object-key", 14);
			ub_str(&w, "longOperationName");
			ub_octets(&w, "principal", 9);
			ub_fill(&w, 0x55, 30);
			l1 = ub_giop_end(&w);
			o2 = w.n;
			l2 = ub_reply_ex(&w, 0, true, 0xabcdef01, GIOP_NO_EXCEPTION, 20, false);
		} else {
			/* 1.2 big-endian, ProfileAddr */
			ub_giop_begin(&w, 2, false, GIOP_REQUEST, false);
			ub_u32(&w, 0xabcdef01);
			ub_u8(&w, 3);
			ub_fill(&w, 0, 3);
			ub_u16(&w, 1);
			ub_iiop_profile(&w, true, "host.example", 2809, "the-object-key", 14);
			ub_str(&w, "longOperationName");
			ub_u32(&w, 1);
			ub_ctx_priority(&w, false, 12);
			ub_align(&w, 8);
			ub_fill(&w, 0x55, 30);
			l1 = ub_giop_end(&w);
			o2 = w.n;
			l2 = ub_reply_ex(&w, 2, false, 0xabcdef01, GIOP_NO_EXCEPTION, 20, false);
		}
		for (int which = 0; which < 2; which++) {
			size_t len = which == 0 ? l1 : l2;
			for (size_t k = 1; k < len; k++) {
				struct sink s;
				struct conn c;
				struct gs_engine *e = new_small(&s);
				conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
				conn_handshake(e, &c, TS(0));
				if (which == 0) {
					conn_send(e, &c, 0, TS(1), w.b, k);
					conn_send(e, &c, 0, TS(2), w.b + k, l1 - k);
					conn_send(e, &c, 1, TS(3), w.b + o2, l2);
				} else {
					conn_send(e, &c, 0, TS(1), w.b, l1);
					conn_send(e, &c, 1, TS(2), w.b + o2, k);
					conn_send(e, &c, 1, TS(3), w.b + o2 + k, l2 - k);
				}
				gs_engine_finish(e);
				if (s.n != 1)
					fail_msg("variant %d %s split at %zu: %zu calls", variant,
						 which ? "reply" : "request", k, s.n);
				assert_int_equal(s.v[0].c.request_id, 0xabcdef01);
				assert_int_equal(s.v[0].c.outcome, GS_OUT_REPLY);
				if (s.v[0].c.flags != (F_ANSWERED | GS_CF_HAS_PRIORITY))
					fail_msg("variant %d %s split at %zu: flags 0x%x", variant,
						 which ? "reply" : "request", k, s.v[0].c.flags);
				assert_int_equal(s.v[0].c.priority, 12);
				check_op(&s.v[0], "longOperationName");
				assert_int_equal(s.v[0].keylen, 14);
				assert_memory_equal(s.v[0].key, "the-object-key", 14);
				assert_int_equal(s.v[0].c.request_bytes, l1);
				assert_int_equal(s.v[0].c.reply_bytes, l2);
				if (which == 0)
					check_times(&s.v[0].c, TS(1), TS(2), TS(3), TS(3));
				else
					check_times(&s.v[0].c, TS(1), TS(1), TS(2), TS(3));
				assert_int_equal(gs_engine_counters(e)->giop_truncated, 0);
				assert_int_equal(gs_engine_counters(e)->giop_malformed, 0);
				engine_free(e);
				conn_free(&c);
				sink_free(&s);
			}
		}
		/* one byte per segment */
		{
			struct sink s;
			struct conn c;
			struct gs_engine *e = new_small(&s);
			conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
			conn_handshake(e, &c, TS(0));
			conn_send_split(e, &c, 0, TS(1), w.b, l1, 1);
			conn_send_split(e, &c, 1, TS(10), w.b + o2, l2, 1);
			gs_engine_finish(e);
			assert_int_equal(s.n, 1);
			check_op(&s.v[0], "longOperationName");
			assert_int_equal(s.v[0].c.flags, F_ANSWERED | GS_CF_HAS_PRIORITY);
			check_times(&s.v[0].c, TS(1), TS(1) + (int64_t)(l1 - 1) * US, TS(10),
				    TS(10) + (int64_t)(l2 - 1) * US);
			assert_int_equal(gs_engine_counters(e)->segments, l1 + l2);
			engine_free(e);
			conn_free(&c);
			sink_free(&s);
		}
		ub_free(&w);
	}
}

/* On a connection already known to carry GIOP (the framer's one-pass path for
 * whole messages applies): three requests in a row cut in two at every byte, so
 * that the first segment ends inside a header, inside a head, inside a body or
 * on a boundary, and the second goes on inside a decoded message or starts
 * with a cut header.  Each call keeps its size, operation and the times of the
 * segments that carried its bytes. */
static void test_known_giop_stream_split_at_every_byte(void **state)
{
	static const char *const ops[3] = { "alpha", "longerOperationBeta", "g" };
	struct ub w, r;
	size_t start[4], warm_req, warm_len, len;
	ub_init(&w, false);
	ub_init(&r, false);
	ub_request(&w, 2, false, 100, "warm", 8);
	warm_req = w.n;
	ub_reply(&w, 2, false, 100, 4);
	warm_len = w.n;
	start[0] = w.n;
	ub_request(&w, 2, false, 1, ops[0], 5);
	start[1] = w.n;
	ub_request(&w, 1, true, 2, ops[1], 40);
	start[2] = w.n;
	ub_request(&w, 2, true, 3, ops[2], 0);
	start[3] = w.n;
	len = start[3] - start[0];
	ub_reply(&r, 2, false, 1, 3);
	ub_reply(&r, 1, true, 2, 0);
	ub_reply(&r, 2, true, 3, 9);
	for (size_t k = 1; k < len; k++) {
		struct sink s;
		struct conn c;
		struct gs_engine *e = new_small(&s);
		conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
		conn_handshake(e, &c, TS(0));
		conn_send(e, &c, 0, TS(1), w.b, warm_req);
		conn_send(e, &c, 1, TS(2), w.b + warm_req, warm_len - warm_req);
		conn_send(e, &c, 0, TS(3), w.b + start[0], k);
		conn_send(e, &c, 0, TS(4), w.b + start[0] + k, len - k);
		conn_send(e, &c, 1, TS(5), r.b, r.n);
		gs_engine_finish(e);
		if (s.n != 4)
			fail_msg("split at %zu: %zu calls", k, s.n);
		for (uint32_t rid = 1; rid <= 3; rid++) {
			const struct got *g = NULL;
			size_t a = start[rid - 1] - start[0], b = start[rid] - start[0];
			for (size_t i = 0; i < s.n; i++)
				if (s.v[i].c.request_id == rid)
					g = &s.v[i];
			if (!g)
				fail_msg("split at %zu: no call %u", k, rid);
			if (g->c.flags != F_ANSWERED)
				fail_msg("split at %zu: call %u flags 0x%x", k, rid, g->c.flags);
			check_op(g, ops[rid - 1]);
			assert_int_equal(g->c.request_bytes, b - a);
			check_times(&g->c, a < k ? TS(3) : TS(4), b <= k ? TS(3) : TS(4), TS(5), TS(5));
		}
		assert_int_equal(gs_engine_counters(e)->giop_messages, 8);
		assert_int_equal(gs_engine_counters(e)->giop_malformed, 0);
		assert_int_equal(gs_engine_counters(e)->giop_truncated, 0);
		assert_int_equal(gs_engine_counters(e)->giop_resync_bytes, 0);
		engine_free(e);
		conn_free(&c);
		sink_free(&s);
	}
	ub_free(&w);
	ub_free(&r);
}

/* A system exception reply split at every byte: the exception is kept whatever
 * the segmentation (pairs JSONL prints it). */
static void test_exception_reply_split_at_every_byte(void **state)
{
	struct ub w;
	size_t l1, l2, o2;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 5, "op", 0);
	o2 = w.n;
	l2 = ub_reply_sysex(&w, 2, false, 5, "IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0", 0x4f4d0001, 0);
	for (size_t k = 1; k < l2; k++) {
		struct sink s;
		struct conn c;
		struct gs_engine *e = new_small(&s);
		conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
		conn_handshake(e, &c, TS(0));
		conn_send(e, &c, 0, TS(1), w.b, l1);
		conn_send(e, &c, 1, TS(2), w.b + o2, k);
		conn_send(e, &c, 1, TS(3), w.b + o2 + k, l2 - k);
		gs_engine_finish(e);
		assert_int_equal(s.n, 1);
		assert_int_equal(s.v[0].c.status, GIOP_SYSTEM_EXCEPTION);
		if (!(s.v[0].c.flags & GS_CF_HAS_EXCEPTION))
			fail_msg("reply split at %zu of %zu: exception lost", k, l2);
		assert_int_equal(s.v[0].exclen, strlen("IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0"));
		assert_int_equal(s.v[0].c.minor_code, 0x4f4d0001);
		engine_free(e);
		conn_free(&c);
		sink_free(&s);
	}
	ub_free(&w);
}

/* ---- reassembly ------------------------------------------------------------------------ */

static void test_out_of_order_first_seen_times(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l1, l2, o2;
	uint32_t base;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 9, "op", 0);
	o2 = w.n;
	l2 = ub_reply(&w, 2, false, 9, 40);
	assert_int_equal(l2, 64);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	base = c.next[1];
	/* reply segments C, B, A */
	conn_raw(e, &c, 1, TS(10), base + 40, c.next[0], GS_TCP_ACK, w.b + o2 + 40, 24, CAP_ALL);
	conn_raw(e, &c, 1, TS(11), base + 20, c.next[0], GS_TCP_ACK, w.b + o2 + 20, 20, CAP_ALL);
	assert_int_equal(gs_engine_counters(e)->out_of_order, 2);
	assert_int_equal(s.n, 0);
	conn_raw(e, &c, 1, TS(12), base, c.next[0], GS_TCP_ACK, w.b + o2, 20, CAP_ALL);
	c.next[1] = base + 64;
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.flags, F_ANSWERED);
	assert_int_equal(s.v[0].c.reply_bytes, 64);
	/* the reply's earliest byte came at 10 ms; the segment that completed it at
	 * 12 ms, and the two that came below bytes already seen filled gaps */
	check_times(&s.v[0].c, TS(1), TS(1), TS(10), TS(12));
	assert_int_equal(s.v[0].c.gap_fills, 2);
	assert_int_equal(s.v[0].c.fill_wait_ns, 2 * MS);
	assert_int_equal(gs_engine_counters(e)->gap_fills, 2);
	assert_int_equal(gs_engine_counters(e)->gaps, 0);
	assert_int_equal(gs_engine_counters(e)->retransmits, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* Live (unordered) output, the request's tail lost by the capture: the reply
 * does not end the call at once; the call ends when the hole the server
 * acknowledged is given up (by a tick, no packet needed), with capture_loss,
 * and its request instants are those of its own packet, not the tick's. */
static void test_reply_waits_for_request_tail(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_config cfg;
	struct gs_engine *e;
	size_t lq, lp, op;
	small_cfg(&cfg);
	cfg.ordered = false;
	e = engine_new(&cfg, &s);
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 3, "op", 200);
	op = w.n;
	lp = ub_reply(&w, 2, false, 3, 8);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, 100);          /* head and 100 bytes */
	c.next[0] += (uint32_t)(lq - 100);              /* the rest: never captured */
	conn_send(e, &c, 1, TS(2), w.b + op, lp);      /* reply, acking the whole request */
	conn_ack(e, &c, 0, TS(3));                      /* the client acks the reply */
	assert_int_equal(s.n, 0);                       /* waits for the request's tail */
	gs_engine_tick(e, TS(5));
	assert_int_equal(s.n, 0);                       /* the grace (10 ms) has not passed */
	gs_engine_tick(e, TS(13));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_REPLY);
	assert_true(s.v[0].c.flags & GS_CF_CAPTURE_LOSS);
	check_times(&s.v[0].c, TS(1), TS(1), TS(2), TS(2));
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_retransmissions_counted_not_timed(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l7, l8, r7, r8, o8, or7, or8;
	uint32_t s7, s8, sr8;
	ub_init(&w, false);
	l7 = ub_request(&w, 2, false, 7, "a", 10);
	o8 = w.n;
	l8 = ub_request(&w, 2, false, 8, "b", 10);
	or7 = w.n;
	r7 = ub_reply(&w, 2, false, 7, 0);
	or8 = w.n;
	r8 = ub_reply(&w, 2, false, 8, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	s7 = c.next[0];
	conn_send(e, &c, 0, TS(1), w.b, l7);
	s8 = c.next[0];
	conn_send(e, &c, 0, TS(2), w.b + o8, l8);
	/* request 7 again */
	conn_raw(e, &c, 0, TS(3), s7, c.next[1], GS_TCP_ACK, w.b, l7, CAP_ALL);
	/* both again in one segment */
	conn_raw(e, &c, 0, TS(4), s7, c.next[1], GS_TCP_ACK, w.b, l7 + l8, CAP_ALL);
	conn_send(e, &c, 1, TS(5), w.b + or7, r7);
	sr8 = c.next[1];
	conn_send(e, &c, 1, TS(6), w.b + or8, r8);
	/* reply 8 again, within the linger time */
	conn_raw(e, &c, 1, TS(7), sr8, c.next[0], GS_TCP_ACK, w.b + or8, r8, CAP_ALL);
	/* a retransmission of old bytes of request 8 only */
	conn_raw(e, &c, 0, TS(8), s8 + 4, c.next[1], GS_TCP_ACK, w.b + o8 + 4, 10, CAP_ALL);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].c.request_id, 7);
	assert_int_equal(s.v[0].c.retransmits, 2);
	check_times(&s.v[0].c, TS(1), TS(1), TS(5), TS(5));
	assert_int_equal(s.v[0].c.flags, F_ANSWERED);
	assert_int_equal(s.v[1].c.request_id, 8);
	assert_int_equal(s.v[1].c.retransmits, 3);
	check_times(&s.v[1].c, TS(2), TS(2), TS(6), TS(6));
	assert_int_equal(gs_engine_counters(e)->retransmits, 4);
	assert_int_equal(gs_engine_counters(e)->giop_messages, 4);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* A segment carrying old and new bytes: only the new bytes are delivered. */
static void test_overlapping_segment(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l1, l2, o2, or1, or2;
	uint32_t s1;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 1, "a", 0);
	o2 = w.n;
	l2 = ub_request(&w, 2, false, 2, "b", 0);
	or1 = w.n;
	ub_reply(&w, 2, false, 1, 0);
	or2 = w.n;
	ub_reply(&w, 2, false, 2, 0);
	assert_int_equal(o2, l1);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	s1 = c.next[0];
	conn_send(e, &c, 0, TS(1), w.b, l1 - 10);
	conn_raw(e, &c, 0, TS(2), s1, c.next[1], GS_TCP_ACK, w.b, l1 + l2, CAP_ALL);
	c.next[0] = s1 + (uint32_t)(l1 + l2);
	conn_send(e, &c, 1, TS(3), w.b + or1, or2 - or1);
	conn_send(e, &c, 1, TS(4), w.b + or2, w.n - or2);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	check_times(&s.v[0].c, TS(1), TS(2), TS(3), TS(3));
	check_times(&s.v[1].c, TS(2), TS(2), TS(4), TS(4));
	assert_int_equal(s.v[0].c.retransmits, 0);
	assert_int_equal(gs_engine_counters(e)->overlaps, 1);
	assert_int_equal(gs_engine_counters(e)->retransmits, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* Bytes the capture never had, acknowledged by the receiver: the message they
 * were in keeps its extent, and the next message is decoded. */
static void test_gap_acked_inside_message(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	const struct gs_counters *k = gs_engine_counters(e);
	size_t l1, l2, l3, o2, o3, or1;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 1, "op", 0);
	o2 = w.n;
	l2 = ub_request(&w, 2, false, 2, "op", 200);
	o3 = w.n;
	l3 = ub_request(&w, 2, false, 3, "op", 0);
	or1 = w.n;
	assert_int_equal(l1, 44);
	assert_int_equal(l2, 248);
	ub_reply(&w, 2, false, 1, 0);
	ub_reply(&w, 2, false, 2, 0);
	ub_reply(&w, 2, false, 3, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	conn_send(e, &c, 0, TS(2), w.b + o2, 50);
	c.next[0] += 70; /* [50, 120) of request 2: not captured */
	conn_send(e, &c, 0, TS(3), w.b + o2 + 120, l2 - 120);
	conn_send(e, &c, 0, TS(4), w.b + o3, l3);
	assert_int_equal(k->out_of_order, 2);
	assert_int_equal(k->gaps, 0);
	assert_int_equal(gs_engine_open_calls(e), 2);
	conn_ack(e, &c, 1, TS(5));
	/* the hole is declared once it has been acknowledged for 10 ms (the
	 * capture may list the missing segment after the ACK) */
	assert_int_equal(k->gaps, 0);
	conn_ack(e, &c, 0, TS(15) - 1);
	assert_int_equal(k->gaps, 0);
	conn_ack(e, &c, 0, TS(15));
	assert_int_equal(k->gaps, 1);
	assert_int_equal(k->gap_bytes, 70);
	assert_int_equal(gs_engine_open_calls(e), 3);
	conn_send(e, &c, 1, TS(16), w.b + or1, 24);
	conn_send(e, &c, 1, TS(17), w.b + or1 + 24, 24);
	conn_send(e, &c, 1, TS(18), w.b + or1 + 48, 24);
	gs_engine_finish(e);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[0].c.flags, F_ANSWERED);
	check_times(&s.v[0].c, TS(1), TS(1), TS(16), TS(16));
	assert_int_equal(s.v[1].c.request_id, 2);
	assert_int_equal(s.v[1].c.flags, F_ANSWERED | GS_CF_CAPTURE_LOSS);
	assert_int_equal(s.v[1].c.request_bytes, 248);
	check_op(&s.v[1], "op");
	check_times(&s.v[1].c, TS(2), TS(3), TS(17), TS(17));
	assert_int_equal(s.v[2].c.request_id, 3);
	assert_int_equal(s.v[2].c.flags, F_ANSWERED);
	check_times(&s.v[2].c, TS(4), TS(4), TS(18), TS(18));
	assert_int_equal(k->calls_capture_loss, 1);
	assert_int_equal(k->giop_resync_bytes, 0);
	assert_int_equal(k->giop_malformed, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* A gap that swallows the end of one message and the header of the next: the
 * first keeps its extent, the second is lost, the framer finds the third. */
static void test_gap_swallowing_a_header_resyncs(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	const struct gs_counters *k = gs_engine_counters(e);
	size_t l1, l2, l3, l4, o2, o3, o4, or1;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 1, "op", 0);
	o2 = w.n;
	l2 = ub_request(&w, 2, false, 2, "op", 200);
	o3 = w.n;
	l3 = ub_request(&w, 2, false, 3, "op", 0);
	o4 = w.n;
	l4 = ub_request(&w, 2, false, 4, "op", 0);
	or1 = w.n;
	for (uint32_t rid = 1; rid <= 4; rid++)
		ub_reply(&w, 2, false, rid, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	conn_send(e, &c, 0, TS(2), w.b + o2, 50);
	c.next[0] += (uint32_t)(l2 - 50 + 20); /* the rest of 2 and the head of 3 */
	conn_send(e, &c, 0, TS(3), w.b + o3 + 20, l3 - 20 + l4);
	conn_ack(e, &c, 1, TS(4));
	assert_int_equal(k->gaps, 0);
	conn_ack(e, &c, 0, TS(14));
	assert_int_equal(k->gaps, 1);
	assert_int_equal(k->gap_bytes, l2 - 50 + 20);
	for (int i = 0; i < 4; i++)
		conn_send(e, &c, 1, TS(15 + i), w.b + or1 + 24 * (size_t)i, 24);
	gs_engine_finish(e);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[0].c.request_id, 1);
	assert_int_equal(s.v[1].c.request_id, 2);
	assert_int_equal(s.v[2].c.request_id, 4);
	{
		const struct got *g1 = sink_find(&s, 1, 0), *g2 = sink_find(&s, 2, 0), *g4 = sink_find(&s, 4, 0);
		assert_non_null(g1);
		assert_non_null(g2);
		assert_non_null(g4);
		check_times(&g1->c, TS(1), TS(1), TS(15), TS(15));
		/* the last byte of 2 was never seen: its time is when the hole was declared */
		/* the hole was given up at 14 ms, but no byte of request 2 came then */
		check_times(&g2->c, TS(2), TS(2), TS(16), TS(16));
		assert_int_equal(g2->c.flags, F_ANSWERED | GS_CF_CAPTURE_LOSS);
		assert_int_equal(g2->c.request_bytes, l2);
		check_times(&g4->c, TS(3), TS(3), TS(18), TS(18));
		assert_int_equal(g4->c.flags, F_ANSWERED);
	}
	assert_null(sink_find(&s, 3, 0));
	assert_int_equal(k->orphan_replies, 1);
	assert_int_equal(k->giop_resync_bytes, 20 + (l3 - 20));
	assert_int_equal(k->giop_malformed, 0);
	(void)o4;
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* ---- fragments --------------------------------------------------------------- */

static void test_fragments_11_chain(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t la, lb, lc, ld, le_, ob, oc, od, oe;
	ub_init(&w, false);
	la = ub_request_ex(&w, 1, false, 11, 1, "key1", "put", 10, true);
	ob = w.n;
	lb = ub_fragment(&w, 1, false, 0, 20, true);
	oc = w.n;
	lc = ub_fragment(&w, 1, false, 0, 30, false);
	od = w.n;
	ld = ub_reply_ex(&w, 1, true, 11, GIOP_NO_EXCEPTION, 8, true);
	oe = w.n;
	le_ = ub_fragment(&w, 1, true, 0, 16, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, la);
	conn_send(e, &c, 0, TS(2), w.b + ob, lb);
	conn_send(e, &c, 0, TS(3), w.b + oc, lc);
	conn_send(e, &c, 1, TS(4), w.b + od, ld);
	assert_int_equal(gs_engine_open_calls(e), 1);
	conn_send(e, &c, 1, TS(5), w.b + oe, le_);
	assert_int_equal(gs_engine_open_calls(e), 0);
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.request_id, 11);
	assert_int_equal(s.v[0].c.flags, F_ANSWERED);
	assert_int_equal(s.v[0].c.request_bytes, la + lb + lc);
	assert_int_equal(s.v[0].c.reply_bytes, ld + le_);
	check_times(&s.v[0].c, TS(1), TS(3), TS(4), TS(5));
	check_op(&s.v[0], "put");
	assert_int_equal(gs_engine_counters(e)->giop_by_type[GIOP_FRAGMENT], 3);
	assert_int_equal(gs_engine_counters(e)->orphan_fragments, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_fragments_12_interleaved(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t r1, r2, f2a, f1, f2b, p21, p22, p22f;
	size_t o_r2, o_f2a, o_f1, o_f2b, o_p21, o_p22, o_p22f;
	ub_init(&w, false);
	r1 = ub_request_ex(&w, 2, false, 21, 3, "key1", "a", 8, true);
	o_r2 = w.n;
	r2 = ub_request_ex(&w, 2, false, 22, 3, "key1", "b", 8, true);
	o_f2a = w.n;
	f2a = ub_fragment(&w, 2, false, 22, 10, true);
	o_f1 = w.n;
	f1 = ub_fragment(&w, 2, false, 21, 12, false);
	o_f2b = w.n;
	f2b = ub_fragment(&w, 2, false, 22, 14, false);
	o_p21 = w.n;
	p21 = ub_reply(&w, 2, false, 21, 0);
	o_p22 = w.n;
	p22 = ub_reply_ex(&w, 2, false, 22, GIOP_NO_EXCEPTION, 8, true);
	o_p22f = w.n;
	p22f = ub_fragment(&w, 2, false, 22, 40, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, r1);
	conn_send(e, &c, 0, TS(2), w.b + o_r2, r2);
	conn_send(e, &c, 0, TS(3), w.b + o_f2a, f2a);
	conn_send(e, &c, 0, TS(4), w.b + o_f1, f1);
	conn_send(e, &c, 0, TS(5), w.b + o_f2b, f2b);
	conn_send(e, &c, 1, TS(6), w.b + o_p21, p21);
	conn_send(e, &c, 1, TS(7), w.b + o_p22, p22);
	conn_send(e, &c, 1, TS(8), w.b + o_p22f, p22f);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].c.request_id, 21);
	assert_int_equal(s.v[0].c.flags, F_ANSWERED);
	assert_int_equal(s.v[0].c.request_bytes, r1 + f1);
	assert_int_equal(s.v[0].c.reply_bytes, p21);
	check_times(&s.v[0].c, TS(1), TS(4), TS(6), TS(6));
	assert_int_equal(s.v[1].c.request_id, 22);
	assert_int_equal(s.v[1].c.flags, F_ANSWERED);
	assert_int_equal(s.v[1].c.request_bytes, r2 + f2a + f2b);
	assert_int_equal(s.v[1].c.reply_bytes, p22 + p22f);
	check_times(&s.v[1].c, TS(2), TS(5), TS(7), TS(8));
	assert_int_equal(gs_engine_counters(e)->orphan_fragments, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_orphan_fragment(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l;
	ub_init(&w, false);
	l = ub_fragment(&w, 2, false, 99, 4, false);
	ub_fragment(&w, 1, false, 0, 4, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, w.n);
	gs_engine_finish(e);
	assert_int_equal(s.n, 0);
	assert_int_equal(gs_engine_counters(e)->orphan_fragments, 2);
	assert_int_equal(gs_engine_counters(e)->giop_messages, 2);
	(void)l;
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* ---- call outcomes ------------------------------------------------------------ */

static void test_oneway(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l1, l2, l3, o2, o3, or3;
	ub_init(&w, false);
	l1 = ub_request_ex(&w, 2, false, 31, 0, "key1", "notify", 4, false);
	o2 = w.n;
	l2 = ub_request_ex(&w, 0, true, 32, 0, "key1", "notify", 4, false);
	o3 = w.n;
	l3 = ub_request_ex(&w, 2, false, 33, 1, "key1", "sync_with_server", 0, false); /* SYNC_WITH_SERVER */
	or3 = w.n;
	ub_reply(&w, 2, false, 33, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	assert_int_equal(gs_engine_open_calls(e), 0);
	conn_send(e, &c, 0, TS(2), w.b + o2, l2);
	conn_send(e, &c, 0, TS(3), w.b + o3, l3);
	conn_send(e, &c, 1, TS(4), w.b + or3, w.n - or3);
	gs_engine_finish(e);
	assert_int_equal(s.n, 3);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(s.v[i].c.request_id, 31u + (uint32_t)i);
		assert_int_equal(s.v[i].c.outcome, GS_OUT_ONEWAY);
		assert_int_equal(s.v[i].c.flags, GS_CF_ONEWAY | GS_CF_OP_KNOWN | GS_CF_REQ_DONE);
		assert_int_equal(s.v[i].c.reply_bytes, 0);
		check_times(&s.v[i].c, TS(1 + i), TS(1 + i), 0, 0);
		assert_int_equal(s.v[i].c.t_done, TS(1 + i));
		check_op(&s.v[i], "notify");
	}
	assert_int_equal(s.v[1].c.minor, 0);
	assert_int_equal(s.v[2].c.outcome, GS_OUT_REPLY);
	assert_int_equal(s.v[2].c.flags, F_ANSWERED);
	assert_int_equal(gs_engine_counters(e)->oneways, 2);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_cancel_request(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l41, l42, lc41, lc42, lc99, o42, oc41, oc42, oc99, or42;
	ub_init(&w, false);
	l41 = ub_request(&w, 2, false, 41, "slow", 0);
	oc41 = w.n;
	lc41 = ub_cancel(&w, 2, false, 41);
	o42 = w.n;
	l42 = ub_request(&w, 2, false, 42, "slow", 0);
	oc42 = w.n;
	lc42 = ub_cancel(&w, 2, false, 42);
	oc99 = w.n;
	lc99 = ub_cancel(&w, 2, false, 99);
	or42 = w.n;
	ub_reply(&w, 2, false, 42, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l41);
	conn_send(e, &c, 0, TS(2), w.b + oc41, lc41);
	conn_send(e, &c, 0, TS(3), w.b + o42, l42);
	conn_send(e, &c, 0, TS(4), w.b + oc42, lc42);
	conn_send(e, &c, 0, TS(5), w.b + oc99, lc99);
	conn_send(e, &c, 1, TS(6), w.b + or42, w.n - or42);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].c.request_id, 41);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_CANCELLED);
	assert_int_equal(s.v[0].c.flags, GS_CF_CANCELLED | GS_CF_OP_KNOWN | GS_CF_REQ_DONE);
	check_times(&s.v[0].c, TS(1), TS(1), 0, 0);
	assert_int_equal(s.v[0].c.request_bytes, l41); /* the CancelRequest is not part of it */
	assert_int_equal(s.v[1].c.request_id, 42);
	assert_int_equal(s.v[1].c.outcome, GS_OUT_REPLY);
	assert_int_equal(s.v[1].c.flags, F_ANSWERED | GS_CF_CANCELLED);
	check_times(&s.v[1].c, TS(3), TS(3), TS(6), TS(6));
	assert_int_equal(gs_engine_counters(e)->cancelled, 1);
	assert_int_equal(gs_engine_counters(e)->cancel_unknown, 1);
	assert_int_equal(gs_engine_counters(e)->giop_by_type[GIOP_CANCEL_REQUEST], 3);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_locate_request_reply(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l1, l2, o2, or1, or2, lr1, lr2;
	ub_init(&w, false);
	l1 = ub_locate_request(&w, 2, false, 51);
	o2 = w.n;
	l2 = ub_locate_request(&w, 0, true, 52);
	or1 = w.n;
	lr1 = ub_locate_reply(&w, 2, false, 51, GIOP_OBJECT_HERE);
	or2 = w.n;
	lr2 = ub_locate_reply(&w, 0, true, 52, GIOP_UNKNOWN_OBJECT);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	conn_send(e, &c, 0, TS(2), w.b + o2, l2);
	conn_send(e, &c, 1, TS(3), w.b + or2, lr2);
	conn_send(e, &c, 1, TS(4), w.b + or1, lr1);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(s.v[i].c.kind, GS_KIND_LOCATE_REQUEST);
		assert_int_equal(s.v[i].c.reply_type, GIOP_LOCATE_REPLY);
		assert_int_equal(s.v[i].c.outcome, GS_OUT_REPLY);
		assert_int_equal(s.v[i].c.flags, F_ANSWERED);
		assert_int_equal(s.v[i].oplen, 0);
		assert_int_equal(s.v[i].keylen, 4);
		assert_memory_equal(s.v[i].key, "key1", 4);
	}
	assert_int_equal(s.v[0].c.request_id, 51);
	assert_int_equal(s.v[0].c.status, GIOP_OBJECT_HERE);
	assert_int_equal(s.v[0].c.request_bytes, l1);
	assert_int_equal(s.v[0].c.reply_bytes, lr1);
	check_times(&s.v[0].c, TS(1), TS(1), TS(4), TS(4));
	assert_int_equal(s.v[1].c.request_id, 52);
	assert_int_equal(s.v[1].c.minor, 0);
	assert_int_equal(s.v[1].c.status, GIOP_UNKNOWN_OBJECT);
	check_times(&s.v[1].c, TS(2), TS(2), TS(3), TS(3));
	assert_int_equal(gs_engine_counters(e)->locate_requests, 2);
	assert_int_equal(gs_engine_counters(e)->requests, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_bidirectional(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t lq, lp, op_;
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 1, "callback", 0);
	op_ = w.n;
	lp = ub_reply(&w, 2, false, 1, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, lq);       /* client -> server, id 1 */
	conn_send(e, &c, 1, TS(2), w.b, lq);       /* server -> client, id 1 */
	assert_int_equal(gs_engine_open_calls(e), 2);
	conn_send(e, &c, 0, TS(3), w.b + op_, lp); /* answers the server's */
	conn_send(e, &c, 1, TS(4), w.b + op_, lp); /* answers the client's */
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	check_ep(&s.v[0].c.client, "10.0.0.1", 40000);
	check_ep(&s.v[0].c.server, "10.0.0.2", 2809);
	assert_int_equal(s.v[0].c.dir, 0);
	check_times(&s.v[0].c, TS(1), TS(1), TS(4), TS(4));
	check_ep(&s.v[1].c.client, "10.0.0.2", 2809);
	check_ep(&s.v[1].c.server, "10.0.0.1", 40000);
	assert_int_equal(s.v[1].c.dir, 1);
	check_times(&s.v[1].c, TS(2), TS(2), TS(3), TS(3));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(s.v[i].c.request_id, 1);
		assert_int_equal(s.v[i].c.flags, F_ANSWERED);
	}
	assert_int_equal(gs_engine_counters(e)->orphan_replies, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_no_reply_at_server_fin(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l1, o2, l2, or2;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 61, "op", 0);
	o2 = w.n;
	l2 = ub_request(&w, 2, false, 62, "op", 0);
	or2 = w.n;
	ub_reply(&w, 2, false, 62, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	conn_send(e, &c, 0, TS(2), w.b + o2, l2);
	conn_send(e, &c, 1, TS(3), w.b + or2, w.n - or2);
	/* the client half-closes: its requests may still be answered */
	conn_fin(e, &c, 0, TS(4));
	assert_int_equal(gs_engine_open_calls(e), 1);
	assert_int_equal(gs_engine_active_flows(e), 1);
	conn_fin(e, &c, 1, TS(5));
	assert_int_equal(gs_engine_open_calls(e), 0);
	/* both FINs done: the connection is gone */
	assert_int_equal(gs_engine_active_flows(e), 0);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].c.request_id, 61);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(s.v[0].c.flags, GS_CF_OP_KNOWN | GS_CF_REQ_DONE);
	assert_int_equal(s.v[0].c.t_done, TS(5));
	check_times(&s.v[0].c, TS(1), TS(1), 0, 0);
	assert_int_equal(s.v[1].c.outcome, GS_OUT_REPLY);
	assert_int_equal(gs_engine_counters(e)->no_reply, 1);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* Calls written after their connection ended are detached from it (flow =
 * GS_NONE) but still say which connection they were on (conn_flow, flow_gen):
 * merge groups calls by it. A later connection in the same slot differs. */
static void test_connection_identity_after_end(void **state)
{
	struct ub w;
	struct sink s;
	struct conn a, b;
	struct gs_engine *e = new_small(&s);
	size_t l1, o2;
	(void)state;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 7, "op", 0);
	o2 = w.n;
	ub_reply(&w, 2, false, 7, 0);
	conn_init(&a, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_init(&b, "10.0.0.1", 40001, "10.0.0.2", 2809, 3000, 7000);
	conn_handshake(e, &a, TS(0));
	conn_send(e, &a, 0, TS(1), w.b, l1);
	conn_send(e, &a, 1, TS(2), w.b + o2, w.n - o2);
	/* the server resets before the client acknowledged the reply: the call
	 * still waits for that ACK when its connection ends */
	conn_rst(e, &a, 1, TS(3));
	assert_int_equal(gs_engine_active_flows(e), 0);
	conn_handshake(e, &b, TS(5));
	conn_send(e, &b, 0, TS(6), w.b, l1);
	conn_send(e, &b, 1, TS(7), w.b + o2, w.n - o2);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].c.client.port, 40000);
	assert_int_equal(s.v[0].c.flow, GS_NONE);
	assert_int_not_equal(s.v[0].c.conn_flow, GS_NONE);
	assert_true(s.v[0].c.conn_flow != s.v[1].c.conn_flow || s.v[0].c.flow_gen != s.v[1].c.flow_gen);
	engine_free(e);
	conn_free(&a);
	conn_free(&b);
	sink_free(&s);
	ub_free(&w);
}

static void test_no_reply_at_end_of_input_and_rst(void **state)
{
	for (int rst = 0; rst < 2; rst++) {
		struct ub w;
		struct sink s;
		struct conn c;
		struct gs_engine *e = new_small(&s);
		size_t l1;
		ub_init(&w, false);
		l1 = ub_request(&w, 2, false, 71, "op", 0);
		conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
		conn_handshake(e, &c, TS(0));
		conn_send(e, &c, 0, TS(1), w.b, l1);
		if (rst) {
			/* the connection is gone: nothing more can come, written at once */
			conn_rst(e, &c, 1, TS(2));
			assert_int_equal(gs_engine_active_flows(e), 0);
			assert_int_equal(gs_engine_open_calls(e), 0);
			assert_int_equal(s.n, 1);
		} else {
			assert_int_equal(s.n, 0);
		}
		gs_engine_finish(e);
		assert_int_equal(s.n, 1);
		assert_int_equal(s.v[0].c.outcome, GS_OUT_NO_REPLY);
		assert_int_equal(s.v[0].c.t_done, rst ? TS(2) : TS(1));
		check_times(&s.v[0].c, TS(1), TS(1), 0, 0);
		assert_int_equal(gs_engine_counters(e)->no_reply, 1);
		engine_free(e);
		conn_free(&c);
		sink_free(&s);
		ub_free(&w);
	}
}

static void test_sequence_wraparound(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t lq, lp, op_;
	ub_init(&w, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 0xffffff00u, 0xfffffff0u);
	conn_handshake(e, &c, TS(0));
	for (uint32_t i = 0; i < 10; i++) {
		ub_reset(&w);
		lq = ub_request(&w, 2, false, 1000 + i, "wrap", 40);
		op_ = w.n;
		lp = ub_reply(&w, 2, false, 1000 + i, 40);
		assert_int_equal(lq, 88);
		if (i == 3) {
			/* second half first, across the wrap of the client's numbers */
			uint32_t base = c.next[0];
			conn_raw(e, &c, 0, TS(7), base + 44, c.next[1], GS_TCP_ACK, w.b + 44, 44, CAP_ALL);
			conn_raw(e, &c, 0, TS(7) + 100 * US, base, c.next[1], GS_TCP_ACK, w.b, 44, CAP_ALL);
			c.next[0] = base + 88;
		} else {
			conn_send(e, &c, 0, TS(2 * i + 1), w.b, lq);
		}
		if (i == 5) /* and a retransmission */
			conn_raw(e, &c, 0, TS(2 * i + 1) + 1, c.next[0] - 88, c.next[1], GS_TCP_ACK, w.b, lq, CAP_ALL);
		conn_send(e, &c, 1, TS(2 * i + 2), w.b + op_, lp);
	}
	/* the numbers did wrap */
	assert_true(c.next[0] < 0xffffff00u);
	assert_true(c.next[1] < 0xfffffff0u);
	gs_engine_finish(e);
	assert_int_equal(s.n, 10);
	for (uint32_t i = 0; i < 10; i++) {
		assert_int_equal(s.v[i].c.request_id, 1000 + i);
		assert_int_equal(s.v[i].c.flags, F_ANSWERED);
		assert_int_equal(s.v[i].c.retransmits, i == 5 ? 1 : 0);
		if (i == 3) {
			/* second half first: it is the earliest byte, the first half completes */
			check_times(&s.v[i].c, TS(7), TS(7) + 100 * US, TS(8), TS(8));
			assert_int_equal(s.v[i].c.gap_fills, 1);
		} else {
			check_times(&s.v[i].c, TS(2 * i + 1), TS(2 * i + 1), TS(2 * i + 2), TS(2 * i + 2));
			assert_int_equal(s.v[i].c.gap_fills, 0);
		}
	}
	assert_int_equal(gs_engine_counters(e)->gaps, 0);
	assert_int_equal(gs_engine_counters(e)->out_of_order, 1);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_request_id_reuse(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l1, or1;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 5, "op", 0);
	or1 = w.n;
	ub_reply(&w, 2, false, 5, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	conn_send(e, &c, 0, TS(2), w.b, l1);
	conn_send(e, &c, 1, TS(3), w.b + or1, w.n - or1);
	/* and once more after the answer: a new call */
	conn_send(e, &c, 0, TS(4), w.b, l1);
	conn_send(e, &c, 1, TS(5), w.b + or1, w.n - or1);
	gs_engine_finish(e);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(s.v[0].c.t_done, TS(2));
	check_times(&s.v[0].c, TS(1), TS(1), 0, 0);
	assert_int_equal(s.v[1].c.outcome, GS_OUT_REPLY);
	check_times(&s.v[1].c, TS(2), TS(2), TS(3), TS(3));
	assert_int_equal(s.v[2].c.outcome, GS_OUT_REPLY);
	check_times(&s.v[2].c, TS(4), TS(4), TS(5), TS(5));
	assert_int_equal(gs_engine_counters(e)->request_id_reused, 1);
	assert_int_equal(gs_engine_counters(e)->retransmits, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* ---- output order ------------------------------------------------------------- */

static void test_output_order(void **state)
{
	for (int linger0 = 0; linger0 < 2; linger0++) {
		struct ub w;
		struct sink s;
		struct conn a, b;
		struct gs_config cfg;
		struct gs_engine *e;
		size_t q100, q9, q3, q4, q1, p[5], o[10];
		small_cfg(&cfg);
		if (linger0)
			cfg.linger_ns = 0;
		e = engine_new(&cfg, &s);
		ub_init(&w, false);
		o[0] = w.n; q100 = ub_request(&w, 2, false, 100, "op", 0);
		o[1] = w.n; q9 = ub_request(&w, 2, false, 9, "op", 0);
		o[2] = w.n; q3 = ub_request(&w, 2, false, 3, "op", 0);
		o[3] = w.n; q4 = ub_request(&w, 2, false, 4, "op", 0);
		o[4] = w.n; q1 = ub_request(&w, 2, false, 1, "op", 0);
		o[5] = w.n; p[0] = ub_reply(&w, 2, false, 1, 0);
		o[6] = w.n; p[1] = ub_reply(&w, 2, false, 4, 0);
		o[7] = w.n; p[2] = ub_reply(&w, 2, false, 3, 0);
		o[8] = w.n; p[3] = ub_reply(&w, 2, false, 9, 0);
		o[9] = w.n; p[4] = ub_reply(&w, 2, false, 100, 0);
		conn_init(&a, "10.0.0.2", 5000, "10.0.0.100", 2809, 1000, 5000);
		conn_init(&b, "10.0.0.10", 5000, "10.0.0.100", 2809, 9000, 7000);
		conn_handshake(e, &a, TS(0));
		conn_handshake(e, &b, TS(0));
		conn_send(e, &a, 0, TS(1), w.b + o[0], q100);
		conn_send(e, &a, 0, TS(2), w.b + o[1], q9 + q3); /* 9 then 3, one segment */
		conn_send(e, &b, 0, TS(2), w.b + o[3], q4);
		conn_send(e, &b, 0, TS(3), w.b + o[4], q1);
		conn_send(e, &b, 1, TS(4), w.b + o[5], p[0]);
		conn_send(e, &b, 1, TS(5), w.b + o[6], p[1]);
		conn_send(e, &a, 1, TS(6), w.b + o[7], p[2]);
		conn_send(e, &a, 1, TS(7), w.b + o[8], p[3]);
		if (linger0)
			assert_int_equal(s.n, 0); /* all wait for request 100 */
		conn_send(e, &a, 1, TS(8), w.b + o[9], p[4]);
		if (linger0)
			assert_int_equal(s.n, 5);
		gs_engine_finish(e);
		assert_int_equal(s.n, 5);
		/* t_request_first, then client as text ("10.0.0.10" < "10.0.0.2"), then id */
		assert_int_equal(s.v[0].c.request_id, 100);
		assert_int_equal(s.v[1].c.request_id, 4);
		check_ep(&s.v[1].c.client, "10.0.0.10", 5000);
		assert_int_equal(s.v[2].c.request_id, 3);
		check_ep(&s.v[2].c.client, "10.0.0.2", 5000);
		assert_int_equal(s.v[3].c.request_id, 9);
		assert_int_equal(s.v[4].c.request_id, 1);
		assert_int_equal(s.v[4].c.t_request_first, TS(3));
		assert_int_equal(gs_engine_counters(e)->rows_out_of_order, 0);
		engine_free(e);
		conn_free(&a);
		conn_free(&b);
		sink_free(&s);
		ub_free(&w);
	}
}

/* A held out-of-order segment may start a call older than what is queued: the
 * ordered output waits for it, with or without a linger. */
static void test_output_order_late_held_message(void **state)
{
	for (int linger0 = 0; linger0 < 2; linger0++) {
		struct ub w;
		struct sink s;
		struct conn c;
		struct gs_config cfg;
		struct gs_engine *e;
		size_t l1, l2, l3, o2, o3, or1;
		uint32_t base;
		small_cfg(&cfg);
		if (linger0)
			cfg.linger_ns = 0;
		e = engine_new(&cfg, &s);
		ub_init(&w, false);
		l1 = ub_request(&w, 2, false, 1, "op", 0);
		o2 = w.n;
		l2 = ub_request(&w, 2, false, 2, "op", 0);
		o3 = w.n;
		l3 = ub_request(&w, 2, false, 3, "op", 0);
		or1 = w.n;
		ub_reply(&w, 2, false, 1, 0);
		conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
		conn_handshake(e, &c, TS(0));
		base = c.next[0];
		conn_raw(e, &c, 0, TS(1), base + (uint32_t)(l1 + l2), c.next[1], GS_TCP_ACK, w.b + o3, l3, CAP_ALL);
		conn_send(e, &c, 0, TS(2), w.b, l1);
		conn_send(e, &c, 1, TS(3), w.b + or1, w.n - or1);
		assert_int_equal(s.n, 0);
		conn_send(e, &c, 0, TS(4), w.b + o2, l2);
		c.next[0] = base + (uint32_t)(l1 + l2 + l3);
		gs_engine_finish(e);
		assert_int_equal(s.n, 3);
		assert_int_equal(s.v[0].c.request_id, 3);
		assert_int_equal(s.v[1].c.request_id, 1);
		assert_int_equal(s.v[2].c.request_id, 2);
		assert_int_equal(gs_engine_counters(e)->rows_out_of_order, 0);
		assert_int_equal(sink_find(&s, 3, 0)->c.t_request_first, TS(1));
		engine_free(e);
		conn_free(&c);
		sink_free(&s);
		ub_free(&w);
	}
}

/* Without the peer's ACK an ended call waits the whole linger (3 s). */
static void test_linger_without_ack(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = engine_new(NULL, &s);
	size_t l1;
	ub_init(&w, false);
	l1 = ub_request_ex(&w, 2, false, 1, 0, "key1", "fire", 0, false);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	assert_int_equal(gs_engine_open_calls(e), 0);
	conn_ack(e, &c, 0, TS(1) + 3000 * MS - 1);
	assert_int_equal(s.n, 0);
	conn_ack(e, &c, 0, TS(1) + 3000 * MS);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_ONEWAY);
	/* the server's ACK of the request settles the next one at once */
	ub_reset(&w);
	l1 = ub_request_ex(&w, 2, false, 2, 0, "key1", "fire", 0, false);
	conn_send(e, &c, 0, TS(4000), w.b, l1);
	assert_int_equal(s.n, 1);
	conn_ack(e, &c, 1, TS(4000) + 1);
	assert_int_equal(s.n, 2);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* GIOP 1.1 may split anywhere: a Request whose header goes on in a Fragment. */
static void test_header_continued_in_fragment_11(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l1, lf, l2, of, or_;
	ub_init(&w, false);
	/* the operation's length is the last thing in the Request */
	ub_giop_begin(&w, 1, false, GIOP_REQUEST, true);
	ub_u32(&w, 0);
	ub_u32(&w, 12);
	ub_u8(&w, 1);
	ub_fill(&w, 0, 3);
	ub_octets(&w, "key1", 4);
	ub_u32(&w, 9);
	l1 = ub_giop_end(&w);
	of = w.n;
	ub_giop_begin(&w, 1, false, GIOP_FRAGMENT, false);
	ub_raw(&w, "longname", 9);
	lf = ub_giop_end(&w);
	or_ = w.n;
	l2 = ub_reply(&w, 1, false, 12, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	conn_send(e, &c, 0, TS(2), w.b + of, lf);
	conn_send(e, &c, 1, TS(3), w.b + or_, l2);
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.request_id, 12);
	assert_int_equal(s.v[0].c.request_bytes, l1 + lf);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_REPLY);
	/* what the first message had: id, response, key; not the operation */
	assert_int_equal(s.v[0].c.flags, F_ANSWERED & ~(uint32_t)GS_CF_OP_KNOWN);
	assert_memory_equal(s.v[0].key, "key1", 4);
	check_times(&s.v[0].c, TS(1), TS(2), TS(3), TS(3));
	assert_int_equal(gs_engine_counters(e)->giop_header_in_fragment, 1);
	assert_int_equal(gs_engine_counters(e)->giop_malformed, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* The capture lists the reply before the end of the request's bytes (held
 * behind a hole): the reply waits for its request. */
static void test_parked_reply(void **state)
{
	for (int lost = 0; lost < 2; lost++) {
		struct ub w;
		struct sink s;
		struct conn c;
		struct gs_engine *e = new_small(&s);
		size_t l1, or_, l2;
		uint32_t base;
		ub_init(&w, false);
		l1 = ub_request(&w, 2, false, 5, "op", 40);
		or_ = w.n;
		l2 = ub_reply(&w, 2, false, 5, 0);
		conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
		conn_handshake(e, &c, TS(0));
		base = c.next[0];
		/* the tail of the request first */
		conn_raw(e, &c, 0, TS(1), base + 20, c.next[1], GS_TCP_ACK, w.b + 20, l1 - 20, CAP_ALL);
		c.next[0] = base + (uint32_t)l1;
		conn_send(e, &c, 1, TS(2), w.b + or_, l2);
		assert_int_equal(s.n, 0);
		if (!lost)
			conn_raw(e, &c, 0, TS(3), base, c.next[1], GS_TCP_ACK, w.b, 20, CAP_ALL);
		gs_engine_finish(e);
		if (!lost) {
			assert_int_equal(s.n, 1);
			assert_int_equal(s.v[0].c.request_id, 5);
			assert_int_equal(s.v[0].c.outcome, GS_OUT_REPLY);
			assert_int_equal(s.v[0].c.flags, F_ANSWERED);
			assert_int_equal(s.v[0].c.request_bytes, l1);
			assert_int_equal(s.v[0].c.reply_bytes, l2);
			/* the request's first byte was first seen at 3 ms, its last at 1 ms */
			/* the request's head came after the reply (the capture listed it
			 * late): its completion is bounded by the reply's first byte */
			check_times(&s.v[0].c, TS(1), TS(2), TS(2), TS(2));
			assert_int_equal(s.v[0].c.gap_fills, 1);
			assert_int_equal(gs_engine_counters(e)->orphan_replies, 0);
			assert_int_equal(gs_engine_counters(e)->replies_paired, 1);
		} else {
			/* the request's head never came: the reply is an orphan after all */
			assert_int_equal(s.n, 0);
			assert_int_equal(gs_engine_counters(e)->orphan_replies, 1);
			assert_int_equal(gs_engine_counters(e)->replies_paired, 0);
		}
		assert_int_equal(gs_engine_open_calls(e), 0);
		engine_free(e);
		conn_free(&c);
		sink_free(&s);
		ub_free(&w);
	}
}

/* A FIN the capture missed, acknowledged by the peer: the FIN is no byte of
 * data, so no bytes are missing (gaps count "bytes the capture never had"). */
static void test_missing_fin_acked_is_not_a_gap(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t lq, op_, lp;
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 1, "op", 0);
	op_ = w.n;
	lp = ub_reply(&w, 2, false, 1, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, lq);
	conn_send(e, &c, 1, TS(2), w.b + op_, lp);
	c.next[0] += 1;                /* the client's FIN, not captured */
	conn_ack(e, &c, 1, TS(3));     /* the server acknowledges it */
	conn_fin(e, &c, 1, TS(30));
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.flags, F_ANSWERED);
	assert_int_equal(gs_engine_counters(e)->gaps, 0);
	assert_int_equal(gs_engine_counters(e)->gap_bytes, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* ---- which connections are GIOP ------------------------------------------------ */

static uint8_t bitmap[8192];

static void set_port(uint16_t p) { bitmap[p >> 3] |= (uint8_t)(1u << (p & 7)); }

static void test_ports_bitmap(void **state)
{
	for (int with_map = 0; with_map < 2; with_map++) {
		struct ub w;
		struct sink s;
		struct conn giop, other, junk;
		struct gs_config cfg;
		struct gs_engine *e;
		const struct gs_counters *k;
		size_t lq, op_, lp;
		static const char hello[] = "HELLO\r\n";
		small_cfg(&cfg);
		memset(bitmap, 0, sizeof bitmap);
		set_port(2809);
		set_port(2810);
		if (with_map)
			cfg.port_bitmap = bitmap;
		e = engine_new(&cfg, &s);
		k = gs_engine_counters(e);
		ub_init(&w, false);
		lq = ub_request(&w, 2, false, 1, "op", 0);
		op_ = w.n;
		lp = ub_reply(&w, 2, false, 1, 0);
		conn_init(&giop, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
		conn_init(&other, "10.0.0.1", 40001, "10.0.0.2", 3000, 1000, 5000);
		conn_init(&junk, "10.0.0.1", 40002, "10.0.0.2", 2810, 1000, 5000);
		conn_handshake(e, &giop, TS(0));
		conn_handshake(e, &other, TS(0));
		conn_handshake(e, &junk, TS(0));
		conn_send(e, &giop, 0, TS(1), w.b, lq);
		conn_send(e, &giop, 1, TS(2), w.b + op_, lp);
		conn_send(e, &other, 0, TS(3), w.b, lq);
		conn_send(e, &other, 1, TS(4), w.b + op_, lp);
		/* a connection that starts with something else, then GIOP */
		conn_send(e, &junk, 0, TS(5), hello, sizeof hello - 1);
		conn_send(e, &junk, 0, TS(6), w.b, lq);
		conn_send(e, &junk, 1, TS(7), w.b + op_, lp);
		gs_engine_finish(e);
		if (with_map) {
			/* 3000 is not listed: ignored; 2810 is: GIOP is looked for past the junk */
			assert_int_equal(s.n, 2);
			assert_int_equal(s.v[0].c.server.port, 2809);
			assert_int_equal(s.v[1].c.server.port, 2810);
			check_times(&s.v[1].c, TS(6), TS(6), TS(7), TS(7));
			assert_int_equal(s.v[1].c.flags, F_ANSWERED);
			assert_int_equal(k->ignored_segments, 2);
			assert_int_equal(k->flows, 2);
			assert_int_equal(k->giop_malformed, 1);
			assert_int_equal(k->giop_resync_bytes, sizeof hello - 2);
			assert_int_equal(k->non_giop_flows, 0);
			assert_non_null(gs_engine_first_malformed(e));
		} else {
			/* any port; the connection that did not start with GIOP is not IIOP */
			assert_int_equal(s.n, 2);
			assert_int_equal(s.v[0].c.server.port, 2809);
			assert_int_equal(s.v[1].c.server.port, 3000);
			assert_int_equal(k->non_giop_flows, 1);
			assert_int_equal(k->ignored_segments, 2);
			assert_int_equal(k->giop_malformed, 0);
			assert_null(gs_engine_first_malformed(e));
		}
		engine_free(e);
		conn_free(&giop);
		conn_free(&other);
		conn_free(&junk);
		sink_free(&s);
		ub_free(&w);
	}
}

/* Joined mid-connection: the capture starts inside a message. */
static void test_mid_connection_start(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t lq, op_, lp;
	uint8_t seg[200];
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 77, "op", 0);
	op_ = w.n;
	lp = ub_reply(&w, 2, false, 77, 0);
	memset(seg, 0xab, 30);
	memcpy(seg + 30, w.b, lq);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_send(e, &c, 0, TS(1), seg, 30 + lq);
	conn_send(e, &c, 1, TS(2), w.b + op_, lp);
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.request_id, 77);
	assert_int_equal(s.v[0].c.flags, F_ANSWERED);
	check_times(&s.v[0].c, TS(1), TS(1), TS(2), TS(2));
	assert_int_equal(gs_engine_counters(e)->giop_resync_bytes, 30);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* Mid-connection and never GIOP: given up after the scan budget (64 KiB). */
static void test_mid_connection_not_giop(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	uint8_t junk[1400];
	size_t lq;
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 1, "op", 0);
	memset(junk, 'x', sizeof junk);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	for (int i = 0; i < 46; i++)
		conn_send(e, &c, 0, TS(1) + i, junk, sizeof junk); /* 64400 bytes */
	assert_int_equal(gs_engine_counters(e)->non_giop_flows, 0);
	conn_send(e, &c, 0, TS(2), junk, sizeof junk);
	assert_int_equal(gs_engine_counters(e)->non_giop_flows, 1);
	conn_send(e, &c, 0, TS(3), w.b, lq);
	gs_engine_finish(e);
	assert_int_equal(s.n, 0);
	assert_int_equal(gs_engine_counters(e)->ignored_segments, 1);
	assert_int_equal(gs_engine_counters(e)->giop_resync_bytes, 47 * 1400);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* A connection that opens with a TLS handshake record is IIOP over TLS (or another
 * protocol over TLS): counted as TLS, never framed, so GIOP bytes that happen to be in
 * its records make no call; a plain connection beside it pairs as ever.  With --ports
 * as well (a forced port is framed whatever it starts with, but not TLS). */
static void test_tls_connection(void **state)
{
	for (int with_map = 0; with_map < 2; with_map++) {
		struct ub w;
		struct sink s;
		struct conn giop, tls, tls13, one, junk;
		struct gs_config cfg;
		struct gs_engine *e;
		const struct gs_counters *k;
		size_t lq, op_, lp;
		/* ClientHello record head (TLS 1.0 record version, as TLS 1.3 clients send) */
		static const uint8_t hello[] = { 22, 3, 1, 0, 8, 1, 0, 0, 4, 3, 3, 0, 0 };
		static const uint8_t shello[] = { 22, 3, 3, 0, 6, 2, 0, 0, 2, 3, 3 };
		static const uint8_t one_byte[] = { 22 };
		/* content type 22 but no TLS version: not TLS, only not GIOP */
		static const uint8_t not_tls[] = { 22, 3, 9, 0, 4, 1, 2, 3, 4 };
		uint8_t rec[512];
		small_cfg(&cfg);
		memset(bitmap, 0, sizeof bitmap);
		set_port(2809);
		set_port(2810);
		set_port(2811);
		set_port(2812);
		set_port(2813);
		if (with_map)
			cfg.port_bitmap = bitmap;
		e = engine_new(&cfg, &s);
		k = gs_engine_counters(e);
		ub_init(&w, false);
		lq = ub_request(&w, 2, false, 1, "op", 0);
		op_ = w.n;
		lp = ub_reply(&w, 2, false, 1, 0);
		/* an application-data record whose bytes hold a whole GIOP request */
		rec[0] = 23, rec[1] = 3, rec[2] = 3, rec[3] = (uint8_t)(lq >> 8), rec[4] = (uint8_t)lq;
		memcpy(rec + 5, w.b, lq);
		conn_init(&giop, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
		conn_init(&tls, "10.0.0.1", 40001, "10.0.0.2", 2810, 1000, 5000);
		conn_init(&tls13, "10.0.0.1", 40002, "10.0.0.2", 2811, 1000, 5000);
		conn_init(&one, "10.0.0.1", 40003, "10.0.0.2", 2812, 1000, 5000);
		conn_init(&junk, "10.0.0.1", 40004, "10.0.0.2", 2813, 1000, 5000);
		conn_handshake(e, &giop, TS(0));
		conn_handshake(e, &tls, TS(0));
		conn_handshake(e, &tls13, TS(0));
		conn_handshake(e, &one, TS(0));
		conn_handshake(e, &junk, TS(0));
		conn_send(e, &giop, 0, TS(1), w.b, lq);
		conn_send(e, &giop, 1, TS(2), w.b + op_, lp);
		/* TLS: the client's hello first, then records that carry GIOP bytes */
		conn_send(e, &tls, 0, TS(3), hello, sizeof hello);
		conn_send(e, &tls, 1, TS(3), shello, sizeof shello);
		conn_send(e, &tls, 0, TS(4), w.b, lq);
		conn_send(e, &tls, 1, TS(5), w.b + op_, lp);
		/* the server's hello seen first (the client's segment lost to the capture) */
		conn_send(e, &tls13, 1, TS(6), shello, sizeof shello);
		conn_send(e, &tls13, 0, TS(7), rec, 5 + lq);
		/* a first segment of one byte: the record type alone */
		conn_send(e, &one, 0, TS(8), one_byte, sizeof one_byte);
		conn_send(e, &one, 0, TS(8), rec, 5 + lq);
		conn_send(e, &junk, 0, TS(9), not_tls, sizeof not_tls);
		gs_engine_finish(e);
		assert_int_equal(s.n, 1);
		assert_int_equal(s.v[0].c.server.port, 2809);
		assert_int_equal(s.v[0].c.flags, F_ANSWERED);
		assert_int_equal(k->tls_flows, 3);
		assert_int_equal(k->calls, 1);
		assert_int_equal(k->giop_messages, 2);
		assert_int_equal(k->orphan_replies, 0);
		assert_int_equal(k->flows, 5);
		if (with_map) {
			/* forced: the junk is framed (malformed), TLS is not */
			assert_int_equal(k->non_giop_flows, 0);
			assert_int_equal(k->giop_malformed, 1);
		} else {
			assert_int_equal(k->non_giop_flows, 1);
			assert_int_equal(k->giop_malformed, 0);
		}
		/* the records after each TLS connection's first: ignored, not framed */
		assert_int_equal(k->ignored_segments, 3 + 1 + 1);
		engine_free(e);
		conn_free(&giop);
		conn_free(&tls);
		conn_free(&tls13);
		conn_free(&one);
		conn_free(&junk);
		sink_free(&s);
		ub_free(&w);
	}
}

/* A new SYN on the same 4-tuple: a new connection; the old one's calls end. */
static void test_port_reuse_new_syn(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t lq, op_, lp;
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 1, "op", 0);
	op_ = w.n;
	lp = ub_reply(&w, 2, false, 1, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, lq);
	conn_free(&c);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 900000, 800000);
	conn_handshake(e, &c, TS(10));
	conn_send(e, &c, 0, TS(11), w.b, lq);
	conn_send(e, &c, 1, TS(12), w.b + op_, lp);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(s.v[0].c.t_done, TS(10));
	assert_int_equal(s.v[1].c.outcome, GS_OUT_REPLY);
	check_times(&s.v[1].c, TS(11), TS(11), TS(12), TS(12));
	assert_int_equal(gs_engine_counters(e)->flows_reused, 1);
	assert_int_equal(gs_engine_counters(e)->flows, 2);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* ---- capture cut by the snapshot length ------------------------------------------- */

static void test_snaplen_cut_payload(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	const struct gs_counters *k = gs_engine_counters(e);
	const struct gs_problem *pb;
	size_t lq, op_, lp;
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 91, "echoString", 40);
	op_ = w.n;
	lp = ub_reply(&w, 2, false, 91, 40);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send_cut(e, &c, 0, TS(1), w.b, lq, 40);  /* inside the operation name */
	conn_send_cut(e, &c, 1, TS(2), w.b + op_, lp, 20); /* just after the status */
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.request_id, 91);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_REPLY);
	/* every byte was on the wire in a captured packet: the snapshot length cut
	 * them, the capture lost none (capture_loss is for gaps: pairs-csv.md) */
	assert_int_equal(s.v[0].c.flags, GS_CF_REQ_DONE | GS_CF_REP_SEEN | GS_CF_REP_DONE | GS_CF_STATUS_KNOWN);
	assert_int_equal(s.v[0].c.status, GIOP_NO_EXCEPTION);
	assert_int_equal(s.v[0].oplen, 0);
	assert_int_equal(s.v[0].keylen, 4);
	assert_int_equal(s.v[0].c.request_bytes, lq);
	assert_int_equal(s.v[0].c.reply_bytes, lp);
	check_times(&s.v[0].c, TS(1), TS(1), TS(2), TS(2));
	assert_int_equal(k->giop_truncated, 2);
	assert_int_equal(k->payload_truncated, 2);
	assert_int_equal(k->calls_capture_loss, 0);
	pb = gs_engine_first_truncated(e);
	assert_non_null(pb);
	assert_int_equal(pb->packet, 4);
	assert_string_equal(pb->what, "10.0.0.1:40000 -> 10.0.0.2:2809: GIOP Request cut by the capture's snapshot length");
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* Runs fn in a child with a time limit: returns its exit status, or -SIGALRM when
 * it hung, or -signal when it died. */
static int in_child(int (*fn)(void), unsigned seconds)
{
	int st;
	pid_t pid;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(seconds);
		_exit(fn());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		return -WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* A segment whose capture ends 4..11 bytes into the next message's header. */
static int header_cut_child(void)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t l1, l2, l3, o3, or1;
	int bad = 0;
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 1, "op", 0);
	l2 = ub_request(&w, 2, false, 2, "op", 0);
	o3 = w.n;
	l3 = ub_request(&w, 2, false, 3, "op", 0);
	or1 = w.n;
	ub_reply(&w, 2, false, 1, 0);
	ub_reply(&w, 2, false, 2, 0);
	ub_reply(&w, 2, false, 3, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send_cut(e, &c, 0, TS(1), w.b, l1 + l2, l1 + 5); /* "GIOP\1" of request 2 */
	conn_send(e, &c, 0, TS(2), w.b + o3, l3);
	conn_send(e, &c, 1, TS(3), w.b + or1, w.n - or1);
	gs_engine_finish(e);
	/* request 2 is lost, 1 and 3 are answered */
	if (s.n != 2 || s.v[0].c.request_id != 1 || s.v[1].c.request_id != 3)
		bad = 1;
	if (gs_engine_counters(e)->giop_truncated != 1)
		bad = 1;
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
	return bad ? 3 : 0;
}

static void test_snaplen_cut_inside_next_header(void **state)
{
	int r = in_child(header_cut_child, 10);
	if (r == -SIGALRM)
		fail_msg("the engine hangs on a header cut 5 bytes in by the snapshot length");
	assert_int_equal(r, 0);
}

/* ---- bounds ------------------------------------------------------------------------ */

static void test_max_open_calls_evicts(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_config cfg;
	struct gs_engine *e;
	size_t q[3], o[6];
	small_cfg(&cfg);
	cfg.max_open_calls = 2;
	e = engine_new(&cfg, &s);
	ub_init(&w, false);
	for (uint32_t i = 0; i < 3; i++) {
		o[i] = w.n;
		q[i] = ub_request(&w, 2, false, i + 1, "op", 0);
	}
	for (uint32_t i = 0; i < 3; i++) {
		o[3 + i] = w.n;
		ub_reply(&w, 2, false, i + 1, 0);
	}
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b + o[0], q[0]);
	conn_send(e, &c, 0, TS(2), w.b + o[1], q[1]);
	assert_int_equal(s.n, 0);
	conn_send(e, &c, 0, TS(3), w.b + o[2], q[2]);
	/* the oldest open call gave way, written at once */
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.request_id, 1);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(s.v[0].c.flags, GS_CF_OP_KNOWN | GS_CF_REQ_DONE | GS_CF_EVICTED);
	assert_int_equal(gs_engine_open_calls(e), 2);
	conn_send(e, &c, 1, TS(4), w.b + o[3], 24); /* reply 1: too late */
	conn_send(e, &c, 1, TS(5), w.b + o[4], 24);
	conn_send(e, &c, 1, TS(6), w.b + o[5], 24);
	/* a fourth request while both slots hold answered calls: the oldest is
	 * written early, and the ACK the request carries settles the other */
	conn_send(e, &c, 0, TS(7), w.b + o[0], q[0]);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[1].c.request_id, 2);
	gs_engine_finish(e);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.v[2].c.request_id, 3);
	assert_int_equal(s.v[2].c.outcome, GS_OUT_REPLY);
	assert_int_equal(s.v[3].c.request_id, 1);
	assert_int_equal(s.v[3].c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(s.v[3].c.flags, GS_CF_OP_KNOWN | GS_CF_REQ_DONE);
	assert_int_equal(gs_engine_counters(e)->open_calls_evicted, 1);
	assert_int_equal(gs_engine_counters(e)->orphan_replies, 1);
	assert_int_equal(gs_engine_counters(e)->rows_out_of_order, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* Unordered output keeps no heap of the open calls until the pool fills: then
 * it is built from the open calls, and the oldest gives way, wherever its slot
 * is; from then on the heap is kept. */
static void test_unordered_evicts_oldest(void **state)
{
	struct ub w;
	struct sink s;
	struct conn a, b;
	struct gs_config cfg;
	struct gs_engine *e;
	size_t r1, o1, p1, r5, o5, r2, o2, r3, o3, r4, o4, r6, o6;
	small_cfg(&cfg);
	cfg.max_open_calls = 3;
	cfg.ordered = false;
	e = engine_new(&cfg, &s);
	ub_init(&w, false);
	o1 = w.n;
	r1 = ub_request(&w, 2, false, 1, "op", 0);
	p1 = w.n;
	ub_reply(&w, 2, false, 1, 0);
	o5 = w.n;
	r5 = ub_request(&w, 2, false, 5, "op", 0);
	o2 = w.n;
	r2 = ub_request(&w, 2, false, 2, "op", 0);
	o3 = w.n;
	r3 = ub_request(&w, 2, false, 3, "op", 0);
	o4 = w.n;
	r4 = ub_request(&w, 2, false, 4, "op", 0);
	o6 = w.n;
	r6 = ub_request(&w, 2, false, 6, "op", 0);
	conn_init(&a, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_init(&b, "10.0.0.3", 40001, "10.0.0.2", 2809, 3000, 7000);
	conn_handshake(e, &a, TS(0));
	conn_handshake(e, &b, TS(0));
	conn_send(e, &a, 0, TS(1), w.b + o1, r1);  /* slot 0 */
	conn_send(e, &b, 0, TS(2), w.b + o5, r5);  /* slot 1: the oldest once 1 is done */
	conn_send(e, &a, 1, TS(3), w.b + p1, 24);
	conn_ack(e, &a, 0, TS(3) + 1);
	assert_int_equal(s.n, 1);                  /* call 1 written, slot 0 free */
	conn_send(e, &a, 0, TS(4), w.b + o2, r2);  /* slot 0 again */
	conn_send(e, &a, 0, TS(5), w.b + o3, r3);  /* slot 2 */
	assert_int_equal(gs_engine_open_calls(e), 3);
	conn_send(e, &a, 0, TS(6), w.b + o4, r4);  /* the pool is full */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[1].c.request_id, 5);
	check_ep(&s.v[1].c.client, "10.0.0.3", 40001);
	assert_int_equal(s.v[1].c.outcome, GS_OUT_NO_REPLY);
	assert_true(s.v[1].c.flags & GS_CF_EVICTED);
	conn_send(e, &a, 0, TS(7), w.b + o6, r6);  /* the heap kept since: 2 is next */
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[2].c.request_id, 2);
	assert_true(s.v[2].c.flags & GS_CF_EVICTED);
	assert_int_equal(gs_engine_counters(e)->open_calls_evicted, 2);
	gs_engine_finish(e);
	assert_int_equal(s.n, 6);
	engine_free(e);
	conn_free(&a);
	conn_free(&b);
	sink_free(&s);
	ub_free(&w);
}

static void test_max_flows_evicts(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c[3];
	struct gs_config cfg;
	struct gs_engine *e;
	size_t lq, op_, lp;
	small_cfg(&cfg);
	cfg.max_flows = 2;
	e = engine_new(&cfg, &s);
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 1, "op", 0);
	op_ = w.n;
	lp = ub_reply(&w, 2, false, 1, 0);
	for (int i = 0; i < 3; i++) {
		conn_init(&c[i], "10.0.0.1", (uint16_t)(40000 + i), "10.0.0.2", 2809, 1000, 5000);
		conn_handshake(e, &c[i], TS(i));
		conn_send(e, &c[i], 0, TS(i) + 10 * US, w.b, lq);
	}
	assert_int_equal(gs_engine_active_flows(e), 2);
	assert_int_equal(gs_engine_open_calls(e), 2);
	conn_send(e, &c[1], 1, TS(5), w.b + op_, lp);
	conn_send(e, &c[2], 1, TS(6), w.b + op_, lp);
	gs_engine_finish(e);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[0].c.client.port, 40000);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(s.v[0].c.t_done, TS(2));
	assert_int_equal(s.v[1].c.outcome, GS_OUT_REPLY);
	assert_int_equal(s.v[2].c.outcome, GS_OUT_REPLY);
	assert_int_equal(gs_engine_counters(e)->flows_evicted, 1);
	assert_int_equal(gs_engine_counters(e)->flows, 3);
	for (int i = 0; i < 3; i++)
		conn_free(&c[i]);
	engine_free(e);
	sink_free(&s);
	ub_free(&w);
}

/* call.h: GS_CF_EVICTED "ended by a table bound, not by the wire" - a connection
 * evicted from the flow table is such a bound too. */
static void test_max_flows_evicted_call_flagged(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c[3];
	struct gs_config cfg;
	struct gs_engine *e;
	size_t lq;
	small_cfg(&cfg);
	cfg.max_flows = 2;
	e = engine_new(&cfg, &s);
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 1, "op", 0);
	for (int i = 0; i < 3; i++) {
		conn_init(&c[i], "10.0.0.1", (uint16_t)(40000 + i), "10.0.0.2", 2809, 1000, 5000);
		conn_handshake(e, &c[i], TS(i));
		conn_send(e, &c[i], 0, TS(i) + 10 * US, w.b, lq);
	}
	gs_engine_finish(e);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.v[0].c.client.port, 40000);
	assert_true(s.v[0].c.flags & GS_CF_EVICTED);
	assert_false(s.v[1].c.flags & GS_CF_EVICTED);
	for (int i = 0; i < 3; i++)
		conn_free(&c[i]);
	engine_free(e);
	sink_free(&s);
	ub_free(&w);
}

/* A message head larger than head_max, all of it captured, over many segments:
 * the head is given up on (counted), but no byte was lost from the capture. */
static void test_head_too_large_is_not_capture_loss(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	const struct gs_counters *k = gs_engine_counters(e);
	static uint8_t key[5000];
	size_t lq, op_, lp;
	ub_init(&w, false);
	memset(key, 'k', sizeof key);
	ub_giop_begin(&w, 2, false, GIOP_REQUEST, false);
	ub_u32(&w, 3);
	ub_u8(&w, 3);
	ub_fill(&w, 0, 3);
	ub_u16(&w, 0);
	ub_octets(&w, key, sizeof key);
	ub_str(&w, "op");
	ub_u32(&w, 0);
	lq = ub_giop_end(&w);
	op_ = w.n;
	lp = ub_reply(&w, 2, false, 3, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send_split(e, &c, 0, TS(1), w.b, lq, 1000);
	conn_send(e, &c, 1, TS(2), w.b + op_, lp);
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(k->giop_head_too_large, 1);
	assert_int_equal(k->giop_truncated, 0);
	assert_int_equal(s.v[0].c.request_id, 3);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_REPLY);
	assert_int_equal(s.v[0].oplen, 0);
	check_times(&s.v[0].c, TS(1), TS(1) + 5 * US, TS(2), TS(2));
	assert_false(s.v[0].c.flags & GS_CF_CAPTURE_LOSS);
	assert_int_equal(k->calls_capture_loss, 0);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* More connections with a partial head than head slots (256): the ones without
 * a slot lose that message, and the engine goes on. */
static int head_pool_child(void)
{
	struct ub w;
	struct sink s;
	struct gs_config cfg;
	struct gs_engine *e;
	struct conn *c = calloc(300, sizeof *c);
	size_t lq;
	int bad = 0;
	gs_config_default(&cfg);
	cfg.max_flows = 1024;
	cfg.max_open_calls = 1024;
	e = engine_new(&cfg, &s);
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 1, "op", 0);
	for (int i = 0; i < 300; i++) {
		conn_init(&c[i], "10.0.0.1", (uint16_t)(20000 + i), "10.0.0.2", 2809, 1000, 5000);
		conn_handshake(e, &c[i], TS(0));
		conn_send(e, &c[i], 0, TS(1), w.b, 5);
	}
	for (int i = 0; i < 300; i++)
		conn_send(e, &c[i], 0, TS(2), w.b + 5, lq - 5);
	gs_engine_finish(e);
	if (s.n != 256 || gs_engine_counters(e)->giop_head_pool_full != 44)
		bad = 1;
	for (int i = 0; i < 300; i++)
		conn_free(&c[i]);
	free(c);
	engine_free(e);
	sink_free(&s);
	ub_free(&w);
	return bad ? 3 : 0;
}

static void test_head_pool_full(void **state)
{
	int r = in_child(head_pool_child, 20);
	if (r == -SIGALRM)
		fail_msg("the engine hangs when the head pool is full and a segment ends 5 bytes into a header");
	assert_int_equal(r, 0);
}

static void test_reply_timeout_tick(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_config cfg;
	struct gs_engine *e;
	size_t lq, op_, lp;
	small_cfg(&cfg);
	cfg.reply_timeout_ns = 1000 * MS;
	cfg.linger_ns = 0;
	e = engine_new(&cfg, &s);
	ub_init(&w, false);
	lq = ub_request(&w, 2, false, 1, "op", 0);
	op_ = w.n;
	lp = ub_reply(&w, 2, false, 1, 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, lq);
	gs_engine_tick(e, TS(1000));
	assert_int_equal(s.n, 0);
	gs_engine_tick(e, TS(1001));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.v[0].c.outcome, GS_OUT_NO_REPLY);
	assert_int_equal(s.v[0].c.t_done, TS(1001));
	conn_send(e, &c, 1, TS(1002), w.b + op_, lp);
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	assert_int_equal(gs_engine_counters(e)->orphan_replies, 1);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

static void test_strings_table_full(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_config cfg;
	struct gs_engine *e;
	size_t l1, l2, o2;
	small_cfg(&cfg);
	cfg.max_strings = 3; /* "", "first", "key1" */
	e = engine_new(&cfg, &s);
	ub_init(&w, false);
	l1 = ub_request(&w, 2, false, 1, "first", 0);
	o2 = w.n;
	l2 = ub_request(&w, 2, false, 2, "second", 0);
	conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, l1);
	conn_send(e, &c, 0, TS(2), w.b + o2, l2);
	gs_engine_finish(e);
	assert_int_equal(s.n, 2);
	check_op(&s.v[0], "first");
	assert_int_equal(s.v[1].oplen, 0);
	assert_int_equal(s.v[1].c.op, GS_INTERN_FULL);
	assert_true(s.v[1].c.flags & GS_CF_OP_KNOWN);
	assert_int_equal(gs_engine_counters(e)->intern_refused, 1);
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* ---- other link types and IPv6 ----------------------------------------------------- */

static void test_ipv6_over_sll2(void **state)
{
	struct ub w;
	struct sink s;
	struct conn c;
	struct gs_engine *e = new_small(&s);
	size_t lq, op_, lp;
	ub_init(&w, false);
	lq = ub_request(&w, 3, true, 8, "op13", 0);
	op_ = w.n;
	lp = ub_reply(&w, 3, true, 8, 0);
	conn_init(&c, "2001:db8::1", 40000, "2001:db8::2", 2809, 1000, 5000);
	c.dlt = GS_DLT_LINUX_SLL2;
	conn_handshake(e, &c, TS(0));
	conn_send(e, &c, 0, TS(1), w.b, lq);
	conn_send(e, &c, 1, TS(2), w.b + op_, lp);
	gs_engine_finish(e);
	assert_int_equal(s.n, 1);
	check_ep(&s.v[0].c.client, "2001:db8::1", 40000);
	check_ep(&s.v[0].c.server, "2001:db8::2", 2809);
	assert_int_equal(s.v[0].c.minor, 3);
	assert_int_equal(s.v[0].c.flags, F_ANSWERED);
	check_op(&s.v[0], "op13");
	engine_free(e);
	conn_free(&c);
	sink_free(&s);
	ub_free(&w);
}

/* Hostile input: random frames on one connection never crash the engine
 * (ASan/UBSan build) and leave it consistent. */
static void test_random_streams(void **state)
{
	struct ub w;
	uint32_t x = 777;
	ub_init(&w, false);
	for (uint32_t i = 0; i < 20; i++) {
		ub_request(&w, (i % 4), i & 1, i, "op", i * 3);
		ub_reply(&w, (i % 4), i & 1, i, i);
		ub_fragment(&w, 2, false, i, 5, (i & 2) != 0);
		ub_cancel(&w, 1, true, i);
	}
	for (int round = 0; round < 200; round++) {
		struct sink s;
		struct conn c;
		struct gs_engine *e = new_small(&s);
		uint8_t *buf = exact_copy(w.b, w.n);
		conn_init(&c, "10.0.0.1", 40000, "10.0.0.2", 2809, 1000, 5000);
		if (round & 1)
			conn_handshake(e, &c, TS(0));
		for (int m = 0; m < 8; m++) {
			x = x * 1103515245u + 12345u;
			buf[(x >> 8) % w.n] = (uint8_t)(x >> 24);
		}
		for (size_t off = 0; off < w.n;) {
			size_t n;
			int d;
			x = x * 1103515245u + 12345u;
			n = 1 + (x >> 8) % 300;
			if (n > w.n - off)
				n = w.n - off;
			d = (x >> 4) & 1;
			switch ((x >> 20) % 8) {
			case 0: /* lost */
				c.next[d] += (uint32_t)n;
				break;
			case 1: /* cut by the snaplen */
				conn_send_cut(e, &c, d, TS(1) + (int64_t)off, buf + off, n, (x >> 12) % (n + 1));
				break;
			case 2: /* again */
				conn_raw(e, &c, d, TS(1) + (int64_t)off, c.next[d] - (uint32_t)n, c.next[!d],
					 GS_TCP_ACK, buf + off, n, CAP_ALL);
				break;
			default:
				conn_send(e, &c, d, TS(1) + (int64_t)off, buf + off, n);
				break;
			}
			off += n;
		}
		if (round % 3 == 0)
			conn_rst(e, &c, 0, TS(9));
		gs_engine_finish(e);
		assert_int_equal(gs_engine_open_calls(e), 0);
		for (size_t i = 1; i < s.n; i++)
			assert_true(s.v[i - 1].c.t_request_first <= s.v[i].c.t_request_first ||
				    gs_engine_counters(e)->rows_out_of_order > 0);
		free(buf);
		engine_free(e);
		conn_free(&c);
		sink_free(&s);
	}
	ub_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_engine_new_bounds),
		UT(test_request_reply_12),
		UT(test_request_reply_every_version),
		UT(test_several_messages_in_one_segment),
		UT(test_split_at_every_byte),
		UT(test_known_giop_stream_split_at_every_byte),
		UT(test_exception_reply_split_at_every_byte),
		UT(test_out_of_order_first_seen_times),
		UT(test_retransmissions_counted_not_timed),
		UT(test_overlapping_segment),
		UT(test_gap_acked_inside_message),
		UT(test_gap_swallowing_a_header_resyncs),
		UT(test_fragments_11_chain),
		UT(test_fragments_12_interleaved),
		UT(test_orphan_fragment),
		UT(test_oneway),
		UT(test_cancel_request),
		UT(test_locate_request_reply),
		UT(test_bidirectional),
		UT(test_no_reply_at_server_fin),
		UT(test_connection_identity_after_end),
		UT(test_no_reply_at_end_of_input_and_rst),
		UT(test_sequence_wraparound),
		UT(test_request_id_reuse),
		UT(test_output_order),
		UT(test_output_order_late_held_message),
		UT(test_linger_without_ack),
		UT(test_header_continued_in_fragment_11),
		UT(test_parked_reply),
		UT(test_reply_waits_for_request_tail),
		UT(test_missing_fin_acked_is_not_a_gap),
		UT(test_ports_bitmap),
		UT(test_mid_connection_start),
		UT(test_mid_connection_not_giop),
		UT(test_tls_connection),
		UT(test_port_reuse_new_syn),
		UT(test_snaplen_cut_payload),
		UT(test_snaplen_cut_inside_next_header),
		UT(test_max_open_calls_evicts),
		UT(test_unordered_evicts_oldest),
		UT(test_max_flows_evicts),
		UT(test_max_flows_evicted_call_flagged),
		UT(test_head_too_large_is_not_capture_loss),
		UT(test_head_pool_full),
		UT(test_reply_timeout_tick),
		UT(test_strings_table_full),
		UT(test_ipv6_over_sll2),
		UT(test_random_streams),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
