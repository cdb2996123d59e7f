/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_bpf.h"
#include "err_buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GS_HAVE_EBPF

bool gs_attach_bpf_built(char *err, size_t errlen)
{
	snprintf(err, errlen, "this build has no eBPF support (clang, bpftool, libbpf-dev or the "
		 "kernel's BTF were missing when it was built: scripts/install-deps.sh check, then make)");
	return false;
}

int gs_attach_bpf_open(struct gs_attach_bpf **out, const struct gs_attach_bpf_cfg *cfg,
		       gs_attach_record_fn fn, void *arg, char *err, size_t errlen)
{
	(void)cfg;
	(void)fn;
	(void)arg;
	*out = NULL;
	gs_attach_bpf_built(err, errlen);
	return 2;
}

int gs_attach_bpf_poll(struct gs_attach_bpf *b, int timeout_ms)
{
	(void)b;
	(void)timeout_ms;
	return -ENOSYS;
}

void gs_attach_bpf_counters(const struct gs_attach_bpf *b, uint64_t out[GS_CNT__MAX])
{
	(void)b;
	memset(out, 0, GS_CNT__MAX * sizeof *out);
}

void gs_attach_bpf_close(struct gs_attach_bpf *b)
{
	(void)b;
}

int gs_attach_bpf_ring_fd(const struct gs_attach_bpf *b)
{
	(void)b;
	return -ENOSYS;
}

void gs_attach_bpf_paths(const struct gs_attach_bpf *b, char *buf, size_t len)
{
	(void)b;
	snprintf(buf, len, "none");
}

const char *gs_attach_bpf_tc(const struct gs_attach_bpf *b)
{
	(void)b;
	return "none";
}

int gs_attach_bpf_check(const struct gs_attach_bpf_cfg *cfg, gs_verdict_fn fn, void *arg)
{
	(void)cfg;
	(void)fn;
	(void)arg;
	return 1;
}

#else

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* generated: its const-discarding cast is bpftool's, not ours */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "giop_tap.skel.h"
#pragma GCC diagnostic pop

#include "attach_rxstamp.h"

#define MAX_HOOK_LINKS 8

struct gs_attach_bpf {
	struct giop_tap_bpf *skel;
	struct ring_buffer *rb;
	gs_attach_record_fn fn;
	void *arg;
	struct gs_tc tc;          /* the packet tap on the interfaces */
	struct bpf_link *hook_links[MAX_HOOK_LINKS];
	uint32_t n_hook_links;
	bool syscalls;            /* send/recv hooks loaded: watch_tab can hold sends and recvs */
	const struct gs_hook_path *path[2]; /* the send and recv paths taken (NULL: packets only) */
};

/* libbpf's own chatter (info and debug lines) would interleave with our output:
 * only its warnings are shown, as libbpf writes them. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* While programs are only tried (another path follows if the kernel refuses
 * one; a refusal is said in our own words), libbpf's warnings are not shown. */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct gs_attach_bpf *b = ctx;
	b->fn(b->arg, data, len);
	return 0;
}

/* What the packet tap knows of an interface: 1 + its link-layer length; on
 * loopback (tapped on ingress only) the ingress hook also takes the syscalls
 * that wait for a segment. */
static uint32_t iface_value(const struct gs_attach_iface *f)
{
	return (f->l2_len + 1) | (f->loopback ? GS_TAP_IF_CLAIM_IN : 0);
}

