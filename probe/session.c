/* SPDX-License-Identifier: BSD-2-Clause */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio_ext.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/endpoint.h"
#include "../analysis/summary.h"
#include "metrics.h"
#include "metrics_web.h"
#include "opts.h"
#include "read_shards.h"
#include "session_fit.h"
#include "../analysis/out_file.h"

int64_t gs_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t gs_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void gs_session_opts_default(struct gs_session_opts *o)
{
	memset(o, 0, sizeof *o);
	gs_config_default(&o->cfg);
	/* a continuous source writes each call when it ends, and gives up on a
	 * reply after 30 s so that memory does not grow with lost replies */
	o->cfg.ordered = false;
	o->cfg.linger_ns = 0;
	o->cfg.reply_timeout_ns = 30 * 1000000000LL;
}

void gs_session_opts_offline(struct gs_session_opts *o)
{
	memset(o, 0, sizeof *o);
	gs_config_default(&o->cfg);
	o->commit_at_end = true;
}

static int bad(const char *cmd, const char *what)
{
	fprintf(stderr, "giopscope %s: %s\n", cmd, what);
	return 2;
}

static int bad_range(const char *cmd, const char *opt, unsigned lo, unsigned hi)
{
	fprintf(stderr, "giopscope %s: %s wants %u..%u\n", cmd, opt, lo, hi);
	return 2;
}

int gs_session_option(struct gs_session_opts *o, const char *cmd, int opt, const char *arg)
{
	uint64_t v;
	char why[320];
	switch (opt) {
	case GS_O_PAIRS: o->pairs = true; return 0;
	case GS_O_FORMAT: o->format = arg; return 0;
	case 'o': o->output = arg; return 0;
	case GS_O_SUMMARY: o->summary_too = true; return 0;
	case 'q': o->quiet = true; return 0;
	case GS_O_PORTS:
		if (!gs_parse_ports(arg, o->ports, why, sizeof why)) {
			fprintf(stderr, "giopscope %s: bad --ports: %s\n", cmd, why);
			return 2;
		}
		o->cfg.port_bitmap = o->ports;
		return 0;
	case GS_O_DURATION:
		if (!gs_parse_seconds(arg, 366LL * 86400 * 1000000000, &o->duration_ns) || o->duration_ns == 0)
			return bad(cmd, "--duration wants seconds > 0 (e.g. 10 or 2.5)");
		return 0;
	case GS_O_COUNT:
		if (!gs_parse_u64(arg, 1, UINT64_MAX, false, &o->count))
			return bad(cmd, "--count wants a number of calls > 0");
		return 0;
	case GS_O_REPLY_TIMEOUT:
		if (!gs_parse_seconds(arg, 86400LL * 1000000000, &o->cfg.reply_timeout_ns))
			return bad(cmd, "--reply-timeout wants seconds (0: wait until the connection ends)");
		return 0;
	case GS_O_TAIL:
		if (!gs_parse_u64(arg, 1, 100000, false, &v))
			return bad(cmd, "--tail wants 1..100000");
		o->tail = (uint32_t)v;
		return 0;
	case GS_O_BY:
		if ((o->by = gs_group_by_parse(arg)) < 0)
			return bad(cmd, "--by wants op, conn, object, server or priority");
		return 0;
	case GS_O_REPORT: o->report = arg; return 0;
	case GS_O_TRACE: o->trace = arg; return 0;
	case GS_O_METRICS: o->metrics = arg; return 0; /* checked when opened */
	case GS_O_METRICS_WEB_CONFIG: {
		char werr[1024]; /* a path, a line, OpenSSL's reason */
		/* read now, while the options are: before -Z drops the right to read the keys */
		if (o->metrics_web_config)
			return bad(cmd, "--metrics-web-config given twice");
		if (gs_metrics_web_load(&o->metrics_web, arg, werr, sizeof werr) != 0) {
			fprintf(stderr, "giopscope %s: --metrics-web-config %s\n", cmd, werr);
			return 2;
		}
		o->metrics_web_config = arg;
		return 0;
	}
	case GS_O_INTERVAL:
		if (!gs_parse_seconds(arg, 86400LL * 1000000000, &o->interval_ns) || o->interval_ns < 1000)
			return bad(cmd, "--interval wants seconds (e.g. 1 or 0.1)");
		return 0;
	case GS_O_MAX_FLOWS:
		if (!gs_parse_u64(arg, 2, GS_MAX_FLOWS_LIMIT, false, &v))
			return bad_range(cmd, "--max-flows", 2, GS_MAX_FLOWS_LIMIT);
		o->cfg.max_flows = (uint32_t)v;
		o->set_flows = true;
		return 0;
	case GS_O_MAX_CALLS:
		if (!gs_parse_u64(arg, 2, GS_MAX_OPEN_CALLS_LIMIT, false, &v))
			return bad_range(cmd, "--max-open-calls", 2, GS_MAX_OPEN_CALLS_LIMIT);
		o->cfg.max_open_calls = (uint32_t)v;
		o->set_calls = true;
		return 0;
	case GS_O_MAX_MSG:
		if (!gs_parse_u64(arg, 12, UINT32_MAX - 12, true, &v))
			return bad(cmd, "--max-message-size wants 12..4G-13 bytes");
		o->cfg.max_message_size = (uint32_t)v;
		return 0;
	case GS_O_ORDER_WINDOW:
		if (!gs_parse_u64(arg, 1, GS_ORDER_WINDOW_LIMIT, false, &v))
			return bad_range(cmd, "--order-window", 1, GS_ORDER_WINDOW_LIMIT);
		o->cfg.order_window = (uint32_t)v;
		o->set_window = true;
		return 0;
	case GS_O_MAX_OOO:
		if (!gs_parse_u64(arg, 0, GS_MAX_OOO_BYTES_LIMIT, true, &v))
			return bad(cmd, "--max-ooo-bytes wants 0..1G");
		o->cfg.max_ooo_bytes = (uint32_t)v;
		o->set_ooo = true;
		return 0;
	case GS_O_HOST_ADDRS:
		if (gs_host_addrs_parse(&o->host_addrs, arg, why, sizeof why) != 0) {
			fprintf(stderr, "giopscope %s: bad --host-addrs: %s\n", cmd, why);
			return 2;
		}
		return 0;
	case GS_O_MAX_MEMORY:
		if (!gs_parse_u64(arg, GS_MIN_MEMORY, 1ull << 50, true, &o->max_memory))
			return bad(cmd, "--max-memory wants 16m..1048576g bytes (k/m/g)");
		return 0;
	}
	return -1; /* not a shared option: the command refuses it */
}

