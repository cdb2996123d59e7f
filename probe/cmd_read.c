/* giopscope read: captures offline. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analysis/endpoint.h"
#include "../analysis/engine.h"
#include "../analysis/sink_pairs.h"
#include "../analysis/stats.h"
#include "../analysis/summary.h"
#include "../analysis/tail.h"
#include "../analysis/interval.h"
#include "../analysis/report.h"
#include "../analysis/sink_trace.h"
#include "commands.h"
#include "opts.h"
#include "read_shards.h"
#include "session.h"
#include "tap_pcap.h"
#include "../analysis/out_file.h"

struct read_ctx {
	FILE *out;
	bool pairs;
	enum gs_pairs_format pairs_fmt;
	bool pairs_text;
	struct gs_pairs_cache cache;
	struct gs_stats stats;
	bool has_stats;             /* the summary is written: not with --pairs alone */
	struct gs_tail tail;
	bool has_tail;              /* --tail: gs_tail_add does nothing without */
	struct gs_interval interval;
	bool has_interval;
	struct gs_report *report;   /* --report, NULL without */
	struct gs_trace *trace;     /* --trace, NULL without */
};

static void on_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	struct read_ctx *ctx = arg;
	if (ctx->has_stats)
		gs_stats_add_call(&ctx->stats, gs_engine_strings(e), c);
	if (ctx->has_tail)
		gs_tail_add(&ctx->tail, e, c);
	if (ctx->has_interval)
		gs_interval_add(&ctx->interval, c);
	if (ctx->report)
		gs_report_add(ctx->report, e, c);
	if (ctx->trace)
		gs_trace_add(ctx->trace, e, c);
	if (!ctx->pairs)
		return;
	if (ctx->pairs_text) {
		gs_pairs_write_text(ctx->out, gs_engine_strings(e), c);
		return;
	}
	gs_pairs_write_cached(ctx->out, ctx->pairs_fmt, gs_engine_strings(e), c, &ctx->cache);
}

/* The calls come in the order they started when something shows that order: rows,
 * intervals, traces, reports and tails do; the summary's histograms and counters
 * do not. Unordered, a call is written once settled instead of waiting behind every
 * call that started earlier and is still open, which keeps the queue short (time
 * and memory) when calls stay open long. GIOPSCOPE_ORDERED=1 forces the order
 * (tests compare both ways). --by other than op: groups of equal size are listed
 * in the order their first calls were written, which the order then fixes (and
 * --threads keeps). */
static bool read_ordered(const struct gs_session_opts *o)
{
	return o->pairs || o->interval_ns || o->report || o->trace || o->tail ||
	       getenv("GIOPSCOPE_ORDERED") != NULL || o->by != GS_BY_OP;
}

/* After the output: what the captures held that could not be decoded, 1 if any. */
static int read_problems(const struct gs_engine *e, int snaplen)
{
	const struct gs_counters *c = gs_engine_counters(e);
	const struct gs_problem *pm = gs_engine_first_malformed(e);
	const struct gs_problem *pt = gs_engine_first_truncated(e);
	uint64_t cut = c->link_truncated + c->ip_truncated + c->tcp_truncated;
	int status = 0;
	if (c->giop_malformed && pm) {
		fprintf(stderr, "giopscope: %llu malformed GIOP message%s; first in packet %llu: %s\n",
			(unsigned long long)c->giop_malformed, c->giop_malformed > 1 ? "s" : "",
			(unsigned long long)pm->packet, pm->what);
		status = 1;
	}
	if (c->giop_truncated && pt) {
		fprintf(stderr, "giopscope: %llu GIOP message%s cut by the snapshot length (%d bytes); "
			"first in packet %llu: %s\n",
			(unsigned long long)c->giop_truncated, c->giop_truncated > 1 ? "s" : "",
			snaplen, (unsigned long long)pt->packet, pt->what);
		status = 1;
	} else if (cut) {
		fprintf(stderr, "giopscope: %llu packets cut inside their headers by the snapshot length (%d bytes)\n",
			(unsigned long long)cut, snaplen);
		status = 1;
	}
	return status;
}