static void set_rodata(struct giop_tap_bpf__rodata *ro, const struct gs_attach_bpf_cfg *cfg)
{
	ro->max_message = cfg->max_message;
	ro->filter_mode = (uint32_t)cfg->filter;
	memcpy(ro->filter_comm, cfg->comm, sizeof ro->filter_comm);
	ro->watch_ports = cfg->ports != NULL;
	if (cfg->ports)
		memcpy(ro->port_bits, cfg->ports, sizeof ro->port_bits);
	/* wake the reader when a quarter of the ring is waiting */
	ro->wake_bytes = cfg->ring_bytes / 4;
	ro->netns_ino = cfg->netns_ino;
	ro->fc_slots = cfg->fcache_slots;
	if (cfg->n_pids <= GS_TAP_RODATA_PIDS) {
		ro->n_target_pids = cfg->n_pids;
		for (uint32_t i = 0; i < cfg->n_pids; i++) {
			ro->target_pids[i] = cfg->pids[i];
			ro->target_start[i] = cfg->pid_start ? cfg->pid_start[i] : 0;
		}
	}
	ro->start_tick_ns = cfg->pid_start ? cfg->start_tick_ns : 0;
	/* the first interfaces in read-only data: no map lookup per packet */
	for (uint32_t i = 0; i < cfg->n_ifaces && i < GS_TAP_RODATA_IFACES; i++) {
		ro->ro_ifindex[i] = (uint32_t)cfg->ifaces[i].ifindex;
		ro->ro_l2[i] = iface_value(&cfg->ifaces[i]);
	}
	ro->ifaces_in_map = cfg->n_ifaces > GS_TAP_RODATA_IFACES;
	/* syscalls wait for the packet tap to carry them (watch_tab) */
	ro->fold_sends = cfg->syscalls;
}

static int fill_maps(struct giop_tap_bpf *skel, const struct gs_attach_bpf_cfg *cfg, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < cfg->n_pids; i++) {
		uint64_t start = cfg->pid_start ? cfg->pid_start[i] : 0;
		if (bpf_map__update_elem(skel->maps.pids, &cfg->pids[i], sizeof cfg->pids[i], &start, sizeof start, BPF_ANY))
			return gs_errf(err, errlen, "cannot add pid %u to the filter: %s", cfg->pids[i], strerror(errno));
	}
	for (uint32_t i = 0; i < cfg->n_ifaces; i++) {
		struct gs_tap_iface v = { iface_value(&cfg->ifaces[i]) };
		uint32_t k = (uint32_t)cfg->ifaces[i].ifindex;
		if (k >= GS_TAP_MAX_IFINDEX)
			return gs_errf(err, errlen, "interface %s: ifindex %u too large", cfg->ifaces[i].name, k);
		if (bpf_map__update_elem(skel->maps.ifaces, &k, sizeof k, &v, sizeof v, BPF_ANY))
			return gs_errf(err, errlen, "cannot add interface %s: %s", cfg->ifaces[i].name, strerror(errno));
	}
	return 0;
}

static int attach_tap(struct gs_attach_bpf *b, const struct gs_attach_bpf_cfg *cfg, char *err, size_t errlen)
{
	struct gs_tc_iface ifs[GS_TC_MAX];
	uint32_t n = cfg->n_ifaces < GS_TC_MAX ? cfg->n_ifaces : GS_TC_MAX;
	for (uint32_t i = 0; i < n; i++)
		/* loopback: what leaves comes back in; once is enough */
		ifs[i] = (struct gs_tc_iface){ cfg->ifaces[i].name, cfg->ifaces[i].ifindex, cfg->ifaces[i].loopback };
	return gs_tc_attach(&b->tc, cfg->tc, ifs, n, bpf_program__fd(b->skel->progs.giop_tap_ingress),
			    bpf_program__fd(b->skel->progs.giop_tap_egress), err, errlen);
}

bool gs_attach_bpf_built(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return true;
}

/* ---- which programs --------------------------------------------------------- */

static bool path_has(const struct gs_hook_path *p, const char *name)
{
	return p && ((p->prog[0] && strcmp(p->prog[0], name) == 0) || (p->prog[1] && strcmp(p->prog[1], name) == 0));
}

static bool path_in_object(struct bpf_object *o, const struct gs_hook_path *p)
{
	for (int k = 0; k < 2; k++)
		if (p->prog[k] && !bpf_object__find_program_by_name(o, p->prog[k]))
			return false;
	return true;
}

