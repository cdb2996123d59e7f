/* SPDX-License-Identifier: BSD-2-Clause */
/* Loading and attaching the eBPF taps of `giopscope attach` (ebpf/giop_tap.bpf.c)
 * and reading their ring buffer.  The only file that sees libbpf and the
 * skeleton; without them (a build with no eBPF) gs_attach_bpf_open says so.
 *
 * The send/recv hooks are chosen per side by probing the kernel, best first
 * (attach_hooks.h); the packet tap goes on TCX links or, before 6.6, tc
 * clsact filters (attach_tc.h).  Everything but clsact filters is owned by a
 * file descriptor of this process (links, maps, nothing pinned): the kernel
 * detaches it however the process ends; the filters are taken away by
 * gs_attach_bpf_close, and a later start removes those a SIGKILL left. */
#ifndef GS_ATTACH_BPF_H
#define GS_ATTACH_BPF_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ebpf/giop_tap.h"
#include "attach_hooks.h"
#include "attach_load.h"
#include "attach_tc.h"

struct gs_attach_bpf;

struct gs_attach_iface {
	char name[IF_NAMESIZE];
	int ifindex;
	uint32_t l2_len;          /* link-layer header bytes before IP */
	bool loopback;            /* each packet passes twice: tapped on ingress only */
};

struct gs_attach_bpf_cfg {
	int filter;               /* enum gs_tap_filter */
	const uint32_t *pids;     /* GS_FILTER_PIDS */
	uint32_t n_pids;
	/* when each pid's process started (CLOCK_BOOTTIME ns, the start of its
	 * /proc/PID/stat tick) and the tick's length: the kernel follows that
	 * process, not a later one that gets the same pid (NULL: not checked) */
	const uint64_t *pid_start;
	uint64_t start_tick_ns;
	char comm[GS_TAP_COMM_LEN]; /* GS_FILTER_COMM */
	const uint8_t *ports;     /* 8192-byte bitmap of watched ports, or NULL */
	const struct gs_attach_iface *ifaces;
	uint32_t n_ifaces;
	bool syscalls;            /* the send/recv hooks too (else the packet tap only) */
	enum gs_hooks_mode hooks; /* --hooks (--syscall-hooks: syscalls) */
	enum gs_tc_mode tc;       /* --tc-attach */
	uint32_t ring_bytes;      /* a power of two, at least a page */
	uint32_t max_flows;       /* framing states (directions) kept */
	uint32_t fcache_slots;    /* ... of them direct-mapped first: 0 or a power of two <= GS_TAP_FCACHE_SLOTS */
	uint32_t max_message;
	uint32_t netns_ino;       /* sockets of this netns only (0: any; --pid: any) */
};

/* Called for each ring-buffer record, in ring order. */
typedef void (*gs_attach_record_fn)(void *arg, const void *rec, size_t len);

/* False in a build without eBPF, with the reason in `err`. */
bool gs_attach_bpf_built(char *err, size_t errlen);
/* Loads, fills the filter maps, attaches.  0, or 2 with the reason in `err`. */
int gs_attach_bpf_open(struct gs_attach_bpf **out, const struct gs_attach_bpf_cfg *cfg,
		       gs_attach_record_fn fn, void *arg, char *err, size_t errlen);
/* Waits up to `timeout_ms` for a wake-up, then hands over every record there
 * is (records do not wake the reader: see giop_tap.bpf.c).  Returns the number
 * of records, or a negative errno value. */
int gs_attach_bpf_poll(struct gs_attach_bpf *b, int timeout_ms);
/* The kernel side's counters (enum gs_tap_counter), summed over the CPUs. */
void gs_attach_bpf_counters(const struct gs_attach_bpf *b, uint64_t out[GS_CNT__MAX]);
/* The ring buffer's map, for other eBPF objects to write into (the TLS
 * probes: one ring, one order).  -ENOSYS in a build without eBPF. */
int gs_attach_bpf_ring_fd(const struct gs_attach_bpf *b);
/* Where the send/recv instants come from ("tcp_sendmsg_locked +
 * sock_recv_length (tp_btf)", "syscalls (fallback)", "none (packets only)")
 * and how the tap is attached ("tcx", "clsact"), for attach's first line. */
void gs_attach_bpf_paths(const struct gs_attach_bpf *b, char *buf, size_t len);
const char *gs_attach_bpf_tc(const struct gs_attach_bpf *b);
/* attach --check: loads each program attach would use with `cfg` (and each
 * candidate of the send/recv sides) alone, attaching nothing; a row each.
 * Returns how many of the programs attach would use were refused (a side
 * with no path that loads counts one). */
int gs_attach_bpf_check(const struct gs_attach_bpf_cfg *cfg, gs_verdict_fn fn, void *arg);
/* Detaches and frees everything. */
void gs_attach_bpf_close(struct gs_attach_bpf *b);

#endif
