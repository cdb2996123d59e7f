/* SPDX-License-Identifier: BSD-2-Clause */
/* What the engine saw, dropped and evicted: every counter is shown in the summary. */
#ifndef GS_COUNTERS_H
#define GS_COUNTERS_H

#include <stdint.h>

struct gs_counters {
	/* packets */
	uint64_t packets, bytes;
	uint64_t non_ip, non_tcp, ip_fragments;
	uint64_t link_truncated, ip_truncated, tcp_truncated; /* headers cut by the snaplen */
	uint64_t link_invalid, ip_invalid, tcp_invalid;
	uint64_t ip_len_clamped;     /* IP length beyond the frame */
	uint64_t payload_truncated;  /* segments whose payload the snaplen cut */
	uint64_t segments;           /* TCP segments with payload */
	uint64_t ignored_segments;   /* on flows that are not GIOP or not in --ports */
	/* TCP */
	uint64_t flows, flows_evicted, flows_reused, non_giop_flows;
	uint64_t tls_flows;                  /* opened with a TLS handshake: encrypted, not framed */
	uint64_t retransmits, overlaps, out_of_order;
	uint64_t gaps, gap_bytes;            /* bytes the capture never had */
	uint64_t gap_fills;                  /* segments below the highest byte seen: lost or
						reordered before the tap, filled late */
	uint64_t ooo_dropped_bytes;          /* held out-of-order bytes given up on a bound */
	uint64_t rtx_not_charged;            /* retransmissions of undecoded bytes past the per-direction
						bound: counted in retransmits, charged to no call */
	uint64_t rtx_charged_by_span;        /* charged to a call by its first..last byte span: the
						message log no longer held its fragments */
	/* GIOP */
	uint64_t giop_messages;
	uint64_t giop_by_type[8];
	uint64_t giop_malformed, giop_truncated, giop_resync_bytes, giop_head_too_large;
	uint64_t giop_head_pool_full;
	uint64_t giop_header_in_fragment;   /* a header continued in a Fragment: decoded in part */
	/* pairing */
	uint64_t calls, requests, locate_requests, oneways, replies_paired;
	uint64_t no_reply, cancelled, orphan_replies, duplicate_replies;
	uint64_t request_id_reused, unknown_request_id, orphan_fragments, cancel_unknown;
	uint64_t open_calls_evicted;         /* --max-open-calls reached: oldest call dropped */
	uint64_t calls_capture_loss;
	uint64_t calls_gap_filled;           /* calls with a gap fill in their request or reply */
	uint64_t gap_fill_wait_ns;           /* the time their messages waited for the fills */
	uint64_t rows_out_of_order;          /* emitted early because the queue was full */
	uint64_t intern_refused;
};

#endif