static bool is_tap(const struct bpf_program *p)
{
	return bpf_program__type(p) == BPF_PROG_TYPE_SCHED_CLS;
}

/* The object as attach loads it, configured by cfg, nothing loaded yet: for
 * --check and the saved verifier logs (the skeleton's own bytes). */
static struct bpf_object *open_object(const void *arg)
{
	const struct gs_attach_bpf_cfg *cfg = arg;
	struct giop_tap_bpf__rodata rod;
	size_t sz, ro_sz;
	const void *bytes = giop_tap_bpf__elf_bytes(&sz);
	struct bpf_object *o = gs_load_open_mem(bytes, sz, "giop_tap_bpf", &rod, sizeof rod, &ro_sz);
	struct bpf_map *m;
	if (!o)
		return NULL;
	set_rodata(&rod, cfg);
	gs_load_set_rodata(o, &rod, ro_sz);
	if ((m = bpf_object__find_map_by_name(o, "events")))
		bpf_map__set_max_entries(m, cfg->ring_bytes);
	if ((m = bpf_object__find_map_by_name(o, "flows")))
		bpf_map__set_max_entries(m, cfg->max_flows);
	return o;
}

/* Why a side has no path, kept for the error. */
struct side_why {
	char reason[400];
	char prog[64];           /* a program the kernel refused ("": none loaded) */
};

/* The next path of `side` from index `from` that --hooks allows, that the
 * object has and whose hook the kernel has; -1: none (why in w). */
static int next_path(const struct gs_attach_bpf_cfg *cfg, const struct gs_hook_env *env, struct bpf_object *o,
		     enum gs_hook_side side, int from, struct side_why *w)
{
	const struct gs_hook_path *paths = gs_hook_paths(side);
	for (int i = from; i < GS_HOOK_PATHS; i++) {
		char why[300];
		if (!gs_hooks_mode_takes(cfg->hooks, paths[i].kind) || !path_in_object(o, &paths[i]))
			continue;
		if (gs_hook_probe(env, &paths[i], why, sizeof why))
			return i;
		snprintf(w->reason, sizeof w->reason, "%s", why);
		w->prog[0] = '\0';
	}
	if (!w->reason[0])
		snprintf(w->reason, sizeof w->reason, "this build's object has no %s program for the %s side",
			 cfg->hooks == GS_HOOKS_AUTO ? "" : gs_hooks_mode_name(cfg->hooks),
			 side == GS_SIDE_SEND ? "send" : "recv");
	return -1;
}

/* Opens and loads the object with the tap and the programs of paths `send`
 * and `recv` (NULL: none), and attaches those.  0; or a negative errno value
 * with the skeleton gone and, when the kernel refused a program, *bad and
 * its verdict in v. */
