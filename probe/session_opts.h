/* SPDX-License-Identifier: BSD-2-Clause */
/* The options every command shares (read, live, attach, dpdk), as parsed
 * (session.c parses them), and the engine's bounds they give: below the
 * session and what it uses (session_fit), which both read them. */
#ifndef GS_SESSION_OPTS_H
#define GS_SESSION_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analysis/engine.h"
#include "../analysis/host_addrs.h"

struct gs_metrics; /* metrics.h */

struct gs_session_opts {
	bool pairs, summary_too, quiet;
	const char *format;       /* NULL: text, or csv with --pairs */
	const char *output;       /* NULL or "-": stdout */
	int64_t duration_ns;      /* 0: until interrupted */
	uint32_t tail;            /* --tail N */
	int by;                   /* enum gs_group_by */
	int64_t interval_ns;      /* --interval */
	const char *report, *trace, *metrics;  /* --report, --trace, --metrics; NULL without */
	const char *metrics_web_config;          /* --metrics-web-config FILE, NULL without */
	struct gs_metrics_web *metrics_web;      /* that file, loaded while the options are read (before -Z) */
	uint64_t count;           /* 0: no limit */
	bool syscall_times;       /* attach: its syscall columns follow `retransmits` */
	uint8_t times_cols;       /* attach --sched/--orb: GS_TIMES_COLS_* after them */
	struct gs_config cfg;
	uint64_t max_memory;      /* --max-memory: 0 without */
	bool set_flows, set_calls, set_ooo, set_window; /* given on their own: they win over --max-memory */
	/* Where a command reading files (read) differs from a continuous source: */
	char *outbuf;             /* the output fully buffered in these bytes (NULL: a call a line) */
	size_t outbuf_size;
	bool commit_at_end;       /* -o and --trace under their names when the run ends, not once set up */
	unsigned threads;         /* read --threads: engines on threads (read_shards.h); 0 or 1: one engine */
	struct gs_host_addrs host_addrs; /* --host-addrs: one host's addresses (n 0: none given) */
	uint8_t ports[8192];
};

/* Whether the nesting stage runs (analysis/nest.h): only for what reads its
 * columns, the rows, the tail, the report, the trace. */
bool gs_session_wants_nesting(const struct gs_session_opts *o);

/* The engine's configuration of `o` with a memory budget `mem` (0: none): the
 * bounds --max-memory gives, but those set on their own; where the nesting
 * stage runs, the calls it holds (at most the order window's) come out of the
 * budget too.  False: `mem` is too small for the tables. */
bool gs_session_budget(const struct gs_session_opts *o, uint64_t mem, struct gs_config *cfg);

#endif
