// SPDX-License-Identifier: BSD-2-Clause
/* Evidence for the tail analysis (evidence.c): what the wire shows about why a
 * call waited, written into the call's side record (calls.h).  Its state is
 * struct gs_evidence (the numbering of retransmitted ranges) and, per
 * direction, the call answered last (struct gs_ev_dir); what it reads of the
 * stages before it (a direction's message log, its segments' times, the
 * peer's ACK, a connection's list of calls) it is given as arguments. */
#ifndef GS_EVIDENCE_H
#define GS_EVIDENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "calls.h"
#include "counters.h"

/* The extents of a direction's recent messages and the calls they belong to,
 * in stream order: who owns a retransmitted byte once GIOP 1.2 Fragments of
 * several messages interleave (then a call's first..last span encloses other
 * calls' bytes).  Only a message sent while a fragmented message of the
 * direction is unfinished can lie inside such a span, so only those are
 * logged (and the fragmented messages themselves); a call whose messages are
 * contiguous is charged by its span, which is exact.  A ring, allocated at the
 * direction's first fragmented message: the oldest entries give way.  Every
 * message of a fragmented request or reply that starts at or after `from` is
 * in it.  Pairing keeps it (it logs the messages); evidence reads it. */
#define GS_MSGLOG 256

struct gs_msg_ext {
	uint64_t off0, off1;
	uint32_t call, serial;
};

struct gs_msglog {
	uint64_t from;
	uint32_t head, n;        /* oldest entry, number of entries */
	struct gs_msg_ext ext[GS_MSGLOG];
};

/* The call answered last among requests sent one way of a connection, for
 * `queued` (written at each reply, by the queued evidence only: not by a lean
 * engine). */
struct gs_ev_dir {
	bool done_valid;
	bool served_concurrently; /* a later request was answered first: reply order shows no queue */
	uint32_t done_rid, done_op;
	int64_t done_t_req_first, done_t_rep_last;
};

struct gs_evidence {
	struct gs_calls *calls;  /* where the evidence goes */
	struct gs_counters *cnt;
	uint32_t rtx_mark;       /* numbers retransmitted ranges: a call counts each once */
};

/* Retransmitted bytes [off0, off1) of direction d, seen at ts, on a connection
 * whose calls are linked from `list` (flow_next) and whose direction d logs
 * its messages in lg (or NULL). */
void gs_evidence_retransmit(struct gs_evidence *ev, const struct gs_msglog *lg, uint32_t list, int d,
			    uint64_t off0, uint64_t off1, int64_t ts);
/* The open calls of the connection whose calls are linked from `list` waited
 * ns for a window. */
void gs_evidence_zero_window(struct gs_evidence *ev, uint32_t list, int64_t ns);
/* The last segment of call c's message (`half` 0 request, 1 reply) came at ts;
 * the one before it at prev_seg_ts; the peer last acknowledged new bytes of
 * that direction at peer_ack_ts. */
void gs_evidence_nagle(struct gs_evidence *ev, struct gs_ocall *c, int64_t prev_seg_ts, int64_t peer_ack_ts,
		       int64_t ts, uint8_t half);
/* Call c's reply ended; rq is the evidence's part of its request's direction. */
void gs_evidence_queued(struct gs_evidence *ev, struct gs_ev_dir *rq, struct gs_ocall *c);

#endif
