/* SPDX-License-Identifier: BSD-2-Clause */
/* Two vantage points of the same calls (giopscope merge): the calls a capture
 * on the client's host saw and those a capture on the server's host saw,
 * matched without synchronised clocks and without trusting addresses (NAT may
 * rewrite them).
 *
 *   1. Each side's calls are grouped into streams: one TCP connection and one
 *      direction of requests (bidirectional GIOP gives two streams).
 *   2. Streams are matched by their calls' (request_id, kind, operation,
 *      request_bytes, oneway).  Connections of one ORB often carry identical
 *      sequences (omniORB starts every connection at request id 2), so time
 *      decides between them: for the right pair, each answered call's
 *      clock offset theta (server clock - client clock) lies in the interval
 *      causality gives (below: the request left the client before the server
 *      saw it, the reply left the server before the client saw it).  Every
 *      candidate pair of a sample of streams votes with these intervals and
 *      their midpoints, weighted by narrowness; the offset with
 *      the most votes is the common one.  Each client stream then takes the
 *      candidate whose calls fit it best (exactly, then within --tolerance,
 *      then most calls found, then the nearest midpoints), each server stream
 *      once.  A pair is refused when most of its answered calls miss the
 *      offset, or when, while both streams run, a quarter of the client's
 *      calls have no twin (the same program captured another time).  A drift
 *      between the clocks is fitted (time slices, each its own vote) and the
 *      matching redone along it; a last pass uses the offset the matched
 *      pairs agree on.
 *   3. Within matched streams, calls match by request id (and the rest of
 *      the signature).
 *
 * Per matched call: network = C.total - S.total (no clock needed), the
 * server side's total and server_us, and the offsets the call allows.
 *
 * The offset.  Each answered matched call bounds theta by causality alone
 * (a byte reaches the far tap after the near tap saw it leave):
 *     theta <= S.t_request_first - C.t_request_first
 *     theta <= S.t_request_last  - C.t_request_last   (see below)
 *     theta >= S.t_reply_first   - C.t_reply_first
 *     theta >= S.t_reply_last    - C.t_reply_last     (see below)
 * The last-byte bounds hold when the whole message was seen on both sides and
 * neither capture missed bytes of the call (t_*_last is then the instant the
 * tap had seen every byte); otherwise only the first-byte ones are used.
 * The estimate is the middle of the intersection of every call's interval
 * when that is not empty (nothing assumed but causality), else the middle of
 * the stretch held by the most intervals: the calls outside it are counted
 * as violating (drift, time stamps moved by the capture, a wrong pair).  With
 * a drift corrected, the intervals are compared along the fitted drift.
 * Never the midpoint of one call's interval (that assumes both directions
 * take as long).  Bounded: at most max_calls calls per side are kept (the
 * rest are counted as dropped).
 */
#ifndef GS_REPORT_MERGE_H
#define GS_REPORT_MERGE_H

#include <stdbool.h>
#include <stdint.h>
#include "call.h"
#include "engine.h"
#include "intern.h"

#define GS_MERGE_CLIENT 0
#define GS_MERGE_SERVER 1
#define GS_MERGE_NONE 0xffffffffu

/* The part of a call merge keeps (strings interned in the merge's table). */
struct gs_mcall {
	struct gs_endpoint client, server;
	int64_t t_request_first, t_request_last, t_reply_first, t_reply_last;
	uint64_t request_bytes, reply_bytes;
	uint32_t request_id, op, exception, minor_code, retransmits, gap_fills, flags, status;
	uint32_t flow, flow_gen, stream;
	int16_t priority;
	uint8_t kind, outcome, reply_type, minor, completion, dir;
};

struct gs_merge_config {
	uint32_t max_calls;      /* per side (default 2M, about 200 bytes each) */
	int64_t tolerance_ns;    /* slack around each call's offset interval (default 1 ms) */
	uint32_t max_strings;    /* distinct operation names and exception ids (default 65536) */
};

void gs_merge_config_default(struct gs_merge_config *c);