static int load_with(struct gs_attach_bpf *b, const struct gs_attach_bpf_cfg *cfg, const struct gs_hook_path *send,
		     const struct gs_hook_path *recv, const char **bad, struct gs_prog_verdict *v)
{
	struct gs_load_logs logs;
	struct bpf_program *prog, *refused = NULL;
	int r;
	*bad = NULL;
	b->skel = giop_tap_bpf__open();
	if (!b->skel)
		return -errno;
	set_rodata(b->skel->rodata, cfg);
	bpf_map__set_max_entries(b->skel->maps.events, cfg->ring_bytes);
	bpf_map__set_max_entries(b->skel->maps.flows, cfg->max_flows);
	bpf_object__for_each_program(prog, b->skel->obj) {
		const char *n = bpf_program__name(prog);
		bpf_program__set_autoload(prog, is_tap(prog) || path_has(send, n) || path_has(recv, n));
	}
	r = gs_load_logs_set(&logs, b->skel->obj);
	if (r == 0) {
		gs_load_warnings_begin();
		r = giop_tap_bpf__load(b->skel);
		libbpf_set_print(libbpf_print);
		if (r)
			refused = gs_load_logs_refused(&logs, r, v);
	}
	gs_load_logs_free(&logs);
	if (refused) {
		/* the name outlives the object: the caller's verdict holds it */
		*bad = v->program;
		snprintf(v->hook, sizeof v->hook, "%s", is_tap(refused) ? "tc" : "");
	}
	/* the hooks, one by one: a hook the kernel refuses is that side's failure */
	for (int s = 0; s < 2 && r == 0; s++) {
		const struct gs_hook_path *p = s == 0 ? send : recv;
		for (int k = 0; p && k < 2 && p->prog[k] && r == 0; k++) {
			struct bpf_link *l;
			prog = bpf_object__find_program_by_name(b->skel->obj, p->prog[k]);
			libbpf_set_print(libbpf_quiet);
			l = bpf_program__attach(prog);
			libbpf_set_print(libbpf_print);
			if (!l) {
				r = -errno;
				*bad = v->program;
				snprintf(v->program, sizeof v->program, "%s", p->prog[k]);
				snprintf(v->reason, sizeof v->reason, "the kernel refused to attach %s to %s: %s", p->prog[k],
					 p->hook[k], strerror(errno));
				v->insns = -1;
				break;
			}
			b->hook_links[b->n_hook_links++] = l;
		}
	}
	if (r) {
		for (uint32_t i = 0; i < b->n_hook_links; i++)
			bpf_link__destroy(b->hook_links[i]);
		b->n_hook_links = 0;
		giop_tap_bpf__destroy(b->skel);
		b->skel = NULL;
	}
	return r;
}

#define WORKS_TAP "what works without attach: `giopscope live -i IFACE` and `giopscope read` of a capture"
#define WORKS_HOOKS "`giopscope attach --check` shows what loads here; `attach --packets-only`, `live -i IFACE` " \
		    "and `read` of a capture work without the send/recv hooks"