int gs_session_config(const struct gs_session_opts *o, const char *cmd, struct gs_config *cfg)
{
	/* an option that would do nothing where it stands is a mistake to point at */
	if (o->summary_too && !o->pairs)
		return bad(cmd, "--summary goes with --pairs (the summary on stderr beside the rows); "
			   "without --pairs the summary is the output already: drop --summary or add --pairs");
	if (!gs_session_budget(o, o->max_memory, cfg))
		return bad(cmd, "--max-memory: too small for the tables");
	return 0;
}

/* What a call goes into besides the summary and the rows: the tail, the intervals,
 * the report, the trace (s->extras). */
static void emit_extras(struct gs_session *s, const struct gs_engine *e, const struct gs_call *c,
			const struct gs_call_times *t)
{
	if (s->opt.tail)
		gs_tail_add_times(&s->tail, e, c, t);
	if (s->opt.interval_ns)
		gs_interval_add(&s->interval, c);
	if (s->report) {
		/* attach's syscall instants (0: unknown) split the bars further */
		struct gs_report_split sp;
		gs_report_split_unknown(&sp);
		if (t && t->server_recv && t->server_send)
			sp.server_proc_ns = t->server_send - t->server_recv;
		if (t && t->server_sched) {
			sp.sched_ns[0] = t->server_oncpu;
			sp.sched_ns[1] = t->server_runq;
			sp.sched_ns[2] = t->server_blocked;
		}
		if (t && t->upcall_start && t->upcall_end && t->server_recv && t->server_send) {
			sp.orb_ns[0] = t->upcall_start - t->server_recv;
			sp.orb_ns[1] = t->upcall_end - t->upcall_start;
			sp.orb_ns[2] = t->server_send - t->upcall_end;
		}
		gs_report_add_split(s->report, e, c, &sp);
	}
	if (s->trace)
		gs_trace_add(s->trace, e, c);
}

/* A row other than a plain CSV or JSON one (s->row_slow): text, attach's columns, or
 * one on the terminal the progress line is on. */
