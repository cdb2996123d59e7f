/* SPDX-License-Identifier: BSD-2-Clause */
/* giopscope attach: eBPF taps on running ORB processes.  A packet tap on the
 * interfaces (GIOP framed in the kernel, only message heads shipped) feeds the
 * same engine as `read` and `live`; syscall probes of the processes followed
 * add when each process handed a message to the kernel or got it. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "attach_bpf.h"
#include "attach_caps.h"
#include "attach_check.h"
#include "attach_feed.h"
#include "attach_tls.h"
#include "attach_orb.h"
#include "attach_sched.h"
#include "attach_target.h"
#include "commands.h"
#include "opt_refuse.h"
#include "opts.h"
#include "attach_rxstamp.h"
#include "privdrop.h"
#include "session.h"

_Static_assert(sizeof(((struct gs_times_ev *)0)->cum) == GS_TLOG_CUM * sizeof(int64_t),
	       "gs_times_ev.cum holds gs_tlog_cum()'s totals");

/* the longest the loop sleeps: records do not wake it (see giop_tap.bpf.c) */
#define WAIT_MS 50
/* a call waits this long for a syscall instant before it is written without */
#define INSTANT_WAIT_NS (200 * 1000000LL)
#define PENDING_CALLS 16384
/* after the last --pid process exited: its last segments may still be leaving */
#define PIDS_GONE_LINGER_NS (250 * 1000000LL)

struct attach_opts {
	uint32_t pids[GS_TARGET_MAX_PIDS];
	uint32_t n_pids;
	const char *comm;
	uint8_t ports[8192];
	bool any_port;
	const char *ifaces[GS_TARGET_MAX_IFACES];
	uint32_t n_ifaces;
	bool packets_only;
	enum gs_hooks_mode hooks;    /* --hooks, --syscall-hooks */
	const char *hooks_opt;       /* which of the two said it (NULL: neither) */
	enum gs_tc_mode tc;          /* --tc-attach */
	bool check;                  /* --check */
	bool check_all;              /* --check-all */
	uint64_t ring_bytes;
	uint64_t map_flows;
	uint64_t map_fcache;
	struct gs_privdrop user;     /* -Z */
	bool sched;                  /* --sched */
	const char *orb;             /* --orb PROFILE */
	bool idle_reader;            /* --idle-reader */
	bool rx_stamp;               /* --rx-stamp */
};

#define SPLIT_OPS 64 /* operations summed for the closing lines (the first ones seen) */

struct attach_ctx {
	struct gs_session s;
	struct gs_feed feed;
	struct gs_attach_bpf *bpf;
	struct gs_tls_feed tlsf;       /* IIOP over TLS: the plaintext for the ciphertext */
	struct gs_tls_probes *tls;
	struct gs_tls_lib libs[GS_TLS_MAX_LIBS];
	uint32_t n_libs;
	struct gs_target_watch *watch; /* --pid processes exiting, interfaces going away */
	struct gs_attach_iface ifaces[GS_TARGET_MAX_IFACES];
	uint32_t n_ifaces;
	uint64_t cnt[GS_CNT__MAX];
	struct gs_drops drops;
	/* --sched, --orb: the processes they follow, their probes, the threads' logs */
	uint32_t tgids[GS_TARGET_MAX_PIDS];
	uint32_t n_tgids;
	struct gs_tlog tlog;
	bool tlog_ok;
	struct gs_sched_probe *sched;
	struct gs_orb_probe *orb;
	struct gs_orb_profile prof;
	uint64_t sched_unsplit, sched_lost_calls, orb_unmatched;
	uint64_t sched_incomplete;   /* call sides written before the rings were read up to them */
	uint64_t sched_uncounted;    /* ... before a record after them carried the switch count */
	uint64_t sched_chained;      /* splits followed through a third thread */
	uint64_t orb_incomplete;     /* Requests written before the upcall ring was read up to them */
	/* per operation, for the closing lines: the sums of the splits */
	struct split_sum {
		uint32_t op;
		char name[32];
		uint64_t n_sched, n_orb;
		int64_t oncpu, runq, blocked, orb_in, servant, orb_out;
	} sums[SPLIT_OPS];
	uint32_t n_sums;
	int home_ns;                   /* our network namespace while in the --pid processes' (-1: not) */
	int rx_fd;                     /* SO_TIMESTAMPNS held while attached (-1: not) */
	int rx_err;                    /* why not (errno), 0 */
};

static void usage(FILE *f)
{
	gs_options_usage(f, GS_CMD_ATTACH,
			 "usage: giopscope attach (--pid PID[,PID...] | --comm NAME | --port N[,N...])... [options]\n",
			 "The pairs CSV gets t_client_send,t_server_recv,t_server_send,t_client_recv,\n"
			 "server_process_us,client_syscall_us after capture_loss (empty where not followed);\n"
			 "--sched adds server_oncpu_us,server_runq_us,server_blocked_us,client_oncpu_us,\n"
			 "client_runq_us,client_blocked_us; --orb then t_upcall_start,t_upcall_end,orb_in_us,\n"
			 "servant_us,orb_out_us.\n"
			 "Needs CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (root); gives them all up once attached.\n"
			 "exit: 0 stopped (SIGINT/SIGTERM/SIGHUP, --duration, --count, every --pid process exited),\n"
			 "      1 a bad --orb profile file; --check: a program attach would use is refused,\n"
			 "      2 usage or environment error (also: a tapped interface went away, docs/attach.md)\n");
}

static int bad(const char *what)
{
	fprintf(stderr, "giopscope attach: %s\n", what);
	return 2;
}

static int bad_list(const char *opt, const char *why)
{
	fprintf(stderr, "giopscope attach: bad %s: %s\n", opt, why);
	return 2;
}

