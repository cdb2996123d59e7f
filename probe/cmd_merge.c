/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope merge CLIENT.pcap SERVER.pcap: the same calls from both hosts.
 * Each capture goes through its own engine into the merge's bounded call
 * lists (analysis/merge_match.c matches them); then the client side's
 * records with the merged columns, or the summary. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analysis/engine.h"
#include "../analysis/report.h"
#include "../analysis/merge_match.h"
#include "../analysis/sink_trace.h"
#include "commands.h"
#include "merge_out.h"
#include "options.h"
#include "opt_refuse.h"
#include "opts.h"
#include "tap_pcap.h"
#include "../analysis/out_file.h"

struct merge_side {
	struct gs_merge *m;
	int side;
};

static void on_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	struct merge_side *ms = arg;
	gs_merge_add(ms->m, ms->side, e, c);
}

static void usage(FILE *f)
{
	gs_options_usage(f, GS_CMD_MERGE, "usage: giopscope merge [options] CLIENT.pcap SERVER.pcap\n"
	      "  the same calls captured on the client's host and on the server's host (clocks need not\n"
	      "  be synchronised, addresses may differ by NAT): network time = client total - server total,\n"
	      "  the server's own time from its side, and the offset between the two capture clocks (from\n"
	      "  causality alone: the range every call allows, or most calls when they disagree)\n",
	      "exit: 0 done, 1 bad input (or no call matched), 2 usage or environment\n");
}

/* Reads one capture into the merge; 0, 1 (bad input, what was read is kept)
 * or 2 (cannot open). */
static int read_side(const char *path, int side, struct gs_merge *m, const struct gs_config *cfg, bool quiet,
		     struct gs_counters *counters)
{
	struct merge_side ms = { m, side };
	struct gs_engine *e = NULL;
	struct gs_read_progress prog = { 0 };
	char reason[512];
	int err, snaplen = 0, status = 0;
	enum gs_read_result r;

	if ((err = gs_engine_new(&e, cfg, on_call, &ms)) != 0) {
		fprintf(stderr, "giopscope merge: cannot set up the tables: %s\n", strerror(err));
		return 2;
	}
	prog.enabled = !quiet && isatty(STDERR_FILENO);
	r = gs_pcap_read_file(path, e, &prog, &snaplen, reason, sizeof reason);
	if (r != GS_READ_OK) {
		fprintf(stderr, "giopscope: %s\n", reason);
		status = r == GS_READ_CANNOT_OPEN ? 2 : 1;
	}
	gs_engine_finish(e);
	*counters = *gs_engine_counters(e);
	if (status == 0 && counters->giop_malformed) {
		const struct gs_problem *pm = gs_engine_first_malformed(e);
		fprintf(stderr, "giopscope merge: %s: %llu malformed GIOP message%s; first in packet %llu: %s\n", path,
			(unsigned long long)counters->giop_malformed, counters->giop_malformed > 1 ? "s" : "",
			pm ? (unsigned long long)pm->packet : 0ull, pm ? pm->what : "?");
		status = 1;
	}
	gs_engine_free(e);
	return status;
}

/* The client side's calls into the report and the trace, with what the
 * server side knows. */