static void emit_row_slow(struct gs_session *s, const struct gs_engine *e, const struct gs_call *c,
			  const struct gs_call_times *t)
{
	if (s->progress_shown && s->rows_tty) {
		/* a row after the progress text would start in the middle of its line */
		fputs("\r\033[K", stderr);
		fflush(stderr);
		s->progress_shown = false;
		s->progress_wiped = true;
		s->wiped_mono = gs_mono_ns();
	}
	if (s->text)
		gs_pairs_write_text(s->out, gs_engine_strings(e), c);
	else if (s->opt.syscall_times)
		gs_pairs_write_times(s->out, s->fmt, gs_engine_strings(e), c, &s->cache, t);
	else
		gs_pairs_write_cached(s->out, s->fmt, gs_engine_strings(e), c, &s->cache);
}

/* Every call, once: the common case (no syscall instants, a summary or plain rows)
 * in a few tests, the rest out of line. */
static inline __attribute__((always_inline)) void emit(struct gs_session *s, const struct gs_engine *e,
							 const struct gs_call *c, const struct gs_call_times *t)
{
	if (t && s->stats.parts) {
		/* attach --sched / --orb: the parts of server_process_us, per group */
		struct gs_call_parts p;
		memset(&p, 0, sizeof p);
		if (t->server_sched) {
			p.sched = true;
			p.ns[GS_PART_ONCPU] = t->server_oncpu;
			p.ns[GS_PART_RUNQ] = t->server_runq;
			p.ns[GS_PART_BLOCKED] = t->server_blocked;
		}
		if (t->upcall_start && t->upcall_end && t->server_recv && t->server_send) {
			p.orb = true;
			p.ns[GS_PART_ORB_IN] = t->upcall_start - t->server_recv;
			p.ns[GS_PART_SERVANT] = t->upcall_end - t->upcall_start;
			p.ns[GS_PART_ORB_OUT] = t->server_send - t->upcall_end;
		}
		gs_stats_add_call_parts(&s->stats, gs_engine_strings(e), c, &p);
	} else if (!s->no_stats) {
		gs_stats_add_call(&s->stats, gs_engine_strings(e), c);
	}
	if (s->extras)
		emit_extras(s, e, c, t);
	if (!s->opt.pairs)
		return;
	if (s->row_slow)
		emit_row_slow(s, e, c, t);
	else
		gs_pairs_write_cached(s->out, s->fmt, gs_engine_strings(e), c, &s->cache);
}

/* The nesting stage runs only for what reads its columns (read's summary alone
 * stays as fast as without it): session_opts.c, which budgets it too. */
static bool wants_nesting(const struct gs_session_opts *o)
{
	return gs_session_wants_nesting(o);
}

/* An address the capture host sent from (engine.h, own_addr_fn). */
static void on_own_addr(void *arg, uint8_t family, const uint8_t *addr)
{
	struct gs_session *s = arg;
	gs_nest_own_addr(&s->nest, family, addr);
}

/* The nesting stage's output: the call with its parent and downstream time. */
static void on_nested(void *arg, const struct gs_engine *e, const struct gs_call *c, const struct gs_call_times *t)
{
	emit(arg, e, c, t);
}

void gs_session_emit(struct gs_session *s, const struct gs_call *c, const struct gs_call_times *t)
{
	/* counted as it ends (--count, the progress line), not when the stage writes it */
	s->calls++;
	if (s->nesting)
		gs_nest_add(&s->nest, s->e, c, t);
	else
		emit(s, s->e, c, t);
}

bool gs_session_summary_only(const struct gs_session *s)
{
	return !s->call_hook && !s->opt.pairs && !s->extras && !s->no_stats && s->stats.by == GS_BY_OP &&
	       !s->stats.parts;
}

static void on_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	struct gs_session *s = arg;
	if (s->call_hook) {
		s->call_hook(s->hook_arg, e, c);
		return;
	}
	s->calls++;
	if (s->nesting)
		gs_nest_add(&s->nest, e, c, NULL);
	else
		emit(s, e, c, NULL);
}

int gs_session_format(const struct gs_session_opts *o, const char *cmd, enum gs_pairs_format *fmt, bool *text)
{
	const char *format = o->format ? o->format : (o->pairs ? "csv" : "text");
	*fmt = GS_PAIRS_CSV;
	*text = false;
	if (strcmp(format, "jsonl") == 0)
		*fmt = GS_PAIRS_JSONL;
	else if (strcmp(format, "text") == 0)
		*text = true;
	else if (strcmp(format, "csv") != 0) {
		fprintf(stderr, "giopscope %s: --format wants text, csv or jsonl, not '%s'\n", cmd, format);
		return 2;
	}
	return 0;
}