static int parse(int argc, char **argv, struct attach_opts *a, struct gs_session_opts *so)
{
	static struct gs_getopt g;
	char err[512];
	int opt, r;
	/* 64 MiB: seconds of records while the reader waits for a CPU (at
	 * ~25k calls/s on a saturated machine 8 MiB overflowed; docs/attach.md) */
	a->ring_bytes = 64u << 20;
	a->map_flows = 32768;
	a->map_fcache = GS_TAP_FCACHE_SLOTS;
	gs_options_getopt(&g, GS_CMD_ATTACH, true);
	optind = 1;
	opterr = 0; /* our own one-line messages */
	while ((opt = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (!gs_parse_pids(optarg, a->pids, &a->n_pids, GS_TARGET_MAX_PIDS, err, sizeof err))
				return bad_list("--pid", err);
			break;
		case 'c':
			if (strlen(optarg) >= GS_TAP_COMM_LEN)
				return bad("--comm: a process name has at most 15 characters (see /proc/PID/comm)");
			a->comm = optarg;
			break;
		case GS_O_PORT:
			if (!gs_parse_ports(optarg, a->ports, err, sizeof err))
				return bad_list("--port", err);
			a->any_port = true;
			break;
		case 'i':
			if (a->n_ifaces == GS_TARGET_MAX_IFACES)
				return bad("too many -i");
			a->ifaces[a->n_ifaces++] = optarg;
			break;
		case GS_O_PACKETS_ONLY:
			a->packets_only = true;
			break;
		case GS_O_SCHED:
			a->sched = true;
			break;
		case GS_O_ORB:
			a->orb = optarg;
			break;
		case GS_O_SYSCALL_HOOKS:
		case GS_O_HOOKS: {
			enum gs_hooks_mode m = GS_HOOKS_SYSCALLS;
			if (opt == GS_O_HOOKS && gs_hooks_mode_parse(optarg, &m) != 0)
				return bad("--hooks wants auto, tracepoint, fentry, kprobe or syscalls");
			if (a->hooks_opt && m != a->hooks)
				return bad("--hooks and --syscall-hooks disagree: give one");
			a->hooks = m;
			a->hooks_opt = opt == GS_O_HOOKS ? "--hooks" : "--syscall-hooks";
			break;
		}
		case GS_O_TC_ATTACH:
			if (gs_tc_mode_parse(optarg, &a->tc) != 0)
				return bad("--tc-attach wants auto, tcx or clsact");
			break;
		case GS_O_CHECK:
			a->check = true;
			break;
		case GS_O_CHECK_ALL:
			a->check = a->check_all = true;
			break;
		case GS_O_IDLE_READER:
			a->idle_reader = true;
			break;
		case GS_O_RX_STAMP:
			a->rx_stamp = true;
			break;
		case 'Z':
			/* looked up now: an unknown user is a usage error before anything is loaded */
			if (gs_priv_lookup(&a->user, optarg, err, sizeof err) != 0)
				return bad(err);
			break;
		case GS_O_RING:
			/* 8k: the largest record (a segment with 16 heads, 4.2 KiB) fits */
			if (!gs_parse_u64(optarg, 8192, 1u << 30, true, &a->ring_bytes) ||
			    (a->ring_bytes & (a->ring_bytes - 1)))
				return bad("--ring-size wants a power of two from 8k to 1g");
			break;
		case GS_O_MAP_FLOWS:
			if (!gs_parse_u64(optarg, 16, 1u << 24, false, &a->map_flows))
				return bad("--map-flows wants 16..16777216");
			break;
		case GS_O_MAP_FCACHE:
			if (!gs_parse_u64(optarg, 0, GS_TAP_FCACHE_SLOTS, false, &a->map_fcache) ||
			    (a->map_fcache & (a->map_fcache - 1)))
				return bad("--map-fcache wants 0 or a power of two up to 4096");
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
		case '?':
			return gs_opt_refuse(stderr, "attach", opt, argv[optind - 1], NULL);
		default:
			if ((r = gs_session_option(so, "attach", opt, optarg)) < 0)
				return gs_opt_refuse(stderr, "attach", '?', argv[optind - 1], NULL);
			if (r)
				return r;
		}
	}
	if (optind < argc)
		return bad("unexpected arguments (processes are given with --pid, --comm or --port)");
	if (!a->n_pids && !a->comm && !a->any_port)
		return bad("what to attach to? --pid PID, --comm NAME or --port N");
	if (a->n_pids && a->comm)
		return bad("--pid and --comm do not go together");
	if ((a->sched || a->orb) && a->packets_only)
		return bad("--sched and --orb split the syscall instants: not with --packets-only");
	if ((a->sched || a->orb) && !a->n_pids && !a->comm)
		return bad("--sched and --orb follow the processes given by --pid or --comm");
	if (a->packets_only && a->hooks_opt && a->hooks != GS_HOOKS_AUTO) {
		fprintf(stderr, "giopscope attach: --packets-only and %s do not go together\n", a->hooks_opt);
		return 2;
	}
	return 0;
}

/* The --pid processes: each one there, and not a kernel thread (those have no
 * sockets of their own).  Checked before the environment: no privilege needed. */
static int check_pids(const struct attach_opts *a)
{
	for (uint32_t i = 0; i < a->n_pids; i++) {
		if (!gs_target_pid_exists(a->pids[i])) {
			fprintf(stderr, "giopscope attach: no process %u\n", a->pids[i]);
			return 2;
		}
		switch (gs_target_kernel_thread(a->pids[i])) {
		case 1:
			fprintf(stderr, "giopscope attach: pid %u is a kernel thread: it has no sockets to follow\n",
				a->pids[i]);
			return 2;
		case 2:
			fprintf(stderr, "giopscope attach: pid %u has no executable (a kernel thread, or it exited): "
				"nothing to follow\n", a->pids[i]);
			return 2;
		}
	}
	return 0;
}