struct gs_merge_result {
	uint32_t streams[2], streams_matched;
	uint64_t calls[2];           /* kept */
	uint64_t dropped[2];         /* beyond max_calls */
	uint64_t matched;            /* client calls with their server-side twin */
	uint64_t unmatched[2];
	uint64_t offset_n;           /* answered matched calls: each bounds the offset */
	bool offset_known;           /* some call's bounds are consistent (lo <= hi) */
	int64_t offset_ns;           /* server capture clock - client capture clock: the middle of lo..hi */
	int64_t offset_lo_ns, offset_hi_ns; /* the range offset_agree calls all allow */
	uint64_t offset_agree;       /* calls whose interval holds all of lo..hi */
	uint64_t offset_violating;   /* offset_n - offset_agree: calls whose bounds the estimate violates */
	bool offset_all;             /* offset_agree == offset_n: lo..hi is every call's intersection */
	int64_t offset_tref;         /* client-clock instant the offset is given at (with a drift corrected) */
	double offset_drift;         /* theta's change per ns along which calls were compared (0: none) */
	bool drift_known;            /* the offset changes over the capture clearly more than it jitters,
	                              * and no one offset fits every call */
	double drift_ppm;            /* d theta / d t fitted over the matched calls (0 unless known) */
	bool drift_corrected;        /* the matching was redone with the drift */
	uint64_t negative_network;   /* matched answered calls with network < 0 */
	bool looks_swapped;          /* the captures were given the wrong way round (gs_merge_check_order
	                              * decides; gs_merge_run: most network times negative) */
	bool same_capture;           /* every call of each side has a twin at the very same instants */
	uint64_t other_agree;        /* gs_merge_check_order: the other order's offset_agree */
};

struct gs_merge;

int gs_merge_new(struct gs_merge **out, const struct gs_merge_config *cfg);
void gs_merge_free(struct gs_merge *m);
/* One call of a side, as an engine emits it. */
void gs_merge_add(struct gs_merge *m, int side, const struct gs_engine *e, const struct gs_call *c);
/* The same with the operation name given (tests). */
void gs_merge_add_named(struct gs_merge *m, int side, const char *op, const struct gs_call *c);
/* Matches everything added.  Returns 0 or an errno value (memory). */
int gs_merge_run(struct gs_merge *m, struct gs_merge_result *res);

uint32_t gs_merge_count(const struct gs_merge *m, int side);
const struct gs_mcall *gs_merge_get(const struct gs_merge *m, int side, uint32_t i);
/* The server-side index of client call i, or GS_MERGE_NONE. */
uint32_t gs_merge_match(const struct gs_merge *m, uint32_t i);
const struct gs_intern *gs_merge_strings(const struct gs_merge *m);
/* A gs_call with the fields of mc (strings: gs_merge_strings). */
void gs_merge_to_call(const struct gs_mcall *mc, struct gs_call *out);

/* Whether the captures were given in the right order: the same capture
 * twice sets res->same_capture; when this order's calls do not mostly agree
 * on one offset (or most network times are negative), the merge is run again
 * with the sides exchanged, and res->looks_swapped set when that order fits
 * clearly more calls to one offset (res->other_agree: how many).  After
 * gs_merge_run; 0 or an errno value. */
int gs_merge_check_order(const struct gs_merge *m, struct gs_merge_result *res);

/* What two matched calls say; `known` is false without both replies. */
struct gs_merge_figures {
	bool known;
	int64_t network_ns;          /* client total - server total */
	int64_t server_total_ns;     /* server side t_reply_last - t_request_first */
	int64_t server_server_ns;    /* server side t_reply_first - t_request_last */
	int64_t offset_lo_ns, offset_hi_ns; /* the offsets this call allows (lo > hi: none) */
	bool offset_known;           /* gs_merge_call_figures after gs_merge_run */
	int64_t offset_ns;           /* the merge's offset at this call's time, moved to the nearer of
	                              * lo, hi when outside them (kept when lo > hi) */
};
void gs_merge_figures(const struct gs_mcall *c, const struct gs_mcall *s, struct gs_merge_figures *f);
/* The same for client call i with its twin, and the merge's offset. */
void gs_merge_call_figures(const struct gs_merge *m, uint32_t i, struct gs_merge_figures *f);

#endif
