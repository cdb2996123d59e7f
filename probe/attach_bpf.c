/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_bpf.h"

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
	errno = ENOSYS;
	return -1;
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
	return -1;
}

const char *gs_attach_hooks_name(enum gs_attach_hooks h)
{
	(void)h;
	return "none";
}

enum gs_attach_hooks gs_attach_bpf_hooks(const struct gs_attach_bpf *b)
{
	(void)b;
	return GS_HOOKS_NONE;
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

#define MAX_LINKS 512
/* enum bpf_attach_type values of kernel 6.6 (UAPI, fixed); the distribution's
 * headers may be older than the kernel */
#define GS_BPF_TCX_INGRESS 46
#define GS_BPF_TCX_EGRESS 47

struct gs_attach_bpf {
	struct giop_tap_bpf *skel;
	struct ring_buffer *rb;
	gs_attach_record_fn fn;
	void *arg;
	int links[MAX_LINKS];     /* TCX link fds */
	uint32_t n_links;
	bool syscalls;            /* send/recv hooks loaded: watch_tab can hold sends and recvs */
	enum gs_attach_hooks hooks;
};

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return 2;
}

/* libbpf's own chatter (info and debug lines) would interleave with our output:
 * only its warnings are shown, as libbpf writes them. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* While a way of hooking sends and recvs is only tried (another follows if the
 * kernel refuses it), libbpf's warnings are not shown. */
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

static void set_rodata(struct giop_tap_bpf *skel, const struct gs_attach_bpf_cfg *cfg)
{
	struct giop_tap_bpf__rodata *ro = skel->rodata;
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
			return fail(err, errlen, "cannot add pid %u to the filter: %s", cfg->pids[i], strerror(errno));
	}
	for (uint32_t i = 0; i < cfg->n_ifaces; i++) {
		struct gs_tap_iface v = { iface_value(&cfg->ifaces[i]) };
		uint32_t k = (uint32_t)cfg->ifaces[i].ifindex;
		if (k >= GS_TAP_MAX_IFINDEX)
			return fail(err, errlen, "interface %s: ifindex %u too large", cfg->ifaces[i].name, k);
		if (bpf_map__update_elem(skel->maps.ifaces, &k, sizeof k, &v, sizeof v, BPF_ANY))
			return fail(err, errlen, "cannot add interface %s: %s", cfg->ifaces[i].name, strerror(errno));
	}
	return 0;
}

/* TCX (kernel 6.6+): a link per hook, owned by its fd, in front of whatever
 * else is attached there; nothing of it is left once the fd is closed.
 * libbpf 1.1 predates bpf_program__attach_tcx; the link is created directly. */
static int attach_tcx(struct gs_attach_bpf *b, const struct gs_attach_bpf_cfg *cfg, char *err, size_t errlen)
{
	int in = bpf_program__fd(b->skel->progs.giop_tap_ingress);
	int eg = bpf_program__fd(b->skel->progs.giop_tap_egress);
	for (uint32_t i = 0; i < cfg->n_ifaces; i++) {
		const struct gs_attach_iface *f = &cfg->ifaces[i];
		for (int k = 0; k < 2; k++) {
			int fd;
			if (k == 1 && f->loopback)
				break; /* loopback: what leaves comes back in; once is enough */
			if (b->n_links >= MAX_LINKS)
				return fail(err, errlen, "too many interfaces (at most %d hooks)", MAX_LINKS);
			fd = bpf_link_create(k == 0 ? in : eg, f->ifindex, (enum bpf_attach_type)(k == 0 ? GS_BPF_TCX_INGRESS : GS_BPF_TCX_EGRESS), NULL);
			if (fd < 0)
				return fail(err, errlen, "cannot attach to %s %s (TCX, kernel 6.6 or later): %s", f->name,
					    k == 0 ? "ingress" : "egress", strerror(-fd));
			b->links[b->n_links++] = fd;
		}
	}
	return 0;
}

bool gs_attach_bpf_built(char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return true;
}

const char *gs_attach_hooks_name(enum gs_attach_hooks h)
{
	switch (h) {
	case GS_HOOKS_SOCK_BTF: return "tcp_sendmsg_locked + sock_recv_length (tp_btf)";
	case GS_HOOKS_SOCK_RAW: return "tcp_sendmsg_locked + sock_recv_length (raw_tp)";
	case GS_HOOKS_SYSCALLS: return "syscalls (fallback)";
	case GS_HOOKS_NONE: break;
	}
	return "none (packets only)";
}

/* The programs of one way of hooking sends and recvs, by name. */
static bool prog_of(const struct bpf_program *prog, enum gs_attach_hooks h)
{
	static const char *const names[][2] = {
		[GS_HOOKS_SOCK_BTF] = { "tcp_send_btf", "sock_recv_btf" },
		[GS_HOOKS_SOCK_RAW] = { "tcp_send_raw", "sock_recv_raw" },
		[GS_HOOKS_SYSCALLS] = { "sys_enter", "sys_exit" },
	};
	const char *n = bpf_program__name(prog);
	if (h == GS_HOOKS_NONE)
		return false;
	return strcmp(n, names[h][0]) == 0 || strcmp(n, names[h][1]) == 0;
}