/* Processes, ports, namespace, interfaces.  0 or 2. */
static int resolve(struct attach_ctx *x, struct attach_opts *a, struct gs_attach_bpf_cfg *cfg)
{
	uint32_t procs[GS_TARGET_MAX_PIDS], n_procs = 0;
	char err[512];
	struct stat st;
	int n;

	memset(cfg, 0, sizeof *cfg);
	for (uint32_t i = 0; i < a->n_pids; i++)
		procs[n_procs++] = a->pids[i];
	if (a->comm) {
		gs_target_pids_by_comm(a->comm, procs, &n_procs, GS_TARGET_MAX_PIDS);
		if (!n_procs)
			fprintf(stderr, "giopscope attach: no process named %s yet: following those that start\n",
				a->comm);
	}
	/* connections to what they listen on are theirs from the first byte
	 * (a connection they open is watched from their first send or recv) */
	for (uint32_t i = 0; i < n_procs; i++)
		if (gs_target_listen_ports(procs[i], a->ports) > 0)
			a->any_port = true;
	memcpy(x->tgids, procs, n_procs * sizeof *procs);
	x->n_tgids = n_procs;
	/* a process without a TCP socket yet may open some later: said, then followed */
	for (uint32_t i = 0; i < a->n_pids; i++)
		if (gs_target_tcp_sockets(a->pids[i]) == 0)
			fprintf(stderr, "giopscope attach: pid %u has no TCP socket yet: its calls show once it "
				"opens one\n", a->pids[i]);
	/* --pid: their namespace (processes named by --comm are ours already) */
	if (a->n_pids && gs_target_enter_netns(procs, n_procs, &x->home_ns, err, sizeof err))
		return bad(err);
	n = gs_target_ifaces(a->n_ifaces ? a->ifaces : NULL, a->n_ifaces, x->ifaces, GS_TARGET_MAX_IFACES,
			     err, sizeof err);
	if (n < 0 && x->home_ns >= 0) {
		fprintf(stderr, "giopscope attach: %s, in the network namespace of pid %u (-i names that namespace's "
			"interfaces)\n", err, procs[0]);
		return 2;
	}
	if (n < 0)
		return bad(err);
	if (n == 0)
		return bad("no interface to tap");
	x->n_ifaces = (uint32_t)n;
	cfg->filter = a->n_pids ? GS_FILTER_PIDS : a->comm ? GS_FILTER_COMM : GS_FILTER_PORTS;
	cfg->pids = a->pids;
	cfg->n_pids = a->n_pids;
	if (a->comm)
		snprintf(cfg->comm, sizeof cfg->comm, "%s", a->comm);
	cfg->ports = a->any_port ? a->ports : NULL;
	cfg->ifaces = x->ifaces;
	cfg->n_ifaces = x->n_ifaces;
	cfg->syscalls = !a->packets_only;
	cfg->hooks = a->hooks;
	cfg->tc = a->tc;
	cfg->ring_bytes = (uint32_t)a->ring_bytes;
	cfg->max_flows = (uint32_t)a->map_flows;
	cfg->fcache_slots = (uint32_t)a->map_fcache;
	/* --port, --comm: the syscalls on this namespace's sockets, the ones the
	 * packet tap sees (--pid: whatever namespace those processes use) */
	if (!a->n_pids && stat("/proc/self/ns/net", &st) == 0)
		cfg->netns_ino = (uint32_t)st.st_ino;
	return 0;
}

static void describe(const struct attach_ctx *x, const struct attach_opts *a, const struct gs_attach_bpf_cfg *cfg)
{
	char ports[256] = "";
	size_t n = 0;
	int shown = 0;
	for (uint32_t p = 0; p < 65536 && cfg->ports && shown < 12; p++)
		if (cfg->ports[p >> 3] & (1u << (p & 7))) {
			n += (size_t)snprintf(ports + n, sizeof ports - n, "%s%u", shown ? "," : "", p);
			shown++;
			if (n >= sizeof ports)
				break;
		}
	fprintf(stderr, "giopscope attach: ");
	if (a->n_pids) {
		fprintf(stderr, "following pid");
		for (uint32_t i = 0; i < a->n_pids && i < 8; i++)
			fprintf(stderr, "%s%u", i ? "," : " ", a->pids[i]);
		if (a->n_pids > 8)
			fprintf(stderr, ",...");
	} else if (a->comm) {
		fprintf(stderr, "following processes named %s", a->comm);
	} else {
		fprintf(stderr, "following processes on the ports");
	}
	if (a->packets_only)
		fprintf(stderr, " (packets only)");
	fprintf(stderr, "; ports %s; tapping", shown ? ports : "(from their sockets)");
	for (uint32_t i = 0; i < x->n_ifaces; i++)
		fprintf(stderr, "%s%s", i ? "," : " ", x->ifaces[i].name);
	for (uint32_t i = 0; i < x->n_libs; i++)
		fprintf(stderr, "%s%u %s", i ? ", " : "; TLS (uprobes on libssl): pid ", x->libs[i].pid,
			x->libs[i].file);
	if (!a->packets_only) {
		char paths[160];
		gs_attach_bpf_paths(x->bpf, paths, sizeof paths);
		fprintf(stderr, "; send/recv instants: %s", paths);
	}
	fprintf(stderr, "; tc attach: %s\n", gs_attach_bpf_tc(x->bpf));
}

/* ---- --check ------------------------------------------------------------ */

/* Every program this attach would load, each alone, attached nowhere: a row
 * each on stdout.  0 when attach would load them all, 1 if not, 2 usage. */
