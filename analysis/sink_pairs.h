/* The per-call record of pairs-csv.md, as CSV or JSON lines. */
#ifndef GS_SINK_PAIRS_H
#define GS_SINK_PAIRS_H

#include <stdbool.h>
#include <stdio.h>
#include "call.h"
#include "intern.h"

enum gs_pairs_format { GS_PAIRS_CSV, GS_PAIRS_JSONL };

#define GS_PAIRS_HEADER                                                                       \
	"client,server,request_id,giop,kind,operation,oneway,status,request_bytes,reply_bytes," \
	"t_request_first,t_request_last,t_reply_first,t_reply_last,total_us,server_us,retransmits"

/* The text of the endpoints last written: consecutive rows mostly share them,
 * and formatting addresses is most of a row's cost.  Zero it before use. */
struct gs_pairs_cache {
	struct gs_endpoint ep[2];
	char text[2][56];
	size_t len[2];
	bool valid[2];
};

void gs_pairs_header(FILE *out, enum gs_pairs_format fmt);

/* `giopscope attach`: the instants its syscall probes saw (t1, t4, t5, t8 of
 * the time model; 0 where the process is not followed), appended after
 * `retransmits` as the columns below; server_process_us = t5 - t4,
 * client_syscall_us = t8 - t1. */
struct gs_call_times {
	int64_t client_send, server_recv, server_send, client_recv;
};
#define GS_PAIRS_HEADER_TIMES \
	",t_client_send,t_server_recv,t_server_send,t_client_recv,server_process_us,client_syscall_us"
void gs_pairs_header_times(FILE *out, enum gs_pairs_format fmt);
void gs_pairs_write_times(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
			  const struct gs_call *c, struct gs_pairs_cache *cache, const struct gs_call_times *t);
void gs_pairs_write_cached(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
			   const struct gs_call *c, struct gs_pairs_cache *cache);
void gs_pairs_write(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
		    const struct gs_call *c);
/* One call as an aligned text line, for people (`--pairs --format text`). */
void gs_pairs_write_text(FILE *out, const struct gs_intern *strings, const struct gs_call *c);
/* A JSON string, escaped (for the summary's and the tail's JSON lines). */
void gs_json_str(FILE *out, const char *s);
/* The status column of a call ("" when a reply was seen but its status was not). */
const char *gs_call_status(const struct gs_call *c);

#endif
