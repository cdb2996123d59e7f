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
void gs_pairs_write_cached(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
			   const struct gs_call *c, struct gs_pairs_cache *cache);
void gs_pairs_write(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
		    const struct gs_call *c);
/* The status column of a call ("" when a reply was seen but its status was not). */
const char *gs_call_status(const struct gs_call *c);

#endif
