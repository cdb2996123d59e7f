/* SPDX-License-Identifier: BSD-2-Clause */
/* The pairs CSV / JSONL rows (analysis/sink_pairs.c) and the status names. */
#include "unit.h"
#include "call_fixtures.h"
#include "../../analysis/sink_pairs.h"

/* ---- pairs CSV / JSONL ---------------------------------------------------------- */

static char *row(const struct gs_intern *t, const struct gs_call *c, enum gs_pairs_format fmt)
{
	static char buf[16384];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	assert_non_null(f);
	gs_pairs_write(f, fmt, t, c);
	fclose(f);
	return buf;
}

static void test_pairs_csv_rows(void **state)
{
	struct gs_intern t;
	struct gs_call c = base_call();
	char hdr[1024];
	FILE *f;
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);
	c.op = gs_intern(&t, "echoString", 10);

	f = fmemopen(hdr, sizeof hdr, "w");
	gs_pairs_header(f, GS_PAIRS_CSV);
	fclose(f);
	assert_string_equal(hdr, "client,server,request_id,giop,kind,operation,oneway,status,request_bytes,"
				 "reply_bytes,t_request_first,t_request_last,t_reply_first,t_reply_last,"
				 "total_us,server_us,retransmits,gap_fills,capture_loss,parent_client,parent_server,"
				 "parent_request_id,parent_basis,downstream_us\n");

	assert_string_equal(row(&t, &c, GS_PAIRS_CSV),
			    "10.0.0.1:40000,10.0.0.2:2809,4294967295,1.2,Request,echoString,0,NO_EXCEPTION,64,40,"
			    "1700000000.000000001,1700000000.000500000,1700000000.001500000,1700000000.001999999,"
			    "1999.998,1000.000,2,0,0,,,,,0.000\n");
	/* gap fills counted; where the capture lost bytes, unknown and flagged */
	c.gap_fills = 3;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1000.000,2,3,0,,,,,0.000\n"));
	c.flags |= GS_CF_CAPTURE_LOSS;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1000.000,2,,1,,,,,0.000\n"));
	c.gap_fills = 0;
	c.flags &= ~(uint32_t)GS_CF_CAPTURE_LOSS;

	/* a nested call: its parent (by time, by thread); a parent: its downstream time */
	c.parent_client = c.client;
	c.parent_server = c.server;
	c.parent_client.addr[3] = 9;
	c.parent_request_id = 77;
	c.parent_basis = GS_PARENT_TIME;
	c.downstream_ns = 250500;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1000.000,2,0,0,10.0.0.9:40000,10.0.0.2:2809,77,time,250.500\n"));
	c.parent_basis = GS_PARENT_THREAD;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",0,10.0.0.9:40000,10.0.0.2:2809,77,thread,250.500\n"));
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_JSONL),
			       "\"capture_loss\":0,\"parent_client\":\"10.0.0.9:40000\",\"parent_server\":\"10.0.0.2:2809\","
			       "\"parent_request_id\":77,\"parent_basis\":\"thread\",\"downstream_us\":250.500}\n"));
	c.parent_basis = GS_PARENT_NONE;
	c.downstream_ns = 0;

	/* oneway: empty reply columns */
	c.flags = GS_CF_ONEWAY | GS_CF_OP_KNOWN | GS_CF_REQ_DONE;
	c.outcome = GS_OUT_ONEWAY;
	c.retransmits = 0;
	c.minor = 0;
	assert_string_equal(row(&t, &c, GS_PAIRS_CSV),
			    "10.0.0.1:40000,10.0.0.2:2809,4294967295,1.0,Request,echoString,1,ONEWAY,64,,"
			    "1700000000.000000001,1700000000.000500000,,,,,0,0,0,,,,,\n");
	c.flags = GS_CF_OP_KNOWN;
	c.outcome = GS_OUT_NO_REPLY;
	assert_string_equal(row(&t, &c, GS_PAIRS_CSV),
			    "10.0.0.1:40000,10.0.0.2:2809,4294967295,1.0,Request,echoString,0,NO_REPLY,64,,"
			    "1700000000.000000001,1700000000.000500000,,,,,0,0,0,,,,,\n");
	c.outcome = GS_OUT_CANCELLED;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",0,CANCELLED,64,,"));

	/* LocateRequest: no operation; LocateReply status names */
	c = base_call();
	c.kind = GS_KIND_LOCATE_REQUEST;
	c.reply_type = GIOP_LOCATE_REPLY;
	c.status = GIOP_OBJECT_FORWARD;
	c.op = gs_intern(&t, "ignored", 7);
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1.2,LocateRequest,,0,OBJECT_FORWARD,64,40,"));

	/* a reply seen but its status not: empty status */
	c = base_call();
	c.flags &= ~(uint32_t)GS_CF_STATUS_KNOWN;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",Request,,0,,64,40,"));

	/* quoting per RFC 4180 */
	c = base_call();
	c.op = gs_intern(&t, "a,\"b\"", 5);
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",Request,\"a,\"\"b\"\"\",0,"));

	/* the sink formats a negative difference (the engine never emits one: it
	 * bounds the instants by causality, calls.c) */
	c = base_call();
	c.t_reply_first = c.t_request_last - 1500;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1999.998,-1.500,2,0,0,,,,,0.000\n"));
	c.t_reply_first = c.t_request_last - 500;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), ",1999.998,-0.500,2,0,0,,,,,0.000\n"));

	/* IPv6 endpoints */
	c = base_call();
	c.client.family = c.server.family = 6;
	assert_int_equal(inet_pton(AF_INET6, "fe80::1", c.client.addr), 1);
	assert_int_equal(inet_pton(AF_INET6, "fe80::2", c.server.addr), 1);
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_CSV), "[fe80::1]:40000,[fe80::2]:2809,4294967295,"));
	gs_intern_free(&t);
}

