/* SPDX-License-Identifier: BSD-2-Clause */
/* What every continuous source (live, attach, dpdk) shares: the options that
 * shape the output, the engine fed frame by frame, calls written the moment
 * they end (line-buffered, also into a pipe), a progress line on a terminal,
 * the reply timeout, --duration and --count, and the summary at the end. */
#ifndef GS_SESSION_H
#define GS_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../analysis/engine.h"
#include "../analysis/sink_pairs.h"
#include "../analysis/stats.h"
#include "../analysis/tail.h"
#include "../analysis/interval.h"
#include "../analysis/nest.h"
#include "../analysis/report.h"
#include "../analysis/sink_trace.h"
#include "../analysis/out_file.h"
#include "drops.h"
#include "options.h"
#include "session_opts.h"


struct gs_session {
	struct gs_session_opts opt;
	const char *cmd;
	struct gs_engine *e;
	struct gs_shards *shards;  /* read --threads N > 1 (e is then its engine); NULL otherwise */
	struct gs_stats stats;
	struct gs_tail tail;
	struct gs_interval interval;
	FILE *out;
	struct gs_out outf;       /* -o FILE (out_file.h); out is outf.f, or stdout */
	enum gs_pairs_format fmt;
	bool text;                /* summary as a table / pairs as text */
	struct gs_pairs_cache cache;
	uint64_t calls;           /* calls ended so far */
	int64_t start_mono, last_progress_mono, last_tick_mono;
	uint64_t progress_calls;
	bool tty;
	bool no_stats;            /* --pairs alone (no summary, metrics or progress line): the statistics are never read */
	bool extras;              /* --tail, --interval, --report or --trace: a call goes there too */
	bool row_slow;            /* rows as text, with attach's columns, or on the progress line's terminal */
	bool finished;            /* gs_session_finish done */
	bool discard;             /* gs_session_discard: the run failed before it read anything */
	bool progress_shown;
	/* the rows go to the terminal the progress line is on: the line is wiped before a
	 * row and drawn again (as it was) at a tick 100 ms later */
	bool rows_tty, progress_wiped;
	int64_t wiped_mono;
	char progress_text[384];
	struct gs_report *report; /* NULL without --report */
	struct gs_trace *trace;   /* NULL without --trace */
	struct gs_metrics *metrics; /* NULL without --metrics */
	/* the nesting stage, between the calls' source and emit (nest.h): only when
	 * something reads its columns (rows, tail, report, trace) */
	struct gs_nest nest;
	bool nesting;
	/* A source that completes calls before they are written (attach adds the
	 * syscall instants) takes them here and hands each on with
	 * gs_session_emit(); flush_hook runs once every call has ended, at close. */
	gs_call_fn call_hook;
	void (*flush_hook)(void *arg);
	void *hook_arg;
};

void gs_session_opts_default(struct gs_session_opts *o);
/* The same for a command reading files (read): the engine's own defaults
 * (output in order, no reply timeout), and the files under their names only
 * when the run ends (a set-up or a write that fails leaves what was there). */
void gs_session_opts_offline(struct gs_session_opts *o);
/* Handles a shared option (also --order-window, which only read offers): 0 handled,
 * 2 bad value (a one-line reason was printed: the command's exit status), -1 not a
 * shared option (the command refuses it, gs_opt_refuse).  A command
 * passes only the codes of the options its long-option table lists. */
int gs_session_option(struct gs_session_opts *o, const char *cmd, int opt, const char *arg);
/* The engine's configuration the options give: their bounds, and with --max-memory
 * every bound not given on its own sized from the budget.  0, or 2 with a one-line
 * reason printed. */
int gs_session_config(const struct gs_session_opts *o, const char *cmd, struct gs_config *cfg);

/* --format: 0, or 2 with a one-line reason printed (gs_session_open checks it too;
 * read checks it before its captures). */
int gs_session_format(const struct gs_session_opts *o, const char *cmd, enum gs_pairs_format *fmt, bool *text);
/* Opens the output and the engine: the last step of a command's set-up.  The files
 * (-o, --trace) are made under temporary names and put under their own only once
 * everything here succeeded (with commit_at_end: at gs_session_close): 0; or 2 with a
 * one-line reason printed, and whatever was under those names is left as it was. */
int gs_session_open(struct gs_session *s, const struct gs_session_opts *o, const char *cmd);
void gs_session_frame(struct gs_session *s, int dlt, int64_t ts_ns, const uint8_t *data,
		      uint32_t caplen, uint32_t wirelen);
/* Call often (at least every 100 ms, also when no packet came): reply timeouts,
 * the progress line on a terminal, output flushing.  `now_ns` is wall-clock
 * time in the capture's clock. */
void gs_session_tick(struct gs_session *s, int64_t now_ns, const struct gs_drops *drops);
/* Counts, adds to the statistics and writes one ended call (`t`: attach's
 * syscall instants, or NULL). */
void gs_session_emit(struct gs_session *s, const struct gs_call *c, const struct gs_call_times *t);
/* The calls go to the summary by operation alone (no rows, no extras, no hook,
 * no parts): gs_engine_summary_records may be asked for. */
bool gs_session_summary_only(const struct gs_session *s);
/* True once --duration or --count is reached. */
bool gs_session_done(const struct gs_session *s);
/* Ends every open call and writes the summary, the tail, the intervals, the report and
 * the trace; the engine stays (its counters) until gs_session_close.  0, or 2 if
 * writing the report or the trace failed. */
int gs_session_finish(struct gs_session *s, const char *source, const struct gs_drops *drops);
/* The run failed before anything was read (read: its first capture): finish
 * and close then write nothing (no summary, no header on stdout, no file put
 * under its name), so that a failed run prints only its reason, on stderr. */
void gs_session_discard(struct gs_session *s);
/* gs_session_finish if not done yet, then the output written out and put under its
 * name, and everything freed; returns 0, or 2 if writing failed. */
int gs_session_close(struct gs_session *s, const char *source, const struct gs_drops *drops);

int64_t gs_mono_ns(void);
int64_t gs_realtime_ns(void);

#endif
