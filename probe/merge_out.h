/* SPDX-License-Identifier: BSD-2-Clause */
/* What giopscope merge writes: the client side's pairs records with the
 * server side's figures appended, and the summary (per operation: total,
 * server and network percentiles; the clock offset; what matched). */
#ifndef GS_MERGE_OUT_H
#define GS_MERGE_OUT_H

#include <stdio.h>
#include "../analysis/merge_match.h"

enum gs_merge_fmt { GS_MERGE_TEXT, GS_MERGE_CSV, GS_MERGE_JSONL };

/* Columns appended to the pairs CSV header. */
#define GS_MERGE_EXTRA_HEADER \
	",network_us,server_side_total_us,clock_offset_us,server_side_server_us,clock_offset_lo_us,clock_offset_hi_us"

/* One record per client-side call, in its capture order.  0 or an errno. */
int gs_merge_write_pairs(FILE *out, enum gs_merge_fmt fmt, const struct gs_merge *m);
/* The summary; `client`/`server` name the captures.  0 or an errno. */
int gs_merge_write_summary(FILE *out, enum gs_merge_fmt fmt, const struct gs_merge *m,
			   const struct gs_merge_result *r, const char *client, const char *server);
/* The clock offset and match counts in one paragraph (text), for stderr. */
void gs_merge_write_offset(FILE *out, const struct gs_merge_result *r);

#endif
