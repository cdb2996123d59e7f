/* SPDX-License-Identifier: BSD-2-Clause */
#include "options.h"

#include <string.h>

#define R GS_CMD_READ
#define L GS_CMD_LIVE
#define A GS_CMD_ATTACH
#define D GS_CMD_DPDK
#define M GS_CMD_MERGE
#define S GS_CMD_SESSION
#define ALL (R | S | M)

/* The order is the order of every command's --help and of its getopt_long table
 * (attach lets getopt_long name the candidates of an ambiguous abbreviation, in
 * that order). */
const struct gs_option gs_options[] = {
	/* the source: what to follow or capture */
	{ "pid", 'p', required_argument, 0, A,
	  { { A, "PID", "follow this process and its threads (repeatable)", 23 } } },
	{ "comm", 'c', required_argument, 0, A,
	  { { A, "NAME", "follow every process of this name in this network namespace\n"
			 "(also those started later)", 23 } } },
	{ "port", 0, required_argument, GS_O_PORT, A,
	  { { A, "LIST", "watch connections on these TCP ports (e.g. 2809,10000-10010); alone:\n"
			 "follow whatever process uses them", 23 } } },
	{ "eal", 0, required_argument, GS_O_EAL, D,
	  { { D, "\"ARGS\"", "more EAL arguments (split at spaces)", 25 } } },
	{ "interface", 'i', required_argument, 0, L | A | D,
	  { { L, "IFACE", "capture there ('any': every interface)", 25 },
	    { A, "IF", "tap this interface (repeatable; default: every interface that is up,\n"
		       "in the network namespace of the processes followed)", 23 },
	    { D, "PORT", "capture on this DPDK port (name or number; repeatable;\n"
			 "default: every port)", 25 } } },
	{ "snaplen", 0, required_argument, GS_O_SNAPLEN, L,
	  { { L, "BYTES", "bytes kept of each packet (default 262144; 0: the default)", 25 } } },
	{ "buffer-size", 0, required_argument, GS_O_BUFFER, L,
	  { { L, "BYTES", "kernel capture ring (default 64M; k, m, g suffixes)", 25 } } },
	{ "tstamp-type", 0, required_argument, GS_O_TSTAMP_TYPE, L,
	  { { L, "NAME", "host, adapter, adapter_unsynced, ... (see --list-tstamp-types)", 25 } } },
	{ "list-tstamp-types", 0, no_argument, GS_O_LIST_TSTAMP, L,
	  { { L, NULL, "print the time stamp types IFACE offers and exit", 25 } } },
	{ "promisc", 0, no_argument, GS_O_PROMISC, L,
	  { { L, NULL, "promiscuous mode (a mirror port); default off", 25 } } },
	{ "batch-ms", 0, required_argument, GS_O_BATCH, L,
	  { { L, "MS", "packets reach giopscope in blocks, at most MS ms late (default 10:\n"
		       "few wake-ups, no drops under load); 0: immediate mode, one by one", 25 } } },
	{ NULL, 'w', required_argument, 0, L,
	  { { L, "FILE", "also save every captured packet (pcapng, nanosecond time stamps)", 25 } } },
	{ "packets-only", 0, no_argument, GS_O_PACKETS_ONLY, A,
	  { { A, NULL, "no send/recv hooks: the packet tap alone (like live)", 23 } } },
	{ "hooks", 0, required_argument, GS_O_HOOKS, A,
	  { { A, "KIND", "where the send/recv instants come from: auto (default: per side the\n"
			 "best the kernel loads: tracepoint, fentry, kprobe, then syscalls),\n"
			 "tracepoint (tcp:tcp_sendmsg_locked, sock:sock_recv_length), fentry\n"
			 "(fentry/fexit), kprobe, syscalls (raw_syscalls:sys_enter/sys_exit: every\n"
			 "syscall of the host pays)", 23 } } },
	{ "syscall-hooks", 0, no_argument, GS_O_SYSCALL_HOOKS, A,
	  { { A, NULL, "the same as --hooks syscalls", 23 } } },
	{ "tc-attach", 0, required_argument, GS_O_TC_ATTACH, A,
	  { { A, "MODE", "how the packet tap goes on the interfaces: auto (default), tcx\n"
			 "(links, kernel 6.6+), clsact (tc filters, removed at exit)", 23 } } },
	{ "check", 0, no_argument, GS_O_CHECK, A,
	  { { A, NULL, "load every program this attach would use one by one, attach\n"
		       "nothing; one line each: loaded or the kernel's reason, verified\n"
		       "instructions (--format jsonl); exit 0 when attach would load, 1 if not", 23 } } },
	{ "check-all", 0, no_argument, GS_O_CHECK_ALL, A,
	  { { A, NULL, "--check, and a line for every send/recv path the kernel could\n"
		       "be asked for (--hooks), used or not", 23 } } },
	{ "sched", 0, no_argument, GS_O_SCHED, A,
	  { { A, NULL, "split each call's server (client) time into on-CPU, run queue and\n"
		       "blocked (sched_switch/sched_wakeup; --pid or --comm, 16 processes)", 23 } } },
	{ "orb", 0, required_argument, GS_O_ORB, A,
	  { { A, "PROFILE", "the ORB's upcall boundary by uprobes: orb_in, servant, orb_out per\n"
			    "call (built-in profile: omniorb; or a profile file's path)", 23 } } },
	{ "idle-reader", 0, no_argument, GS_O_IDLE_READER, A,
	  { { A, NULL, "once attached, read the ring as a SCHED_IDLE process: only CPU time\n"
		       "nothing else wants (the followed processes never wait for it;\n"
		       "records wait in the ring meanwhile, lost when it fills)", 23 } } },
	{ "rx-stamp", 0, no_argument, GS_O_RX_STAMP, A,
	  { { A, NULL, "hold the host's receive timestamps on while attached (a socket with\n"
		       "SO_TIMESTAMPNS; every received packet of the host pays a clock read):\n"
		       "ingress instants at the kernel's receive stamp (without it, only while\n"
		       "something else holds them on, e.g. tcpdump)", 23 } } },
	{ "ring-size", 0, required_argument, GS_O_RING, A,
	  { { A, "BYTES", "the kernel-to-user ring buffer (default 64m; power of two, 8k..1g)", 23 } } },
	{ "map-flows", 0, required_argument, GS_O_MAP_FLOWS, A,
	  { { A, "N", "connection directions the kernel frames at once (default 32768)", 23 } } },
	{ "map-fcache", 0, required_argument, GS_O_MAP_FCACHE, A,
	  { { A, "N", "slots of the direct-mapped framing table before that hash (default\n"
		      "4096; a power of two, or 0: every direction in the hash)", 23 } } },
	{ "relinquish-privileges", 'Z', required_argument, 0, L | A,
	  { { L, "USER", "once the capture is open, become USER (its groups, gid, uid; no\n"
			 "capabilities left); -w, -o, --trace and --report files are then\n"
			 "written as USER", 25 },
	    { A, "USER", "once attached, become USER (its groups, gid, uid); -o, --trace and\n"
			 "--report files are then written as USER", 23 } } },
	{ NULL, 0, 0, 0, 0,
	  { { L, "BPF-FILTER", "narrows the kernel filter 'tcp [and (ports)]' further", 25 } } },
	{ "rxq", 0, required_argument, GS_O_RXQ, D,
	  { { D, "N", "RX queues per port (default 1; net_pcap: one per rx_pcap file)", 25 } } },
	{ "rxd", 0, required_argument, GS_O_RXD, D,
	  { { D, "N", "RX descriptors per queue (default 1024; the driver may round it):\n"
		      "frames a queue holds while the poller is away", 25 } } },
	{ "burst", 0, required_argument, GS_O_BURST, D,
	  { { D, "N", "packets per rte_eth_rx_burst (default 32, at most 512)", 25 } } },
	{ "mbufs", 0, required_argument, GS_O_MBUFS, D,
	  { { D, "N", "mbufs in the pool (default: sized from ports and queues)", 25 } } },
	{ "mbuf-size", 0, required_argument, GS_O_MBUF_SIZE, D,
	  { { D, "BYTES", "data room of an mbuf (default 2176; frames larger than it\n"
			  "arrive in several mbufs and are copied together)", 25 } } },

	/* the output */
	{ "pairs", 0, no_argument, GS_O_PAIRS, ALL,
	  { { R, NULL, "one record per call (docs/output.md) instead of the summary", 0 },
	    { S, NULL, "write each call as it ends (docs/output.md) instead of the summary", 0 },
	    { M, NULL, "one record per client-side call: the pairs columns (docs/output.md) then\n"
		       "network_us,server_side_total_us,clock_offset_us,server_side_server_us,\n"
		       "clock_offset_lo_us,clock_offset_hi_us", 0 } } },
	{ "format", 0, required_argument, GS_O_FORMAT, ALL,
	  { { ALL, "FMT", "text, csv or jsonl (default: text; csv with --pairs)", 0 } } },
	{ "output", 'o', required_argument, 0, ALL,
	  { { ALL, "FILE", "write there instead of stdout", 0 } } },
	{ "summary", 0, no_argument, GS_O_SUMMARY, ALL,
	  { { R, NULL, "with --pairs: also print the summary table to stderr", 0 },
	    { S, NULL, "with --pairs: also print the summary to stderr at the end", 0 },
	    { M, NULL, "with --pairs: also print the summary to stderr", 0 } } },
	{ "ports", 0, required_argument, GS_O_PORTS, ALL,
	  { { R, "LIST", "decode GIOP only on these TCP ports (e.g. 2809,683,10000-10010);\n"
			 "default: any connection whose data starts with GIOP", 0 },
	    { S, "LIST", "only these TCP ports (e.g. 2809,683,10000-10010), GIOP forced", 0 },
	    { M, "LIST", "decode GIOP only on these TCP ports (both captures)", 0 } } },
	{ "host-addrs", 0, required_argument, GS_O_HOST_ADDRS, R | S,
	  { { R, "LIST", "these addresses (comma-separated) are one host: a call made from\n"
			 "one of them while that host served a call to another nests in it\n"
			 "(default: the capture's own packet direction, else one address, one host)", 0 },
	    { S, "LIST", "these addresses are one host, for the parent columns (as read)", 0 } } },
	{ "duration", 0, required_argument, GS_O_DURATION, S,
	  { { S, "SECONDS", "stop after this long", 0 } } },
	{ "count", 0, required_argument, GS_O_COUNT, S,
	  { { S, "N", "stop after N calls", 0 } } },
	{ "reply-timeout", 0, required_argument, GS_O_REPLY_TIMEOUT, S,
	  { { S, "SEC", "a call with no reply after this long is NO_REPLY (default 30)", 0 } } },
	/* the continuous sources name the table bounds (below, with read's texts) together */
	{ NULL, 0, 0, 0, 0,
	  { { S, NULL, "  --max-flows N, --max-open-calls N, --max-message-size B, --max-ooo-bytes B,\n"
		       "  --max-memory SIZE     (as read)", 0 } } },
	{ "tail", 0, required_argument, GS_O_TAIL, R | S,
	  { { R, "N", "also list the N slowest calls with their split and the reasons\n"
		      "the wire shows (server, network, retransmission, queued, nagle,\n"
		      "zero-window, capture-loss)", 0 },
	    { S, "N", "at the end, the N slowest calls with their split and reasons", 0 } } },
	{ "by", 0, required_argument, GS_O_BY, R | S,
	  { { R | S, "KEY", "group the summary by op (default), conn, object, server, priority", 0 } } },
	{ "interval", 0, required_argument, GS_O_INTERVAL, R | S,
	  { { R, "SECONDS", "also give percentiles per time window", 0 },
	    { S, "SECONDS", "percentiles per time window at the end", 0 } } },
	{ "report", 0, required_argument, GS_O_REPORT, ALL,
	  { { R, "FILE.html", "also write a self-contained HTML report (docs/report.md)", 0 },
	    { S, "FILE.html", "at the end, a self-contained HTML report (docs/report.md)", 0 },
	    { M, "FILE.html", "also write the HTML report of the client side's calls, split", 0 } } },
	{ "trace", 0, required_argument, GS_O_TRACE, ALL,
	  { { R, "FILE.json", "also write the calls as a Perfetto/Chrome trace", 0 },
	    { S, "FILE.json", "the calls as a Perfetto/Chrome trace, written as they end", 0 },
	    { M, "FILE.json", "also write the client side's calls as a Perfetto/Chrome trace", 0 } } },

	/* the engine's bounds */
	{ "max-flows", 0, required_argument, GS_O_MAX_FLOWS, R | S,
	  { { R, "N", "connections tracked at once (default 65536; LRU eviction)", 0 } } },
	{ "max-open-calls", 0, required_argument, GS_O_MAX_CALLS, R | S,
	  { { R, "N", "calls waiting for a reply or for output (default 1048576)", 0 } } },
	{ "order-window", 0, required_argument, GS_O_ORDER_WINDOW, R,
	  { { R, "N", "rows are in t_request_first order while at most N ended calls\n"
		      "wait for an earlier one still open (default 131072); past it\n"
		      "they are written, and the late call when it ends", 0 } } },
	{ "max-message-size", 0, required_argument, GS_O_MAX_MSG, R | S,
	  { { R, "B", "larger GIOP size fields are malformed (default 256M)", 0 } } },
	{ "max-ooo-bytes", 0, required_argument, GS_O_MAX_OOO, R | S,
	  { { R, "B", "out-of-order bytes held per direction (default 1M)", 0 } } },
	{ "metrics", 0, required_argument, GS_O_METRICS, S,
	  { { S, "ADDR:PORT", "Prometheus metrics on http://ADDR:PORT/metrics (numeric address)", 0 } } },
	{ "metrics-web-config", 0, required_argument, GS_O_METRICS_WEB_CONFIG, S,
	  { { S, "FILE", "TLS and basic auth for --metrics: exporter-toolkit's web configuration\n"
			 "(tls_server_config, basic_auth_users; docs/metrics.md)", 0 } } },
	{ "max-memory", 0, required_argument, GS_O_MAX_MEMORY, R | S,
	  { { R, "SIZE", "size every table bound from SIZE bytes (k/m/g; 16m at least):\n"
			 "connections, open calls, order window, held out-of-order\n"
			 "bytes, strings; the options above still win; the summary\n"
			 "says which bound was hit", 0 } } },
	{ "threads", 0, required_argument, GS_O_THREADS, R,
	  { { R, "N", "N engine threads, connections shared out among them (default 1;\n"
		      "the same output; docs/output.md)", 0 } } },
	{ "tolerance", 0, required_argument, GS_O_TOLERANCE, M,
	  { { M, "SECONDS", "slack around each call's clock-offset interval when matching\n"
			    "connections (default 0.001)", 0 } } },
	{ "max-calls", 0, required_argument, GS_O_MERGE_CALLS, M,
	  { { M, "N", "calls kept per capture (default 2097152, ~200 bytes each; the rest\n"
		      "are counted)", 0 } } },
	{ "quiet", 'q', no_argument, 0, ALL,
	  { { ALL, NULL, "no progress line", 0 } } },
	{ "help", 'h', no_argument, 0, ALL, { { 0, NULL, NULL, 0 } } },
};
const unsigned gs_options_count = sizeof gs_options / sizeof *gs_options;