int gs_session_open(struct gs_session *s, const struct gs_session_opts *o, const char *cmd)
{
	char why[PATH_MAX + 64];
	int err;
	memset(s, 0, sizeof *s);
	s->opt = *o;
	s->cmd = cmd;
	if (o->cfg.port_bitmap)
		s->opt.cfg.port_bitmap = s->opt.ports;
	if (gs_session_config(&s->opt, cmd, &s->opt.cfg) != 0)
		return 2;
	if (gs_session_format(o, cmd, &s->fmt, &s->text) != 0)
		return 2;
	s->out = stdout;
	if (o->output && strcmp(o->output, "-") != 0) {
		if ((err = gs_out_create(&s->outf, o->output, 0666)) != 0) {
			fprintf(stderr, "giopscope %s: %s\n", cmd, gs_out_why(why, sizeof why, o->output, err));
			goto fail;
		}
		s->out = s->outf.f;
	}
	if (o->outbuf) /* read: the rows in large blocks */
		setvbuf(s->out, o->outbuf, _IOFBF, o->outbuf_size);
	else /* each call is a line the moment it ends, also into a pipe */
		setvbuf(s->out, NULL, _IOLBF, 0);
	/* the capture's direction names the host's addresses, unless --host-addrs did */
	if (wants_nesting(o) && !o->host_addrs.n) {
		s->opt.cfg.own_addr_fn = on_own_addr;
		s->opt.cfg.own_addr_arg = s;
	}
	if ((err = gs_stats_init(&s->stats, 512, s->opt.cfg.max_strings + 1)) != 0 ||
	    (err = gs_stats_group_by(&s->stats, (enum gs_group_by)o->by)) != 0 ||
	    (err = gs_tail_init(&s->tail, o->tail)) != 0 ||
	    (o->interval_ns && (err = gs_interval_init(&s->interval, o->interval_ns)) != 0) ||
	    (o->threads > 1 ? (err = gs_shards_new(&s->shards, &s->opt.cfg, o->threads, on_call, s)) != 0 :
	                      (err = gs_engine_new(&s->e, &s->opt.cfg, on_call, s)) != 0) ||
	    /* read --threads unordered: the calls only feed the summary, each thread keeps its own */
	    (s->shards && !s->opt.cfg.ordered && (err = gs_shards_summary_only(s->shards, &s->stats)) != 0)) {
		char fit[256];
		if (err == ENOMEM && gs_session_fit(&s->opt, fit, sizeof fit) == 0)
			fprintf(stderr, "giopscope %s: cannot set up the tables: %s\n", cmd, fit);
		else
			fprintf(stderr, "giopscope %s: cannot set up the tables: %s\n", cmd, strerror(err));
		goto fail;
	}
	if (s->shards)
		s->e = gs_shards_engine(s->shards);
	/* attach --sched / --orb: the summary's groups keep the parts too */
	gs_stats_parts(&s->stats, (o->times_cols & GS_TIMES_COLS_SCHED ? GS_PARTS_SCHED : 0u) |
				  (o->times_cols & GS_TIMES_COLS_ORB ? GS_PARTS_ORB : 0u));
	if (wants_nesting(o)) {
		/* read: the order window bounds it as it bounds the engine's wait for order;
		 * live and attach: a call waits a second of capture time for its parent to end */
		if ((err = gs_nest_init(&s->nest, s->opt.cfg.ordered, s->opt.cfg.order_window,
					GS_NEST_HOLD_NS, on_nested, s)) != 0) {
			fprintf(stderr, "giopscope %s: cannot set up the tables: %s\n", cmd, strerror(err));
			goto fail;
		}
		s->nest.own = o->host_addrs;
		s->nesting = true;
		/* the summary's groups split server time with the stage's fields */
		gs_stats_nesting(&s->stats, true);
	}
	if (o->report && (err = gs_report_new(&s->report, NULL)) != 0) {
		fprintf(stderr, "giopscope %s: cannot set up the report: %s\n", cmd, strerror(err));
		goto fail;
	}
	/* the report is written when the run ends, maybe hours from now */
	if (o->report && (err = gs_out_check(o->report, 0666)) != 0) {
		fprintf(stderr, "giopscope %s: %s\n", cmd, gs_out_why(why, sizeof why, o->report, err));
		goto fail;
	}
	if (o->trace && (err = gs_trace_open(&s->trace, o->trace, NULL)) != 0) {
		fprintf(stderr, "giopscope %s: %s\n", cmd, gs_out_why(why, sizeof why, o->trace, err));
		goto fail;
	}
	if (o->metrics_web_config && !o->metrics) {
		fprintf(stderr, "giopscope %s: --metrics-web-config is for the endpoint --metrics ADDR:PORT opens: "
			"add --metrics\n", cmd);
		goto fail;
	}
	if (o->metrics) {
		/* the web configuration goes with it (freed there, also on failure) */
		int rc = gs_metrics_open(&s->metrics, o->metrics, o->metrics_web, why, sizeof why);
		s->opt.metrics_web = NULL;
		if (rc != 0) {
			fprintf(stderr, "giopscope %s: %s\n", cmd, why);
			goto fail;
		}
	}
	/* set up: from here on the files are under their names (a capture stopped by a
	 * signal, or killed, leaves what it wrote there); read's only at the end */
	if (!o->commit_at_end && (err = gs_out_commit(&s->outf)) != 0) {
		fprintf(stderr, "giopscope %s: %s\n", cmd, gs_out_why(why, sizeof why, o->output, err));
		goto fail;
	}
	if (!o->commit_at_end && (err = gs_trace_commit(s->trace)) != 0) {
		fprintf(stderr, "giopscope %s: %s\n", cmd, gs_out_why(why, sizeof why, o->trace, err));
		goto fail;
	}
	if (s->opt.pairs && s->text)
		gs_pairs_header_text(s->out);
	else if (s->opt.pairs && s->opt.syscall_times)
		gs_pairs_header_times_cols(s->out, s->fmt, s->opt.times_cols);
	else if (s->opt.pairs)
		gs_pairs_header(s->out, s->fmt);
	s->tty = !o->quiet && isatty(STDERR_FILENO);
	s->no_stats = o->pairs && !o->summary_too && !o->metrics && !s->tty;
	s->rows_tty = s->tty && s->opt.pairs && gs_same_terminal(s->out);
	s->extras = o->tail || o->interval_ns || s->report || s->trace;
	s->row_slow = s->text || o->syscall_times || s->rows_tty;
	if (s->nesting)
		gs_metrics_nest(s->metrics, &s->nest.n);
	s->start_mono = s->last_progress_mono = s->last_tick_mono = gs_mono_ns();
	return 0;
fail:
	/* what was set up goes again (each step leaves zeroed or freeable state) */
	gs_metrics_close(s->metrics);
	gs_metrics_web_free(s->opt.metrics_web); /* not handed to gs_metrics_open yet */
	gs_trace_discard(s->trace);
	gs_report_free(s->report);
	gs_nest_free(&s->nest);
	if (s->shards)
		gs_shards_free(s->shards); /* e was its engine */
	else
		gs_engine_free(s->e);
	s->shards = NULL;
	gs_stats_free(&s->stats);
	gs_tail_free(&s->tail);
	gs_interval_free(&s->interval);
	gs_out_close(&s->outf, false);
	memset(s, 0, sizeof *s);
	return 2;
}

