/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/tc_floor.c -- a bench-only tc tap: loads bench/tc_floor.bpf.c onto one
 * interface's ingress and egress the way `giopscope attach` puts its packet tap there (TCX
 * links, probe/attach_bpf.c attach_tcx), or for the variant clsact the empty program through a
 * clsact qdisc and a cls_bpf filter in direct-action mode (what `tc filter add dev IF ingress
 * bpf da obj ...` makes), prints one ready line and runs until SIGINT or SIGTERM; then it takes
 * the hooks away and prints what its programs counted.  No reader by default: ring records
 * (variant ring) pile up in the ring as they do under a frozen attach (bench/attach_toggle.sh
 * attach_frozen); with -c MS a reader takes them out every MS milliseconds, as attach's does
 * (it polls), doing nothing with them.
 *
 * usage: tc_floor -i IFACE [-v empty|headers|ring|ring2|store|batch|stagew|coldw|clsact] [-r RING_MIB] [-c POLL_MS] [-n STAGE_N]
 * Run it in the interface's network namespace (ip netns exec NS ...).
 * exit: 0 ok, 1 bad input, 2 usage or environment (not root, no TCX, ...). */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "giop_tap.h"
#include "tc_floor.h"
/* the generated skeleton casts its embedded object's const away */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "tc_floor.skel.h"
#pragma GCC diagnostic pop

#define TCF_TCX_INGRESS 46 /* BPF_TCX_INGRESS, BPF_TCX_EGRESS: libbpf 1.1's headers predate them */
#define TCF_TCX_EGRESS 47

struct floor {
	struct tc_floor_bpf *skel;
	unsigned ifindex;
	bool clsact;
	int links[2];
	struct bpf_tc_hook hook;
	bool hook_made;
	struct bpf_tc_opts opts[2];
	int n_opts;
};

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int on_record(void *ctx, void *data, size_t size)
{
	(void)data;
	*(unsigned long long *)ctx += size;
	return 0;
}

static void on_signal(int sig)
{
	(void)sig; /* taken by sigwait: the handler only keeps the signal from being ignored */
}

static int parse_mib(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1024 || (v & (v - 1)))
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_ms(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 10000)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int attach(struct floor *f, const char *iface)
{
	int fd[2] = { bpf_program__fd(f->skel->progs.tc_floor_ingress), bpf_program__fd(f->skel->progs.tc_floor_egress) };
	if (!f->clsact) {
		for (int k = 0; k < 2; k++) {
			f->links[k] = bpf_link_create(fd[k], (int)f->ifindex,
						      (enum bpf_attach_type)(k == 0 ? TCF_TCX_INGRESS : TCF_TCX_EGRESS), NULL);
			if (f->links[k] < 0) {
				fprintf(stderr, "tc_floor: cannot attach to %s %s (TCX, kernel 6.6 or later): %s\n", iface,
					k == 0 ? "ingress" : "egress", strerror(-f->links[k]));
				return -1;
			}
		}
		return 0;
	}
	memset(&f->hook, 0, sizeof f->hook);
	f->hook.sz = sizeof f->hook;
	f->hook.ifindex = (int)f->ifindex;
	f->hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	int rc = bpf_tc_hook_create(&f->hook);
	if (rc && rc != -EEXIST) {
		fprintf(stderr, "tc_floor: cannot add a clsact qdisc to %s: %s\n", iface, strerror(-rc));
		return -1;
	}
	f->hook_made = rc == 0;
	for (int k = 0; k < 2; k++) {
		struct bpf_tc_hook h = f->hook;
		h.attach_point = k == 0 ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		memset(&f->opts[k], 0, sizeof f->opts[k]);
		f->opts[k].sz = sizeof f->opts[k];
		f->opts[k].prog_fd = fd[k];
		f->opts[k].flags = BPF_TC_F_REPLACE;
		f->opts[k].handle = 1;
		f->opts[k].priority = 1;
		rc = bpf_tc_attach(&h, &f->opts[k]);
		if (rc) {
			fprintf(stderr, "tc_floor: cannot add a bpf filter to %s %s: %s\n", iface,
				k == 0 ? "ingress" : "egress", strerror(-rc));
			return -1;
		}
		f->n_opts = k + 1;
	}
	return 0;
}