static int run_check(struct attach_ctx *x, const struct attach_opts *a, const struct gs_attach_bpf_cfg *cfg,
		     const struct gs_session_opts *so)
{
	struct gs_check_out o = { stdout, false, a->check_all, 0 };
	char err[512];
	int refused;
	if (so->format && strcmp(so->format, "text") != 0 && strcmp(so->format, "jsonl") != 0)
		return bad("--check writes --format text or jsonl");
	o.jsonl = so->format && strcmp(so->format, "jsonl") == 0;
	if (so->output && strcmp(so->output, "-") != 0 && !(o.f = fopen(so->output, "w"))) {
		fprintf(stderr, "giopscope attach: cannot write %s: %s\n", so->output, strerror(errno));
		return 2;
	}
	refused = gs_attach_bpf_check(cfg, gs_check_row, &o);
	if (a->sched)
		refused += gs_sched_probe_check(x->tgids, x->n_tgids, gs_check_row, &o);
	if (a->orb) {
		if (!a->n_pids && gs_orb_profile_load(&x->prof, a->orb, err, sizeof err) != 0) {
			fprintf(stderr, "giopscope attach: %s\n", err);
			return strchr(a->orb, '/') ? 1 : 2;
		}
		refused += gs_orb_probe_check(x->tgids, x->n_tgids, gs_check_row, &o);
	}
	if (a->n_pids && !a->packets_only) {
		int t = gs_tls_probes_check(a->pids, a->n_pids, gs_check_row, &o);
		refused += t > 0 ? t : 0;
	}
	if (o.f != stdout ? fclose(o.f) != 0 : fflush(stdout) != 0) {
		fprintf(stderr, "giopscope attach: writing the rows failed\n");
		return 2;
	}
	return refused ? 1 : 0;
}

/* ---- --sched, --orb ------------------------------------------------------ */

/* Drains the sched and upcall rings into the threads' logs and tells the
 * logs how far they are complete (the earlier of the two rings' marks). */
static void drain_split(struct attach_ctx *x)
{
	uint64_t stalls;
	int64_t done = INT64_MAX;
	if (!x->tlog_ok)
		return;
	gs_sched_probe_drain(x->sched);
	gs_orb_probe_drain(x->orb);
	if (x->sched)
		done = gs_sched_probe_complete(x->sched, &stalls);
	if (x->orb) {
		int64_t o = gs_orb_probe_complete(x->orb, &stalls);
		if (o < done)
			done = o;
	}
	if (done != INT64_MAX)
		gs_tlog_set_complete(&x->tlog, done);
}

/* A syscall instant as it comes: the scheduler states of its thread up to it
 * while its log still holds them.  The thread is on CPU in the syscall, so
 * every change of its state before was written to the sched ring already;
 * but a record of another CPU reserved before and not yet written holds the
 * reader up, and those behind it: the totals are taken only when the ring
 * was read to its end (gs_tlog_known), else when the call is enriched. */
static void on_instant(void *arg, struct gs_times_ev *ev)
{
	struct attach_ctx *x = arg;
	/* the threads' logs follow the syscall records (what happened after
	 * them waits): a log ahead of them would push out what a split needs */
	drain_split(x);
	gs_tlog_advance(&x->tlog, ev->mono);
	if (x->sched && ev->tid)
		ev->has_cum = gs_tlog_cum(&x->tlog, ev->tid, ev->mono, ev->cum);
}

/* the syscall instants of a call: t4, t5, t1, t8 (NULL: not known) */
static void call_evs(const struct gs_feed *f, const struct gs_call *c, const struct gs_call_times *t,
		     const struct gs_times_ev *ev[4])
{
	const struct gs_times_dir *req = gs_times_dir(&f->times, &c->client, &c->server);
	const struct gs_times_dir *rep = gs_times_dir(&f->times, &c->server, &c->client);
	ev[0] = req && t->server_recv ? gs_times_ev_at(req, false, t->server_recv) : NULL;
	ev[1] = rep && t->server_send ? gs_times_ev_at(rep, true, t->server_send) : NULL;
	ev[2] = req && t->client_send ? gs_times_ev_at(req, true, t->client_send) : NULL;
	ev[3] = rep && t->client_recv ? gs_times_ev_at(rep, false, t->client_recv) : NULL;
}

/* A call whose instants are there: ready once the logs are complete up to
 * the last of them (the records before it may still be held up in a ring) */
static bool ready(void *arg, const struct gs_feed *f, const struct gs_call *c, const struct gs_call_times *t)
{
	struct attach_ctx *x = arg;
	const struct gs_times_ev *ev[4];
	int64_t need = 0;
	call_evs(f, c, t, ev);
	for (int i = 0; i < 4; i++)
		if (ev[i] && ev[i]->mono > need)
			need = ev[i]->mono;
	if (!gs_tlog_known(&x->tlog, need))
		drain_split(x);
	if (!gs_tlog_known(&x->tlog, need))
		return false;
	/* --sched: a record of each side's last thread after its instant has
	 * carried the kernel's count of its switches-in (one without a record
	 * up to the instant would be known by then) */
	if (x->sched)
		for (int i = 1; i < 4; i += 2)
			if (ev[i] && ev[i]->tid && !gs_tlog_counted(&x->tlog, ev[i]->tid, ev[i]->mono))
				return false;
	return true;
}

/* one side's split: `a` the syscall that started the interval, `b` the one
 * that ended it */
static bool sched_side(struct attach_ctx *x, const struct gs_times_ev *a, const struct gs_times_ev *b,
		       int64_t *oncpu, int64_t *runq, int64_t *blocked)
{
	struct gs_tlog_split sp;
	if (!a || !b || !a->tid || !b->tid)
		return false;
	if (gs_tlog_lost_in(&x->tlog, a->mono, b->mono)) {
		x->sched_lost_calls++;
		return false;
	}
	if (!gs_tlog_known(&x->tlog, b->mono)) {
		x->sched_incomplete++;
		return false;
	}
	if (!gs_tlog_counted(&x->tlog, b->tid, b->mono)) {
		x->sched_uncounted++;
		return false;
	}
	if (!gs_tlog_split(&x->tlog, a->tid, a->mono, a->has_cum ? a->cum : NULL, b->tid, b->mono,
			   b->has_cum ? b->cum : NULL, &sp)) {
		x->sched_unsplit++;
		return false;
	}
	*oncpu = sp.oncpu;
	*runq = sp.runq;
	*blocked = sp.blocked;
	if (sp.hops > 1)
		x->sched_chained++;
	return true;
}

/* The wait of the request in the receive queue (t3..t4): how much of it the
 * thread that read it was runnable, waiting for a CPU (the rest it ran, or
 * was blocked, elsewhere: the ORB's threads were not free) */