static void test_pairs_jsonl_rows(void **state)
{
	struct gs_intern t;
	struct gs_call c = base_call();
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);
	c.op = gs_intern(&t, "e\"\\\x01", 4);
	assert_string_equal(row(&t, &c, GS_PAIRS_JSONL),
			    "{\"client\":\"10.0.0.1:40000\",\"server\":\"10.0.0.2:2809\",\"request_id\":4294967295,"
			    "\"giop\":\"1.2\",\"kind\":\"Request\",\"operation\":\"e\\\"\\\\\\u0001\",\"oneway\":0,"
			    "\"status\":\"NO_EXCEPTION\",\"request_bytes\":64,\"reply_bytes\":40,"
			    "\"t_request_first\":\"1700000000.000000001\",\"t_request_last\":\"1700000000.000500000\","
			    "\"t_reply_first\":\"1700000000.001500000\",\"t_reply_last\":\"1700000000.001999999\","
			    "\"total_us\":1999.998,\"server_us\":1000.000,\"retransmits\":2,\"gap_fills\":0,"
			    "\"capture_loss\":0,\"parent_client\":null,\"parent_server\":null,"
			    "\"parent_request_id\":null,\"parent_basis\":null,\"downstream_us\":0.000}\n");
	c.flags = GS_CF_OP_KNOWN | GS_CF_HAS_PRIORITY | GS_CF_CAPTURE_LOSS;
	c.outcome = GS_OUT_NO_REPLY;
	c.priority = -3;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_JSONL),
			       "\"reply_bytes\":null,\"t_request_first\":\"1700000000.000000001\","
			       "\"t_request_last\":\"1700000000.000500000\",\"t_reply_first\":null,"
			       "\"t_reply_last\":null,\"total_us\":null,\"server_us\":null,\"retransmits\":2,"
			       "\"gap_fills\":null,\"capture_loss\":1,\"parent_client\":null,\"parent_server\":null,"
			       "\"parent_request_id\":null,\"parent_basis\":null,\"downstream_us\":null,\"priority\":-3}\n"));
	c = base_call();
	c.status = GIOP_SYSTEM_EXCEPTION;
	c.flags |= GS_CF_HAS_EXCEPTION;
	c.exception = gs_intern(&t, "IDL:omg.org/CORBA/TRANSIENT:1.0", 31);
	c.minor_code = 0x4f4d0001;
	c.completion = 1;
	assert_non_null(strstr(row(&t, &c, GS_PAIRS_JSONL),
			       "\"retransmits\":2,\"gap_fills\":0,\"capture_loss\":0,\"parent_client\":null,"
			       "\"parent_server\":null,\"parent_request_id\":null,\"parent_basis\":null,"
			       "\"downstream_us\":0.000,\"exception\":\"IDL:omg.org/CORBA/TRANSIENT:1.0\","
			       "\"minor_code\":1330446337,\"completed\":1}\n"));
	gs_intern_free(&t);
}

/* The longest operation and exception names, every byte escaped to \u00XX:
 * the whole row is written, closing brace and newline included. */
static void test_pairs_jsonl_longest_row(void **state)
{
	static char big[65536];
	char op[4096], exc[1024];
	struct gs_intern t;
	struct gs_call c = base_call();
	FILE *f;
	size_t n;
	(void)state;
	memset(op, 0x01, sizeof op);
	memset(exc, 0x1f, sizeof exc);
	assert_int_equal(gs_intern_init(&t, 16, 16384), 0);
	c.op = gs_intern(&t, op, sizeof op);
	c.status = GIOP_SYSTEM_EXCEPTION;
	c.flags |= GS_CF_HAS_EXCEPTION | GS_CF_HAS_PRIORITY | GS_CF_CAPTURE_LOSS;
	c.exception = gs_intern(&t, exc, sizeof exc);
	c.priority = -32768;
	memset(big, 0, sizeof big);
	f = fmemopen(big, sizeof big, "w");
	assert_non_null(f);
	gs_pairs_write(f, GS_PAIRS_JSONL, &t, &c);
	fclose(f);
	n = strlen(big);
	assert_true(n > 6 * (sizeof op + sizeof exc));
	assert_string_equal(big + n - 2, "}\n");
	assert_non_null(strstr(big, "\"capture_loss\":1,"));
	assert_non_null(strstr(big, "\"priority\":-32768}\n"));
	gs_intern_free(&t);
}

static void test_call_status_names(void **state)
{
	struct gs_call c = base_call();
	for (uint32_t s = 0; s <= 5; s++) {
		c.status = s;
		c.reply_type = GIOP_REPLY;
		assert_string_equal(gs_call_status(&c), giop_reply_status_name(s));
		c.reply_type = GIOP_LOCATE_REPLY;
		assert_string_equal(gs_call_status(&c), giop_locate_status_name(s));
	}
	c.status = 6;
	assert_string_equal(gs_call_status(&c), "");
	c.outcome = GS_OUT_ONEWAY;
	assert_string_equal(gs_call_status(&c), "ONEWAY");
	c.outcome = GS_OUT_CANCELLED;
	assert_string_equal(gs_call_status(&c), "CANCELLED");
	c.outcome = GS_OUT_NO_REPLY;
	assert_string_equal(gs_call_status(&c), "NO_REPLY");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_pairs_csv_rows),
		UT(test_pairs_jsonl_rows),
		UT(test_pairs_jsonl_longest_row),
		UT(test_call_status_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