void gs_session_frame(struct gs_session *s, int dlt, int64_t ts_ns, const uint8_t *data,
		      uint32_t caplen, uint32_t wirelen)
{
	gs_engine_frame_dir(s->e, dlt, ts_ns, data, caplen, wirelen);
}

static void progress(struct gs_session *s, int64_t mono, const struct gs_drops *d)
{
	double secs = (double)(mono - s->last_progress_mono) / 1e9;
	double rate = secs > 0 ? (double)(s->calls - s->progress_calls) / secs : 0;
	const struct gs_counters *c = gs_engine_counters(s->e);
	char p99[32] = "-";
	gs_stats_fold(&s->stats);
	if (s->stats.all.total.total)
		snprintf(p99, sizeof p99, "%.1f us", (double)gs_hist_quantile(&s->stats.all.total, 0.99) / 1e3);
	int n = snprintf(s->progress_text, sizeof s->progress_text,
			 "%s: %llu calls, %.0f calls/s, %u open, p99 %s, %llu packets, dropped: kernel %llu, interface %llu",
			 s->cmd, (unsigned long long)s->calls, rate, gs_engine_open_calls(s->e), p99,
			 (unsigned long long)c->packets, (unsigned long long)(d ? d->kernel : 0),
			 (unsigned long long)(d ? d->iface : 0));
	if (d && d->other && n > 0 && (size_t)n < sizeof s->progress_text)
		snprintf(s->progress_text + n, sizeof s->progress_text - (size_t)n, ", %s %llu",
			 d->other_name ? d->other_name : "other", (unsigned long long)d->other);
	if (s->rows_tty)
		fflush(s->out); /* the rows first, the line under them */
	fprintf(stderr, "\r\033[K%s", s->progress_text);
	fflush(stderr);
	s->progress_wiped = false;
	s->progress_shown = true;
	s->progress_calls = s->calls;
	s->last_progress_mono = mono;
}