static bool recvq_side(struct attach_ctx *x, const struct gs_call *c, const struct gs_call_times *t,
		       const struct gs_times_ev *s4, int64_t *runq)
{
	int64_t q, st[3], from;
	if (!s4 || !s4->tid || !gs_times_recvq(c, t, &q) || q <= 0)
		return false;
	/* t3 in the records' clock, by the offset t4 was converted with */
	from = s4->mono - q;
	if (gs_tlog_lost_in(&x->tlog, from, s4->mono) || !gs_tlog_states_in(&x->tlog, s4->tid, from, s4->mono, st))
		return false;
	*runq = st[1];
	return true;
}

static void add_sums(struct attach_ctx *x, const struct gs_call *c, const struct gs_call_times *t)
{
	struct split_sum *m = NULL;
	bool up = t->upcall_start && t->upcall_end && t->server_recv && t->server_send;
	if (c->kind != GS_KIND_REQUEST || (!t->server_sched && !up))
		return;
	for (uint32_t i = 0; i < x->n_sums; i++)
		if (x->sums[i].op == c->op)
			m = &x->sums[i];
	if (!m) {
		if (x->n_sums == SPLIT_OPS)
			return;
		size_t n;
		const char *name = gs_intern_get(gs_engine_strings(x->s.e), c->op, &n);
		m = &x->sums[x->n_sums++];
		memset(m, 0, sizeof *m);
		m->op = c->op;
		/* kept as text: the engine is gone when the lines are written */
		for (size_t k = 0; k < n && k < sizeof m->name - 1; k++)
			m->name[k] = name[k] >= 0x20 && name[k] < 0x7f ? name[k] : '?';
	}
	if (t->server_sched) {
		m->n_sched++;
		m->oncpu += t->server_oncpu;
		m->runq += t->server_runq;
		m->blocked += t->server_blocked;
	}
	if (up) {
		m->n_orb++;
		m->orb_in += t->upcall_start - t->server_recv;
		m->servant += t->upcall_end - t->upcall_start;
		m->orb_out += t->server_send - t->upcall_end;
	}
}

/* Per operation, the mean split of its Requests (stderr, at the end). */
static void write_sums(const struct attach_ctx *x)
{
	if (!x->n_sums)
		return;
	fprintf(stderr, "giopscope attach: where the server's time went (mean per Request, us):\n");
	for (uint32_t i = 0; i < x->n_sums; i++) {
		const struct split_sum *m = &x->sums[i];
		fprintf(stderr, "  %-24s", m->name);
		if (m->n_sched)
			fprintf(stderr, " on-cpu %10.1f  run-queue %10.1f  blocked %10.1f (%llu calls)",
				(double)m->oncpu / 1e3 / (double)m->n_sched, (double)m->runq / 1e3 / (double)m->n_sched,
				(double)m->blocked / 1e3 / (double)m->n_sched, (unsigned long long)m->n_sched);
		if (m->n_orb)
			fprintf(stderr, "%s orb-in %10.1f  servant %10.1f  orb-out %10.1f (%llu calls)",
				m->n_sched ? ";" : "", (double)m->orb_in / 1e3 / (double)m->n_orb,
				(double)m->servant / 1e3 / (double)m->n_orb, (double)m->orb_out / 1e3 / (double)m->n_orb,
				(unsigned long long)m->n_orb);
		fputc('\n', stderr);
	}
}

/* Each call, before it is written: its threads' split, its upcall. */
static void enrich(void *arg, const struct gs_feed *f, const struct gs_call *c, struct gs_call_times *t)
{
	struct attach_ctx *x = arg;
	const struct gs_times_ev *ev[4], *s4, *s5, *c1, *c8;
	drain_split(x);
	call_evs(f, c, t, ev);
	s4 = ev[0];
	s5 = ev[1];
	c1 = ev[2];
	c8 = ev[3];
	t->server_recv_tid = s4 ? s4->tid : 0;
	t->server_send_tid = s5 ? s5->tid : 0;
	t->client_send_tid = c1 ? c1->tid : 0;
	t->client_recv_tid = c8 ? c8->tid : 0;
	if (s5)
		gs_tlog_advance(&x->tlog, s5->mono);
	if (c8)
		gs_tlog_advance(&x->tlog, c8->mono);
	if (x->sched) {
		t->server_sched = sched_side(x, s4, s5, &t->server_oncpu, &t->server_runq, &t->server_blocked);
		t->client_sched = sched_side(x, c1, c8, &t->client_oncpu, &t->client_runq, &t->client_blocked);
		t->recvq_sched = recvq_side(x, c, t, s4, &t->recvq_runq);
	}
	if (x->orb && s4 && s5 && s5->tid) {
		int64_t us, ue;
		if (!gs_tlog_known(&x->tlog, s5->mono)) {
			x->orb_incomplete++;
		} else if (gs_tlog_upcall_span(&x->tlog, s5->tid, s4->mono, s5->mono, &us, &ue)) {
			/* each edge in the wall clock of the instant it is measured from */
			t->upcall_start = us + (t->server_recv - s4->mono);
			t->upcall_end = ue + (t->server_send - s5->mono);
		} else if (c->kind == GS_KIND_REQUEST) {
			x->orb_unmatched++; /* a LocateRequest has no upcall */
		}
	}
	add_sums(x, c, t);
}

