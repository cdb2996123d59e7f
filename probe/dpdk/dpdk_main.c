/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope dpdk: the command line and the order of things.
 *
 *   giopscope dpdk [EAL options] -- [options]     DPDK's usual split
 *   giopscope dpdk --vdev net_pcap0,rx_pcap=F [options]   the common EAL options
 *                                                  mixed with ours, no "--"
 *   giopscope dpdk --eal "-l 2,3 --iova-mode va" [options]   any other EAL option
 *
 * EAL first (a bad environment leaves no output file behind), then the
 * ports, the session, the start, the receive loop on a worker lcore, and at
 * the end the summary with the port counters. */
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "../../decoders/link.h"
#include "../commands.h"
#include "../opt_refuse.h"
#include "../opts.h"
#include "dpdk.h"
#include "dpdk_main.h"

static void usage(FILE *f)
{
	gs_options_usage(f, GS_CMD_DPDK, "usage: giopscope dpdk [EAL options] [options]\n"
	      "       giopscope dpdk EAL-OPTIONS... -- [options]\n"
	      "capture from DPDK ports, each call written as it ends. Examples:\n"
	      "  giopscope dpdk -a 0000:3b:00.1 --pairs               a NIC bound to vfio-pci\n"
	      "  giopscope dpdk --vdev net_af_packet0,iface=eth1       a kernel interface (AF_PACKET)\n"
	      "  giopscope dpdk --vdev net_pcap0,rx_pcap=cap.pcap      replay a capture (ends with it)\n"
	      "EAL options taken directly: --vdev DEV, -a/--allow PCI, -b/--block PCI, -l/--lcores LIST,\n"
	      "  -c MASK, -m MB, -n N, -d LIB, --no-huge, --no-pci, --in-memory, --no-shconf,\n"
	      "  --file-prefix P, --socket-mem L, --huge-dir D, --iova-mode M, --main-lcore N,\n"
	      "  --log-level L (DPDK's log then goes to stderr); others with --eal \"...\" or before --.\n"
	      "  Added unless given: --no-huge when no huge pages are free, --in-memory or\n"
	      "  --no-shconf, --no-telemetry, --no-pci with --vdev only, two lcores (main + poller).\n",
	      "time stamps: the NIC's (RTE_ETH_RX_OFFLOAD_TIMESTAMP, mapped to wall-clock time with the\n"
	      "  device clock), a replayed file's own (net_pcap, microseconds), else the TSC when the\n"
	      "  burst arrived, calibrated against CLOCK_REALTIME; the summary says which.\n"
	      "exit: 0 stopped (SIGINT/SIGTERM, --duration, --count, end of a replayed file), 1 a replayed\n"
	      "      file could not be read to its end, 2 usage or environment error (no port, EAL init\n"
	      "      failure, a port that will not start), with a one-line reason\n");
}

/* the codes of the EAL options passed on as they are (options.h's are below) */
enum { O_EAL_FIRST = GS_O_LAST + 64 };

/* Long EAL options we take directly (the rest go through --eal or before --).
 * has_arg as in struct option; the code is O_EAL_FIRST + index. */
static const struct { const char *name; int has_arg; } eal_long[] = {
	{ "vdev", required_argument }, { "allow", required_argument }, { "block", required_argument },
	{ "lcores", required_argument }, { "no-huge", no_argument }, { "no-pci", no_argument },
	{ "in-memory", no_argument }, { "no-shconf", no_argument }, { "file-prefix", required_argument },
	{ "socket-mem", required_argument }, { "huge-dir", required_argument },
	{ "iova-mode", required_argument }, { "log-level", required_argument },
	{ "main-lcore", required_argument }, { "legacy-mem", no_argument },
	{ "single-file-segments", no_argument },
};
#define N_EAL_LONG (sizeof eal_long / sizeof *eal_long)
/* short EAL options with a value */
#define EAL_SHORT "abclmnd"

struct cmdline {
	struct gs_getopt g;     /* ours (options.h), then the EAL's */
	bool reply_timeout_given;
};

static void build_options(struct cmdline *c)
{
	gs_options_getopt(&c->g, GS_CMD_DPDK, true);
	for (size_t i = 0; i < N_EAL_LONG && c->g.n < GS_GETOPT_MAX; i++)
		c->g.longopts[c->g.n++] = (struct option){ eal_long[i].name, eal_long[i].has_arg, NULL,
							   O_EAL_FIRST + (int)i };
	c->g.longopts[c->g.n] = (struct option){ NULL, 0, NULL, 0 };
}