/* One engine: set-up, each call and the end through the session, as live, attach and
 * dpdk (session.c), with read's settings (gs_session_opts_offline, o->outbuf). */
static int read_one(const struct gs_session_opts *o, int n, char **files)
{
	static struct gs_session s;
	struct gs_read_progress prog = { 0 };
	const char *source = n == 1 ? files[0] : "captures";
	char reason[512];
	int status = 0, snaplen = 0, rc;
	if (gs_session_open(&s, o, "read") != 0)
		return 2;
	/* no progress line where the rows themselves appear (the same terminal) */
	prog.enabled = s.tty && !s.rows_tty;
	for (int i = 0; i < n; i++) {
		enum gs_read_result r = gs_pcap_read_file(files[i], s.e, &prog, &snaplen, reason, sizeof reason);
		if (r != GS_READ_OK) {
			fprintf(stderr, "giopscope: %s\n", reason);
			status = r == GS_READ_CANNOT_OPEN ? 2 : 1;
			break;
		}
	}
	/* whatever happened, every call decoded so far is written */
	if ((rc = gs_session_finish(&s, source, NULL)) != 0)
		status = rc;
	if (status == 0)
		status = read_problems(s.e, snaplen);
	if ((rc = gs_session_close(&s, source, NULL)) != 0)
		status = rc;
	return status;
}

static void usage(FILE *f)
{
	gs_options_usage(f, GS_CMD_READ,
			 "usage: giopscope read [options] FILE...   (FILE: pcap or pcapng, '-' for stdin)\n",
			 "exit: 0 done, 1 bad input (every call decoded before it is written), 2 usage or environment\n");
}

