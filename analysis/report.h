/* SPDX-License-Identifier: BSD-2-Clause */
/* The HTML report: one self-contained file (inline SVG, no script, nothing
 * fetched) with, per operation, a latency histogram and CDF (log x), latency
 * over time, and a stacked bar per slow call showing where its time went.
 *
 * Memory is bounded whatever the number of calls: per operation three
 * histograms (gs_hist; up to max_ops operations, later ones share
 * "(other)"), time bins that widen (pairs merge) as the capture grows, a
 * reservoir sample of calls for the scatter plot, and the slowest calls in a
 * min-heap.  Nothing refers to the engine after gs_report_add returns.
 */
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include "call.h"
#include "counters.h"
#include "engine.h"

struct gs_report;

struct gs_report_config {
	uint32_t max_ops;       /* operations with their own plots (default 32) */
	uint32_t slowest;       /* slow calls shown with their split (default 20) */
	uint32_t time_bins;     /* bins of the latency-over-time plot (default 200) */
	uint32_t samples;       /* calls kept for the scatter plot (default 3000) */
	int64_t first_bin_ns;   /* initial time-bin width (default 1 ms); doubles as needed */
};

void gs_report_config_default(struct gs_report_config *c);

/* What other vantage points know about a call: each value GS_REPORT_UNKNOWN
 * or nanoseconds.  See docs/design.md for the instants t1..t8. */
#define GS_REPORT_UNKNOWN INT64_MIN
struct gs_report_split {
	int64_t network_ns;     /* (t7-t2)-(t6-t3): merge's network_us */
	int64_t server_host_ns; /* t6-t3: the server host's own time (merge: server side's server_us) */
	int64_t server_proc_ns; /* t5-t4: the server process (attach) */
	int64_t client_proc_ns; /* (t2-t1)+(t8-t7): the client's kernel (attach) */
	/* attach --sched: t4..t5 on CPU, in the run queue, blocked; --orb: orb_in,
	 * servant, orb_out (GS_REPORT_UNKNOWN: not known) */
	int64_t sched_ns[3];
	int64_t orb_ns[3];
};

void gs_report_split_unknown(struct gs_report_split *s);

/* Returns 0 or an errno value; cfg NULL: defaults. */
int gs_report_new(struct gs_report **out, const struct gs_report_config *cfg);
void gs_report_free(struct gs_report *r);
/* One ended call; `e` gives the operation name (NULL: none). */
void gs_report_add(struct gs_report *r, const struct gs_engine *e, const struct gs_call *c);
/* The same with what other vantage points know (split NULL: nothing). */
void gs_report_add_split(struct gs_report *r, const struct gs_engine *e, const struct gs_call *c,
			 const struct gs_report_split *split);
/* The same when the operation name comes from elsewhere (merge's strings). */
void gs_report_add_named(struct gs_report *r, const char *op, size_t oplen, const struct gs_call *c,
			 const struct gs_report_split *split);
/* A line shown under the title (e.g. merge's clock offset); up to 16 of 512
 * bytes, further ones are dropped. */
void gs_report_note(struct gs_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes the HTML (analysis/out_file.h: a new file that replaces `path` once complete;
 * "-" is stdout).  counters may be NULL.
 * Returns 0 or an errno value. */
int gs_report_write(const struct gs_report *r, const char *path, const char *title,
		    const struct gs_counters *counters);
int gs_report_write_stream(const struct gs_report *r, FILE *f, const char *title,
			   const struct gs_counters *counters);

/* What the report holds (for tests and the one-line messages). */
struct gs_report_info {
	uint64_t calls, answered;
	uint32_t ops;               /* operations with their own plots */
	uint64_t other_calls;       /* calls of the "(other)" operation */
	uint32_t slow_kept, samples_kept;
	int64_t bin_width_ns;
	uint32_t bins_used;
	uint64_t before_origin;     /* calls that began before the first time bin */
	int64_t origin_ns;          /* the first time bin's start: at or before t_first_ns */
	int64_t t_first_ns, t_last_ns; /* the earliest and latest request first byte */
	uint32_t notes_dropped;
};
void gs_report_get_info(const struct gs_report *r, struct gs_report_info *info);

#endif