int gs_attach_bpf_open(struct gs_attach_bpf **out, const struct gs_attach_bpf_cfg *cfg,
		       gs_attach_record_fn fn, void *arg, char *err, size_t errlen)
{
	struct gs_attach_bpf *b;
	struct gs_hook_env env;
	struct bpf_object *names;
	struct side_why why[2];
	struct gs_load_notice note;
	int idx[2] = { -1, -1 }, r = 0;

	*out = NULL;
	libbpf_set_print(libbpf_print);
	b = calloc(1, sizeof *b);
	if (!b)
		return gs_errf(err, errlen, "out of memory");
	gs_tc_init(&b->tc);
	b->fn = fn;
	b->syscalls = cfg->syscalls;
	b->arg = arg;
	memset(why, 0, sizeof why);
	/* each side's best path that the kernel has, decided from its BTF and
	 * sysfs: a whole-object load re-verifies the tap (seconds under QEMU) */
	gs_hook_env_open(&env);
	names = open_object(cfg);
	if (!names) {
		gs_hook_env_close(&env);
		gs_errf(err, errlen, "cannot open the eBPF object: %s", strerror(errno));
		goto bad;
	}
	for (int s = 0; s < 2 && cfg->syscalls; s++)
		idx[s] = next_path(cfg, &env, names, (enum gs_hook_side)s, 0, &why[s]);
	gs_load_notice_start(&note, "giopscope attach: loading the eBPF programs (the kernel's verifier is slow "
			     "here)...\n");
	for (;;) {
		struct gs_prog_verdict v;
		const char *badp;
		int s;
		if (cfg->syscalls && (idx[0] < 0 || idx[1] < 0)) {
			struct gs_prog_verdict w;
			s = idx[0] < 0 ? 0 : 1;
			memset(&w, 0, sizeof w);
			snprintf(w.program, sizeof w.program, "%s", why[s].prog);
			snprintf(w.reason, sizeof w.reason, "%s", why[s].reason);
			gs_load_notice_stop(&note);
			{
				char what[128];
				snprintf(what, sizeof what, "no way to take the %s instants%s%s: ", s == 0 ? "send" : "recv",
					 cfg->hooks == GS_HOOKS_AUTO ? "" : " with --hooks ",
					 cfg->hooks == GS_HOOKS_AUTO ? "" : gs_hooks_mode_name(cfg->hooks));
				gs_load_refusal(&w, -1, open_object, cfg, what, WORKS_HOOKS, err, errlen);
			}
			r = -1;
			break;
		}
		b->path[0] = cfg->syscalls ? &gs_hook_paths(GS_SIDE_SEND)[idx[0]] : NULL;
		b->path[1] = cfg->syscalls ? &gs_hook_paths(GS_SIDE_RECV)[idx[1]] : NULL;
		memset(&v, 0, sizeof v);
		r = load_with(b, cfg, b->path[0], b->path[1], &badp, &v);
		if (r == 0)
			break;
		s = path_has(b->path[0], badp ? badp : "") ? 0 : path_has(b->path[1], badp ? badp : "") ? 1 : -1;
		if (s < 0) {
			gs_load_notice_stop(&note);
			gs_load_refusal(badp ? &v : NULL, r, open_object, cfg, "", WORKS_TAP, err, errlen);
			break;
		}
		/* that side's next path (a reload: the kernel said no only now) */
		snprintf(why[s].reason, sizeof why[s].reason, "%s", v.reason);
		snprintf(why[s].prog, sizeof why[s].prog, "%s", v.insns >= 0 || v.err ? badp : "");
		idx[s] = next_path(cfg, &env, names, (enum gs_hook_side)s, idx[s] + 1, &why[s]);
		if (idx[s] < 0) {
			/* what the last refused path said, not "none left" */
			snprintf(why[s].reason, sizeof why[s].reason, "%s", v.reason);
			snprintf(why[s].prog, sizeof why[s].prog, "%s", badp);
		}
	}
	gs_load_notice_stop(&note);
	bpf_object__close(names);
	gs_hook_env_close(&env);
	if (r)
		goto bad;
	/* before the first packet: ingress receive stamps convert with it */
	b->skel->bss->tai_off = gs_rxstamp_tai_off();
	if (fill_maps(b->skel, cfg, err, errlen) || attach_tap(b, cfg, err, errlen))
		goto bad;
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_record, b, NULL);
	if (!b->rb) {
		gs_errf(err, errlen, "cannot map the ring buffer: %s", strerror(errno));
		goto bad;
	}
	*out = b;
	return 0;
bad:
	gs_attach_bpf_close(b);
	return 2;
}

void gs_attach_bpf_paths(const struct gs_attach_bpf *b, char *buf, size_t len)
{
	const struct gs_hook_path *s = b->path[0], *r = b->path[1];
	if (!s || !r)
		snprintf(buf, len, "none (packets only)");
	else if (s->kind == GS_HK_SYSCALLS && r->kind == GS_HK_SYSCALLS)
		snprintf(buf, len, "syscalls (fallback)");
	else if (s->kind == r->kind)
		snprintf(buf, len, "%s + %s (%s)", s->target, r->target, gs_hook_kind_name(s->kind));
	else
		snprintf(buf, len, "%s + %s (%s + %s)", s->target, r->target, gs_hook_kind_name(s->kind),
			 gs_hook_kind_name(r->kind));
}

const char *gs_attach_bpf_tc(const struct gs_attach_bpf *b)
{
	return gs_tc_mode_name(b->tc.used);
}

/* ---- attach --check ---------------------------------------------------------- */

static void check_one(const struct gs_attach_bpf_cfg *cfg, const char *name, const char *hook, bool used,
		      struct gs_prog_verdict *v)
{
	memset(v, 0, sizeof *v);
	snprintf(v->program, sizeof v->program, "%s", name);
	snprintf(v->hook, sizeof v->hook, "%s", hook);
	v->used = used;
	if (!gs_load_alone(open_object, cfg, name, v)) {
		v->insns = -1;
		snprintf(v->reason, sizeof v->reason, "not in this build's object");
	}
}

