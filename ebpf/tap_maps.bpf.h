// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the programs of giop_tap.bpf.c share: the filters user space sets
 * before loading (read-only data), the maps, the tables in .bss, the
 * counters.  Included by giop_tap.bpf.c only, first. */
#ifndef GS_TAP_MAPS_BPF_H
#define GS_TAP_MAPS_BPF_H

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define MSG_OOB 1
#define MSG_PEEK 2
#define MSG_DONTWAIT 0x40
#define MSG_ERRQUEUE 0x2000

/* Filters: set by user space before the object is loaded. */
const volatile __u32 max_message = 256u << 20;
const volatile __u32 filter_mode = GS_FILTER_PIDS;
const volatile char filter_comm[GS_TAP_COMM_LEN] = {};
const volatile bool watch_ports = false;
const volatile __u64 port_bits[GS_TAP_PORT_WORDS] = {};
const volatile __u64 wake_bytes = 1u << 20;
/* GS_FILTER_PIDS with a few pids: compared here, without a map lookup (this
 * check runs on the traced syscalls of every process of the machine) */
const volatile __u32 n_target_pids = 0;
const volatile __u32 target_pids[GS_TAP_RODATA_PIDS] = {};
/* ... and when each of them started (the leader's start_boottime lies in
 * [target_start[i], target_start[i] + start_tick_ns): /proc/PID/stat's tick):
 * a pid is only a number, and a later process that gets it must not be taken
 * for the one followed.  start_tick_ns 0: not checked. */
const volatile __u64 target_start[GS_TAP_RODATA_PIDS] = {};
const volatile __u64 start_tick_ns = 0;
/* --port, --comm: only sockets of this network namespace (its inode; 0: any),
 * the one the packet tap sees */
const volatile __u32 netns_ino = 0;
/* slots of fcache in use (--map-fcache): a power of two <= FC_SLOTS, or 0:
 * every framing state in `flows` */
const volatile __u32 fc_slots = GS_TAP_FCACHE_SLOTS;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, struct gs_tap_flow);
	__type(value, struct gs_tap_fstate);
} flows SEC(".maps");

/* The framing state of a connection direction, direct-mapped by its 4-tuple
 * (`fcache`, an array of FC_SLOTS slots: its lookup is inlined, a few
 * instructions): the common packet finds its state with a hash of a few words
 * and one comparison of the key, without a hash-map lookup (the largest single
 * step of a tap run: docs/benchmarks.md, bench-attach-kernel).  A direction
 * lives in one place, its slot or `flows`: it is put in its slot when it is
 * created and the slot is free or idle, in `flows` otherwise (counted:
 * fcache_hashed), and stays where it was put, but for an idle slot taken by a
 * new direction: the old state moves to `flows` first (counted:
 * fcache_evicted), so a direction that comes back finds it there.
 *
 * `use`: 0 free, FC_BUSY while one CPU (re)writes the slot, else the time
 * (CLOCK_MONOTONIC ns) after which the slot counts as idle and may be taken:
 * FC_IDLE_NS past the direction's last packet, FC_CLOSE_NS past its first FIN
 * or RST (then with FC_CLOSED set: not renewed but by a SYN).
 * A packet renews it only once half of FC_IDLE_NS is gone, by a compare and
 * exchange (never overwriting FC_BUSY).  Taking a slot needs it idle (no
 * packet for FC_IDLE_NS; a program run is microseconds) and a compare and
 * exchange, so one CPU takes it and none is still framing with the old state;
 * a CPU that creates the same direction while the slot is FC_BUSY waits a
 * bounded while for the writer, then uses what it wrote (if the writer has
 * not finished by then -- a send/recv hook interrupted on this very CPU by the
 * packet tap -- the direction goes to `flows` as well, and that one packet's
 * framing is kept there, not in the slot the next packets find).
 *
 * Two CPUs can frame one direction at once (two segments reaching the veth
 * together): in a slot both work on the same state, as they did on the hash
 * map's value.  A direction in `flows` is framed by the packet tap in a copy,
 * this CPU's spare entry after the slots (FC_SLOTS + cpu: tc programs do not
 * nest on a CPU), written back after the framing: so that the verifier sees
 * one kind of state pointer (a second kind doubled the states it walks, past
 * its limit); there, of two CPUs at once the later write-back wins. */
#define FC_SLOTS GS_TAP_FCACHE_SLOTS
#define FC_BUSY 1ull
#define FC_CLOSED 2ull  /* in a time: a FIN or RST was seen (the ns lose a bit) */
#define FC_IDLE_NS 1000000000ull
#define FC_CLOSE_NS 10000000ull
#define FC_SPIN 64

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FC_SLOTS + GS_TAP_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct gs_tap_fcache);
} fcache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);     /* the process's start, as target_start */
} pids SEC(".maps");

