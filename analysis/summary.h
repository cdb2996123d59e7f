/* SPDX-License-Identifier: BSD-2-Clause */
/* The summary: per-group percentiles and the counters, for people (text) or
 * scripts (csv, jsonl). */
#ifndef GS_SUMMARY_H
#define GS_SUMMARY_H

#include <stdio.h>
#include "counters.h"
#include "intern.h"
#include "stats.h"

enum gs_summary_format { GS_SUM_TEXT, GS_SUM_CSV, GS_SUM_JSONL };

struct gs_summary_info {
	const char *source;       /* what was read */
	int64_t first_ts, last_ts;
	uint32_t active_flows;
	uint64_t kernel_drops;    /* live sources; 0 offline */
	/* --max-memory given: the bounds it set, said with which of them were hit */
	uint64_t max_memory;      /* 0: not given */
	uint32_t max_flows, max_open_calls, order_window;
	uint64_t max_ooo_total;
	/* the nesting stage ran (the summary's groups split server time, see
	 * gs_stats_nesting): how it decided the calls' parents */
	bool nesting;
	uint64_t parent_time, parent_thread, undecided;
};

/* The table bounds --max-memory sizes, each with the counter that says the
 * input reached it: `name` for people (the text summary), `key` for scripts
 * (JSON, Prometheus labels).  The same list for the summary's text and JSON
 * and the metrics. */
struct gs_bound {
	const char *name, *key;
	size_t off;               /* of the counter in struct gs_counters */
};
#define GS_NBOUNDS 8
extern const struct gs_bound gs_bounds[GS_NBOUNDS];
uint64_t gs_bound_hits(const struct gs_counters *c, const struct gs_bound *b);

void gs_summary_write(FILE *out, enum gs_summary_format fmt, const struct gs_stats *st,
		      const struct gs_counters *c, const struct gs_intern *strings,
		      const struct gs_summary_info *info);

#endif