int gs_attach_bpf_check(const struct gs_attach_bpf_cfg *cfg, gs_verdict_fn fn, void *arg)
{
	static const char *const taps[2] = { "giop_tap_ingress", "giop_tap_egress" };
	struct gs_hook_env env;
	struct bpf_object *names;
	struct gs_load_notice note;
	struct gs_prog_verdict v;
	enum gs_tc_mode tc;
	int bad = 0;
	libbpf_set_print(libbpf_quiet);
	names = open_object(cfg);
	if (!names) {
		memset(&v, 0, sizeof v);
		snprintf(v.program, sizeof v.program, "giop_tap");
		snprintf(v.reason, sizeof v.reason, "cannot open the eBPF object: %s", strerror(errno));
		v.used = true;
		v.insns = -1;
		fn(arg, &v);
		return 1;
	}
	gs_hook_env_open(&env);
	gs_load_notice_start(&note, "giopscope attach: loading each eBPF program on its own (a load of each "
			     "candidate: seconds)...\n");
	tc = cfg->tc != GS_TC_AUTO ? cfg->tc : gs_tc_have_tcx() ? GS_TC_TCX : GS_TC_CLSACT;
	for (int k = 0; k < 2; k++) {
		char hook[64];
		snprintf(hook, sizeof hook, "tc %s (%s)", k ? "egress" : "ingress", gs_tc_mode_name(tc));
		check_one(cfg, taps[k], hook, true, &v);
		bad += !v.loaded;
		fn(arg, &v);
	}
	/* each side: every candidate --hooks allows, in attach's order; the
	 * first that loads and whose hook the kernel has is attach's */
	for (int s = 0; s < 2 && cfg->syscalls; s++) {
		const struct gs_hook_path *paths = gs_hook_paths((enum gs_hook_side)s);
		/* a side's rows, written once it is known which path attach takes */
		struct gs_prog_verdict pv[2 * GS_HOOK_PATHS];
		bool chosen = false;
		int tried = 0, n = 0;
		for (int i = 0; i < GS_HOOK_PATHS; i++) {
			char why[300];
			bool have, ok = true;
			int first = n;
			if (!gs_hooks_mode_takes(cfg->hooks, paths[i].kind) || !path_in_object(names, &paths[i]))
				continue;
			tried++;
			have = gs_hook_probe(&env, &paths[i], why, sizeof why);
			for (int k = 0; k < 2 && paths[i].prog[k]; k++, n++) {
				check_one(cfg, paths[i].prog[k], paths[i].hook[k], false, &pv[n]);
				if (pv[n].loaded && !have) {
					/* it loads, but the kernel has nothing to attach it to */
					pv[n].loaded = false;
					snprintf(pv[n].reason, sizeof pv[n].reason, "%s", why);
				}
				ok = ok && pv[n].loaded;
			}
			for (int k = first; k < n; k++)
				pv[k].used = ok && !chosen;
			chosen = chosen || ok;
		}
		/* no path loads: attach would try each of them, and fail */
		for (int k = 0; k < n; k++) {
			if (!chosen)
				pv[k].used = true;
			fn(arg, &pv[k]);
		}
		if (!chosen) {
			bad++;
			memset(&v, 0, sizeof v);
			snprintf(v.program, sizeof v.program, "(%s side)", s ? "recv" : "send");
			snprintf(v.hook, sizeof v.hook, "--hooks %s", gs_hooks_mode_name(cfg->hooks));
			v.used = true;
			v.insns = -1;
			if (tried)
				snprintf(v.reason, sizeof v.reason, "no %s path loads here", s ? "recv" : "send");
			else
				snprintf(v.reason, sizeof v.reason, "this build's object has no %s program for the %s side",
					 gs_hooks_mode_name(cfg->hooks), s ? "recv" : "send");
			fn(arg, &v);
		}
	}
	gs_load_notice_stop(&note);
	gs_hook_env_close(&env);
	bpf_object__close(names);
	libbpf_set_print(libbpf_print);
	return bad;
}

