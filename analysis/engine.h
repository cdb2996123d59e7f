/* SPDX-License-Identifier: BSD-2-Clause */
/* The analysis engine: packets in, calls out.
 *
 * One engine per source.  Packets are fed in capture order; every call that
 * ends is handed to the sink callback, in t_request_first order when
 * `ordered` is set (offline reads) or the moment it ends otherwise (live).
 */
#ifndef GS_ENGINE_H
#define GS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "../decoders/packet.h"
#include "../decoders/link.h"
#include "call.h"
#include "counters.h"
#include "intern.h"
#include "problems.h"

struct gs_engine;

struct gs_config {
	uint32_t max_flows;           /* TCP connections tracked at once */
	uint32_t max_open_calls;      /* calls waiting for a reply or for output */
	uint32_t max_message_size;    /* GIOP size field above this is malformed */
	uint32_t max_ooo_bytes;       /* out-of-order bytes held per direction */
	uint64_t max_ooo_total;       /* and in all */
	uint32_t head_max;            /* bytes of a message head gathered to decode it */
	uint32_t max_strings;         /* distinct operation names, keys, exception ids */
	int64_t linger_ns;            /* an ended call waits this long for late retransmissions */
	int64_t reply_timeout_ns;     /* 0: wait for a reply until the connection ends */
	bool ordered;                 /* emit in t_request_first order */
	uint32_t order_window;        /* ended calls held for order (and for their ACKs) at most:
	                               * beyond, the earliest is written at once, before calls
	                               * still open that started earlier (rows_out_of_order) */
	bool heads_only;              /* gs_engine_segment: bytes outside the pieces were left
	                               * out on purpose, they are neither loss nor truncation */
	const uint8_t *port_bitmap;   /* 8192 bytes, NULL: GIOP by its magic on any port */
	/* The source address of each frame the capture host sent (a Linux cooked
	 * capture's packet type; gs_engine_outgoing for pcapng's flags): the nesting
	 * stage's host addresses (nest.h).  NULL: not wanted.  Called on the
	 * engine's thread. */
	void (*own_addr_fn)(void *arg, uint8_t family, const uint8_t *addr);
	void *own_addr_arg;
};

void gs_config_default(struct gs_config *c);

/* The most memory the engine's tables take with this configuration, every
 * bound reached: flows with their index, head pool, message logs and lists of
 * retransmitted ranges; call slots with their side records, index and heaps;
 * held out-of-order bytes (max_ooo_total, plus a 48-byte header per held
 * segment, counted as one per 64 bytes); the strings table.  Not the reader's
 * buffers nor the sinks' (histograms, --tail, --report). */
uint64_t gs_config_memory_bound(const struct gs_config *c);
/* --max-memory: sizes max_flows, max_open_calls, order_window, max_ooo_total,
 * max_ooo_bytes and max_strings so that gs_config_memory_bound() is at most
 * `bytes` (the other fields of c are kept).  EINVAL below GS_MIN_MEMORY. */
#define GS_MIN_MEMORY (16ull << 20)
/* The largest tables a configuration may ask for (gs_engine_new refuses more;
 * the command line's ranges are these). */
#define GS_MAX_FLOWS_LIMIT (1u << 26)
#define GS_MAX_OPEN_CALLS_LIMIT (1u << 28)
#define GS_ORDER_WINDOW_LIMIT (1u << 28)
#define GS_MAX_OOO_BYTES_LIMIT (1u << 30)
int gs_config_for_memory(struct gs_config *c, uint64_t bytes);
/* The same beside a stage after the engine that takes `fixed` bytes and
 * `per_window` bytes for each call of the order window (the nesting stage,
 * nest.h): gs_config_memory_bound() + fixed + order_window * per_window is at
 * most `bytes`. */
int gs_config_for_memory_beside(struct gs_config *c, uint64_t bytes, uint64_t per_window, uint64_t fixed);

typedef void (*gs_call_fn)(void *arg, const struct gs_engine *e, const struct gs_call *c);

/* A note about something wrong in the input, for the one-line reasons. */