static int too_many(void)
{
	fprintf(stderr, "giopscope dpdk: too many EAL arguments\n");
	return 2;
}

/* Parses our options (and the EAL options we take directly) from argv[0..argc-1]
 * (argv[0] is the command name).  0, 2 on a usage error, -1 after --help. */
static int parse(struct gs_dpdk *d, struct cmdline *c, int argc, char **argv)
{
	int opt, rc;
	uint64_t v;
	char shortopts[sizeof c->g.shortopts + 16];
	snprintf(shortopts, sizeof shortopts, "%s%s", c->g.shortopts, "a:b:c:l:m:n:d:");
	optind = 1;
	opterr = 0; /* our own one-line messages */
	while ((opt = getopt_long(argc, argv, shortopts, c->g.longopts, NULL)) != -1) {
		if (opt >= O_EAL_FIRST && opt < O_EAL_FIRST + (int)N_EAL_LONG) {
			char name[64];
			snprintf(name, sizeof name, "--%s", eal_long[opt - O_EAL_FIRST].name);
			if (!gs_eal_add(&d->eal, name) || (optarg && !gs_eal_add(&d->eal, optarg)))
				return too_many();
			continue;
		}
		if (opt > 0 && opt < 128 && strchr(EAL_SHORT, opt)) {
			char name[3] = { '-', (char)opt, '\0' };
			if (!gs_eal_add(&d->eal, name) || !gs_eal_add(&d->eal, optarg))
				return too_many();
			continue;
		}
		switch (opt) {
		case GS_O_EAL:
			if (!gs_eal_add_words(&d->eal, optarg))
				return too_many();
			break;
		case 'i':
			if (d->opt.nifaces >= GS_DPDK_MAX_PORTS) {
				fprintf(stderr, "giopscope dpdk: at most %d ports\n", GS_DPDK_MAX_PORTS);
				return 2;
			}
			d->opt.ifaces[d->opt.nifaces++] = optarg;
			break;
		case GS_O_RXQ:
			if (!gs_parse_u64(optarg, 1, GS_DPDK_MAX_QUEUES, false, &v)) {
				fprintf(stderr, "giopscope dpdk: --rxq wants 1..%d\n", GS_DPDK_MAX_QUEUES);
				return 2;
			}
			d->opt.rxq = (uint16_t)v;
			break;
		case GS_O_RXD:
			if (!gs_parse_u64(optarg, 64, 32768, false, &v)) {
				fprintf(stderr, "giopscope dpdk: --rxd wants 64..32768\n");
				return 2;
			}
			d->opt.rxd = (uint16_t)v;
			break;
		case GS_O_BURST:
			if (!gs_parse_u64(optarg, 1, GS_DPDK_MAX_BURST, false, &v)) {
				fprintf(stderr, "giopscope dpdk: --burst wants 1..%d\n", GS_DPDK_MAX_BURST);
				return 2;
			}
			d->opt.burst = (uint16_t)v;
			break;
		case GS_O_MBUFS:
			if (!gs_parse_u64(optarg, 1024, 1u << 26, false, &v)) {
				fprintf(stderr, "giopscope dpdk: --mbufs wants 1024..67108864\n");
				return 2;
			}
			d->opt.mbufs = (uint32_t)v;
			break;
		case GS_O_MBUF_SIZE:
			if (!gs_parse_u64(optarg, 1024, 65535, true, &v)) {
				fprintf(stderr, "giopscope dpdk: --mbuf-size wants 1024..65535 bytes\n");
				return 2;
			}
			d->opt.mbuf_size = (uint32_t)v;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return gs_opt_refuse(stderr, "dpdk", opt, argv[optind - 1], NULL);
		case '?':
			return gs_opt_refuse(stderr, "dpdk", opt, argv[optind - 1],
					     "; other EAL options go before -- or in --eal");
		default:
			if (opt == GS_O_REPLY_TIMEOUT)
				c->reply_timeout_given = true;
			rc = gs_session_option(&d->opt.session, "dpdk", opt, optarg);
			if (rc == 2)
				return 2;
			if (rc < 0)
				return gs_opt_refuse(stderr, "dpdk", '?', argv[optind - 1], NULL);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "giopscope dpdk: unexpected argument '%s' (giopscope dpdk --help)\n", argv[optind]);
		return 2;
	}
	return 0;
}

