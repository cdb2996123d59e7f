/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope live: capture on an interface, each call written as it ends. */
#include <getopt.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opt_refuse.h"
#include "opts.h"
#include "privdrop.h"
#include "session.h"
#include "tap_live.h"

/* packets per pcap_dispatch: bounds the time between two looks at the clock */
#define BATCH 512
/* the longest the loop waits for a packet before it ticks anyway */
#define WAIT_MS 100
#define SECOND 1000000000LL

struct live_ctx {
	struct gs_session s;
	struct gs_live tap;
	int64_t last_mono;          /* when the latest packet was handled */
	int64_t last_stats_mono;    /* pcap_stats and the -w flush, about once a second */
	char err[512];              /* why the capture ended early, if it did */
};

static void usage(FILE *f)
{
	gs_options_usage(f, GS_CMD_LIVE, "usage: giopscope live -i IFACE [options] [BPF-FILTER...]\n",
			 "exit: 0 stopped (SIGINT/SIGTERM, --duration, --count), 2 usage or environment error\n"
			 "      (also when the interface goes away; the summary of what was seen is still written)\n");
}

static void on_packet(void *arg, int64_t ts_ns, const uint8_t *data, uint32_t caplen, uint32_t wirelen)
{
	struct live_ctx *x = arg;
	gs_session_frame(&x->s, x->tap.dlt, ts_ns, data, caplen, wirelen);
	/* --count: stop at the packet that ended the N-th call, not a batch later */
	if (x->s.opt.count && x->s.calls >= x->s.opt.count)
		gs_live_break(&x->tap);
}

/* The capture's own clock now: the latest packet's time stamp plus the time
 * since it was handled.  Whatever the time stamp type (an adapter clock need
 * not be the system's), reply timeouts compare times of one clock. */
static int64_t capture_now(const struct live_ctx *x, bool drained)
{
	/* before the first packet the capture's clock is unknown (an adapter's
	 * need not be the system's), and no call can time out yet */
	if (!x->tap.last_ts)
		return 0;
	/* with packets still waiting, "now" is no later than the last one seen:
	 * a reply in the ring must not lose to the timeout */
	return x->tap.last_ts + (drained ? gs_mono_ns() - x->last_mono : 0);
}

/* Hands on what the ring holds, for at most `budget_ns`.  Returns 1 when the
 * ring was emptied, 0 when more is waiting, -1 on a capture error, -2 on
 * --count. */
static int drain(struct live_ctx *x, int64_t budget_ns)
{
	int64_t t0 = gs_mono_ns();
	for (;;) {
		uint64_t before = x->tap.packets;
		int n = gs_live_dispatch(&x->tap, BATCH, on_packet, x, x->err, sizeof x->err);
		if (x->tap.packets != before)
			x->last_mono = gs_mono_ns();
		if (n < 0)
			return n;
		if (n < BATCH)
			return 1;
		if (gs_stop_requested || gs_mono_ns() - t0 >= budget_ns)
			return 0;
	}
}

/* Once a second (and at once after a socket error): is the interface still
 * up, kernel drop counters, the saved file pushed to disk so that a killed
 * session still leaves a readable capture.  0, or 2 with x->err set. */
static int housekeeping(struct live_ctx *x)
{
	int64_t mono = gs_mono_ns();
	if (x->tap.sock_error && gs_live_check_iface(&x->tap, x->err, sizeof x->err) != 0)
		return 2;
	if (mono - x->last_stats_mono < SECOND)
		return 0;
	x->last_stats_mono = mono;
	gs_live_update_drops(&x->tap);
	if (gs_live_check_iface(&x->tap, x->err, sizeof x->err) != 0)
		return 2;
	return gs_live_flush(&x->tap, x->err, sizeof x->err);
}