int gs_cmd_read(int argc, char **argv)
{
	static struct gs_getopt g;
	/* static: the port bitmap of --ports lives in it, and it is 8 KiB */
	static struct gs_session_opts o;
	struct gs_config cfg;
	struct read_ctx ctx;
	struct gs_engine *e = NULL;
	struct gs_shards *shards = NULL;
	uint64_t threads = 1;
	const char *format, *outpath, *report_path, *trace_path;
	bool summary_too, quiet, pairs_text;
	enum gs_pairs_format pairs_fmt;
	uint64_t max_memory, tail_n;
	int by;
	int64_t interval_ns;
	int opt, err, status = 0, snaplen = 0;
	char reason[512];
	struct gs_read_progress prog = { 0 };
	static char outbuf[1 << 20];
	struct gs_out outf = { 0 };
	char why[PATH_MAX + 64];

	gs_session_opts_offline(&o);
	gs_options_getopt(&g, GS_CMD_READ, true);
	optind = 1;
	opterr = 0; /* our own one-line messages */
	while ((opt = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (opt) {
		case GS_O_THREADS:
			if (!gs_parse_u64(optarg, 1, GS_MAX_THREADS, false, &threads)) {
				fprintf(stderr, "giopscope read: --threads wants 1..%d\n", GS_MAX_THREADS);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		case ':':
			fprintf(stderr, "giopscope read: %s needs a value (giopscope read --help)\n", argv[optind - 1]);
			return 2;
		case '?':
			fprintf(stderr, "giopscope read: unknown option '%s' (giopscope read --help)\n", argv[optind - 1]);
			return 2;
		default:
			/* read's other options, handled as by live, attach and dpdk */
			if (gs_session_option(&o, "read", opt, optarg) != 0)
				return 2;
		}
	}
	if (gs_session_config(&o, "read", &cfg) != 0)
		return 2;
	format = o.format;
	outpath = o.output;
	summary_too = o.summary_too;
	quiet = o.quiet;
	max_memory = o.max_memory;
	tail_n = o.tail;
	by = o.by;
	interval_ns = o.interval_ns;
	report_path = o.report;
	trace_path = o.trace;
	if (optind >= argc) {
		fprintf(stderr, "giopscope read: no capture file given (giopscope read --help)\n");
		return 2;
	}
	if (!format)
		format = o.pairs ? "csv" : "text";
	if (gs_session_format(&o, "read", &pairs_fmt, &pairs_text) != 0)
		return 2;
	/* every capture first: a typo in a name must not cost the user an existing -o file */
	for (int i = optind; i < argc; i++) {
		if (gs_pcap_check_file(argv[i], reason, sizeof reason) != GS_READ_OK) {
			fprintf(stderr, "giopscope: %s\n", reason);
			return 2;
		}
	}
	o.cfg.ordered = cfg.ordered = read_ordered(&o);
	if (threads == 1) {
		o.outbuf = outbuf;
		o.outbuf_size = sizeof outbuf;
		return read_one(&o, argc - optind, argv + optind);
	}
	memset(&ctx, 0, sizeof ctx);
	ctx.pairs = o.pairs;
	ctx.pairs_fmt = pairs_fmt;
	ctx.pairs_text = pairs_text;
	ctx.out = stdout;
	if (outpath && strcmp(outpath, "-") != 0) {
		/* a new file, put under its name at the end (analysis/out_file.h) */
		if ((err = gs_out_create(&outf, outpath, 0666)) != 0) {
			fprintf(stderr, "giopscope read: %s\n", gs_out_why(why, sizeof why, outpath, err));
			return 2;
		}
		ctx.out = outf.f;
	}
	setvbuf(ctx.out, outbuf, _IOFBF, sizeof outbuf);
	if ((err = gs_stats_init(&ctx.stats, 512, cfg.max_strings + 1)) != 0 ||
	    (err = gs_stats_group_by(&ctx.stats, (enum gs_group_by)by)) != 0 ||
	    (err = gs_tail_init(&ctx.tail, (uint32_t)tail_n)) != 0 ||
	    (interval_ns && (err = gs_interval_init(&ctx.interval, interval_ns)) != 0) ||
	    (threads == 1 && (err = gs_engine_new(&e, &cfg, on_call, &ctx)) != 0) ||
	    (threads > 1 && (err = gs_shards_new(&shards, &cfg, (unsigned)threads, on_call, &ctx)) != 0) ||
	    /* unordered, the calls only feed the summary: each thread keeps its own */
	    (shards && !cfg.ordered && (err = gs_shards_summary_only(shards, &ctx.stats)) != 0)) {
		fprintf(stderr, "giopscope read: cannot set up the tables: %s\n", strerror(err));
		status = 2;
		goto out;
	}
	if (report_path && (err = gs_report_new(&ctx.report, NULL)) != 0) {
		fprintf(stderr, "giopscope read: cannot set up the report: %s\n", strerror(err));
		status = 2;
		goto out;
	}
	/* written at the end: a path that cannot be written is said before a long read */
	if (report_path && (err = gs_out_check(report_path, 0666)) != 0) {
		fprintf(stderr, "giopscope read: %s\n", gs_out_why(why, sizeof why, report_path, err));
		status = 2;
		goto out;
	}
	if (trace_path && (err = gs_trace_open(&ctx.trace, trace_path, NULL)) != 0) {
		fprintf(stderr, "giopscope read: %s\n", gs_out_why(why, sizeof why, trace_path, err));
		status = 2;
		goto out;
	}
	if (ctx.pairs && ctx.pairs_text)
		gs_pairs_header_text(ctx.out);
	else if (ctx.pairs)
		gs_pairs_header(ctx.out, ctx.pairs_fmt);
	ctx.has_interval = interval_ns != 0;
	ctx.has_tail = tail_n != 0;
	ctx.has_stats = !ctx.pairs || summary_too;
	/* no progress line where the rows themselves appear (the same terminal) */
	if (shards)
		e = gs_shards_engine(shards);
	prog.enabled = !quiet && isatty(STDERR_FILENO) && !(ctx.pairs && gs_same_terminal(ctx.out));

	for (int i = optind; i < argc; i++) {
		enum gs_read_result r = shards ?
			gs_shards_read_file(shards, argv[i], &prog, &snaplen, reason, sizeof reason) :
			gs_pcap_read_file(argv[i], e, &prog, &snaplen, reason, sizeof reason);
		if (r != GS_READ_OK) {
			fprintf(stderr, "giopscope: %s\n", reason);
			status = r == GS_READ_CANNOT_OPEN ? 2 : 1;
			break;
		}
	}
	/* whatever happened, every call decoded so far is written */
	if (shards)
		gs_shards_finish(shards);
	else
		gs_engine_finish(e);
	{
		const struct gs_counters *c = gs_engine_counters(e);
		struct gs_summary_info info = {
			.source = argc - optind == 1 ? argv[optind] : "captures",
			.first_ts = gs_engine_first_ts(e),
			.last_ts = gs_engine_last_ts(e),
			.active_flows = 0,
			.max_memory = max_memory,
			.max_flows = cfg.max_flows,
			.max_open_calls = cfg.max_open_calls,
			.order_window = cfg.order_window,
			.max_ooo_total = cfg.max_ooo_total,
		};
		enum gs_summary_format sf = strcmp(format, "csv") == 0 ? GS_SUM_CSV :
					    strcmp(format, "jsonl") == 0 ? GS_SUM_JSONL : GS_SUM_TEXT;
		/* for people: after the summary, or on stderr when stdout carries records */
		FILE *human = ctx.pairs ? stderr : ctx.out;
		/* with threads: the names numbered as one engine would (ties in the table) */
		const struct gs_intern *names = shards ? gs_shards_summary_strings(shards, &ctx.stats) :
					       gs_engine_strings(e);
		if (!ctx.pairs)
			gs_summary_write(ctx.out, sf, &ctx.stats, c, names, &info);
		else if (summary_too)
			gs_summary_write(stderr, GS_SUM_TEXT, &ctx.stats, c, names, &info);
		if (tail_n)
			gs_tail_write(human, sf == GS_SUM_JSONL && !ctx.pairs, &ctx.tail);
		if (ctx.has_interval)
			gs_interval_write(&ctx.interval, human, ctx.pairs ? 0 : (int)sf);
		if (ctx.report && (err = gs_report_write(ctx.report, report_path, info.source, c)) != 0) {
			fprintf(stderr, "giopscope read: %s\n", gs_out_why(why, sizeof why, report_path, err));
			status = 2;
		}
		if (ctx.trace && (err = gs_trace_close(ctx.trace)) != 0) {
			fprintf(stderr, "giopscope read: writing %s failed: %s\n", trace_path, strerror(err));
			status = 2;
		}
		ctx.trace = NULL;
		if (shards && gs_shards_bound_hit(shards))
			fprintf(stderr, "giopscope read: a bound was reached with --threads %u (a table, each "
				"thread holding 1/%u of it, or the order window): the output may differ from "
				"--threads 1's\n", (unsigned)threads, (unsigned)threads);
		if (status == 0)
			status = read_problems(e, snaplen);
	}
	if (fflush(ctx.out) != 0 || ferror(ctx.out)) {
		fprintf(stderr, "giopscope: writing the output failed: %s\n", strerror(errno));
		status = 2;
	} else if (outf.f && (err = gs_out_close(&outf, true)) != 0) {
		/* the rename: what was under that name is still there */
		fprintf(stderr, "giopscope read: %s\n", gs_out_why(why, sizeof why, outpath, err));
		status = 2;
	}
out:
	/* every set-up step above leaves zeroed or freeable state behind it; a set-up that
	 * failed, or an output that could not be written, leaves the old file as it was */
	gs_trace_discard(ctx.trace);
	gs_out_close(&outf, false);
	if (shards)
		gs_shards_free(shards); /* e was its engine */
	else
		gs_engine_free(e);
	gs_stats_free(&ctx.stats);
	gs_tail_free(&ctx.tail);
	gs_interval_free(&ctx.interval);
	gs_report_free(ctx.report);
	return status;
}