void gs_session_tick(struct gs_session *s, int64_t now_ns, const struct gs_drops *drops)
{
	int64_t mono = gs_mono_ns();
	gs_engine_tick(s->e, now_ns);
	if (s->nesting)
		gs_nest_tick(&s->nest, now_ns);
	gs_metrics_poll(s->metrics, s->e, &s->stats, drops); /* no-op without --metrics */
	if (s->tty && mono - s->last_progress_mono >= 1000000000) {
		progress(s, mono, drops);
	} else if (s->progress_wiped && mono - s->wiped_mono >= 100000000) {
		/* rows were written over it: the same line again, under them (at most ten
		 * times a second, however fast the rows come) */
		fflush(s->out);
		fprintf(stderr, "\r\033[K%s", s->progress_text);
		fflush(stderr);
		s->progress_shown = true;
		s->progress_wiped = false;
	}
	s->last_tick_mono = mono;
}

bool gs_session_done(const struct gs_session *s)
{
	if (s->opt.count && s->calls >= s->opt.count)
		return true;
	if (s->opt.duration_ns && gs_mono_ns() - s->start_mono >= s->opt.duration_ns)
		return true;
	return false;
}

int gs_session_finish(struct gs_session *s, const char *source, const struct gs_drops *drops)
{
	int status = 0;
	const struct gs_counters *c;
	struct gs_summary_info info;
	char why[PATH_MAX + 64];
	s->finished = true;
	if (s->progress_shown)
		fputs("\r\033[K", stderr);
	if (s->shards)
		gs_shards_finish(s->shards);
	else
		gs_engine_finish(s->e);
	if (s->flush_hook)
		s->flush_hook(s->hook_arg);
	if (s->nesting)
		gs_nest_flush(&s->nest);
	c = gs_engine_counters(s->e);
	memset(&info, 0, sizeof info);
	info.source = source;
	info.first_ts = gs_engine_first_ts(s->e);
	info.last_ts = gs_engine_last_ts(s->e);
	info.kernel_drops = drops ? drops->kernel + drops->iface + drops->other : 0;
	info.max_memory = s->opt.max_memory;
	info.max_flows = s->opt.cfg.max_flows;
	info.max_open_calls = s->opt.cfg.max_open_calls;
	info.order_window = s->opt.cfg.order_window;
	info.max_ooo_total = s->opt.cfg.max_ooo_total;
	info.nest = s->nesting ? &s->nest.n : NULL;
	if (s->discard) {
		/* nothing was read: what would follow is empty tables */
		gs_trace_discard(s->trace);
		s->trace = NULL;
		gs_report_free(s->report);
		s->report = NULL;
		gs_metrics_close(s->metrics);
		s->metrics = NULL;
		return 0;
	}
	if (!s->opt.pairs || s->opt.summary_too) {
		/* with threads: the names numbered as one engine would (ties in the table) */
		const struct gs_intern *names = s->shards ? gs_shards_summary_strings(s->shards, &s->stats) :
						  gs_engine_strings(s->e);
		gs_stats_fold(&s->stats);
		if (!s->opt.pairs)
			gs_summary_write(s->out, s->text ? GS_SUM_TEXT : s->fmt == GS_PAIRS_CSV ? GS_SUM_CSV : GS_SUM_JSONL,
					 &s->stats, c, names, &info);
		else
			gs_summary_write(stderr, GS_SUM_TEXT, &s->stats, c, names, &info);
	}
	{
		/* for people: after the summary, or on stderr when stdout carries records */
		FILE *human = s->opt.pairs ? stderr : s->out;
		bool jsonl = !s->opt.pairs && !s->text && s->fmt == GS_PAIRS_JSONL;
		/* the tail's rows are records a script reads: JSON lines wherever the
		 * rows are (stderr beside --pairs' JSON rows too), as docs/output.md says */
		if (s->opt.tail)
			gs_tail_write(human, !s->text && s->fmt == GS_PAIRS_JSONL, &s->tail);
		if (s->opt.interval_ns)
			gs_interval_write(&s->interval, human, s->opt.pairs || s->text ? 0 : jsonl ? 2 : 1);
	}
	if (s->opt.pairs && !s->opt.summary_too && c->rows_out_of_order && s->calls <= s->opt.cfg.order_window)
		/* fewer calls than the window holds: it was never full, the capture
		 * itself goes back in time (packets out of time order) */
		fprintf(stderr, "giopscope %s: %llu %s out of start order (written after a call that started "
			"later): the capture's packets are not in time order (the order window, %u calls, was "
			"never full); 'mergecap -w sorted.pcap FILE' sorts them\n",
			s->cmd, (unsigned long long)c->rows_out_of_order,
			gs_plural(c->rows_out_of_order, "row", "rows"), s->opt.cfg.order_window);
	else if (s->opt.pairs && !s->opt.summary_too && c->rows_out_of_order)
		/* the order window is a bound like any table: past it the rows are
		 * not in start order, and a reader of the rows alone must be told
		 * (with the summary, its "bounds"/"also" lines say it) */
		fprintf(stderr, "giopscope %s: %llu %s out of start order (written after a call that started "
			"later): the order window (%u calls waiting) was full; --order-window or --max-memory "
			"raises it\n",
			s->cmd, (unsigned long long)c->rows_out_of_order,
			gs_plural(c->rows_out_of_order, "row", "rows"), s->opt.cfg.order_window);
	if (drops && (drops->kernel || drops->iface || drops->other))
		fprintf(stderr, "giopscope %s: packets lost before the decoder: kernel %llu, interface %llu, %s %llu\n",
			s->cmd, (unsigned long long)drops->kernel, (unsigned long long)drops->iface,
			drops->other_name ? drops->other_name : "other", (unsigned long long)drops->other);
	if (s->report) {
		int err = gs_report_write(s->report, s->opt.report, source, c);
		if (err) {
			fprintf(stderr, "giopscope %s: %s\n", s->cmd, gs_out_why(why, sizeof why, s->opt.report, err));
			status = 2;
		}
		gs_report_free(s->report);
		s->report = NULL;
	}
	if (s->trace) {
		int err = gs_trace_close(s->trace); /* the JSON's end: valid from here */
		if (err) {
			fprintf(stderr, "giopscope %s: writing %s failed: %s\n", s->cmd, s->opt.trace, strerror(err));
			status = 2;
		}
		s->trace = NULL;
	}
	gs_metrics_close(s->metrics);
	s->metrics = NULL;
	return status;
}