void gs_options_getopt(struct gs_getopt *g, unsigned cmd, bool colon)
{
	size_t ns = 0;
	memset(g, 0, sizeof *g);
	if (colon)
		g->shortopts[ns++] = ':';
	for (unsigned i = 0; i < gs_options_count; i++) {
		const struct gs_option *o = &gs_options[i];
		if (!(o->cmds & cmd))
			continue;
		if (o->short_name) {
			g->shortopts[ns++] = (char)o->short_name;
			if (o->has_arg == required_argument)
				g->shortopts[ns++] = ':';
		}
		if (o->name)
			g->longopts[g->n++] = (struct option){ o->name, o->has_arg, NULL,
								o->short_name ? o->short_name : o->code };
	}
	g->shortopts[ns] = '\0';
}

/* One help text: the option's forms and value, padded to the column (or a line of
 * their own when they reach it), then the text, each of its lines at the column. */
static void help_line(FILE *f, const struct gs_option *o, const struct gs_option_help *h)
{
	int col = h->col ? h->col : GS_HELP_COL, len;
	if (!o->name && !o->short_name && !h->arg) {
		fprintf(f, "%s\n", h->text);
		return;
	}
	len = fprintf(f, "  ");
	if (o->short_name)
		len += fprintf(f, "-%c%s", o->short_name, o->name ? ", " : "");
	if (o->name)
		len += fprintf(f, "--%s", o->name);
	if (h->arg)
		len += fprintf(f, "%s%s", o->name || o->short_name ? " " : "", h->arg);
	if (len < col)
		fprintf(f, "%*s", col - len, "");
	else
		fprintf(f, "\n%*s", col, "");
	for (const char *t = h->text; *t; t++) {
		fputc(*t, f);
		if (*t == '\n')
			fprintf(f, "%*s", col, "");
	}
	fputc('\n', f);
}

void gs_options_usage(FILE *f, unsigned cmd, const char *head, const char *tail)
{
	fputs(head, f);
	for (unsigned i = 0; i < gs_options_count; i++)
		for (unsigned k = 0; k < GS_OPTION_HELPS; k++)
			if (gs_options[i].help[k].cmds & cmd && gs_options[i].help[k].text) {
				help_line(f, &gs_options[i], &gs_options[i].help[k]);
				break;
			}
	fputs(tail, f);
}