/* The kernel has both socket-layer tracepoints (their BTF typedefs: what
 * tp_btf attaches by, and there for every tracepoint of a kernel with BTF). */
static bool sock_tracepoints(void)
{
	struct btf *vm = btf__load_vmlinux_btf();
	bool ok;
	if (!vm)
		return false;
	ok = btf__find_by_name_kind(vm, "btf_trace_tcp_sendmsg_locked", BTF_KIND_TYPEDEF) > 0 &&
	     btf__find_by_name_kind(vm, "btf_trace_sock_recv_length", BTF_KIND_TYPEDEF) > 0;
	btf__free(vm);
	return ok;
}

/* Opens and loads the object with the send/recv programs of `h` only.  0, or
 * a negative errno value with the skeleton gone. */
static int load_with(struct gs_attach_bpf *b, const struct gs_attach_bpf_cfg *cfg, enum gs_attach_hooks h)
{
	struct bpf_program *prog;
	int r;
	b->skel = giop_tap_bpf__open();
	if (!b->skel)
		return -errno;
	set_rodata(b->skel, cfg);
	bpf_map__set_max_entries(b->skel->maps.events, cfg->ring_bytes);
	bpf_map__set_max_entries(b->skel->maps.flows, cfg->max_flows);
	bpf_object__for_each_program(prog, b->skel->obj)
		if (bpf_program__type(prog) != BPF_PROG_TYPE_SCHED_CLS)
			bpf_program__set_autoload(prog, prog_of(prog, h));
	if ((r = giop_tap_bpf__load(b->skel)) == 0 && h != GS_HOOKS_NONE)
		r = giop_tap_bpf__attach(b->skel);
	if (r) {
		giop_tap_bpf__destroy(b->skel);
		b->skel = NULL;
	}
	return r;
}

int gs_attach_bpf_open(struct gs_attach_bpf **out, const struct gs_attach_bpf_cfg *cfg,
		       gs_attach_record_fn fn, void *arg, char *err, size_t errlen)
{
	struct gs_attach_bpf *b;
	int r;

	*out = NULL;
	libbpf_set_print(libbpf_print);
	b = calloc(1, sizeof *b);
	if (!b)
		return fail(err, errlen, "out of memory");
	b->fn = fn;
	b->syscalls = cfg->syscalls;
	b->arg = arg;
	/* sends and recvs: at the socket layer (tp_btf, where the verifier takes
	 * it, else raw_tp), the syscall hooks only on a kernel without those
	 * tracepoints or when asked for */
	if (!cfg->syscalls) {
		b->hooks = GS_HOOKS_NONE;
		r = load_with(b, cfg, GS_HOOKS_NONE);
	} else if (cfg->syscall_hooks || !sock_tracepoints()) {
		b->hooks = GS_HOOKS_SYSCALLS;
		r = load_with(b, cfg, GS_HOOKS_SYSCALLS);
	} else {
		libbpf_set_print(libbpf_quiet);
		b->hooks = GS_HOOKS_SOCK_BTF;
		r = load_with(b, cfg, GS_HOOKS_SOCK_BTF);
		libbpf_set_print(libbpf_print);
		if (r) {
			b->hooks = GS_HOOKS_SOCK_RAW;
			r = load_with(b, cfg, GS_HOOKS_SOCK_RAW);
		}
	}
	if (r) {
		if (b->hooks == GS_HOOKS_SOCK_RAW)
			fail(err, errlen, "cannot load or attach the eBPF programs (send/recv instants: "
			     "tcp_sendmsg_locked + sock_recv_length; --syscall-hooks for the syscalls): %s",
			     strerror(-r));
		else
			fail(err, errlen, "cannot load or attach the eBPF programs (send/recv instants: %s): %s",
			     gs_attach_hooks_name(b->hooks), strerror(-r));
		goto bad;
	}
	/* before the first packet: ingress receive stamps convert with it */
	b->skel->bss->tai_off = gs_rxstamp_tai_off();
	if (fill_maps(b->skel, cfg, err, errlen) || attach_tcx(b, cfg, err, errlen))
		goto bad;
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_record, b, NULL);
	if (!b->rb) {
		fail(err, errlen, "cannot map the ring buffer: %s", strerror(errno));
		goto bad;
	}
	*out = b;
	return 0;
bad:
	gs_attach_bpf_close(b);
	return 2;
}

enum gs_attach_hooks gs_attach_bpf_hooks(const struct gs_attach_bpf *b)
{
	return b->hooks;
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
	if (n < 0 && n != -EINTR) {
		errno = -n;
		return -1;
	}
	/* a timeout consumed nothing: the records that did not wake us */
	m = ring_buffer__consume(b->rb);
	/* the TAI offset changes with a leap second or an adjtimex(ADJ_TAI) */
	b->skel->bss->tai_off = gs_rxstamp_tai_off();
	if (m < 0) {
		errno = -m;
		return -1;
	}
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
	for (uint32_t i = 0; i < b->n_links; i++)
		close(b->links[i]);
	if (b->skel)
		giop_tap_bpf__destroy(b->skel);
	free(b);
}

#endif