/* Until a stop request, --duration, --count or a capture error.  Returns 0 or 2. */
static int capture_loop(struct live_ctx *x)
{
	for (;;) {
		int r;
		if (gs_stop_requested)
			break;
		gs_live_wait(&x->tap, WAIT_MS);
		r = drain(x, WAIT_MS * 1000000LL);
		if (r == -1)
			return 2;
		gs_session_tick(&x->s, capture_now(x, r == 1), &x->tap.drops);
		if (r == -2 || gs_session_done(&x->s))
			return 0;
		if (housekeeping(x) != 0)
			return 2;
		if (ferror(x->s.out)) {
			/* e.g. a full disk: capturing on would only lose calls silently;
			 * gs_session_close says why (the error stays on the stream) */
			x->err[0] = '\0';
			return 2;
		}
	}
	/* stopped by a signal: what reached the ring before it still counts
	 * (in blocks: the open block is handed over within batch_ms) */
	if (x->tap.batch_ms)
		poll(NULL, 0, x->tap.batch_ms + 1);
	if (drain(x, SECOND) == -1)
		return 2;
	return 0;
}

static void listening(const struct live_ctx *x, const struct gs_live_opts *o)
{
	const char *dlt = pcap_datalink_val_to_name(x->tap.dlt);
	const char *ts = o->tstamp_type >= 0 ? pcap_tstamp_type_val_to_name(o->tstamp_type) : "default";
	char delivery[48] = "immediate";
	if (o->batch_ms)
		snprintf(delivery, sizeof delivery, "blocks of <= %d ms", o->batch_ms);
	fprintf(stderr, "giopscope live: listening on %s, link type %s, snaplen %d, buffer %d bytes, "
		"delivery %s, %s %s time stamps, filter '%s'\n", x->tap.iface, dlt ? dlt : "?",
		x->tap.snaplen, o->buffer_size, delivery, ts ? ts : "?",
		x->tap.nano ? "nanosecond" : "microsecond", x->tap.filter);
}

/* The command line's trailing words, as one BPF expression (like tcpdump). */
static bool join_filter(int argc, char **argv, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < argc; i++) {
		size_t k = strlen(argv[i]);
		if (n + (n ? 1 : 0) + k + 1 > len)
			return false;
		if (n)
			buf[n++] = ' ';
		memcpy(buf + n, argv[i], k + 1);
		n += k;
	}
	return true;
}

