/* SPDX-License-Identifier: BSD-2-Clause */
/* One GIOP call (a Request or LocateRequest and what answered it): the record
 * every sink writes.  Times are integer nanoseconds since the Unix epoch. */
#ifndef GS_CALL_H
#define GS_CALL_H

#include <stdbool.h>
#include <stdint.h>

#define GS_NONE 0xffffffffu

struct gs_endpoint {
	uint8_t addr[16];  /* IPv4 in the first 4 bytes */
	uint16_t port;
	uint8_t family;    /* 4 or 6 */
};

enum gs_call_kind { GS_KIND_REQUEST = 0, GS_KIND_LOCATE_REQUEST = 1 };

/* How a call ended. */
enum gs_outcome {
	GS_OUT_OPEN = 0,      /* not ended yet */
	GS_OUT_REPLY,         /* a Reply or LocateReply: see reply_type and status */
	GS_OUT_ONEWAY,
	GS_OUT_CANCELLED,
	GS_OUT_NO_REPLY,
};

/* Call flags. */
enum {
	GS_CF_ONEWAY = 1u << 0,
	GS_CF_CANCELLED = 1u << 1,
	GS_CF_REQ_DONE = 1u << 2,     /* last byte of the request (all fragments) seen */
	GS_CF_REP_SEEN = 1u << 3,
	GS_CF_REP_DONE = 1u << 4,
	GS_CF_REQ_FRAG = 1u << 5,     /* request continues in Fragments */
	GS_CF_REP_FRAG = 1u << 6,
	GS_CF_CAPTURE_LOSS = 1u << 7, /* some bytes of the call were not captured */
	GS_CF_STATUS_KNOWN = 1u << 8,
	GS_CF_OP_KNOWN = 1u << 9,
	GS_CF_HAS_PRIORITY = 1u << 10,
	GS_CF_HAS_EXCEPTION = 1u << 11,
	GS_CF_EVICTED = 1u << 12,     /* ended by a table bound, not by the wire */
	GS_CF_PARKED = 1u << 13,      /* a reply whose request is not decoded yet (capture
	                               * reordering or loss on the requester's side) */
};

/* How a call's parent was decided (pairs-csv.md, parent_basis). */
enum gs_parent_basis {
	GS_PARENT_NONE = 0,   /* top level, or the evidence cannot decide (nest.c counts which) */
	GS_PARENT_THREAD,     /* attach: the thread that received the parent's request sent this one */
	GS_PARENT_TIME,       /* a capture: the one call its host was serving that encloses it */
};

/* queued_op of a call that waited behind a LocateRequest (which has no
 * operation to intern): the tail names it so. */
#define GS_QUEUED_LOCATE 0xfffffffeu  /* (GS_INTERN_FULL is 0xffffffff) */

struct gs_call {
	struct gs_endpoint client, server;
	uint32_t request_id;
	uint8_t major, minor;
	uint8_t kind;          /* enum gs_call_kind */
	uint8_t outcome;       /* enum gs_outcome */
	uint8_t reply_type;    /* GIOP_REPLY or GIOP_LOCATE_REPLY when answered */
	uint8_t dir;           /* direction of the request within its flow */
	uint8_t completion;    /* system exception CompletionStatus */
	int16_t priority;      /* RTCorbaPriority service context */
	uint32_t flags;
	uint32_t status;       /* ReplyStatusType / LocateStatusType */
	uint32_t op;           /* interned operation name */
	uint32_t object_key;   /* interned object key */
	uint32_t exception;    /* interned exception repository id */
	uint32_t minor_code;
	uint32_t retransmits;
	uint32_t gap_fills;    /* segments that filled a gap (lost or reordered before the tap) */
	uint64_t request_bytes, reply_bytes;
	int64_t t_request_first, t_request_last, t_reply_first, t_reply_last;
	int64_t t_done;        /* capture time at which the call ended */
	/* evidence for the tail analysis (0 when not seen) */
	int64_t rtx_cost_ns;   /* a retransmission came this long after the message began */
	int64_t fill_wait_ns;  /* gap fills came this long after the bytes above the gap
	                        * (the longest wait in each message, added up) */
	int64_t queued_ns;     /* waited this long behind another call on the connection */
	uint32_t queued_rid;   /* ... that call's request id */
	uint32_t queued_op;    /* ... and its interned operation, or GS_QUEUED_LOCATE */
	int64_t nagle_ns;      /* a message's last segment came this long after the one before,
	                        * right after the peer's ACK: a Nagle/delayed-ACK stall */
	uint8_t nagle_half;    /* 0: in the request, 1: in the reply */
	uint32_t conn_flow;    /* `flow` at creation, kept when the call is detached from its
	                        * ended connection (flow = GS_NONE): with flow_gen, which
	                        * connection it was (merge groups calls by it) */
	int64_t zero_window_ns;/* a receive window of the connection was 0 this long meanwhile */
	/* nesting (written by the nesting stage after the engine, 0 before it):
	 * the call this call was made while serving, and how that was decided */
	struct gs_endpoint parent_client, parent_server;
	uint32_t parent_request_id;
	uint8_t parent_basis;  /* enum gs_parent_basis */
	/* inside server time, how long at least one nested call was open (union) */
	int64_t downstream_ns;
	/* the nested call that was open longest inside this one: the tails follow it
	 * (hold_ns 0: none) */
	struct gs_endpoint hold_client, hold_server;
	uint32_t hold_request_id;
	uint32_t hold_op;      /* interned in the same strings as op */
	int64_t hold_ns;
	/* the request waited this long in the server's socket receive queue before
	 * the ORB read it (attach, or what a capture shows of it; 0: not known) */
	int64_t recvq_ns;
	/* stream offsets of the request and reply bytes, for retransmission attribution */
	uint64_t req_off0, req_off1, rep_off0, rep_off1;
	/* TCP sequence number of stream offset 0 in the request's and in the reply's
	 * direction: req_off0 + req_seq_base is the request's first sequence number
	 * (attach matches its syscall probes by sequence number) */
	uint32_t req_seq_base, rep_seq_base;
	/* engine bookkeeping */
	uint32_t flow, flow_gen;
	uint32_t flow_prev, flow_next;
	uint32_t heap_pos;     /* place in the open calls' heap (open calls only) */
	uint32_t serial;       /* creation order: stable tie-break */
	uint8_t where;         /* free, open, queued */
	/* bit 0: the request's messages are not contiguous (a Fragment came after
	 * another message), bit 1: the reply's; their span is then not theirs alone */
	uint8_t scattered;
	uint32_t rtx_mark;     /* the last retransmitted range charged to this call */
};

/* The call waited for segments lost or reordered before the tap (gap fills),
 * and the capture lost none of its bytes (else gap_fills is unknown). */
static inline bool gs_call_gap_filled(const struct gs_call *c)
{
	return c->gap_fills && !(c->flags & GS_CF_CAPTURE_LOSS);
}

#endif