/* Splits "EAL... -- ours..." and parses both. */
static int command_line(struct gs_dpdk *d, struct cmdline *c, int argc, char **argv)
{
	int sep = -1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	if (sep < 0)
		return parse(d, c, argc, argv);
	/* DPDK's split: everything before "--" is the EAL's, as it is */
	for (int i = 1; i < sep; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return -1;
		}
		if (!gs_eal_add(&d->eal, argv[i]))
			return too_many();
	}
	argv[sep] = argv[0];
	return parse(d, c, argc - sep, argv + sep);
}

/* ------------------------------------------------------------------ reports */

static const char *ts_short(enum gs_ts_source ts, bool replay)
{
	switch (ts) {
	case GS_TS_PCAP: return replay ? "capture file (net_pcap, us)" : "kernel via libpcap (net_pcap, us)";
	case GS_TS_NIC: return "NIC clock";
	case GS_TS_TSC: break;
	}
	return "TSC at receive";
}

static void capturing(const struct gs_dpdk *d)
{
	for (unsigned i = 0; i < d->nports; i++) {
		const struct gs_dpdk_port *p = &d->port[i];
		const char *dlt = pcap_datalink_val_to_name(p->dlt[0]);
		fprintf(stderr, "giopscope dpdk: capturing on %s (%s, port %u, %u RX queue%s, link type %s%s), "
			"time stamps: %s\n", p->name, p->driver, p->id, p->nrxq, p->nrxq == 1 ? "" : "s",
			dlt ? dlt : "?", p->nfiles > 1 ? ", ..." : "", gs_dpdk_ts_name(p));
	}
	fprintf(stderr, "giopscope dpdk: polling on lcore %u%s\n", d->worker,
		d->worker == rte_get_main_lcore() ? " (the main lcore: one CPU)" : "");
}

/* The port counters and the loop's rate, as DPDK's dumpcap reports at exit. */
static void report(const struct gs_dpdk *d)
{
	double secs = d->bursts > 1 && d->tsc_hz ? (double)(d->last_tsc - d->first_tsc) / (double)d->tsc_hz : 0;
	for (unsigned i = 0; i < d->nports; i++) {
		const struct gs_dpdk_port *p = &d->port[i];
		fprintf(stderr, "giopscope dpdk: %s: ipackets %llu, imissed %llu, ierrors %llu, rx_nombuf %llu\n",
			p->name, (unsigned long long)p->last.ipackets, (unsigned long long)p->last.imissed,
			(unsigned long long)p->last.ierrors, (unsigned long long)p->last.rx_nombuf);
	}
	fprintf(stderr, "giopscope dpdk: %llu packets in %llu bursts", (unsigned long long)d->packets,
		(unsigned long long)d->bursts);
	if (secs > 0)
		fprintf(stderr, ", %.3f s from the first to the last (%.0f packets/s)", secs, (double)d->packets / secs);
	if (d->multiseg)
		fprintf(stderr, ", %llu in several mbufs", (unsigned long long)d->multiseg);
	if (d->tsc_hz)
		fprintf(stderr, ", longest poll gap %.3f ms", (double)d->max_gap_tsc * 1e3 / (double)d->tsc_hz);
	fprintf(stderr, "; stopped: %s\n", d->end_reason ? d->end_reason : "?");
}

