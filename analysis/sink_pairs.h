/* SPDX-License-Identifier: BSD-2-Clause */
/* The per-call record (docs/output.md, "The per-call record"), as CSV or JSON lines. */
#ifndef GS_SINK_PAIRS_H
#define GS_SINK_PAIRS_H

#include <stdbool.h>
#include <stdio.h>
#include "call.h"
#include "endpoint.h"
#include "fmt_num.h"
#include "intern.h"
#include "text_out.h"

enum gs_pairs_format { GS_PAIRS_CSV, GS_PAIRS_JSONL };

#define GS_PAIRS_HEADER                                                                       \
	"client,server,request_id,giop,kind,operation,oneway,status,request_bytes,reply_bytes," \
	"t_request_first,t_request_last,t_reply_first,t_reply_last,total_us,server_us,retransmits," \
	"gap_fills,capture_loss,parent_client,parent_server,parent_request_id,parent_basis,downstream_us"

/* The endpoint texts of connections already written, keyed by the client and
 * the server themselves: each connection's "client,server," is formatted once,
 * not once per row, and found with one lookup (rows of concurrent connections
 * interleave, so "the last one" would miss).  Keyed by value, not by flow,
 * because a row may be written after its flow was evicted or its slot reused: a
 * hit is the same text by construction.  Two-way set associative; a miss only
 * costs a formatting.  About 80 KB.  Zero it before use. */
#define GS_PAIRS_CACHE_SETS 256
/* "client,server,": both texts and their commas, with room to copy it whole */
#define GS_PAIRS_PAIR_TEXT 112
/* operation names kept ready (a power of two) */
#define GS_PAIRS_OP_SLOTS 32
struct gs_pairs_ep_text {
	struct gs_endpoint client, server;
	uint8_t client_len;            /* the client's text: text[0 .. client_len) */
	uint8_t len;                   /* the whole text, both commas; 0: empty slot */
	char text[GS_PAIRS_PAIR_TEXT];
};
/* The seconds of the last time stamp written: a row's four stamps, and
 * consecutive rows, mostly fall in the same second. */
struct gs_pairs_sec {
	int64_t sec;
	uint8_t len;                   /* 0: none yet */
	char text[GS_FMT_U64_MAX];
};
struct gs_pairs_cache {
	struct gs_pairs_ep_text slot[GS_PAIRS_CACHE_SETS][2];
	uint8_t recent[GS_PAIRS_CACHE_SETS];   /* the way used last: the other one goes */
	struct gs_pairs_sec sec;
	/* operation names written lately that need no CSV quotes, by address and
	 * length (direct-mapped by the address): the bytes of an interned string stay
	 * where they are, unchanged, while its table lives (the table a writer is
	 * given lives as long as its cache); each with ",Request,<name>", which a
	 * row copies as one fixed-size block */
	struct gs_pairs_op {
		const char *name;      /* NULL: empty slot */
		size_t len;
		uint8_t row_len;
		char row[64];
	} op[GS_PAIRS_OP_SLOTS];
};

void gs_pairs_header(FILE *out, enum gs_pairs_format fmt);

/* `giopscope attach`: the instants its syscall probes saw (t1, t4, t5, t8 of
 * the time model; 0 where the process is not followed), appended after
 * `capture_loss` as the columns below; server_process_us = t5 - t4,
 * client_syscall_us = t8 - t1. */
struct gs_call_times {
	int64_t client_send, server_recv, server_send, client_recv;
	/* the threads of those syscalls (0: not known) */
	uint32_t client_send_tid, server_recv_tid, server_send_tid, client_recv_tid;
	/* which optional groups of columns follow the six (GS_TIMES_COLS_*): the
	 * same for every row of a run (the header says so) */
	uint8_t cols;
	/* attach --sched: t4..t5 (t1..t8) of the threads that held the call, split
	 * into on-CPU, run queue, blocked (ns); *_sched false: not known */
	bool server_sched, client_sched;
	int64_t server_oncpu, server_runq, server_blocked;
	int64_t client_oncpu, client_runq, client_blocked;
	/* attach --orb: the ORB's upcall boundary (wall-clock ns; 0: not seen) */
	int64_t upcall_start, upcall_end;
};
enum { GS_TIMES_COLS_SCHED = 1, GS_TIMES_COLS_ORB = 2 };
#define GS_PAIRS_HEADER_TIMES \
	",t_client_send,t_server_recv,t_server_send,t_client_recv,server_process_us,client_syscall_us"
#define GS_PAIRS_HEADER_SCHED \
	",server_oncpu_us,server_runq_us,server_blocked_us,client_oncpu_us,client_runq_us,client_blocked_us"
#define GS_PAIRS_HEADER_ORB ",t_upcall_start,t_upcall_end,orb_in_us,servant_us,orb_out_us"
/* The header of the rows with the attach columns: the six, then the optional groups `cols`
 * (GS_TIMES_COLS_*). */
void gs_pairs_header_times_cols(FILE *out, enum gs_pairs_format fmt, unsigned cols);
/* One row, written with one fwrite.  cache may be NULL (every endpoint is then
 * formatted); t NULL: no attach columns. */
void gs_pairs_write_times(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
			  const struct gs_call *c, struct gs_pairs_cache *cache, const struct gs_call_times *t);
void gs_pairs_write_cached(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
			   const struct gs_call *c, struct gs_pairs_cache *cache);
void gs_pairs_write(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
		    const struct gs_call *c);
/* `--pairs --format text`: the header line (client server request_id kind
 * operation status total_us server_us), then one aligned line per call. */
void gs_pairs_header_text(FILE *out);
void gs_pairs_write_text(FILE *out, const struct gs_intern *strings, const struct gs_call *c);

#endif
