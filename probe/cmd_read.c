/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope read: captures offline. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analysis/engine.h"
#include "commands.h"
#include "opt_refuse.h"
#include "opts.h"
#include "read_inputs.h"
#include "read_ports.h"
#include "read_shards.h"
#include "session.h"
#include "tap_pcap.h"

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

/* No call because --ports left every connection out: which ports did carry
 * GIOP (a second reading, paid only here), and the value that takes them. */
static void ports_hint(const struct gs_input *in, int n)
{
	char msg[160], list[64];
	int err = gs_read_giop_ports(in, n, msg, sizeof msg, list, sizeof list);
	if (err == 0)
		fprintf(stderr, "giopscope read: no calls on the ports --ports gave; GIOP requests went to port %s: "
			"--ports %s\n", msg, list);
	else if (err == ENOENT)
		fprintf(stderr, "giopscope read: no calls on the ports --ports gave, and no GIOP request on any "
			"other port either\n");
}

/* The newest packet time the engines have seen (where the next input must start). */
static int64_t read_now(const struct gs_session *s)
{
	return s->shards ? gs_shards_now(s->shards) : gs_engine_last_ts(s->e);
}

/* Set-up, each call and the end through the session, as live, attach and dpdk
 * (session.c), with read's settings (gs_session_opts_offline, o->outbuf, o->threads:
 * one engine, or one a thread fed by read_shards.c).  `in`: the inputs in the
 * order of their first packets (read_inputs.h), repeats marked. */
static int read_files(const struct gs_session_opts *o, int n, const struct gs_input *in)
{
	static struct gs_session s;
	struct gs_read_progress prog = { 0 };
	const char *source = n == 1 ? in[0].path : "captures";
	const struct gs_input *prev = NULL;
	char reason[512];
	int status = 0, snaplen = 0, rc;
	if (gs_session_open(&s, o, "read") != 0)
		return 2;
	/* one engine whose calls only feed the summary: it writes just the summary's
	 * fields of each (--threads: read_shards.c keeps its own summaries) */
	if (!s.shards && gs_session_summary_only(&s))
		gs_engine_summary_records(s.e);
	/* no progress line where the rows themselves appear (the same terminal) */
	prog.enabled = s.tty && !s.rows_tty;
	for (int i = 0; i < n; i++) {
		const char *path = in[i].path;
		enum gs_read_result r;
		if (in[i].same_as >= 0) {
			/* counted once: the second reading would double every call */
			fprintf(stderr, "giopscope read: %s %s %s: read once\n", path,
				in[i].dev == in[in[i].same_as].dev && in[i].ino == in[in[i].same_as].ino ?
				"is the same file as" : "carries the same packets as", in[in[i].same_as].path);
			continue;
		}
		if (prev && in[i].has_first && in[i].first_ts < read_now(&s)) {
			/* not the next part of one capture: read one after the other, the
			 * calls across them would be torn (replies before their requests) */
			fprintf(stderr, "giopscope read: %s starts %.3f s before %s ends, so they are not parts of one "
				"capture: two taps' captures go to 'giopscope merge %s %s'; parts that overlap, to "
				"'mergecap -w one.pcap' first\n", path, (double)(read_now(&s) - in[i].first_ts) / 1e9,
				prev->path, prev->path, path);
			status = 1;
			break;
		}
		r = s.shards ? gs_shards_read_file(s.shards, path, &prog, &snaplen, reason, sizeof reason) :
			       gs_pcap_read_file(path, s.e, &prog, &snaplen, reason, sizeof reason);
		if (r != GS_READ_OK) {
			fprintf(stderr, "giopscope: %s\n", reason);
			status = r == GS_READ_CANNOT_OPEN ? 2 : 1;
			/* nothing read at all: nothing to show on stdout either (the
			 * threads' engine counts only at the end: the reader's count) */
			if (!(s.shards ? gs_shards_packets(s.shards) : gs_engine_counters(s.e)->packets))
				gs_session_discard(&s);
			break;
		}
		if (in[i].has_first || !prev)
			prev = &in[i];
	}
	/* whatever happened, every call decoded so far is written */
	if ((rc = gs_session_finish(&s, source, NULL)) != 0)
		status = rc;
	if (s.shards && gs_shards_bound_hit(s.shards))
		fprintf(stderr, "giopscope read: a bound was reached with --threads %u (a table, each "
			"thread holding 1/%u of it, or the order window): the output may differ from "
			"--threads 1's\n", o->threads, o->threads);
	if (status == 0)
		status = read_problems(s.e, snaplen);
	if (status == 0 && o->cfg.port_bitmap && !gs_engine_counters(s.e)->calls &&
	    gs_engine_counters(s.e)->ignored_segments)
		ports_hint(in, n);
	if ((rc = gs_session_close(&s, source, NULL)) != 0)
		status = rc;
	return status;
}