/* The syscalls still waiting in the kernel's watch_tab for a segment to
 * carry them (none came: the data left by an interface that is not tapped,
 * or has not left yet; the socket sends nothing more): taken out of the table
 * (held with the same compare and exchange as in the kernel, so that the
 * packet tap cannot take them too) and handed to the feed as one
 * GS_REC_FOLD record per slot, as a segment would carry them.  After the ring: a syscall taken here came before any segment that
 * would still carry it.  Nothing waits there longer than a poll, and the last
 * poll at the stop empties it. */
static int drain_waiting(struct gs_attach_bpf *b)
{
	struct gs_tap_watch *tab = b->skel->bss->watch_tab;
	int n = 0;
	for (uint32_t i = 0; i < GS_TAP_WATCH_SLOTS; i++) {
		struct gs_tap_watch *w = &tab[i];
		uint64_t o = __atomic_load_n(&w->state, __ATOMIC_RELAXED);
		struct gs_tap_fold_rec rec;
		if (!(o & (GS_PEND_SEND | GS_PEND_RECV)) || (o & GS_PEND_BUSY) ||
		    !__atomic_compare_exchange_n(&w->state, &o, o | GS_PEND_BUSY, false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			continue;
		memset(&rec, 0, sizeof rec);
		rec.kind = GS_REC_FOLD;
		rec.flow = w->flow;
		if (o & GS_PEND_SEND)
			rec.fold.send = w->send;
		if (o & GS_PEND_RECV)
			rec.fold.recv = w->recv;
		__atomic_store_n(&w->state, 0, __ATOMIC_SEQ_CST);
		b->fn(b->arg, &rec, sizeof rec);
		n += !!(o & GS_PEND_SEND) + !!(o & GS_PEND_RECV);
	}
	return n;
}

int gs_attach_bpf_poll(struct gs_attach_bpf *b, int timeout_ms)
{
	int n = ring_buffer__poll(b->rb, timeout_ms), m;
	if (n < 0 && n != -EINTR)
		return n;
	/* a timeout consumed nothing: the records that did not wake us */
	m = ring_buffer__consume(b->rb);
	/* the TAI offset changes with a leap second or an adjtimex(ADJ_TAI) */
	b->skel->bss->tai_off = gs_rxstamp_tai_off();
	if (m < 0)
		return m;
	/* --packets-only: nothing ever waits there (768 KiB not to scan per poll) */
	return (n > 0 ? n : 0) + m + (b->syscalls ? drain_waiting(b) : 0);
}

void gs_attach_bpf_counters(const struct gs_attach_bpf *b, uint64_t out[GS_CNT__MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	memset(out, 0, GS_CNT__MAX * sizeof *out);
	if (!b || !b->skel->bss)
		return;
	if (ncpu <= 0 || ncpu > GS_TAP_MAX_CPUS)
		ncpu = GS_TAP_MAX_CPUS;
	for (int c = 0; c < ncpu; c++)
		for (int i = 0; i < GS_CNT__MAX; i++)
			out[i] += ((volatile const uint64_t *)b->skel->bss->counters[c])[i];
}

int gs_attach_bpf_ring_fd(const struct gs_attach_bpf *b)
{
	return bpf_map__fd(b->skel->maps.events);
}

void gs_attach_bpf_close(struct gs_attach_bpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	/* the tap first: clsact filters are not taken away by the kernel */
	gs_tc_detach(&b->tc);
	for (uint32_t i = 0; i < b->n_hook_links; i++)
		bpf_link__destroy(b->hook_links[i]);
	if (b->skel)
		giop_tap_bpf__destroy(b->skel);
	free(b);
}

#endif