static void detach(struct floor *f)
{
	for (int k = 0; k < 2; k++)
		if (f->links[k] >= 0)
			close(f->links[k]);
	for (int k = 0; k < f->n_opts; k++) {
		struct bpf_tc_hook h = f->hook;
		h.attach_point = k == 0 ? BPF_TC_INGRESS : BPF_TC_EGRESS;
		f->opts[k].prog_fd = 0;
		f->opts[k].prog_id = 0;
		f->opts[k].flags = 0;
		bpf_tc_detach(&h, &f->opts[k]);
	}
	if (f->hook_made)
		bpf_tc_hook_destroy(&f->hook);
}

int main(int argc, char **argv)
{
	const char *iface = NULL, *vname = "empty";
	unsigned ring_mib = 256, poll_ms = 0, stage_n = TCF_STAGE_N;
	struct ring_buffer *rb = NULL;
	unsigned long long taken = 0;
	enum tc_floor_variant v = TCF_EMPTY;
	struct floor f = { .links = { -1, -1 } };
	sigset_t set;
	int opt, sig, rc = 0;

	while ((opt = getopt(argc, argv, "i:v:r:c:n:h")) != -1) {
		switch (opt) {
		case 'i': iface = optarg; break;
		case 'v': vname = optarg; break;
		case 'r':
			if (parse_mib(optarg, &ring_mib)) {
				fprintf(stderr, "tc_floor: -r %s: a power of two of MiB, 1..1024\n", optarg);
				return 1;
			}
			break;
		case 'c':
			if (parse_ms(optarg, &poll_ms)) {
				fprintf(stderr, "tc_floor: -c %s: milliseconds, 1..10000\n", optarg);
				return 1;
			}
			break;
		case 'n': {
			char *end;
			unsigned long n;
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || n < 1 || n > TCF_STAGE_N) {
				fprintf(stderr, "tc_floor: -n %s: records a staging area holds, 1..%d\n", optarg, TCF_STAGE_N);
				return 1;
			}
			stage_n = (unsigned)n;
			break;
		}
		default:
			fprintf(stderr, "usage: tc_floor -i IFACE [-v empty|headers|ring|ring2|store|batch|stagew|coldw|clsact] [-r RING_MIB] [-c POLL_MS] [-n STAGE_N]\n");
			return 2;
		}
	}
	if (!iface || optind != argc) {
		fprintf(stderr, "usage: tc_floor -i IFACE [-v empty|headers|ring|ring2|store|batch|stagew|coldw|clsact] [-r RING_MIB] [-c POLL_MS] [-n STAGE_N]\n");
		return 2;
	}
	if (strcmp(vname, "empty") == 0)
		v = TCF_EMPTY;
	else if (strcmp(vname, "headers") == 0)
		v = TCF_HEADERS;
	else if (strcmp(vname, "ring") == 0)
		v = TCF_RING;
	else if (strcmp(vname, "store") == 0)
		v = TCF_STORE;
	else if (strcmp(vname, "ring2") == 0)
		v = TCF_RING2;
	else if (strcmp(vname, "batch") == 0)
		v = TCF_BATCH;
	else if (strcmp(vname, "stagew") == 0)
		v = TCF_STAGEW;
	else if (strcmp(vname, "coldw") == 0)
		v = TCF_COLDW;
	else if (strcmp(vname, "clsact") == 0)
		f.clsact = true;
	else {
		fprintf(stderr, "tc_floor: unknown variant '%s' (empty headers ring ring2 store batch stagew coldw clsact)\n", vname);
		return 1;
	}
	f.ifindex = if_nametoindex(iface);
	if (!f.ifindex) {
		fprintf(stderr, "tc_floor: no interface %s here: %s\n", iface, strerror(errno));
		return 1;
	}
	libbpf_set_print(silent);
	f.skel = tc_floor_bpf__open();
	if (!f.skel) {
		fprintf(stderr, "tc_floor: cannot open the BPF object: %s\n", strerror(errno));
		return 2;
	}
	f.skel->rodata->variant = (uint32_t)v;
	f.skel->rodata->stage_n = stage_n;
	/* as attach (probe/attach_bpf.c): a record forces a wake-up only past a quarter of the ring
	 * (with the bpf side's 1 MiB default, records piling up without a reader would each raise
	 * an irq_work past the first MiB) */
	f.skel->rodata->wake_bytes = ((uint64_t)ring_mib << 20) / 4;
	if (bpf_map__set_max_entries(f.skel->maps.events, ring_mib << 20) ||
	    bpf_map__set_max_entries(f.skel->maps.events_in, v == TCF_RING2 ? ring_mib << 20 : 4096) ||
	    tc_floor_bpf__load(f.skel)) {
		fprintf(stderr, "tc_floor: cannot load the BPF object (root?): %s\n", strerror(errno));
		tc_floor_bpf__destroy(f.skel);
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (attach(&f, iface)) {
		detach(&f);
		tc_floor_bpf__destroy(f.skel);
		return 2;
	}
	if (poll_ms) {
		rb = ring_buffer__new(bpf_map__fd(f.skel->maps.events), on_record, &taken, NULL);
		if (!rb) {
			fprintf(stderr, "tc_floor: cannot map the ring: %s\n", strerror(errno));
			detach(&f);
			tc_floor_bpf__destroy(f.skel);
			return 2;
		}
	}
	fprintf(stderr, "tc_floor: %s on %s ingress + egress (%s), ring %u MiB, reader %s: ready\n", vname, iface,
		f.clsact ? "clsact qdisc, cls_bpf direct-action" : "TCX links", ring_mib, poll_ms ? "polling" : "none");
	if (!poll_ms) {
		if (sigwait(&set, &sig))
			rc = 2;
	} else {
		/* the reader: the ring emptied every poll_ms until a signal */
		struct timespec ts = { .tv_sec = poll_ms / 1000, .tv_nsec = (long)(poll_ms % 1000) * 1000000L };
		for (;;) {
			sig = sigtimedwait(&set, NULL, &ts);
			if (sig > 0)
				break;
			if (errno != EAGAIN && errno != EINTR) {
				rc = 2;
				break;
			}
			if (ring_buffer__consume(rb) < 0) {
				rc = 2;
				break;
			}
		}
	}
	detach(&f);
	{
		unsigned long long c[TCF_CNT_ROW] = { 0 };
		for (int cpu = 0; cpu < TCF_MAX_CPUS; cpu++)
			for (int k = 0; k < TCF_CNT_ROW; k++)
				c[k] += f.skel->bss->counters[cpu][k];
		fprintf(stderr, "tc_floor: %s: runs ingress %llu egress %llu, IPv4/TCP %llu, ring full %llu (empty, clsact: not counted), %llu bytes read\n",
			vname, c[TCF_CNT_IN], c[TCF_CNT_OUT], c[TCF_CNT_TCP], c[TCF_CNT_RB_LOST], taken);
		if (v == TCF_BATCH || v == TCF_STAGEW)
			fprintf(stderr, "tc_floor: batch: flushes full %llu aged %llu timer %llu, records flushed %llu lost %llu, "
				"timer starts %llu callbacks %llu off-CPU %llu, ns in callbacks %llu\n",
				c[TCF_CNT_B_FULL], c[TCF_CNT_B_AGED], c[TCF_CNT_B_TIMER], c[TCF_CNT_B_RECS],
				c[TCF_CNT_B_LOST_RECS], c[TCF_CNT_B_ARMED], c[TCF_CNT_B_FIRED], c[TCF_CNT_B_ODDCPU], c[TCF_CNT_B_CB_NS]);
	}
	ring_buffer__free(rb);
	tc_floor_bpf__destroy(f.skel);
	return rc;
}