/* By ifindex (an array: its lookup is a few instructions, on every packet):
 * l2_len + 1 of a tapped interface, 0 for the others. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GS_TAP_MAX_IFINDEX);
	__type(key, __u32);
	__type(value, struct gs_tap_iface);
} ifaces SEC(".maps");

/* Sockets a followed process was seen using, whose flows are in `flows`
 * (struct gs_tap_watch in giop_tap.h, direct-mapped by the connection's ports
 * and addresses, the tag; the socket's address tells a later connection with
 * the same tag apart): a send or recv on a known socket does not look at
 * `flows` again.  Which threads send on it: reading the user buffer costs a
 * send a quarter of a microsecond, and its first bytes are only needed where
 * threads send on one connection at once (they enter send in one order and
 * queue their bytes in another): a send by the thread that sent last on the
 * socket, when no other thread has sent on it for SWITCH_QUIET_NS, does
 * without them.  (Should another thread enter a send at that very moment, the
 * other send has them, and user space finds the instant of this one by its
 * sequence number, or not at all: an empty column, never a wrong one.)
 *
 * And the send waiting for its segment: a send without head is not written
 * into the ring at once (a ring record of its own is the dearer part of a run:
 * docs/benchmarks.md, bench-attach-kernel) but left in its
 * socket's slot; the packet tap that sees the segment carrying its first byte
 * takes it into that segment's record.  Sends that are not taken so (nothing
 * sent yet when the next send comes, data leaving by an interface not tapped,
 * the slot wanted by another socket) become GS_REC_SEND records as before:
 * at the next send on the socket, when the slot changes hands, or read out of
 * this table by user space at each poll (it is in .bss: mapped).  Either way
 * a send reaches user space before the segment that carries its first byte,
 * as when it had a record of its own. */
#define SWITCH_QUIET_NS 1000000ull

struct gs_tap_watch watch_tab[GS_TAP_WATCH_SLOTS] __attribute__((aligned(64)));

/* A segment record with more than one message head is put together here
 * before it is copied into the ring (the common ones are written straight into
 * the ring).  tc programs do not nest on one CPU (egress runs with bottom
 * halves off, ingress in the softirq), so one per CPU is enough. */
struct scratch {
	/* the record: header, heads, data (its offset depends on the number of
	 * heads); room for masked offsets and lengths to stay inside */
	__u8 rec[sizeof(struct gs_tap_seg) + GS_TAP_HEADS * sizeof(struct gs_tap_head) +
		 2 * GS_TAP_DATA_MAX + GS_TAP_HEAD_MAX];
	/* one_fast's syscalls taken (its stack and the tap's together would
	 * pass the verifier's 512 bytes) */
	struct gs_tap_seg_fold fold;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* The first interfaces' l2_len + 1, as in `ifaces` (0: none). */
const volatile __u32 ro_ifindex[GS_TAP_RODATA_IFACES] = {};
const volatile __u32 ro_l2[GS_TAP_RODATA_IFACES] = {};
const volatile bool ifaces_in_map = false;
/* the syscall probes are loaded: sends may wait in watch_tab for the packet tap */
const volatile bool fold_sends = false;

/* The socket file_operations (all sockets share them), learned from the first
 * socket whose inode said so: then one comparison tells a socket. */
__u64 sock_fops;

__u64 counters[GS_TAP_MAX_CPUS][GS_TAP_CNT_ROW];

static __always_inline void count(__u32 idx)
{
	__u32 cpu = bpf_get_smp_processor_id() & (GS_TAP_MAX_CPUS - 1);
	counters[cpu][idx & (GS_TAP_CNT_ROW - 1)] += 1;
}

static __always_inline bool port_watched(__u16 port)
{
	return (port_bits[(port >> 6) & (GS_TAP_PORT_WORDS - 1)] >> (port & 63)) & 1;
}

/* No wake-up per record (a woken reader per packet would change what is
 * measured): the reader polls; a ring past wake_bytes wakes it at once. */
static __always_inline __u64 wake_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* Helpers newer than the oldest kernel the tap loads on are used only where
 * the running kernel has them (CO-RE: the enum's value in its BTF, a
 * constant the verifier prunes on): a kernel without one loses that one
 * feature, not the object. */
#define HAS_HELPER(name) bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_##name)

/* CLOCK_MONOTONIC, coarse where the kernel has it (5.11+: a tick's
 * resolution is enough for an idle timeout, at a fraction of the cost) */
static __always_inline __u64 coarse_now(void)
{
	if (HAS_HELPER(ktime_get_coarse_ns))
		return bpf_ktime_get_coarse_ns();
	return bpf_ktime_get_ns();
}

/* A length the verifier knows to lie in [1, mask + 1] (mask: a power of two
 * less one), for the helpers that refuse a zero-sized read: 1 <= n is lost on
 * a spill by older verifiers (6.1), a mask of n - 1 plus one is not. */
static __always_inline __u32 len_1_to(__u32 n, __u32 mask)
{
	__u32 m = n - 1;
	barrier_var(m);
	m &= mask;
	return m + 1;
}

static __always_inline bool flow_eq(const struct gs_tap_flow *x, const struct gs_tap_flow *y)
{
	const __u64 *a = (const __u64 *)x, *b = (const __u64 *)y;
	for (int i = 0; i < (int)(sizeof *x / 8); i++)
		if (a[i] != b[i])
			return false;
	return true;
}

#endif