/* "net_pcap0 [time stamps: ...]" for the summary's first line. */
static void source_name(const struct gs_dpdk *d, char *buf, size_t len)
{
	size_t n = 0;
	int src = -1;
	bool mixed = false;
	for (unsigned i = 0; i < d->nports && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", d->port[i].name);
	/* what the packets were actually stamped with */
	for (int t = 0; t < 3; t++)
		if (d->ts_used[t]) {
			if (src >= 0)
				mixed = true;
			else
				src = t;
		}
	if (src < 0)
		src = d->nports ? (int)d->port[0].ts : GS_TS_TSC;
	if (n < len)
		snprintf(buf + n, len - n, " [time stamps: %s%s]",
			 ts_short((enum gs_ts_source)src, d->nports && d->port[0].finite),
			 mixed ? " and others" : "");
}

/* ------------------------------------------------------------------ the command */

static void cleanup(struct gs_dpdk *d)
{
	gs_dpdk_ports_close(d);
	gs_eal_stop(&d->eal);
	free(d->scratch);
	free(d);
}

int gs_dpdk_main(int argc, char **argv)
{
	struct gs_dpdk *d = calloc(1, sizeof *d);
	struct cmdline *c = calloc(1, sizeof *c);
	unsigned worker;
	int rc, status = 0;
	char source[512];
	uint64_t unreadable = 0;

	if (!d || !c || !(d->scratch = malloc(GS_DPDK_SCRATCH))) {
		fprintf(stderr, "giopscope dpdk: out of memory\n");
		if (d)
			free(d->scratch);
		free(d);
		free(c);
		return 2;
	}
	gs_session_opts_default(&d->opt.session);
	d->opt.burst = 32;
	d->opt.rxd = 1024;
	d->ts_offset = -1;
	gs_eal_args_init(&d->eal);
	build_options(c);
	rc = command_line(d, c, argc, argv);
	if (rc != 0) {
		free(c);
		cleanup(d);
		return rc < 0 ? 0 : rc;
	}

	if ((rc = gs_eal_start(&d->eal)) != 0 || (rc = gs_dpdk_ports_find(d)) != 0 ||
	    (rc = gs_dpdk_ports_setup(d)) != 0 || (rc = gs_dpdk_ports_start(d)) != 0) {
		free(c);
		cleanup(d);
		return rc;
	}
	if (d->port[0].finite) {
		/* a replay is decoded as `giopscope read` decodes the file (same
		 * input, same output): calls in t_request_first order, each written
		 * once its last bytes were acknowledged (a late retransmission still
		 * counts), and a reply waited for until its connection ends */
		struct gs_config rd;
		gs_config_default(&rd);
		d->opt.session.cfg.ordered = rd.ordered;
		d->opt.session.cfg.linger_ns = rd.linger_ns;
		if (!c->reply_timeout_given)
			d->opt.session.cfg.reply_timeout_ns = rd.reply_timeout_ns;
	}
	free(c);
	/* the output last: a bad environment leaves no file behind */
	if ((rc = gs_session_open(&d->session, &d->opt.session, "dpdk")) != 0) {
		cleanup(d);
		return rc;
	}

	/* the engine is single-threaded: only the polling lcore touches it until
	 * rte_eal_wait_lcore has returned */
	worker = rte_get_next_lcore(-1, 1, 0);
	d->worker = worker < RTE_MAX_LCORE ? worker : rte_get_main_lcore();
	if (!d->opt.session.quiet)
		capturing(d);
	if (worker < RTE_MAX_LCORE && rte_eal_remote_launch(gs_dpdk_rx_loop, d, worker) == 0) {
		/* rte_eal_wait_lcore spins: a second busy CPU, and this thread
		 * (unpinned) would take turns with the poller.  Sleep instead. */
		struct timespec nap = { 0, 10 * 1000000 };
		while (rte_eal_get_lcore_state(worker) == RUNNING)
			nanosleep(&nap, NULL);
		rte_eal_wait_lcore(worker);
	} else {
		gs_dpdk_rx_loop(d);
	}

	gs_dpdk_ports_stats(d);
	source_name(d, source, sizeof source);
	rc = gs_session_close(&d->session, source, &d->drops);
	if (!d->opt.session.quiet)
		report(d);
	for (unsigned i = 0; i < d->nports; i++)
		if (d->port[i].finite)
			unreadable += d->port[i].last.ierrors;
	if (d->ts_used[GS_TS_TSC] && d->tsc_hz && d->max_gap_tsc > d->tsc_hz / 1000)
		/* a TSC stamp is taken when the burst is polled: a poller that was
		 * descheduled stamps late */
		fprintf(stderr, "giopscope dpdk: the queues went unpolled for up to %.1f ms (the poller's CPU is "
			"shared?): time stamps taken from the TSC are late by up to that much; give lcore %u a "
			"CPU of its own (isolcpus, -l)\n", (double)d->max_gap_tsc * 1e3 / (double)d->tsc_hz, d->worker);
	if (d->eal.log.errors)
		fprintf(stderr, "giopscope dpdk: DPDK logged %llu error%s; the last: %s\n",
			(unsigned long long)d->eal.log.errors, d->eal.log.errors == 1 ? "" : "s",
			d->eal.log.last_err);
	if (rc != 0) {
		status = rc;
	} else if (unreadable) {
		fprintf(stderr, "giopscope dpdk: %llu packet%s of the replayed file could not be read "
			"(truncated or corrupt file?)\n", (unsigned long long)unreadable, unreadable == 1 ? "" : "s");
		status = 1;
	}
	cleanup(d);
	return status;
}