static int write_extras(const struct gs_merge *m, const struct gs_merge_result *res, const char *report_path,
			const char *trace_path, const char *title, const struct gs_counters *counters)
{
	struct gs_report *rep = NULL;
	struct gs_trace *tr = NULL;
	const struct gs_intern *strings = gs_merge_strings(m);
	uint32_t n = gs_merge_count(m, GS_MERGE_CLIENT);
	int err;

	if (report_path && (err = gs_report_new(&rep, NULL)) != 0) {
		fprintf(stderr, "giopscope merge: cannot set up the report: %s\n", strerror(err));
		return 2;
	}
	if (trace_path && (err = gs_trace_open(&tr, trace_path, NULL)) != 0) {
		char why[PATH_MAX + 64];
		fprintf(stderr, "giopscope merge: %s\n", gs_out_why(why, sizeof why, trace_path, err));
		gs_report_free(rep);
		return 2;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct gs_mcall *mc = gs_merge_get(m, GS_MERGE_CLIENT, i);
		uint32_t j = gs_merge_match(m, i);
		struct gs_merge_figures f;
		struct gs_report_split sp;
		struct gs_call c;
		size_t on;
		const char *op;
		gs_merge_to_call(mc, &c);
		op = gs_intern_get(strings, c.op, &on);
		gs_merge_figures(mc, j == GS_MERGE_NONE ? NULL : gs_merge_get(m, GS_MERGE_SERVER, j), &f);
		gs_report_split_unknown(&sp);
		if (f.known) {
			sp.network_ns = f.network_ns;
			sp.server_host_ns = f.server_server_ns;
		}
		if (rep)
			gs_report_add_named(rep, op, on, &c, &sp);
		if (tr)
			gs_trace_add_named(tr, op, on, &c);
	}
	err = 0;
	if (rep) {
		char line[512];
		FILE *mf = fmemopen(line, sizeof line, "w");
		if (mf) {
			/* the offset paragraph, as the summary prints it */
			gs_merge_write_offset(mf, res);
			fclose(mf);
			line[sizeof line - 1] = '\0';
			for (char *p = line; *p; p++) /* one paragraph */
				if (*p == '\n')
					*p = ' ';
			gs_report_note(rep, "%s", line);
		}
		gs_report_note(rep, "Matched %llu of %llu client-side calls (%u of %u request streams).",
			       (unsigned long long)res->matched, (unsigned long long)res->calls[0],
			       res->streams_matched, res->streams[0]);
		if ((err = gs_report_write(rep, report_path, title, counters)) != 0) {
			char why[PATH_MAX + 64];
			fprintf(stderr, "giopscope merge: %s\n", gs_out_why(why, sizeof why, report_path, err));
			err = 2;
		}
		gs_report_free(rep);
	}
	if (tr && gs_trace_close(tr) != 0) {
		fprintf(stderr, "giopscope merge: writing %s failed\n", trace_path);
		err = 2;
	}
	return err;
}