/* Loads the profile, attaches the probes.  0, or the exit status. */
static int open_split(struct attach_ctx *x, const struct attach_opts *a, struct gs_session_opts *so)
{
	char err[512];
	int r;
	if (!a->sched && !a->orb)
		return 0;
	if (a->orb && (r = gs_orb_profile_load(&x->prof, a->orb, err, sizeof err)) != 0) {
		fprintf(stderr, "giopscope attach: %s\n", err);
		return strchr(a->orb, '/') ? 1 : 2;
	}
	if (!x->n_tgids)
		return bad("--sched and --orb follow processes running when attach starts: none found");
	if (gs_tlog_init(&x->tlog, 4096)) {
		fprintf(stderr, "giopscope attach: out of memory\n");
		return 2;
	}
	x->tlog_ok = true;
	/* nothing read yet: no instant is known until the rings are read */
	gs_tlog_set_complete(&x->tlog, 0);
	if (a->orb && gs_orb_probe_open(&x->orb, &x->prof, x->tgids, x->n_tgids, &x->tlog, err, sizeof err)) {
		fprintf(stderr, "giopscope attach: %s\n", err);
		return 2;
	}
	if (a->sched && gs_sched_probe_open(&x->sched, x->tgids, x->n_tgids, &x->tlog, err, sizeof err)) {
		fprintf(stderr, "giopscope attach: %s\n", err);
		return 2;
	}
	so->times_cols = (uint8_t)((a->sched ? GS_TIMES_COLS_SCHED : 0) | (a->orb ? GS_TIMES_COLS_ORB : 0));
	return 0;
}

static void close_split(struct attach_ctx *x)
{
	gs_orb_probe_close(x->orb);
	gs_sched_probe_close(x->sched);
	x->orb = NULL;
	x->sched = NULL;
	if (x->tlog_ok)
		gs_tlog_free(&x->tlog);
	x->tlog_ok = false;
}

static void update_drops(struct attach_ctx *x)
{
	gs_attach_bpf_counters(x->bpf, x->cnt);
	/* records written are counted where they are read (the kernel side no
	 * longer updates a counter per record); every record written is read */
	x->cnt[GS_CNT_SEGMENTS] = x->feed.segments;
	x->cnt[GS_CNT_SYSCALLS] = x->feed.syscalls;
	x->drops.kernel = x->cnt[GS_CNT_RB_LOST];
	x->drops.iface = 0;
	x->drops.other = x->cnt[GS_CNT_FLOW_MAP_FULL] + x->cnt[GS_CNT_HEADS_LOST];
	x->drops.other_name = "map full or heads not shipped";
}

static int loop(struct attach_ctx *x)
{
	int64_t stop_at = 0;
	int rc = 0;
	for (;;) {
		if (gs_stop_requested)
			break;
		int got = gs_attach_bpf_poll(x->bpf, WAIT_MS);
		if (got < 0 && got != -EINTR) {
			fprintf(stderr, "giopscope attach: reading the ring buffer failed: %s\n", strerror(-got));
			return 2;
		}
		gs_feed_polled(&x->feed);
		if (x->tls)
			gs_tls_feed_flush(&x->tlsf);
		if (x->tlog_ok) {
			/* no syscall record older than a second is still to come */
			drain_split(x);
			gs_tlog_advance(&x->tlog, gs_mono_ns() - 1000000000LL);
		}
		gs_feed_clock(&x->feed);
		gs_feed_settle(&x->feed, false);
		update_drops(x);
		gs_session_tick(&x->s, gs_realtime_ns(), &x->drops);
		if (gs_session_done(&x->s))
			break;
		/* every --pid process gone (as strace -p): a little longer for the
		 * last segments they sent; a tapped interface gone (as live): exit 2 */
		switch (gs_target_watch_check(x->watch, "attach")) {
		case GS_WATCH_PIDS_GONE:
			if (!stop_at)
				stop_at = gs_mono_ns() + PIDS_GONE_LINGER_NS;
			break;
		case GS_WATCH_IFACE_GONE:
			rc = 2;
			break;
		case GS_WATCH_RUNNING:
			break;
		}
		if (rc || (stop_at && gs_mono_ns() >= stop_at))
			break;
		if (ferror(x->s.out)) {
			fprintf(stderr, "giopscope attach: writing the output failed\n");
			return 2;
		}
	}
	/* what reached the ring before the stop still counts */
	gs_attach_bpf_poll(x->bpf, 0);
	if (x->tls) {
		/* every write still waiting for its segment goes */
		gs_tls_feed_flush(&x->tlsf);
		gs_tls_feed_flush(&x->tlsf);
	}
	return rc;
}

