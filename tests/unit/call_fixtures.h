/* SPDX-License-Identifier: BSD-2-Clause */
/* Calls as the sinks and merge get them (struct gs_call), for the unit tests of
 * the output side.  Static inline, as unit.h, so a test includes what it uses. */
#ifndef GS_TEST_CALL_FIXTURES_H
#define GS_TEST_CALL_FIXTURES_H

#include "unit.h"

static inline struct gs_endpoint ep4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port)
{
	struct gs_endpoint e;
	memset(&e, 0, sizeof e);
	e.addr[0] = a, e.addr[1] = b, e.addr[2] = c, e.addr[3] = d;
	e.port = port;
	e.family = 4;
	return e;
}

/* An answered call: request at t0 (req_ns of bytes), the far side holds it
 * srv_ns, the reply takes rep_ns. */
static inline struct gs_call answered(uint16_t cport, uint32_t rid, int64_t t0, int64_t req_ns, int64_t srv_ns,
			       int64_t rep_ns)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	c.client = ep4(10, 0, 0, 1, cport);
	c.server = ep4(10, 0, 0, 2, 2809);
	c.request_id = rid;
	c.major = 1;
	c.minor = 2;
	c.kind = GS_KIND_REQUEST;
	c.outcome = GS_OUT_REPLY;
	c.reply_type = GIOP_REPLY;
	c.flags = GS_CF_REQ_DONE | GS_CF_REP_SEEN | GS_CF_REP_DONE | GS_CF_STATUS_KNOWN | GS_CF_OP_KNOWN;
	c.status = GIOP_NO_EXCEPTION;
	c.request_bytes = 100;
	c.reply_bytes = 60;
	c.t_request_first = t0;
	c.t_request_last = t0 + req_ns;
	c.t_reply_first = t0 + req_ns + srv_ns;
	c.t_reply_last = t0 + req_ns + srv_ns + rep_ns;
	c.t_done = c.t_reply_last;
	return c;
}

static inline struct gs_call oneway(uint16_t cport, uint32_t rid, int64_t t0)
{
	struct gs_call c = answered(cport, rid, t0, 0, 0, 0);
	c.outcome = GS_OUT_ONEWAY;
	c.flags = GS_CF_REQ_DONE | GS_CF_ONEWAY | GS_CF_OP_KNOWN;
	c.t_reply_first = c.t_reply_last = 0;
	c.reply_bytes = 0;
	return c;
}

/* A call as a sink gets it, every field set to something that shows in a row:
 * request id 2^32-1, times with nanoseconds, two retransmissions. */
static inline struct gs_call base_call(void)
{
	struct gs_call c;
	memset(&c, 0, sizeof c);
	c.client.family = c.server.family = 4;
	c.client.addr[0] = 10, c.client.addr[3] = 1;
	c.server.addr[0] = 10, c.server.addr[3] = 2;
	c.client.port = 40000;
	c.server.port = 2809;
	c.request_id = 4294967295u;
	c.major = 1;
	c.minor = 2;
	c.kind = GS_KIND_REQUEST;
	c.outcome = GS_OUT_REPLY;
	c.reply_type = GIOP_REPLY;
	c.flags = GS_CF_REP_SEEN | GS_CF_STATUS_KNOWN | GS_CF_OP_KNOWN | GS_CF_REQ_DONE | GS_CF_REP_DONE;
	c.status = GIOP_NO_EXCEPTION;
	c.request_bytes = 64;
	c.reply_bytes = 40;
	c.t_request_first = 1700000000000000001LL;
	c.t_request_last = 1700000000000500000LL;
	c.t_reply_first = 1700000000001500000LL;
	c.t_reply_last = 1700000000001999999LL;
	c.retransmits = 2;
	return c;
}

#endif