int gs_cmd_merge(int argc, char **argv)
{
	static struct gs_getopt g;
	uint8_t ports[8192]; /* --ports; lives as long as the engines */
	struct gs_config cfg;
	struct gs_merge_config mcfg;
	struct gs_merge *m = NULL;
	struct gs_merge_result res;
	struct gs_counters counters[2];
	const char *format = NULL, *outpath = NULL, *report = NULL, *trace = NULL;
	bool pairs = false, summary_too = false, quiet = false;
	enum gs_merge_fmt fmt;
	FILE *out = stdout;
	struct gs_out outf = { 0 };
	bool written = false;       /* -o holds the whole output: kept even if an extra fails */
	char why[PATH_MAX + 64], reason[512];
	int opt, err, status = 0, st;
	uint64_t v;
	char title[256];

	gs_config_default(&cfg);
	gs_merge_config_default(&mcfg);
	gs_options_getopt(&g, GS_CMD_MERGE, true);
	optind = 1;
	opterr = 0; /* our own one-line messages */
	while ((opt = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (opt) {
		case GS_O_PAIRS: pairs = true; break;
		case GS_O_FORMAT: format = optarg; break;
		case 'o': outpath = optarg; break;
		case GS_O_SUMMARY: summary_too = true; break;
		case GS_O_REPORT: report = optarg; break;
		case GS_O_TRACE: trace = optarg; break;
		case 'q': quiet = true; break;
		case GS_O_PORTS:
			if (!gs_parse_ports(optarg, ports, why, sizeof why)) {
				fprintf(stderr, "giopscope merge: bad --ports: %s\n", why);
				return 2;
			}
			cfg.port_bitmap = ports;
			break;
		case GS_O_TOLERANCE:
			if (!gs_parse_seconds(optarg, 3600LL * 1000000000, &mcfg.tolerance_ns)) {
				fprintf(stderr, "giopscope merge: --tolerance wants seconds (e.g. 0.001)\n");
				return 2;
			}
			break;
		case GS_O_MERGE_CALLS:
			if (!gs_parse_u64(optarg, 1, 1u << 30, false, &v)) {
				fprintf(stderr, "giopscope merge: --max-calls wants 1..%u\n", 1u << 30);
				return 2;
			}
			mcfg.max_calls = (uint32_t)v;
			break;
		case 'h': usage(stdout); return 0;
		default:
			return gs_opt_refuse(stderr, "merge", opt, argv[optind - 1], NULL);
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "giopscope merge: want two captures, CLIENT.pcap SERVER.pcap (giopscope merge --help)\n");
		return 2;
	}
	if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0) {
		fprintf(stderr, "giopscope merge: only one capture can come from stdin\n");
		return 2;
	}
	if (!format)
		format = pairs ? "csv" : "text";
	if (strcmp(format, "csv") == 0)
		fmt = GS_MERGE_CSV;
	else if (strcmp(format, "jsonl") == 0)
		fmt = GS_MERGE_JSONL;
	else if (strcmp(format, "text") == 0)
		fmt = GS_MERGE_TEXT;
	else {
		fprintf(stderr, "giopscope merge: --format wants text, csv or jsonl, not '%s'\n", format);
		return 2;
	}
	/* the inputs and the files written at the end first: a typo must not cost the
	 * user an existing output (the files are new ones, put under their names at the end) */
	for (int side = 0; side < 2; side++) {
		if (gs_pcap_check_file(argv[optind + side], reason, sizeof reason) != GS_READ_OK) {
			fprintf(stderr, "giopscope: %s\n", reason);
			return 2;
		}
	}
	for (int k = 0; k < 2; k++) {
		const char *late = k ? trace : report;
		if (late && (err = gs_out_check(late, 0666)) != 0) {
			fprintf(stderr, "giopscope merge: %s\n", gs_out_why(why, sizeof why, late, err));
			return 2;
		}
	}
	if (outpath && strcmp(outpath, "-") != 0) {
		if ((err = gs_out_create(&outf, outpath, 0666)) != 0) {
			fprintf(stderr, "giopscope merge: %s\n", gs_out_why(why, sizeof why, outpath, err));
			return 2;
		}
		out = outf.f;
	}
	if ((err = gs_merge_new(&m, &mcfg)) != 0) {
		fprintf(stderr, "giopscope merge: cannot set up the tables: %s\n", strerror(err));
		status = 2;
		goto done;
	}
	for (int side = 0; side < 2; side++) {
		st = read_side(argv[optind + side], side, m, &cfg, quiet, &counters[side]);
		if (st == 2) {
			status = 2;
			goto done;
		}
		if (st > status)
			status = st;
	}
	if ((err = gs_merge_run(m, &res)) != 0) {
		fprintf(stderr, "giopscope merge: cannot match the calls: %s\n", strerror(err));
		status = 2;
		goto done;
	}
	if ((err = gs_merge_check_order(m, &res)) != 0) {
		fprintf(stderr, "giopscope merge: cannot try the other order: %s\n", strerror(err));
		status = 2;
		goto done;
	}
	if (res.same_capture)
		fprintf(stderr, "giopscope merge: both files are the same capture (every call at the same instants); "
			"give the client host's and the server host's\n");
	else if (res.looks_swapped)
		fprintf(stderr, "giopscope merge: the first file looks like the server side (%s); swap them?\n",
			res.other_agree > res.offset_agree ? "the other order fits more calls to one clock offset"
							   : "most calls took longer there than in the second file");
	if (pairs) {
		err = gs_merge_write_pairs(out, fmt, m);
		if (summary_too)
			gs_merge_write_summary(stderr, GS_MERGE_TEXT, m, &res, argv[optind], argv[optind + 1]);
		else if (fmt != GS_MERGE_JSONL && !quiet)
			gs_merge_write_offset(stderr, &res);
	} else {
		err = gs_merge_write_summary(out, fmt, m, &res, argv[optind], argv[optind + 1]);
		if (fmt == GS_MERGE_CSV && !quiet)
			gs_merge_write_offset(stderr, &res);
	}
	if (err) {
		fprintf(stderr, "giopscope merge: writing the output failed: %s\n", strerror(err));
		status = 2;
		goto done;
	}
	written = true;
	if (report || trace) {
		snprintf(title, sizeof title, "giopscope merge: %s (client) + %s (server)", argv[optind],
			 argv[optind + 1]);
		if ((st = write_extras(m, &res, report, trace, title, &counters[0])) != 0) {
			status = st;
			goto done;
		}
	}
	if (res.matched == 0 && res.calls[0] && res.calls[1] && status == 0) {
		fprintf(stderr, "giopscope merge: no call of %s matched one of %s: not the same traffic, or the "
			"captures do not overlap in time\n", argv[optind], argv[optind + 1]);
		status = 1;
	}
done:
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "giopscope merge: writing the output failed: %s\n", strerror(errno));
		status = 2;
		written = false;
	}
	/* under its name unless the run failed before it was written (what was there stays) */
	if ((err = gs_out_close(&outf, written || status != 2)) != 0 && status != 2) {
		fprintf(stderr, "giopscope merge: %s\n", gs_out_why(why, sizeof why, outpath, err));
		status = 2;
	}
	gs_merge_free(m);
	return status;
}