void gs_session_discard(struct gs_session *s)
{
	s->discard = true;
	/* the rows' header, still in the buffer (read's output is fully buffered) */
	if (s->out == stdout)
		__fpurge(stdout);
}

int gs_session_close(struct gs_session *s, const char *source, const struct gs_drops *drops)
{
	int status = s->finished ? 0 : gs_session_finish(s, source, drops), err;
	char why[PATH_MAX + 64];
	errno = 0;
	if (fflush(s->out) != 0 || ferror(s->out)) {
		/* errno of the failed write when fflush saw it; else the stream's error flag */
		fprintf(stderr, "giopscope %s: writing the output failed%s%s\n", s->cmd,
			errno ? ": " : "", errno ? strerror(errno) : "");
		status = 2;
	} else if ((err = gs_out_close(&s->outf, !s->discard)) != 0) {
		/* under its name since gs_session_open (only the close can fail), or now (read) */
		fprintf(stderr, "giopscope %s: %s\n", s->cmd, gs_out_why(why, sizeof why, s->opt.output, err));
		status = 2;
	}
	/* after a failed write: a file not under its name yet goes, what was there stays */
	gs_out_close(&s->outf, false);
	if (s->shards)
		gs_shards_free(s->shards); /* e was its engine */
	else
		gs_engine_free(s->e);
	s->shards = NULL;
	gs_nest_free(&s->nest);
	gs_stats_free(&s->stats);
	gs_tail_free(&s->tail);
	if (s->opt.interval_ns)
		gs_interval_free(&s->interval);
	s->e = NULL;
	return status;
}