static void report(const struct attach_ctx *x)
{
	const uint64_t *c = x->cnt;
	fprintf(stderr, "giopscope attach: kernel: %llu segments, %llu syscalls, %llu records lost (ring full), "
		"%llu connection directions framed (%llu joined running), %llu framing resyncs, %llu message "
		"heads not shipped, %llu flow map full (framing state: %llu in the flow map, its fcache slot "
		"held; %llu fcache slots taken from an idle direction)\n",
		(unsigned long long)c[GS_CNT_SEGMENTS], (unsigned long long)c[GS_CNT_SYSCALLS],
		(unsigned long long)c[GS_CNT_RB_LOST], (unsigned long long)c[GS_CNT_FLOWS_NEW],
		(unsigned long long)c[GS_CNT_FLOWS_MIDSTREAM], (unsigned long long)c[GS_CNT_RESYNC],
		(unsigned long long)c[GS_CNT_HEADS_LOST], (unsigned long long)c[GS_CNT_FLOW_MAP_FULL],
		(unsigned long long)c[GS_CNT_FCACHE_HASHED], (unsigned long long)c[GS_CNT_FCACHE_EVICTED]);
	fprintf(stderr, "giopscope attach: framing: %llu records for segments starting more than %d messages "
		"(their later records), %llu segments starting more than %d (the rest unframed: a resync), %llu "
		"segments not waiting longer for the CPU framing the one before (a resync), %llu of the "
		"resyncs confirmed (a segment came before the one ahead of it; that one, framed from the "
		"header expected, ended where framing had resynced)\n",
		(unsigned long long)x->feed.seg_more, GS_TAP_HEADS, (unsigned long long)c[GS_CNT_FRAME_BOUND],
		GS_TAP_FRAME_HEADS_MAX, (unsigned long long)c[GS_CNT_FRAME_WAIT_LONG],
		(unsigned long long)c[GS_CNT_HOLE_CONFIRMED]);
	fprintf(stderr, "giopscope attach: ingress instants: %llu segments at the kernel's receive stamp, %llu at "
		"the tap's own (%llu without a stamp, %llu with one past 100 ms or ahead); receive timestamps %s\n",
		(unsigned long long)c[GS_CNT_RX_STAMPED],
		(unsigned long long)(c[GS_CNT_RX_UNSTAMPED] + c[GS_CNT_RX_FAR]),
		(unsigned long long)c[GS_CNT_RX_UNSTAMPED], (unsigned long long)c[GS_CNT_RX_FAR],
		x->rx_fd >= 0 ? "held on by attach (--rx-stamp)" : x->rx_err ? "not held on (--rx-stamp failed)" :
		"not held on by attach (--rx-stamp)");
	gs_aparent_report(&x->feed.nest, stderr);
	if (x->feed.instants_missing || x->feed.queue_full || x->feed.bad_records || x->feed.times.replaced)
		fprintf(stderr, "giopscope attach: %llu calls written without a syscall instant they waited "
			"for, %llu written early (queue full), %llu bad records, %llu connection directions "
			"forgotten (table full)\n",
			(unsigned long long)x->feed.instants_missing, (unsigned long long)x->feed.queue_full,
			(unsigned long long)x->feed.bad_records, (unsigned long long)x->feed.times.replaced);
	if (x->tls)
		fprintf(stderr, "giopscope attach: TLS: %llu connections (%llu closed), %llu writes, %llu reads of plaintext, "
			"%llu timed by their ciphertext's segment, %llu by the TCP call (segment not seen), "
			"%llu ciphertext records set aside, %llu message heads past what was shipped, "
			"%llu connections not followed (table full), %llu bad records\n",
			(unsigned long long)x->tlsf.conns_seen, (unsigned long long)x->tlsf.conns_closed,
			(unsigned long long)x->tlsf.sends,
			(unsigned long long)x->tlsf.recvs, (unsigned long long)x->tlsf.wire_timed,
			(unsigned long long)x->tlsf.tcp_timed, (unsigned long long)x->tlsf.tap_dropped,
			(unsigned long long)x->tlsf.heads_unframed, (unsigned long long)x->tlsf.table_full,
			(unsigned long long)x->tlsf.bad_records);
	if (x->sched) {
		uint64_t rec, lost, stalls;
		int64_t last;
		gs_sched_probe_counts(x->sched, &rec, &lost, &last);
		gs_sched_probe_complete(x->sched, &stalls);
		fprintf(stderr, "giopscope attach: sched: %llu scheduler records (%llu written), %llu lost (ring full), "
			"%llu switches-in the kernel counted without a record; %llu call "
			"sides not split (%llu touched by a loss or a missed switch, %llu beyond the threads' logs or not linked by "
			"wake-ups, %llu written before the ring was read up to them, %llu before a later record "
			"of the thread carried its switch count), %llu followed through a "
			"third thread, %llu threads forgotten (table full), %llu reads held up by a record not "
			"yet written, %llu state changes older than their thread's last\n",
			(unsigned long long)rec, (unsigned long long)gs_sched_probe_written(x->sched),
			(unsigned long long)lost, (unsigned long long)x->tlog.missed,
			(unsigned long long)(x->sched_lost_calls + x->sched_unsplit + x->sched_incomplete +
					     x->sched_uncounted),
			(unsigned long long)x->sched_lost_calls, (unsigned long long)x->sched_unsplit,
			(unsigned long long)x->sched_incomplete, (unsigned long long)x->sched_uncounted,
			(unsigned long long)x->sched_chained,
			(unsigned long long)x->tlog.replaced, (unsigned long long)stalls,
			(unsigned long long)x->tlog.late);
	}
	if (x->orb) {
		uint64_t rec, lost;
		int64_t last;
		gs_orb_probe_counts(x->orb, &rec, &lost, &last);
		fprintf(stderr, "giopscope attach: orb %s: %llu upcall edges, %llu lost (ring full); %llu answered "
			"Requests without their upcall (%llu written before the ring was read up to them)\n",
			x->prof.name, (unsigned long long)rec, (unsigned long long)lost,
			(unsigned long long)(x->orb_unmatched + x->orb_incomplete),
			(unsigned long long)x->orb_incomplete);
	}
}

