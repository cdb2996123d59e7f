/* SPDX-License-Identifier: BSD-2-Clause */
/* Calls as spans in the Chrome trace-event format (JSON), for Perfetto
 * (ui.perfetto.dev) and chrome://tracing.
 *
 * Streaming: each call is one event written when it is added; only the
 * tracks (connections, servers) are remembered, in bounded tables.  The file
 * is valid JSON once gs_trace_close has written its end.
 *
 *   pid   one per server endpoint (process_name "server A.B.C.D:port")
 *   tid   one per TCP connection (thread_name "client -> server"); calls that
 *         overlap on a multiplexed connection go to extra lanes of it (tracks
 *         named "... #2", sorted next to it), because the format requires the
 *         spans of one thread to nest and calls on one connection do not
 *   span  ph "X" from t_request_first to t_reply_last; a oneway or a call
 *         without a reply spans its request bytes (an instant when that is 0)
 *   ts    microseconds since `origin_ns` (3 decimals: exact nanoseconds); the
 *         origin is in otherData, absolute times would lose nanoseconds in the
 *         viewers' doubles
 */
#ifndef GS_SINK_TRACE_H
#define GS_SINK_TRACE_H

#include <stdint.h>
#include <stdio.h>
#include "call.h"
#include "engine.h"

struct gs_trace;

struct gs_trace_config {
	uint32_t max_conns;    /* connections with their own track; later ones share one */
	uint32_t max_servers;  /* server endpoints with their own pid; later ones share one */
	uint32_t max_lanes;    /* tracks per connection for overlapping calls */
};

void gs_trace_config_default(struct gs_trace_config *c);

/* Opens `path` for writing (analysis/out_file.h: under a temporary name in its folder
 * until gs_trace_commit or gs_trace_close; "-" is stdout).  cfg NULL: defaults.
 * Returns 0 or an errno value. */
int gs_trace_open(struct gs_trace **out, const char *path, const struct gs_trace_config *cfg);
/* Puts gs_trace_open's file under its name now (a continuous source, once it runs).
 * 0 or an errno value. */
int gs_trace_commit(struct gs_trace *t);
/* Frees everything without writing the end; a file not committed yet is removed, and what
 * was at its path stays (a set-up that failed). */
void gs_trace_discard(struct gs_trace *t);
/* The same on a stream the caller owns (not closed by gs_trace_close). */
int gs_trace_open_stream(struct gs_trace **out, FILE *f, const struct gs_trace_config *cfg);
/* One ended call.  `e` gives the operation names (NULL: names empty) and the
 * time origin (the engine's first packet, if before the first call). */
void gs_trace_add(struct gs_trace *t, const struct gs_engine *e, const struct gs_call *c);
/* The same with the operation name given (merge's string table). */
void gs_trace_add_named(struct gs_trace *t, const char *op, size_t oplen, const struct gs_call *c);
/* Writes the end of the JSON (with what was dropped in otherData), closes the
 * file (puts it under its name, unless a write failed: then what was there stays)
 * and frees everything.  Returns 0 or the errno of a failed write or rename. */
int gs_trace_close(struct gs_trace *t);

/* What was written and dropped so far. */
struct gs_trace_info {
	uint64_t events;            /* spans and instants */
	uint32_t conns, servers;    /* tracks made */
	uint64_t conns_over_limit;  /* calls put on the shared "(other connections)" track */
	uint64_t servers_over_limit;
	uint64_t lanes_over_limit;  /* calls not drawn: every lane of the connection busy */
	uint64_t before_origin;     /* calls that began before the origin (negative ts) */
	int64_t origin_ns;
};
void gs_trace_get_info(const struct gs_trace *t, struct gs_trace_info *info);

#endif