/* Returns 0 or an errno value. */
int gs_engine_new(struct gs_engine **out, const struct gs_config *cfg, gs_call_fn fn, void *arg);
void gs_engine_free(struct gs_engine *e);

/* One captured frame. */
void gs_engine_frame(struct gs_engine *e, int dlt, int64_t ts_ns, const uint8_t *data,
		     uint32_t caplen, uint32_t wirelen);
/* A frame the capture host sent (a pcapng record's outbound flag, a Linux cooked
 * frame's packet type: gs_engine_frame_dir): its source address to own_addr_fn.
 * The readers ask, not gs_engine_frame: its inlining stays as it was. */
void gs_engine_outgoing(struct gs_engine *e, int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen);
/* The frame's direction where its link header records it (SLL, SLL2), then the
 * frame (the readers' entry: one comparison for other link types). */
static inline void gs_engine_frame_dir(struct gs_engine *e, int dlt, int64_t ts_ns, const uint8_t *data,
				       uint32_t caplen, uint32_t wirelen)
{
	if (__builtin_expect(dlt == GS_DLT_LINUX_SLL || dlt == GS_DLT_LINUX_SLL2, 0) &&
	    gs_link_outgoing(dlt, data, caplen))
		gs_engine_outgoing(e, dlt, data, caplen, wirelen);
	gs_engine_frame(e, dlt, ts_ns, data, caplen, wirelen);
}
/* A TCP segment known by its metadata and the heads of the GIOP messages that
 * start in it, as the eBPF tap ships them: `pieces` (increasing offsets, not
 * overlapping, inside `len`) are the payload bytes there are.  Each piece
 * should start where a message (or a message head cut by the previous
 * segment's end) starts; the engine frames with the GIOP header's size. */
/* (struct gs_piece: decoders/packet.h) */
struct gs_segment {
	struct gs_endpoint src, dst;  /* the sender first; same family */
	uint32_t seq, ack;
	uint32_t len;                 /* payload bytes on the wire */
	uint16_t window;
	uint8_t tcp_flags;            /* GS_TCP_* */
	uint32_t n_pieces;
	const struct gs_piece *pieces;
};
void gs_engine_segment(struct gs_engine *e, int64_t ts_ns, const struct gs_segment *s);
/* Ends every open call (NO_REPLY/CANCELLED) and flushes the output. */
void gs_engine_finish(struct gs_engine *e);
/* Ends open calls whose request is older than the reply timeout (live sources). */
void gs_engine_tick(struct gs_engine *e, int64_t now_ns);
/* The sink reads only what the summary by operation reads (gs_stats_add_call:
 * op, kind, flags, outcome, reply_type, status, gap_fills, fill_wait_ns and the
 * four instants): each call is handed over with just those fields written, the
 * rest 0, and the evidence only the tail analysis reads (queued, Nagle) is not
 * gathered.  For `read` without rows or extras: assembling the whole record
 * is work nobody reads (figure: docs/benchmarks.md, "Figures behind the code"). */
void gs_engine_summary_records(struct gs_engine *e);

const struct gs_counters *gs_engine_counters(const struct gs_engine *e);
const struct gs_intern *gs_engine_strings(const struct gs_engine *e);
uint32_t gs_engine_open_calls(const struct gs_engine *e);
uint32_t gs_engine_active_flows(const struct gs_engine *e);
int64_t gs_engine_first_ts(const struct gs_engine *e);
int64_t gs_engine_last_ts(const struct gs_engine *e);
/* First malformed GIOP and first truncated message, for the one-line reasons. */
const struct gs_problem *gs_engine_first_malformed(const struct gs_engine *e);
const struct gs_problem *gs_engine_first_truncated(const struct gs_engine *e);
/* Two stages' states, read-only, for the tests of their bounds (pairing.h:
 * the side tables; reasm.h: the bytes held out of order). */
struct gs_pairing;
struct gs_reasm;
const struct gs_pairing *gs_engine_pairing(const struct gs_engine *e);
const struct gs_reasm *gs_engine_reasm(const struct gs_engine *e);

#endif