int gs_cmd_attach(int argc, char **argv)
{
	struct attach_opts *a = calloc(1, sizeof *a);
	struct attach_ctx *x = calloc(1, sizeof *x);
	struct gs_session_opts so;
	struct gs_attach_bpf_cfg cfg;
	char err[512];
	int rc = 2, r;

	if (!a || !x) {
		fprintf(stderr, "giopscope attach: out of memory\n");
		goto out;
	}
	x->rx_fd = -1;
	x->home_ns = -1;
	gs_session_opts_default(&so);
	if ((r = parse(argc, argv, a, &so)) != 0) {
		rc = r;
		goto out;
	}
	/* a build without eBPF says so first, whatever the processes named */
	if (!gs_attach_bpf_built(err, sizeof err)) {
		fprintf(stderr, "giopscope attach: %s\n", err);
		goto out;
	}
	if (check_pids(a))
		goto out;
	/* --orb on --pid processes: the profile and its library first, before
	 * anything else is said or loaded */
	if (a->orb && a->n_pids) {
		if ((r = gs_orb_profile_load(&x->prof, a->orb, err, sizeof err)) != 0 ||
		    (r = gs_orb_check_pids(&x->prof, a->pids, a->n_pids, err, sizeof err)) != 0) {
			fprintf(stderr, "giopscope attach: %s\n", err);
			rc = r == 1 && !strchr(a->orb, '/') ? 2 : r;
			goto out;
		}
	}
	if (!gs_caps_enough(err, sizeof err)) {
		fprintf(stderr, "giopscope attach: missing %s (run as root, or give the binary "
			"cap_bpf,cap_perfmon,cap_net_admin)\n", err);
		goto out;
	}
	if (resolve(x, a, &cfg))
		goto out;
	/* pidfds before the filter is set: the kernel side follows the processes
	 * that started when these did, never a later holder of their pids */
	if (gs_target_watch_open(&x->watch, a->pids, a->n_pids, x->ifaces, x->n_ifaces, a->n_ifaces > 0,
				 err, sizeof err)) {
		fprintf(stderr, "giopscope attach: %s\n", err);
		goto out;
	}
	cfg.pid_start = gs_target_watch_starts(x->watch, &cfg.start_tick_ns);
	cfg.max_message = so.cfg.max_message_size;
	if (a->check) {
		rc = run_check(x, a, &cfg, &so);
		goto out;
	}
	/* the tap ships message heads only: the bytes between are not loss */
	so.cfg.heads_only = true;
	/* a call is written once the peer acknowledged its last bytes (3 s at
	 * most, as `read`): a tail-loss probe or a spurious retransmission right
	 * after the reply still counts, and the client's recv of the reply is
	 * mostly there by then */
	so.cfg.linger_ns = 3000 * 1000000LL;
	so.syscall_times = !a->packets_only;
	/* the tap first (as live: a bad environment leaves no output behind);
	 * records wait in the ring until the loop polls, after gs_feed_init */
	if (gs_tls_feed_init(&x->tlsf, &x->feed)) {
		fprintf(stderr, "giopscope attach: out of memory\n");
		goto out;
	}
	/* --rx-stamp: the kernel's receive stamp for the ingress instants (t3,
	 * t7), on before the first packet is tapped, for as long as attach runs.
	 * Not by default: every packet the host receives pays for it (+1.3-1.6 %
	 * of a loopback TCP round trip, docs/benchmarks.md, session 11); the
	 * tap takes the stamp anyway whenever something else holds it on. */
	if (a->rx_stamp && (x->rx_fd = gs_rxstamp_hold()) < 0) {
		x->rx_err = -x->rx_fd;
		fprintf(stderr, "giopscope attach: cannot hold receive timestamps on (%s): ingress instants "
			"are the tap's own unless something else does\n", strerror(x->rx_err));
	}
	if (gs_attach_bpf_open(&x->bpf, &cfg, gs_tls_feed_record, &x->tlsf, err, sizeof err)) {
		fprintf(stderr, "giopscope attach: %s\n", err);
		goto out;
	}
	/* tapped: the rest (the metrics' socket) is for our own namespace */
	if (gs_target_leave_netns(&x->home_ns, err, sizeof err)) {
		fprintf(stderr, "giopscope attach: %s\n", err);
		goto out_bpf;
	}
	/* --pid processes that map libssl: uprobes on its plaintext boundary,
	 * writing into the same ring */
	if (a->n_pids && !a->packets_only) {
		r = gs_tls_probes_open(&x->tls, a->pids, a->n_pids, gs_attach_bpf_ring_fd(x->bpf), x->libs,
				       &x->n_libs, err, sizeof err);
		if (r == 2) {
			fprintf(stderr, "giopscope attach: %s\n", err);
			goto out_bpf;
		}
		x->tlsf.active = r == 0;
	}
	/* --sched, --orb: after the tap (loading it takes a while; their rings
	 * would fill meanwhile), before the privileges go */
	if ((r = open_split(x, a, &so)) != 0) {
		rc = r;
		goto out_bpf;
	}
	/* --idle-reader: after the loading (the verifier would take minutes at
	 * idle priority on a busy host), before the first record is read */
	if (a->idle_reader) {
		struct sched_param sp = { .sched_priority = 0 };
		if (sched_setscheduler(0, SCHED_IDLE, &sp) != 0) {
			fprintf(stderr, "giopscope attach: --idle-reader: %s\n", strerror(errno));
			goto out_bpf;
		}
	}
	/* -Z: loaded, attached, the ring buffer mapped; all of it held by file
	 * descriptors, which stay usable (and are closed, detaching everything,
	 * at exit) whoever the process is.  The files come after, as USER
	 * (tcpdump's order): root cannot be made to write where only root may. */
	if (a->user.set && gs_priv_drop(&a->user, err, sizeof err) != 0) {
		fprintf(stderr, "giopscope attach: %s\n", err);
		goto out_bpf;
	}
	if (gs_session_open(&x->s, &so, "attach"))
		goto out_bpf;
	if (gs_feed_init(&x->feed, &x->s, PENDING_CALLS, INSTANT_WAIT_NS)) {
		fprintf(stderr, "giopscope attach: out of memory\n");
		gs_session_close(&x->s, "attach", NULL);
		goto out_bpf;
	}
	/* --orb: the upcall running on a thread that sends a call tells which
	 * request it was serving */
	if (x->orb)
		x->feed.nest.upcalls = &x->tlog;
	if (x->sched || x->orb) {
		x->feed.cols = so.times_cols;
		x->feed.enrich = enrich;
		x->feed.on_instant = on_instant;
		x->feed.ready = ready;
		x->feed.enrich_arg = x;
	}
	/* without -Z: nothing from here on needs a privilege (the files are open) */
	if (!a->user.set && gs_priv_drop(&a->user, err, sizeof err) != 0)
		fprintf(stderr, "giopscope attach: %s\n", err);
	describe(x, a, &cfg);
	rc = loop(x);
	update_drops(x);
	r = gs_session_close(&x->s, "attach", &x->drops);
	if (r && !rc)
		rc = r;
	write_sums(x);
	report(x);
	gs_feed_free(&x->feed);
out_bpf:
	gs_tls_probes_close(x->tls);
	gs_attach_bpf_close(x->bpf);
out:
	if (x) {
		if (x->rx_fd >= 0)
			close(x->rx_fd);
		if (x->home_ns >= 0)
			close(x->home_ns);
		gs_target_watch_close(x->watch);
		gs_tls_feed_free(&x->tlsf);
		close_split(x);
	}
	free(a);
	free(x);
	return rc;
}