static void usage(FILE *f)
{
	gs_options_usage(f, GS_CMD_READ,
			 "usage: giopscope read [options] FILE...   (FILE: pcap or pcapng, gzip or zstd or not, '-' for stdin;\n"
			 "                                          several files are read as one capture in time order)\n",
			 "exit: 0 done, 1 bad input (every call decoded before it is written), 2 usage or environment\n");
}

int gs_cmd_read(int argc, char **argv)
{
	static struct gs_getopt g;
	/* static: the port bitmap of --ports lives in it, and it is 8 KiB */
	static struct gs_session_opts o;
	struct gs_config cfg;
	uint64_t threads = 1;
	enum gs_pairs_format pairs_fmt;
	bool pairs_text;
	int opt, n, rc;
	char reason[512];
	struct gs_input *in;
	static char outbuf[1 << 20];

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
		case '?':
			return gs_opt_refuse(stderr, "read", opt, argv[optind - 1], NULL);
		default:
			/* read's other options, handled as by live, attach and dpdk */
			if ((rc = gs_session_option(&o, "read", opt, optarg)) < 0)
				return gs_opt_refuse(stderr, "read", '?', argv[optind - 1], NULL);
			if (rc)
				return rc;
		}
	}
	if (gs_session_config(&o, "read", &cfg) != 0)
		return 2;
	if (optind >= argc) {
		fprintf(stderr, "giopscope read: no capture file given: name one or more, or '-' to read stdin "
			"(giopscope read --help)\n");
		return 2;
	}
	if (gs_session_format(&o, "read", &pairs_fmt, &pairs_text) != 0)
		return 2;
	n = argc - optind;
	if (!(in = calloc((size_t)n, sizeof *in))) {
		fprintf(stderr, "giopscope read: out of memory\n");
		return 2;
	}
	/* every capture first: a typo in a name, or a file that is no capture, must
	 * not cost the user an existing -o file nor print anything on stdout */
	for (int i = 0; i < n; i++) {
		enum gs_read_result r;
		if ((r = gs_input_peek(argv[optind + i], &in[i], reason, sizeof reason)) != GS_READ_OK) {
			fprintf(stderr, "giopscope: %s\n", reason);
			free(in);
			return r == GS_READ_CANNOT_OPEN ? 2 : 1;
		}
		if (n > 1 && in[i].stream) {
			fprintf(stderr, "giopscope read: %s is read alone: several inputs are put in the order of their "
				"first packets, which %s cannot show before it is read; save it to a file\n",
				strcmp(argv[optind + i], "-") == 0 ? "'-' (stdin)" : argv[optind + i],
				strcmp(argv[optind + i], "-") == 0 ? "stdin" : "a pipe");
			free(in);
			return 2;
		}
	}
	gs_inputs_order(in, n);
	o.cfg.ordered = cfg.ordered = read_ordered(&o);
	if (o.set_window && !o.cfg.ordered) {
		/* the summary does not depend on the order: the window would do nothing */
		fprintf(stderr, "giopscope read: --order-window bounds the rows waiting to be written in start "
			"order: it goes with --pairs, --tail, --interval, --report or --trace; drop it here\n");
		free(in);
		return 2;
	}
	o.threads = (unsigned)threads;
	o.outbuf = outbuf;
	o.outbuf_size = sizeof outbuf;
	rc = read_files(&o, n, in);
	free(in);
	return rc;
}