int gs_cmd_live(int argc, char **argv)
{
	static struct gs_getopt g;
	/* static: the session options hold the 8 KiB port map */
	static struct gs_session_opts so;
	static struct live_ctx x;
	static char filter[2048];
	struct gs_live_opts lo = {
		.snaplen = GS_LIVE_SNAPLEN_DEFAULT,
		.buffer_size = GS_LIVE_BUFFER_DEFAULT,
		.batch_ms = GS_LIVE_BATCH_MS_DEFAULT,
		.tstamp_type = -1,
	};
	struct gs_privdrop user = { 0 };
	bool list = false;
	int opt, status, rc;
	uint64_t v;
	char err[512];

	gs_session_opts_default(&so);
	memset(&x, 0, sizeof x);
	gs_options_getopt(&g, GS_CMD_LIVE, true);
	optind = 1;
	opterr = 0; /* our own one-line messages */
	while ((opt = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (opt) {
		case 'i': lo.iface = optarg; break;
		case 'w': lo.save_path = optarg; break;
		case GS_O_PROMISC: lo.promisc = true; break;
		case 'Z':
			/* looked up now: an unknown user is a usage error before anything is opened */
			if (gs_priv_lookup(&user, optarg, err, sizeof err) != 0) {
				fprintf(stderr, "giopscope live: %s\n", err);
				return 2;
			}
			break;
		case GS_O_LIST_TSTAMP: list = true; break;
		case GS_O_SNAPLEN:
			if (!gs_parse_u64(optarg, 0, 262144, true, &v) || (v > 0 && v < 64)) {
				fprintf(stderr, "giopscope live: --snaplen wants 64..262144 bytes (0: the default)\n");
				return 2;
			}
			lo.snaplen = v ? (int)v : GS_LIVE_SNAPLEN_DEFAULT;
			break;
		case GS_O_BUFFER:
			if (!gs_parse_u64(optarg, 65536, 1u << 30, true, &v)) {
				fprintf(stderr, "giopscope live: --buffer-size wants 64k..1g bytes\n");
				return 2;
			}
			lo.buffer_size = (int)v;
			break;
		case GS_O_BATCH:
			if (!gs_parse_u64(optarg, 0, 1000, false, &v)) {
				fprintf(stderr, "giopscope live: --batch-ms wants 0..1000 milliseconds\n");
				return 2;
			}
			lo.batch_ms = (int)v;
			break;
		case GS_O_TSTAMP_TYPE:
			lo.tstamp_type = pcap_tstamp_type_name_to_val(optarg);
			if (lo.tstamp_type < 0) {
				fprintf(stderr, "giopscope live: unknown time stamp type '%s' (host, host_lowprec, "
					"host_hiprec, adapter, adapter_unsynced, ...; --list-tstamp-types)\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		case ':':
		case '?':
			return gs_opt_refuse(stderr, "live", opt, argv[optind - 1], NULL);
		default:
			rc = gs_session_option(&so, "live", opt, optarg);
			if (rc == 2)
				return 2;
			if (rc < 0)
				return gs_opt_refuse(stderr, "live", '?', argv[optind - 1], NULL);
		}
	}
	if (!lo.iface) {
		fprintf(stderr, "giopscope live: no interface given (-i IFACE; 'ip link' lists them)\n");
		return 2;
	}
	if (list) {
		if (gs_live_list_tstamp_types(lo.iface, stdout, err, sizeof err) != 0) {
			fprintf(stderr, "giopscope live: %s\n", err);
			return 2;
		}
		return 0;
	}
	if (!join_filter(argc - optind, argv + optind, filter, sizeof filter)) {
		fprintf(stderr, "giopscope live: the filter expression is longer than %zu bytes\n", sizeof filter - 1);
		return 2;
	}
	lo.filter = filter;
	lo.ports = so.cfg.port_bitmap;
	if (lo.save_path && strcmp(lo.save_path, "-") == 0 && (!so.output || strcmp(so.output, "-") == 0)) {
		fprintf(stderr, "giopscope live: -w - and the calls would both go to stdout (add -o FILE)\n");
		return 2;
	}

	/* the interface first: a typo or a missing permission leaves no output behind */
	if (gs_live_open(&x.tap, &lo, err, sizeof err) != 0) {
		fprintf(stderr, "giopscope live: %s\n", err);
		return 2;
	}
	/* -Z: the packet socket is bound and filtered, nothing more needs root.
	 * The files come after, as USER (tcpdump's order): a root probe cannot be
	 * made to create or truncate a file where only root may write. */
	if (user.set && gs_priv_drop(&user, err, sizeof err) != 0) {
		fprintf(stderr, "giopscope live: %s\n", err);
		gs_live_close(&x.tap, err, sizeof err);
		return 2;
	}
	if (lo.save_path && gs_live_save(&x.tap, lo.save_path, err, sizeof err) != 0) {
		fprintf(stderr, "giopscope live: %s\n", err);
		gs_live_close(&x.tap, err, sizeof err);
		return 2;
	}
	if (gs_session_open(&x.s, &so, "live") != 0) {
		gs_live_close(&x.tap, err, sizeof err); /* the -w file goes again */
		return 2;
	}
	/* set up: the -w file under its name too (the session's files are) */
	if (gs_live_commit(&x.tap, err, sizeof err) != 0) {
		fprintf(stderr, "giopscope live: %s\n", err);
		gs_session_close(&x.s, lo.iface, NULL);
		gs_live_close(&x.tap, err, sizeof err);
		return 2;
	}
	if (!so.quiet)
		listening(&x, &lo);
	x.last_stats_mono = gs_mono_ns();

	status = capture_loop(&x);

	/* whatever ended it, every call seen so far is written, with the summary */
	gs_live_update_drops(&x.tap);
	{
		const struct gs_counters *c = gs_engine_counters(x.s.e);
		if (c->giop_truncated)
			fprintf(stderr, "giopscope live: %llu GIOP message%s cut by the snapshot length (%d bytes): "
				"raise --snaplen\n", (unsigned long long)c->giop_truncated,
				c->giop_truncated > 1 ? "s" : "", x.tap.snaplen);
	}
	rc = gs_session_close(&x.s, lo.iface, &x.tap.drops);
	if (rc != 0 && status == 0) {
		status = rc;
		x.err[0] = '\0'; /* the session said why */
	}
	if (gs_live_close(&x.tap, err, sizeof err) != 0 && status == 0) {
		status = 2;
		snprintf(x.err, sizeof x.err, "%s", err);
	}
	if (status != 0 && x.err[0])
		fprintf(stderr, "giopscope live: %s\n", x.err);
	return status;
}
