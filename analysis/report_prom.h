/* SPDX-License-Identifier: BSD-2-Clause */
/* The statistics as Prometheus text exposition (format 0.0.4): per group a
 * histogram of total_us and one of server_us in seconds, counters of calls and
 * errors, and the engine's counters and the source's drops.
 *
 * Bucket counts come from the log-linear histograms (hist.h): a bucket
 * `le="L"` counts every call whose histogram bucket lies wholly at or below L,
 * so values within 0.8% below a bound may be counted in the next one; `_sum`
 * and `_count` are exact. */
#ifndef GS_REPORT_PROM_H
#define GS_REPORT_PROM_H

#include <stdint.h>
#include <stdio.h>
#include "counters.h"
#include "intern.h"
#include "stats.h"

struct gs_nest_counts; /* nest.h */

struct gs_prom_input {
	const struct gs_stats *stats;
	const struct gs_counters *counters;  /* NULL: none */
	const struct gs_intern *strings;     /* the engine's (operation names) */
	uint64_t kernel_drops, iface_drops, other_drops;
	uint32_t open_calls, active_flows;
	int64_t last_ts;                     /* capture time of the last packet, 0: unknown */
	const struct gs_nest_counts *nest;   /* the nesting stage's counts; NULL: it does not run */
};

void gs_prom_write(FILE *f, const struct gs_prom_input *in);

/* The bucket bounds, in nanoseconds, ascending (the +Inf bucket is extra). */
#define GS_PROM_NBUCKETS 24
extern const int64_t gs_prom_bounds_ns[GS_PROM_NBUCKETS];

#endif
