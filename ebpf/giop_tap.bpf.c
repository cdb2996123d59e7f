// SPDX-License-Identifier: GPL-2.0
/* The kernel side of `giopscope attach`.
 *
 * Packet tap (tc, attached as TCX links: owned by the probe's file
 * descriptors, so a killed probe leaves nothing behind): for the TCP
 * connections it watches, every segment becomes a small record (time, flow,
 * seq, ack, length, flags, window) plus the first GS_TAP_HEAD_MAX bytes of each
 * GIOP message that starts in it -- never whole payloads.  Where messages start
 * is found by framing each direction with the GIOP header's size field; the
 * framing state lives in a direct-mapped table, `fcache` (no hash lookup for
 * the common packet), and in the LRU hash `flows` for the directions whose
 * slot another one holds.
 *
 * Send/recv hooks of the followed processes: a send entering TCP (t1/t5: the
 * process hands the bytes to the kernel) and a socket receive returning (t4/t8:
 * the process has them), with the TCP sequence number of the first byte, so
 * that user space places each message's first and last byte exactly.  By
 * default the socket layer's tracepoints tcp:tcp_sendmsg_locked and
 * sock:sock_recv_length (tp_btf, or raw_tp where tp_btf is refused), which run
 * for socket sends and receives only; the syscall hooks (raw_syscalls
 * sys_enter/sys_exit, on every syscall of the host) are the fallback for
 * kernels without them (user space loads one set: probe/attach_bpf.c).
 *
 * Everything goes through one ring buffer, in the order it happened.  Records
 * do not wake the reader (it polls); a ring filling past wake_bytes does.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "giop_tap.h"
#include "giop_frame.bpf.h"
#include "sock.bpf.h"

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
/* A record carries GS_TAP_HEADS heads; a segment that starts more messages
 * (oneway floods: omniORB coalesces many small Requests into one send) goes on
 * in records of their own (seg_more), up to GS_TAP_FRAME_HEADS_MAX starts. */
#define FRAME_STEPS GS_TAP_HEADS
#define MORE_RECORDS (GS_TAP_FRAME_HEADS_MAX / GS_TAP_HEADS - 1)
/* scanned for a header when framing is lost: SCAN_CHUNKS * SCAN_STEP bytes */
#define SCAN_CHUNKS 8
#define SCAN_STEP 52
#define SCAN_LOAD (SCAN_STEP + GIOP_HDR)

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

/* ------------------------------------------------------------ waiting sends */

/* The tag of a connection (direction local -> remote) and its slot in
 * watch_tab (from the connection: a pointer may not be computed with). */
static __always_inline struct gs_tap_watch *watch_of(const struct gs_tap_flow *out, __u64 *tag)
{
	const __u32 *a = (const __u32 *)out->saddr, *b = (const __u32 *)out->daddr;
	__u64 t = ((__u64)out->sport << 48 | (__u64)out->dport << 32 | out->family) ^
		  ((__u64)(a[0] ^ a[3]) << 16) ^ (b[0] ^ b[3]);
	__u32 idx = ((__u32)(t ^ (t >> 32)) * 0x9E3779B1u) >> 20;
	*tag = t;
	return &watch_tab[idx & (GS_TAP_WATCH_SLOTS - 1)];
}

static __always_inline bool flow_eq(const struct gs_tap_flow *x, const struct gs_tap_flow *y)
{
	const __u64 *a = (const __u64 *)x, *b = (const __u64 *)y;
	for (int i = 0; i < (int)(sizeof *x / 8); i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* ------------------------------------------------------------ framing state */

#define FC_READ(x) (*(volatile __u64 *)&(x))

/* Always 0, in .bss (the verifier takes it for any value): or'ed into a
 * slot index so that with one slot (--map-fcache 1) the index is not the
 * constant 0 to the verifier, which then walked the tap's paths apart, past
 * its limit of a million instructions, as it does not with more slots. */
__u32 fc_blur;

static __always_inline __u32 fc_index(const struct gs_tap_flow *f)
{
	const __u32 *w = (const __u32 *)f;
	__u32 h = ((w[0] ^ w[3]) * 0x85EBCA6Bu) ^ (w[4] ^ w[7]) ^ (w[8] * 0xC2B2AE35u);
	return ((((h * 0x9E3779B1u) >> 20) & (fc_slots - 1)) | fc_blur) & (FC_SLOTS - 1);
}

/* The slot of direction f in fcache (NULL only to please the verifier). */
static __always_inline struct gs_tap_fcache *fc_slot_of(const struct gs_tap_flow *f, __u32 *idx)
{
	*idx = fc_index(f);
	return bpf_map_lookup_elem(&fcache, idx);
}

static __always_inline bool fc_holds(struct gs_tap_fcache *s, const struct gs_tap_flow *f)
{
	return FC_READ(s->use) > FC_BUSY && flow_eq(&s->key, f);
}

/* The framing state of direction f: in its slot, in `flows`, or nowhere
 * (NULL).  For the send/recv hooks (the packet tap: fc_get). */
static __always_inline struct gs_tap_fstate *fstate_find(const struct gs_tap_flow *f)
{
	__u32 idx;
	struct gs_tap_fcache *s = fc_slot_of(f, &idx);
	if (fc_slots && s && fc_holds(s, f))
		return &s->st;
	return bpf_map_lookup_elem(&flows, f);
}

/* A packet of the slot's direction at `now`: the slot stays its own for
 * FC_IDLE_NS more (renewed only once half of it is gone), or only FC_CLOSE_NS
 * after its first FIN or RST (FC_CLOSED: the ACKs that follow do not renew it;
 * a SYN, a new connection on the 4-tuple, does).  A failed exchange: another
 * CPU renewed it, or takes it. */
static __always_inline void fc_renew(struct gs_tap_fcache *s, __u32 tcp_flags, __u64 now)
{
	__u64 u = FC_READ(s->use), nu;
	if (u <= FC_BUSY)
		return;
	if (tcp_flags & TCP_SYN)
		nu = (now + FC_IDLE_NS) & ~FC_CLOSED;
	else if (u & FC_CLOSED)
		return;
	else if (tcp_flags & (TCP_FIN | TCP_RST))
		nu = (now + FC_CLOSE_NS) | FC_CLOSED;
	else if ((__s64)(u - now) < (__s64)(FC_IDLE_NS / 2))
		nu = (now + FC_IDLE_NS) & ~FC_CLOSED;
	else
		return;
	__sync_val_compare_and_swap(&s->use, u, nu);
}

/* A new framing state `init` for direction f, found in neither place: in its
 * slot if that is free or idle (an idle one's state moved to `flows` first;
 * *idx: the slot's index), in `flows` otherwise (*idx: FC_SLOTS).  NULL:
 * `flows` had no room. */
static __always_inline struct gs_tap_fstate *fstate_new(const struct gs_tap_flow *f,
							const struct gs_tap_fstate *init, __u64 now,
							__u32 *idx)
{
	struct gs_tap_fcache *s = fc_slot_of(f, idx);
	__u64 u;
	if (!s)
		return NULL;
	if (!fc_slots)
		goto hashed;
	u = FC_READ(s->use);
	for (int i = 0; i < FC_SPIN && u == FC_BUSY; i++)
		u = FC_READ(s->use);
	if (u > FC_BUSY && flow_eq(&s->key, f))
		return &s->st;  /* another CPU has just put it there */
	/* free, or idle (never FC_BUSY: another CPU is writing it) */
	if ((u == 0 || (u > FC_BUSY && (__s64)(u - now) < 0)) &&
	    __sync_val_compare_and_swap(&s->use, u, FC_BUSY) == u) {
		if (u) {
			bpf_map_update_elem(&flows, &s->key, &s->st, BPF_ANY);
			count(GS_CNT_FCACHE_EVICTED);
		}
		s->key = *f;
		s->st = *init;
		/* key and state before the slot is seen in use (x86 does not
		 * reorder stores with stores; this keeps the compiler from it) */
		asm volatile("" ::: "memory");
		FC_READ(s->use) = (now + FC_IDLE_NS) & ~FC_CLOSED;
		count(GS_CNT_FLOWS_NEW);
		return &s->st;
	}
hashed:
	*idx = FC_SLOTS;
	if (bpf_map_update_elem(&flows, f, init, BPF_NOEXIST) == 0) {
		count(GS_CNT_FLOWS_NEW);
		if (fc_slots)
			count(GS_CNT_FCACHE_HASHED);
	}
	return bpf_map_lookup_elem(&flows, f);
}

/* The packet tap's framing state for a segment of direction f (TCP flags
 * `tcp_flags`, sequence number `seq`), found or created: its index in fcache,
 * the direction's slot or (>= FC_SLOTS) this CPU's spare entry holding a copy
 * of its `flows` entry, for fc_put_back; -1: none (a direction nobody follows,
 * or no room).  A global function: the verifier walks it once, and the tap
 * after it sees one outcome (an index) whichever way the state was found. */
__attribute__((noinline)) int fc_get(const struct gs_tap_flow *f, __u32 seq, __u32 tcp_flags)
{
	struct gs_tap_fcache *s, *spare;
	struct gs_tap_fstate *st;
	__u64 now = bpf_ktime_get_coarse_ns();
	__u32 idx;
	if (!f)
		return -1;
	s = fc_slot_of(f, &idx);
	if (!s)
		return -1;
	if (fc_slots && fc_holds(s, f)) {
		st = &s->st;
		fc_renew(s, tcp_flags, now);
	} else if ((st = bpf_map_lookup_elem(&flows, f))) {
		idx = FC_SLOTS;
	} else {
		struct gs_tap_fstate init = {};
		if (!watch_ports || !(port_watched(f->sport) || port_watched(f->dport)))
			return -1;
		if (tcp_flags & TCP_RST)
			return -1;
		if (tcp_flags & TCP_SYN) {
			init.mode = GS_FS_SYNC;
			init.next_hdr = seq + 1;
		} else {
			count(GS_CNT_FLOWS_MIDSTREAM);
		}
		st = fstate_new(f, &init, now, &idx);
		if (!st) {
			count(GS_CNT_FLOW_MAP_FULL);
			return -1;
		}
		tcp_flags &= ~TCP_SYN;  /* just made for it */
	}
	if (tcp_flags & TCP_SYN) {
		/* a new connection on the 4-tuple: frame from its first byte */
		__builtin_memset(st, 0, sizeof *st);
		st->mode = GS_FS_SYNC;
		st->next_hdr = seq + 1;
	}
	if (idx < FC_SLOTS)
		return idx;
	idx = FC_SLOTS + (bpf_get_smp_processor_id() & (GS_TAP_MAX_CPUS - 1));
	spare = bpf_map_lookup_elem(&fcache, &idx);
	if (!spare)
		return -1;
	spare->st = *st;
	return idx;
}

/* The common packet's framing state: its direction holds its fcache slot (and
 * no SYN: fc_get starts a new connection's framing).  The slot's index, the
 * slot renewed as fc_get renews it; -1: ask fc_get.  Inlined in the tap. */
static __always_inline int fc_fast(const struct gs_tap_flow *f, __u32 tcp_flags)
{
	struct gs_tap_fcache *s;
	__u32 idx;
	if (!fc_slots || (tcp_flags & TCP_SYN))
		return -1;
	s = fc_slot_of(f, &idx);
	if (!s || !fc_holds(s, f))
		return -1;
	fc_renew(s, tcp_flags, bpf_ktime_get_coarse_ns());
	return (int)idx;
}

/* A spare entry's state (fc_get) back into `flows`. */
static __always_inline void fc_put_back(const struct gs_tap_flow *f, __u32 idx, const struct gs_tap_fstate *st)
{
	struct gs_tap_fstate *h;
	if (idx < FC_SLOTS)
		return;
	h = bpf_map_lookup_elem(&flows, f);
	if (h)
		*h = *st;
}

/* A waiting syscall as the GS_REC_SEND/GS_REC_RECV record it stands for (no
 * head: only syscalls without one wait in watch_tab); `fl`: the socket's
 * connection, local -> remote.  0, or -1: the ring is full (not counted here:
 * the caller may keep it waiting). */
static __always_inline int sys_rec(const struct gs_tap_fold_ev *ev, const struct gs_tap_flow *fl, bool send)
{
	struct gs_tap_sys *r = bpf_ringbuf_reserve(&events, GS_TAP_SYS_SHORT, 0);
	if (!r)
		return -1;
	r->kind = send ? GS_REC_SEND : GS_REC_RECV;
	r->tgid = ev->tgid;
	r->tid = ev->tid;
	r->seq = ev->seq;
	r->ts_ns = ev->ts_ns;
	r->ts_enter = 0;
	if (send) {
		r->flow = *fl;
	} else {
		__builtin_memcpy(r->flow.saddr, fl->daddr, 16);
		__builtin_memcpy(r->flow.daddr, fl->saddr, 16);
		r->flow.sport = fl->dport;
		r->flow.dport = fl->sport;
		r->flow.family = fl->family;
		r->flow.pad[0] = r->flow.pad[1] = r->flow.pad[2] = 0;
	}
	r->len = ev->len;
	r->call = ev->call;
	r->head_len = 0;
	r->pad = 0;
	bpf_ringbuf_submit(r, wake_flags());
	return 0;
}

/* Holds the slot (GS_PEND_BUSY) unless another CPU does: true with what was
 * waiting in *was.  The holder ends with settle(). */
static __always_inline bool hold(struct gs_tap_watch *w, __u64 *was)
{
	__u64 o = w->state;
	if (o & GS_PEND_BUSY)
		return false;
	if (__sync_val_compare_and_swap(&w->state, o, o | GS_PEND_BUSY) != o)
		return false;
	*was = o;
	return true;
}

/* Lets go of a held slot: `state`, what waits in it now. */
static __always_inline void settle(struct gs_tap_watch *w, __u64 state)
{
	__sync_lock_test_and_set(&w->state, state);
}

/* A held slot's waiting syscalls of the kinds in `which` as records of their
 * own (in the order they happened); returns what is left waiting. */
static __always_inline __u64 flush_held(struct gs_tap_watch *w, __u64 was, __u64 which)
{
	bool send = (was & which & GS_PEND_SEND) != 0, recv = (was & which & GS_PEND_RECV) != 0;
	struct gs_tap_flow fl;
	if (!send && !recv)
		return was;
	fl = w->flow;
	if (recv && send && w->send.ts_ns < w->recv.ts_ns) {
		if (sys_rec(&w->send, &fl, true))
			count(GS_CNT_RB_LOST);
		send = false;
	}
	if (recv && sys_rec(&w->recv, &fl, false))
		count(GS_CNT_RB_LOST);
	if (send && sys_rec(&w->send, &fl, true))
		count(GS_CNT_RB_LOST);
	return was & ~which;
}

/* The packet tap, for a segment the socket of direction `fl` sends (payload
 * [seq, seq + plen)): the send whose first byte it carries and the recv
 * that came before it, if they wait.  Returns the slot, held, with the fold
 * in *fold and what stays waiting in *left (settle() it to that once the
 * record is written, to what was there if it was not); NULL: nothing taken. */
static __always_inline struct gs_tap_watch *claim(const struct gs_tap_flow *fl, __u32 seq, __u32 plen,
						  struct gs_tap_seg_fold *fold, __u64 *was, __u64 *left)
{
	__u64 tag, o, take = 0;
	struct gs_tap_watch *w = watch_of(fl, &tag);
	/* plain reads first: most segments find nothing waiting */
	o = w->state;
	if (!(o & (GS_PEND_SEND | GS_PEND_RECV)) || (o & GS_PEND_BUSY) || w->tag != tag)
		return NULL;
	if (!(o & GS_PEND_RECV) && w->send.seq - seq >= plen)
		return NULL;
	if (!hold(w, &o))
		return NULL;
	/* held now: what was read before may have changed under us */
	if (w->tag != tag || !flow_eq(&w->flow, fl)) {
		settle(w, o);
		return NULL;
	}
	fold->send.call = fold->recv.call = 0;
	if ((o & GS_PEND_SEND) && w->send.seq - seq < plen) {
		fold->send = w->send;
		take |= GS_PEND_SEND;
	}
	if (o & GS_PEND_RECV) {
		fold->recv = w->recv;
		take |= GS_PEND_RECV;
	}
	if (!take) {
		settle(w, o);
		return NULL;
	}
	*was = o;
	*left = o & ~take;
	return w;
}

/* ------------------------------------------------------------------ framing */

struct pkt;

/* in frame_ctx.flags (not the record's: seg_fill keeps 8 bits): the segment
 * is a late one, framed in this CPU's spare entry (frame()) */
#define FR_LATE 0x100

/* Framing finds where the message heads of a segment lie; their bytes are
 * loaded only when the record is written (straight into the ring). */
struct frame_ctx {
	struct __sk_buff *skb;
	struct gs_tap_fstate *st;
	__u32 seq, poff, plen;
	__u32 used;               /* head bytes so far */
	__u16 n;                  /* heads so far */
	__u16 flags;              /* GS_SEG_* found, FR_LATE */
	__u32 fi;                 /* the direction's fcache index (fc_get) */
	struct gs_tap_head heads[GS_TAP_HEADS];
	/* a segment shipped in several records (seg_more): the payload offset
	 * the record being framed covers from, and what writing it needs */
	__u32 start;
	__u32 ifindex;
	const struct pkt *p;
};

/* Notes payload bytes [pos, pos+k) as the next message head of the record. */
static __always_inline void ship(struct frame_ctx *c, __u32 pos, __u32 k)
{
	__u32 i = c->n;
	if (i >= GS_TAP_HEADS) {
		c->flags |= GS_SEG_HEADS_LOST;
		count(GS_CNT_HEADS_LOST);
		return;
	}
	if (k == 0)
		return;
	if (k > GS_TAP_HEAD_MAX)
		k = GS_TAP_HEAD_MAX;
	c->heads[i & (GS_TAP_HEADS - 1)].off = pos;
	c->heads[i & (GS_TAP_HEADS - 1)].len = k;
	c->n = i + 1;
	c->used += k;
}

static __always_inline void lose_sync(struct gs_tap_fstate *st)
{
	st->mode = GS_FS_UNSYNC;
	st->hdr_have = 0;
	st->hole_end = 0;  /* a hole still open is forgotten */
	count(GS_CNT_RESYNC);
}

struct scan_ctx {
	struct __sk_buff *skb;
	__u32 poff, plen;
	int found;                /* offset of the header, -1: none yet */
};

/* One SCAN_STEP of the payload searched for a plausible GIOP header. */
static int scan_chunk(__u32 ci, struct scan_ctx *c)
{
	__u8 scan[SCAN_LOAD + 4];
	__u32 base = ci * SCAN_STEP, k;
	if (base + GIOP_HDR > c->plen)
		return 1;
	k = c->plen - base;
	if (k > SCAN_LOAD)
		k = SCAN_LOAD;
	barrier_var(k);
	k &= 127;
	if (k < GIOP_HDR || k > SCAN_LOAD || bpf_skb_load_bytes(c->skb, c->poff + base, scan, k))
		return 1;
	for (__u32 j = 0; j < SCAN_STEP; j++) {
		if (j + GIOP_HDR > k)
			return 1;
		if (scan[j] == 'G' && giop_msg_len(scan + j, max_message)) {
			c->found = (int)(base + j);
			return 1;
		}
	}
	return 0;
}

/* The first SCAN_CHUNKS * SCAN_STEP bytes of payload [poff, poff + plen)
 * searched for a plausible GIOP header: its offset, or -1.  A global function:
 * the verifier walks the byte loop once, whatever state the tap is in when it
 * calls it (a static callback is walked again for every caller state, and the
 * byte loop's branches keep those states from merging). */
__attribute__((noinline)) int scan_header(struct __sk_buff *skb, __u32 poff, __u32 plen)
{
	struct scan_ctx s = { .skb = skb, .poff = poff, .plen = plen, .found = -1 };
	if (!skb)
		return -1;
	bpf_loop(SCAN_CHUNKS, scan_chunk, &s, 0);
	return s.found;
}

/* A header cut by the previous segment's end: its remaining bytes start this
 * one.  Returns the bytes of the payload it used. */
static __always_inline __u32 finish_header(struct __sk_buff *skb, struct gs_tap_fstate *st, __u32 seq,
					   __u32 poff, __u32 plen)
{
	__u32 have = st->hdr_have, take = GIOP_HDR - have, len;
	__u8 part[16];
	if (have == 0 || have >= GIOP_HDR)
		return 0;
	if (take > plen)
		take = plen;
	barrier_var(take);
	take &= 15;
	if (take == 0 || take > GIOP_HDR || bpf_skb_load_bytes(skb, poff, part, take))
		return 0;
	for (__u32 i = 0; i < GIOP_HDR; i++)
		if (i >= have && i < have + take)
			st->hdr[i] = part[(i - have) & 15];
	st->hdr_have = have + take;
	if (have + take < GIOP_HDR) {
		st->cont_seq = seq + plen;   /* a tiny segment: still not whole */
		return take;
	}
	len = giop_msg_len(st->hdr, max_message);
	if (!len) {
		lose_sync(st);
		return take;
	}
	st->mode = GS_FS_SYNC;
	st->hdr_have = 0;
	st->next_hdr = st->hdr_seq + len;
	st->head_end = st->hdr_seq + (len < GS_TAP_HEAD_MAX ? len : GS_TAP_HEAD_MAX);
	return take;
}

/* The message that starts at st->next_hdr, if it starts in this segment:
 * its head goes into the record, framing moves past it.  1: no more. */
static int frame_step(__u32 i, struct frame_ctx *c)
{
	struct gs_tap_fstate *st = c->st;
	__u32 pos = st->next_hdr - c->seq, len, head, k;
	__u8 h[GIOP_HDR];
	(void)i;
	/* the record is full: the next message's head goes in the next one */
	if (c->n >= GS_TAP_HEADS)
		return 1;
	if (st->mode != GS_FS_SYNC || seq_before(st->next_hdr, c->seq) || pos >= c->plen)
		return 1;
	if (pos + GIOP_HDR > c->plen) {
		/* the header goes on in the next segment */
		__u32 n = c->plen - pos;
		/* the verifier must see the bound on the register passed */
		barrier_var(n);
		n &= 15;
		if (n == 0 || n >= GIOP_HDR || bpf_skb_load_bytes(c->skb, c->poff + pos, st->hdr, n)) {
			lose_sync(st);
			return 1;
		}
		st->mode = GS_FS_PARTIAL;
		st->hdr_have = n;
		st->hdr_seq = st->next_hdr;
		st->head_end = st->next_hdr + GS_TAP_HEAD_MAX;
		st->cont_seq = c->seq + c->plen;
		ship(c, pos, n);
		return 1;
	}
	if (bpf_skb_load_bytes(c->skb, c->poff + pos, h, GIOP_HDR)) {
		lose_sync(st);
		return 1;
	}
	len = giop_msg_len(h, max_message);
	if (!len) {
		lose_sync(st);
		return 1;
	}
	head = len < GS_TAP_HEAD_MAX ? len : GS_TAP_HEAD_MAX;
	k = c->plen - pos < head ? c->plen - pos : head;
	ship(c, pos, k);
	if (k < head) {
		st->head_end = st->next_hdr + head;
		st->cont_seq = c->seq + c->plen;
	}
	st->next_hdr += len;
	return 0;
}

#define FC_READ32(x) (*(volatile __u32 *)&(x))
/* busy-wait steps for the CPU framing the segment before (a few ns each;
 * 648 heads framed and shipped in 41 records take tens of us) */
#define BUSY_SPIN (1u << 16)

/* 0 (wait on) while another CPU frames a segment of the direction that ends
 * at or before this one's start and the expected header is still before it:
 * the segment just before (the common case), or an earlier one with a
 * segment between not framed yet (sent by two threads, two segments can
 * reach tc in the other order) -- which may come while the earlier one's
 * framing ends. */
/* With no CPU framing yet, a hole is waited on for HOLE_SPIN steps (a few
 * us): the segment before may be about to be framed on another CPU (between
 * its tc entry and frame()), and a resync here would race with it. */
#define HOLE_SPIN 1024u

static int busy_wait(__u32 i, struct frame_ctx *c)
{
	const struct gs_tap_fstate *st = c->st;
	__u32 b = FC_READ32(st->busy_end);
	if (!(*(volatile const __u8 *)&st->mode == GS_FS_SYNC && seq_before(FC_READ32(st->next_hdr), c->seq)))
		return 1;  /* no hole (any more) */
	if (b && !seq_before(c->seq, b))
		return 0;  /* framing before this segment is under way */
	return i >= HOLE_SPIN;
}

/* The segment's framing is done (its records written): a segment after it
 * waits no more; a late one moves its direction's hole on. */
static __always_inline void frame_done(struct frame_ctx *c)
{
	const struct gs_tap_fstate *sp = c->st;
	struct gs_tap_fcache *fc;
	struct gs_tap_fstate *st;
	__u32 fi = c->fi;
	if (!(c->flags & FR_LATE)) {
		if (c->st->busy_end == c->seq + c->plen)
			c->st->busy_end = 0;
		return;
	}
	fc = bpf_map_lookup_elem(&fcache, &fi);
	if (!fc)
		return;
	st = &fc->st;
	if (!st->hole_end)
		return;
	if (sp->mode != GS_FS_SYNC || seq_before(sp->next_hdr, c->seq + c->plen)) {
		st->hole_end = 0;  /* framing lost in it: the hole stays unframed */
	} else if (seq_before(sp->next_hdr, st->hole_end)) {
		st->hole_hdr = sp->next_hdr;  /* more late segments to come */
	} else {
		/* the late segments' framing meets the resync point: it was right */
		if (sp->next_hdr == st->hole_end)
			count(GS_CNT_HOLE_CONFIRMED);
		st->hole_end = 0;
	}
}

/* Finds the GIOP messages that start in payload [0, plen) of sequence `seq`
 * and notes their heads in c (the first GS_TAP_HEADS: seg_more the next). */
static __always_inline void frame(struct frame_ctx *c)
{
	struct gs_tap_fstate *st = c->st;
	__u32 seq = c->seq, plen = c->plen;

	/* A late segment (the expected header of a hole lies in it, see
	 * hole_hdr): framed from that header in this CPU's spare entry, the
	 * direction's state untouched (frame_done moves the hole on). */
	if (c->fi < FC_SLOTS && st->hole_end && !seq_before(st->hole_hdr, seq) &&
	    seq_before(st->hole_hdr, seq + plen) && seq_before(seq, st->hole_end)) {
		__u32 idx = FC_SLOTS + (bpf_get_smp_processor_id() & (GS_TAP_MAX_CPUS - 1));
		struct gs_tap_fcache *sp = bpf_map_lookup_elem(&fcache, &idx);
		if (sp) {
			__u32 h = st->hole_hdr;
			__builtin_memset(&sp->st, 0, sizeof sp->st);
			sp->st.mode = GS_FS_SYNC;
			sp->st.next_hdr = h;
			c->st = st = &sp->st;
			c->flags |= FR_LATE;
		}
	}
	/* Two segments of one direction can reach tc on two CPUs at once; the
	 * later one's framing starts where the earlier one's ends.  Framing a
	 * segment of many messages takes a while (all of them, a record per
	 * GS_TAP_HEADS): the later one waits for it (bounded: counted), else it
	 * would find the expected header behind it and resync, and the earlier
	 * one its state moved past its end and stop. */
	if (!busy_wait(0, c)) {
		bpf_loop(BUSY_SPIN, busy_wait, c, 0);
		if (!busy_wait(HOLE_SPIN, c))
			count(GS_CNT_FRAME_WAIT_LONG);
	}
	st->busy_end = seq + plen;

	/* the head of a message that began in the previous segment goes on here */
	if (st->mode != GS_FS_UNSYNC && st->cont_seq == seq && seq_before(seq, st->head_end)) {
		__u32 k;
		if (st->mode == GS_FS_PARTIAL)
			finish_header(c->skb, st, seq, c->poff, plen);
		if (st->mode != GS_FS_UNSYNC && seq_before(seq, st->head_end)) {
			k = st->head_end - seq;
			if (k > plen)
				k = plen;
			ship(c, 0, k);
			if (k == plen)
				st->cont_seq = seq + plen;
		}
	} else if (st->mode == GS_FS_PARTIAL && !seq_before(seq, st->hdr_seq + st->hdr_have)) {
		/* the rest of the header is in a segment the tap did not see */
		lose_sync(st);
	}
	if (st->mode == GS_FS_PARTIAL)
		return;
	/* the expected header lies in bytes before this segment that never came
	 * (or come later: the hole, framed when they do) */
	if (st->mode == GS_FS_SYNC && seq_before(st->next_hdr, seq)) {
		__u32 h = st->next_hdr;
		lose_sync(st);
		st->hole_hdr = h;
		st->hole_end = 1;  /* set to the resync point below */
	}
	if (st->mode == GS_FS_UNSYNC) {
		int found = scan_header(c->skb, c->poff, plen);
		if (found < 0)
			return;
		st->mode = GS_FS_SYNC;
		st->next_hdr = seq + (__u32)found;
		c->flags |= GS_SEG_RESYNC;
		if (st->hole_end)
			st->hole_end = st->next_hdr ? st->next_hdr : 1;
	}
	/* mostly one message, which ends in this segment or later: no loop
	 * (a helper call and a callback per step) unless another header lies in
	 * the segment */
	if (frame_step(0, c) == 0 && st->mode == GS_FS_SYNC && !seq_before(st->next_hdr, seq) &&
	    st->next_hdr - seq < plen)
		bpf_loop(FRAME_STEPS, frame_step, c, 0);
}

/* ------------------------------------------------------------------ packets */

struct pkt {
	struct gs_tap_flow flow;
	__u32 seq, ack, poff, plen;
	__u16 window;
	__u8 flags;
};

/* IPv4/IPv6 + TCP from offset `off` (the link layer's length). */
/* The TCP header's fields, from its 20 fixed bytes at t (a copy on the stack
 * or the packet itself, checked by the caller); l4: its offset in the skb,
 * ip_payload: TCP header and data as the IP header says. Both parsers end here. */
static __always_inline bool tcp_fields(struct pkt *p, const __u8 *t, __u32 l4, __u32 ip_payload,
				       __u32 skb_len)
{
	__u32 doff = (t[12] >> 4) * 4;
	if (doff < 20 || ip_payload < doff)
		return false;
	p->poff = l4 + doff;
	p->plen = ip_payload - doff;
	/* never past what the skb holds (a lying IP length) */
	if (p->poff > skb_len)
		return false;
	if (p->plen > skb_len - p->poff)
		p->plen = skb_len - p->poff;
	p->flow.sport = (__u16)t[0] << 8 | t[1];
	p->flow.dport = (__u16)t[2] << 8 | t[3];
	p->seq = (__u32)t[4] << 24 | (__u32)t[5] << 16 | (__u32)t[6] << 8 | t[7];
	p->ack = (__u32)t[8] << 24 | (__u32)t[9] << 16 | (__u32)t[10] << 8 | t[11];
	p->flags = t[13];
	p->window = (__u16)t[14] << 8 | t[15];
	return true;
}

static __always_inline bool parse(struct __sk_buff *skb, __u32 off, struct pkt *p)
{
	__u16 proto = bpf_ntohs((__u16)skb->protocol);
	__u32 ip_payload, l4;
	__u8 t[20];

	for (int i = 0; i < 2 && off && (proto == ETH_P_8021Q || proto == ETH_P_8021AD); i++) {
		__be16 inner;
		if (bpf_skb_load_bytes(skb, off + 2, &inner, 2))
			return false;
		proto = bpf_ntohs(inner);
		off += 4;
	}
	if (proto == ETH_P_IP) {
		struct iphdr ip;
		__u32 ihl, tot;
		if (bpf_skb_load_bytes(skb, off, &ip, sizeof ip) || ip.version != 4 ||
		    ip.protocol != GS_IPPROTO_TCP || (ip.frag_off & bpf_htons(0x3fff)))
			return false;
		ihl = ip.ihl * 4;
		if (ihl < 20)
			return false;
		tot = bpf_ntohs(ip.tot_len);
		l4 = off + ihl;
		/* 0 in a GSO super-packet larger than 64 KiB (BIG TCP): the skb says */
		ip_payload = tot ? (tot > ihl ? tot - ihl : 0) : skb->len - l4;
		p->flow.family = 4;
		__builtin_memcpy(p->flow.saddr, &ip.saddr, 4);
		__builtin_memcpy(p->flow.daddr, &ip.daddr, 4);
	} else if (proto == ETH_P_IPV6) {
		struct ipv6hdr ip6;
		__u32 pl;
		if (bpf_skb_load_bytes(skb, off, &ip6, sizeof ip6) || ip6.nexthdr != GS_IPPROTO_TCP)
			return false;
		pl = bpf_ntohs(ip6.payload_len);
		l4 = off + 40;
		ip_payload = pl ? pl : skb->len - l4;
		p->flow.family = 6;
		__builtin_memcpy(p->flow.saddr, &ip6.saddr, 16);
		__builtin_memcpy(p->flow.daddr, &ip6.daddr, 16);
	} else {
		return false;
	}
	if (bpf_skb_load_bytes(skb, l4, t, sizeof t))
		return false;
	return tcp_fields(p, t, l4, ip_payload, skb->len);
}

/* The common case read in place (no helper call): IPv4 without options or
 * IPv6 without extension headers, then TCP, all in the skb's linear part.
 * 1: parsed, 0: not for us, -1: let parse() decide. */
static __always_inline int parse_direct(struct __sk_buff *skb, __u32 off, struct pkt *p)
{
	__u8 *data = (__u8 *)(long)skb->data, *end = (__u8 *)(long)skb->data_end;
	__u16 proto = bpf_ntohs((__u16)skb->protocol);
	__u8 *t;
	__u32 ip_payload;

	/* constant offsets: the verifier follows those (Ethernet-like or none) */
	if (off == 14)
		data += 14;
	else if (off != 0)
		return -1;
	if (proto == ETH_P_IP) {
		struct iphdr *ip = (struct iphdr *)data;
		if ((__u8 *)(ip + 1) > end)
			return -1;
		if (ip->version != 4 || ip->ihl != 5)
			return -1;
		if (ip->protocol != GS_IPPROTO_TCP || (ip->frag_off & bpf_htons(0x3fff)))
			return 0;
		t = (__u8 *)(ip + 1);
		ip_payload = bpf_ntohs(ip->tot_len);
		if (ip_payload < 20)
			return -1; /* 0: a GSO super-packet beyond 64 KiB */
		ip_payload -= 20;
		p->flow.family = 4;
		__builtin_memcpy(p->flow.saddr, &ip->saddr, 4);
		__builtin_memcpy(p->flow.daddr, &ip->daddr, 4);
	} else if (proto == ETH_P_IPV6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)data;
		if ((__u8 *)(ip6 + 1) > end)
			return -1;
		if (ip6->nexthdr != GS_IPPROTO_TCP || !ip6->payload_len)
			return -1;
		t = (__u8 *)(ip6 + 1);
		ip_payload = bpf_ntohs(ip6->payload_len);
		p->flow.family = 6;
		__builtin_memcpy(p->flow.saddr, &ip6->saddr, 16);
		__builtin_memcpy(p->flow.daddr, &ip6->daddr, 16);
	} else {
		return -1;
	}
	if (t + 20 > end)
		return -1;
	return tcp_fields(p, t, (__u32)(t - (__u8 *)(long)skb->data), ip_payload, skb->len) ? 1 : -1;
}

/* 1 + the link-layer length of a tapped interface, 0 for the others. */
static __always_inline __u32 iface_l2(__u32 ifindex)
{
	struct gs_tap_iface *ifc;
	for (int i = 0; i < GS_TAP_RODATA_IFACES; i++)
		if (ro_ifindex[i] && ro_ifindex[i] == ifindex)
			return ro_l2[i];
	if (!ifaces_in_map)
		return 0;
	ifc = bpf_map_lookup_elem(&ifaces, &ifindex);
	return ifc ? ifc->l2_len : 0;
}

/* TAI - REALTIME in ns (37 s, or 0 where the TAI offset was never set):
 * written by user space at start and at each poll (.bss is mapped), so that
 * a receive stamp (CLOCK_REALTIME) converts to CLOCK_MONOTONIC here, where
 * the kernel has no REALTIME helper for BPF. */
__s64 tai_off;

/* The instant of a segment's record, taken right after its place in the ring
 * is reserved (see tap()).  On ingress (`seg_flags` without GS_SEG_EGRESS;
 * `rx`: __sk_buff->tstamp, read without tstamp_type, so that at ingress a
 * delivery time -- a sender's EDT in CLOCK_MONOTONIC, which TCP sets and veth
 * carries over -- reads 0 and only a receive stamp, CLOCK_REALTIME, shows:
 * net/core/filter.c, bpf_convert_tstamp_read), when
 * the kernel took a receive stamp (netif_rx / netif_receive_skb, while anything
 * holds rx timestamping on: attach itself by default, tcpdump, chrony), that
 * instant instead: when the packet reached the host, before the backlog waited
 * for the softirq (the time model's t3/t7).  Its age is measured against
 * REALTIME now (TAI - the offset) and taken off MONOTONIC now.
 * A global function: verified once, on its own (inlined at the five places a
 * record is stamped, its branches doubled the states the verifier walks
 * through the tap, past its limit); it takes no stack, and the tap's is at
 * the 512-byte limit (the skb's tstamp is read where it is passed, not kept). */
__attribute__((noinline)) __u64 seg_time(__u64 rx, __u32 seg_flags)
{
	__u64 now = bpf_ktime_get_ns();
	__s64 age;
	/* a segment's later records (GS_SEG_MORE) are not counted again */
	bool once = !(seg_flags & GS_SEG_MORE);
	if (seg_flags & GS_SEG_EGRESS)
		return now;
	if (!rx) {
		if (once)
			count(GS_CNT_RX_UNSTAMPED);
		return now;
	}
	age = (__s64)(bpf_ktime_get_tai_ns() - (__u64)tai_off - rx);
	if (age < 0 || (__u64)age >= GS_TAP_RX_AGE_MAX) {
		if (once)
			count(GS_CNT_RX_FAR);
		return now;
	}
	if (once)
		count(GS_CNT_RX_STAMPED);
	return now - (__u64)age;
}

static __always_inline void seg_fill(struct gs_tap_seg *r, const struct pkt *p, __u64 now, __u32 ifindex,
				     __u32 flags, __u32 n, __u32 used)
{
	r->kind = GS_REC_SEG;
	r->ifindex = ifindex;
	r->ts_ns = now;
	r->flow = p->flow;
	r->seq = p->seq;
	r->ack = p->ack;
	r->len = p->plen;
	r->window = p->window;
	r->tcp_flags = p->flags;
	r->flags = (__u8)flags;
	r->n_heads = (__u16)n;
	r->data_len = (__u16)used;
	r->sys_off = 0;
}

static __always_inline void submit(void *r)
{
	bpf_ringbuf_submit(r, wake_flags());
}

/* A record with one head of up to K bytes, written straight into the ring
 * (no copy through a scratch area): a fixed size (the verifier wants one), the
 * head loaded from the packet into it; with syscalls taken (`fold`), those
 * after the head's room. */
#define SEG_ONE(K)							\
	struct seg_one_##K {						\
		struct gs_tap_seg h;					\
		struct gs_tap_head head;				\
		__u8 data[K];						\
	};								\
	struct seg_one_##K##_fold {					\
		struct seg_one_##K r;					\
		struct gs_tap_seg_fold s;				\
	};								\
	static __always_inline int seg_one_##K(struct __sk_buff *skb, const struct pkt *p, \
					       const struct frame_ctx *c, __u32 ifindex, \
					       const struct gs_tap_seg_fold *fold) \
	{								\
		struct seg_one_##K *r;					\
		__u32 k = c->heads[0].len;				\
		__u64 now;						\
		if (fold) {						\
			struct seg_one_##K##_fold *rs =			\
				bpf_ringbuf_reserve(&events, sizeof *rs, 0); \
			if (!rs)					\
				return -1;				\
			rs->s = *fold;					\
			r = &rs->r;					\
		} else {						\
			r = bpf_ringbuf_reserve(&events, sizeof *r, 0);	\
			if (!r)						\
				return -1;				\
		}							\
		now = seg_time(skb->tstamp, c->flags); /* ring order = time order (tap()) */ \
		if (k == 0 || k > K ||					\
		    bpf_skb_load_bytes(skb, p->poff + c->heads[0].off, r->data, k)) { \
			/* the metadata all the same */			\
			count(GS_CNT_HEADS_LOST);			\
			seg_fill(&r->h, p, now, ifindex, c->flags | GS_SEG_HEADS_LOST, 0, 0); \
			r->head.off = r->head.len = 0;			\
		} else {						\
			seg_fill(&r->h, p, now, ifindex, c->flags, 1, k); \
			r->head = c->heads[0];				\
		}							\
		if (fold)						\
			r->h.sys_off = sizeof *r;			\
		submit(r);						\
		return 0;						\
	}
SEG_ONE(64)
SEG_ONE(128)
SEG_ONE(256)

/* The common data segment: exactly one GIOP message starts in it, at its first
 * byte, on a direction in sync (st->next_hdr == seq, no head of an earlier
 * message going on here), and the message ends in it or later.  Its first k
 * payload bytes (k = min(plen, GS_TAP_HEAD_MAX): the head the record ships) are
 * loaded once, straight into the ring record, and the header is read there: one
 * bpf_skb_load_bytes, not one for the header (frame_step) and one for the head
 * (seg_one_K).  The same record, and the same framing state after it, as
 * frame() + seg_one_K.  0: written; 1: not this case (a bad header, another
 * message starting in the segment, no room in the ring, a failed load): the
 * record is discarded, the state untouched, and the caller frames the segment
 * the general way. */
#define ONE_FAST(K)							\
	static __always_inline int one_fast_##K(struct __sk_buff *skb, const struct pkt *p, \
						struct gs_tap_fstate *st, __u32 k, \
						__u32 ifindex, __u32 flags, \
						const struct gs_tap_seg_fold *fold) \
	{								\
		struct seg_one_##K *r;					\
		struct seg_one_##K##_fold *rs = NULL;			\
		__u32 len, head;					\
		__u64 now;						\
		if (fold) {						\
			rs = bpf_ringbuf_reserve(&events, sizeof *rs, 0); \
			if (!rs)					\
				return 1;				\
			r = &rs->r;					\
		} else {						\
			r = bpf_ringbuf_reserve(&events, sizeof *r, 0);	\
			if (!r)						\
				return 1;				\
		}							\
		now = seg_time(skb->tstamp, flags); /* ring order = time order */ \
		barrier_var(k);						\
		k &= 2 * K - 1;						\
		if (k < GIOP_HDR || k > K ||				\
		    bpf_skb_load_bytes(skb, p->poff, r->data, k))	\
			goto undo;					\
		len = giop_msg_len(r->data, max_message);		\
		if (!len || len < p->plen)				\
			goto undo;					\
		head = len < GS_TAP_HEAD_MAX ? len : GS_TAP_HEAD_MAX;	\
		if (k < head) {						\
			st->head_end = st->next_hdr + head;		\
			st->cont_seq = p->seq + p->plen;		\
		}							\
		st->next_hdr += len;					\
		seg_fill(&r->h, p, now, ifindex, flags, 1, k);		\
		r->head.off = 0;					\
		r->head.len = k;					\
		if (fold) {						\
			rs->s = *fold;					\
			r->h.sys_off = sizeof *r;			\
		}							\
		submit(r);						\
		return 0;						\
	undo:								\
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);		\
		return 1;						\
	}
ONE_FAST(64)
ONE_FAST(128)
ONE_FAST(256)

/* The common data segment (see ONE_FAST), of direction p->flow whose framing
 * state is fcache entry fi (fc_get), with the syscalls waiting for it when
 * `claim_ok`.  0: its record is written; 1: nothing done (nothing taken, the
 * state untouched): frame it the general way.  A global function: the verifier
 * walks it once, and the tap after it sees one outcome whichever way it went
 * (inlined, its paths multiplied the tap's past the verifier's limit). */
__attribute__((noinline)) int one_fast(struct __sk_buff *skb, const struct pkt *p, __u32 fi, __u32 flags,
				       bool claim_ok)
{
	struct gs_tap_watch *w = NULL;
	struct gs_tap_seg_fold *fold;
	const struct gs_tap_seg_fold *fp;
	struct gs_tap_fstate *st;
	struct gs_tap_fcache *fc;
	struct scratch *sc;
	__u64 was = 0, left = 0;
	__u32 k, zero = 0;
	int r;
	if (!skb || !p)
		return 1;
	fc = bpf_map_lookup_elem(&fcache, &fi);
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!fc || !sc)
		return 1;
	fold = &sc->fold;
	st = &fc->st;
	/* in sync, a message starting at the first byte, no head of an
	 * earlier one going on here (frame(): its first branch) */
	if (st->mode != GS_FS_SYNC || st->next_hdr != p->seq ||
	    (st->cont_seq == p->seq && seq_before(p->seq, st->head_end)))
		return 1;
	k = p->plen < GS_TAP_HEAD_MAX ? p->plen : GS_TAP_HEAD_MAX;
	if (claim_ok)
		w = claim(&p->flow, p->seq, p->plen, fold, &was, &left);
	fp = w ? fold : NULL;
	r = k <= 64 ? one_fast_64(skb, p, st, k, skb->ifindex, flags, fp) :
	    k <= 128 ? one_fast_128(skb, p, st, k, skb->ifindex, flags, fp) :
	    one_fast_256(skb, p, st, k, skb->ifindex, flags, fp);
	if (r == 0)
		fc_put_back(&p->flow, fi, st);
	/* what was taken went with the record; no record: as if not tried */
	if (w)
		settle(w, r ? was : left);
	return r ? 1 : 0;
}

struct load_ctx {
	struct __sk_buff *skb;
	struct scratch *sc;
	const struct frame_ctx *c;
	__u32 data_off;           /* where the data starts in sc->rec */
	__u32 used;
	int err;
};

#define SC_HEADS sizeof(struct gs_tap_seg)

/* Head i of a record put together in the scratch area. */
static int load_head(__u32 i, struct load_ctx *l)
{
	const struct frame_ctx *c = l->c;
	struct gs_tap_head *hd;
	__u32 off, k, u = l->used, d = l->data_off, j;
	if (i >= c->n || i >= GS_TAP_HEADS)
		return 1;
	j = i;
	barrier_var(j);
	j &= GS_TAP_HEADS - 1;
	off = c->heads[j].off;
	k = c->heads[j].len;
	barrier_var(k);
	k &= 2 * GS_TAP_HEAD_MAX - 1;
	barrier_var(u);
	u &= 2 * GS_TAP_DATA_MAX - 1;
	barrier_var(d);
	d &= 255;
	if (k == 0 || k > GS_TAP_HEAD_MAX || u > GS_TAP_DATA_MAX - GS_TAP_HEAD_MAX ||
	    bpf_skb_load_bytes(l->skb, c->poff + off, l->sc->rec + d + u, k)) {
		l->err = 1;
		return 1;
	}
	hd = (struct gs_tap_head *)(l->sc->rec + SC_HEADS + j * sizeof(*hd));
	hd->off = off - c->start;
	hd->len = k;
	l->used = u + k;
	return 0;
}

/* Several heads: put together in the scratch area (header, the heads, their
 * bytes: contiguous as the record wants them), then copied into the ring. */
/* The record covers payload [c->start, end) (all of it but for a segment
 * shipped in several records). */
static __always_inline int seg_many(struct __sk_buff *skb, const struct pkt *p, const struct frame_ctx *c,
				    __u32 ifindex, __u32 end)
{
	struct gs_tap_seg *h;
	__u32 zero = 0, n = c->n, size;
	struct load_ctx l = { .skb = skb, .c = c };
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return -1;
	if (n > GS_TAP_HEADS)
		n = GS_TAP_HEADS;
	l.sc = sc;
	l.data_off = SC_HEADS + n * sizeof(struct gs_tap_head);
	bpf_loop(GS_TAP_HEADS, load_head, &l, 0);
	if (l.err) {
		/* the metadata all the same */
		count(GS_CNT_HEADS_LOST);
		n = 0;
		l.used = 0;
	}
	size = SC_HEADS + n * sizeof(struct gs_tap_head) + l.used;
	barrier_var(size);
	size &= 2 * GS_TAP_DATA_MAX - 1;
	if (size > GS_TAP_SEG_MAX)
		return -1;
	/* stamped right before the copy reserves its place (ring order = time
	 * order but for that instant) */
	h = (struct gs_tap_seg *)sc->rec;
	seg_fill(h, p, seg_time(skb->tstamp, c->flags), ifindex, c->flags | (l.err ? GS_SEG_HEADS_LOST : 0), n,
		 l.used);
	if (end != c->plen || c->start) {
		/* a part: FIN, PSH, RST where the payload ends, SYN where it
		 * starts (its seq is the SYN's, c->seq the data's) */
		h->len = end - c->start;
		if (c->start) {
			h->seq = c->seq + c->start;
			h->tcp_flags &= ~TCP_SYN;
		}
		if (end != c->plen)
			h->tcp_flags &= ~(TCP_FIN | TCP_PSH | TCP_RST);
	}
	return bpf_ringbuf_output(&events, sc->rec, size, wake_flags()) ? -1 : 0;
}

/* Framing stopped with the record full and another message starting in the
 * segment. */
static __always_inline bool frame_more(const struct frame_ctx *c)
{
	const struct gs_tap_fstate *st = c->st;
	return c->n >= GS_TAP_HEADS && st->mode == GS_FS_SYNC && !seq_before(st->next_hdr, c->seq) &&
	       st->next_hdr - c->seq < c->plen;
}

/* The next record of a segment shipped in several (its earlier ones are in
 * the ring): the heads of up to GS_TAP_HEADS more messages, for the payload
 * from the first of them to the next record's first (or the end).  The last
 * one allowed (GS_TAP_FRAME_HEADS_MAX starts) covers the rest of the payload,
 * unframed: counted, and the next segment finds framing behind it (a resync). */
static int seg_more(__u32 i, struct frame_ctx *c)
{
	struct gs_tap_fstate *st = c->st;
	__u32 end;
	bool more;
	c->start = st->next_hdr - c->seq;
	c->n = 0;
	c->used = 0;
	c->flags = (c->flags & (GS_SEG_EGRESS | FR_LATE)) | GS_SEG_MORE;
	bpf_loop(GS_TAP_HEADS, frame_step, c, 0);
	more = frame_more(c);
	if (more && i + 1 >= MORE_RECORDS) {
		count(GS_CNT_FRAME_BOUND);
		more = false;
	}
	end = more ? st->next_hdr - c->seq : c->plen;
	if (c->start >= c->plen || end > c->plen || end < c->start)
		return 1;
	if (seg_many(c->skb, c->p, c, c->ifindex, end)) {
		count(GS_CNT_RB_LOST);
		return 1;
	}
	return more ? 0 : 1;
}

static __always_inline int tap(struct __sk_buff *skb, bool egress)
{
	/* The record's time stamp is taken right after its place in the ring is
	 * reserved, not here: records from two CPUs then come in the ring in the
	 * order of their time stamps (the order attach's engine reads them in),
	 * which a stamp taken here, before the parsing and framing, did not
	 * ensure.  It is later than tc's start by that work (docs/attach.md). */
	__u32 ifindex = skb->ifindex, l2, l2v, fi;
	struct gs_tap_fstate *st;
	struct gs_tap_fcache *fc;
	struct gs_tap_watch *w = NULL;
	struct gs_tap_seg_fold *fold;
	struct scratch *sc;
	__u64 was = 0, left = 0;
	__u32 zero = 0;
	struct frame_ctx c;
	struct pkt p = {};
	bool claim_ok;
	int r;

	l2v = iface_l2(ifindex);
	if (!l2v)
		return TCX_NEXT;
	l2 = (l2v & GS_TAP_IF_L2_MASK) - 1;
	r = parse_direct(skb, l2, &p);
	if (r == 0 || (r < 0 && !parse(skb, l2, &p)))
		return TCX_NEXT;

	r = fc_fast(&p.flow, p.flags);
	if (r < 0)
		r = fc_get(&p.flow, p.seq, p.flags);
	if (r < 0)
		return TCX_NEXT;
	fi = (__u32)r;
	fc = bpf_map_lookup_elem(&fcache, &fi);
	if (!fc)
		return TCX_NEXT;
	st = &fc->st;
	c.n = 0;
	c.used = 0;
	c.flags = egress ? GS_SEG_EGRESS : 0;
	claim_ok = fold_sends && (egress || (l2v & GS_TAP_IF_CLAIM_IN));
	/* the common data segment: one load, one record (one_fast) */
	if (p.plen >= GIOP_HDR && !(p.flags & TCP_SYN) && one_fast(skb, &p, fi, c.flags, claim_ok) == 0)
		return TCX_NEXT;
	/* the syscalls taken live in the scratch area (the stack is short) */
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return TCX_NEXT;
	fold = &sc->fold;
	if (p.plen) {
		c.skb = skb;
		c.st = st;
		c.seq = p.seq + ((p.flags & TCP_SYN) ? 1 : 0);
		c.poff = p.poff;
		c.plen = p.plen;
		c.start = 0;
		c.fi = fi;
		frame(&c);
		/* (not kept in a variable: the tap's stack is at its limit) */
		if (!frame_more(&c))
			frame_done(&c);
		fc_put_back(&p.flow, fi, st);
	}
	/* the syscalls of a followed process waiting for this segment (its
	 * socket sends it: it leaves here, or comes back in on loopback): their
	 * records are this one's */
	if (claim_ok)
		w = claim(&p.flow, p.seq + ((p.flags & TCP_SYN) ? 1 : 0), p.plen, fold, &was, &left);
	if (c.n == 0) {
		if (w) {
			struct {
				struct gs_tap_seg h;
				struct gs_tap_seg_fold s;
			} *rs = bpf_ringbuf_reserve(&events, sizeof *rs, 0);
			if (rs) {
				seg_fill(&rs->h, &p, seg_time(skb->tstamp, c.flags), ifindex, c.flags, 0, 0);
				rs->h.sys_off = sizeof rs->h;
				rs->s = *fold;
				submit(rs);
				r = 0;
			} else {
				r = -1;
			}
		} else {
			struct gs_tap_seg *rec = bpf_ringbuf_reserve(&events, sizeof *rec, 0);
			if (rec) {
				seg_fill(rec, &p, seg_time(skb->tstamp, c.flags), ifindex, c.flags, 0, 0);
				submit(rec);
				r = 0;
			} else {
				r = -1;
			}
		}
	} else if (c.n == 1) {
		__u32 k = c.heads[0].len;
		const struct gs_tap_seg_fold *fp = w ? fold : NULL;
		r = k <= 64 ? seg_one_64(skb, &p, &c, ifindex, fp) :
		    k <= 128 ? seg_one_128(skb, &p, &c, ifindex, fp) :
		    seg_one_256(skb, &p, &c, ifindex, fp);
	} else {
		/* rare (several messages start here): records of their own
		 * first, as they would have come */
		if (w) {
			settle(w, flush_held(w, was, was & ~left));
			w = NULL;
		}
		bool more = frame_more(&c);
		r = seg_many(skb, &p, &c, ifindex, more ? c.st->next_hdr - c.seq : c.plen);
		if (more) {
			if (!r) {
				c.p = &p;
				c.ifindex = ifindex;
				bpf_loop(MORE_RECORDS, seg_more, &c, 0);
			}
			frame_done(&c);
			fc_put_back(&p.flow, fi, st);
		}
	}
	if (r)
		count(GS_CNT_RB_LOST);
	/* what was taken went with the record; the record was lost: it waits
	 * on (the next syscall of its kind, or user space, writes it) */
	if (w)
		settle(w, r ? was : left);
	return TCX_NEXT;
}

SEC("tc")
int giop_tap_ingress(struct __sk_buff *skb)
{
	return tap(skb, false);
}

SEC("tc")
int giop_tap_egress(struct __sk_buff *skb)
{
	return tap(skb, true);
}

/* ------------------------------------------------------------------ syscalls */

/* The current process is the one that had its pid when attach started: its
 * thread-group leader started in that clock tick (checked only once the pid
 * matched, so it costs nothing to the other processes). */
static __always_inline bool same_start(__u64 start)
{
	struct task_struct *task;
	__u64 st;
	if (!start_tick_ns)
		return true;
	task = bpf_get_current_task_btf();
	st = task->group_leader->start_boottime;
	return st >= start && st - start < start_tick_ns;
}

static __always_inline bool wanted_task(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *start;
	if (filter_mode == GS_FILTER_PIDS) {
		if (n_target_pids) {
			for (__u32 i = 0; i < GS_TAP_RODATA_PIDS && i < n_target_pids; i++)
				if (target_pids[i] == tgid)
					return same_start(target_start[i]);
			return false;
		}
		start = bpf_map_lookup_elem(&pids, &tgid);
		return start && same_start(*start);
	}
	if (filter_mode == GS_FILTER_COMM) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		char comm[GS_TAP_COMM_LEN];
		if (BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm) < 0)
			return false;
		for (int i = 0; i < GS_TAP_COMM_LEN; i++) {
			if (comm[i] != filter_comm[i])
				return false;
			if (!comm[i])
				break;
		}
		return true;
	}
	return true; /* GS_FILTER_PORTS: decided by the socket's ports */
}

static __always_inline bool wanted_flow(struct sock *sk, const struct gs_tap_flow *fl)
{
	if (netns_ino && sk->__sk_common.skc_net.net->ns.inum != netns_ino)
		return false;
	if (filter_mode != GS_FILTER_PORTS)
		return true;
	return port_watched(fl->sport) || port_watched(fl->dport);
}

/* The other direction of a connection: the same addresses swapped. */
static __always_inline void reverse(const struct gs_tap_flow *fl, struct gs_tap_flow *rev)
{
	__builtin_memcpy(rev->saddr, fl->daddr, 16);
	__builtin_memcpy(rev->daddr, fl->saddr, 16);
	rev->sport = fl->dport;
	rev->dport = fl->sport;
	rev->family = fl->family;
	rev->pad[0] = rev->pad[1] = rev->pad[2] = 0;
}

/* A connection the followed process uses is watched by the packet tap from
 * now on (`out`: the direction the process sends).  A send that starts with a
 * GIOP header tells where a message begins: framing starts (or starts again)
 * there.  The common case, a known connection, costs one lookup. */
static __always_inline void watch(const struct gs_tap_flow *out, bool giop_at, __u32 seq)
{
	struct gs_tap_fstate init = {};
	struct gs_tap_fstate *st = fstate_find(out);
	struct gs_tap_flow in;
	__u32 idx;
	__u64 now;
	if (st) {
		if (giop_at && st->mode == GS_FS_UNSYNC) {
			st->mode = GS_FS_SYNC;
			st->next_hdr = seq;
		}
		return;
	}
	if (giop_at) {
		init.mode = GS_FS_SYNC;
		init.next_hdr = seq;
	}
	now = bpf_ktime_get_ns();
	fstate_new(out, &init, now, &idx);
	reverse(out, &in);
	if (!fstate_find(&in)) {
		__builtin_memset(&init, 0, sizeof init);
		fstate_new(&in, &init, now, &idx);
	}
}

/* The first buffer of an iovec array in user memory. */
static __always_inline __u64 iov_first(__u64 iov)
{
	struct iovec v = {};
	if (!iov || bpf_probe_read_user(&v, sizeof v, (void *)iov))
		return 0;
	return (__u64)v.iov_base;
}

static __always_inline __u64 msg_first(__u64 msg)
{
	struct user_msghdr m = {};
	if (!msg || bpf_probe_read_user(&m, sizeof m, (void *)msg) || !m.msg_iovlen)
		return 0;
	return iov_first((__u64)m.msg_iov);
}

/* The slot of socket `sk` (connection `out`, the direction it sends) in
 * watch_tab; *known: it is there already.  NULL: the slot is held by another
 * CPU at this very moment (a syscall is handed over there): do without it. */
static __always_inline struct gs_tap_watch *watched_slot(struct sock *sk, const struct gs_tap_flow *out,
							 bool *known)
{
	__u64 p = (__u64)(long)sk, tag, was;
	struct gs_tap_watch *w = watch_of(out, &tag);

	*known = w->sk == p && w->tag == tag;
	if (*known)
		return w;
	/* watch() comes next: from now on this slot is this socket's.  Its
	 * owner changes while the slot is held, and what still waits in it for
	 * the previous owner goes out first, as records of their own. */
	if (!hold(w, &was))
		return NULL;
	flush_held(w, was, GS_PEND_SEND | GS_PEND_RECV);
	w->sk = p;
	w->tag = tag;
	w->flow = *out;
	w->last_tid = 0;
	w->switch_ns = 0;
	w->cont_tid = 0;
	settle(w, 0);
	return w;
}

/* A send without head or a recv, left in its socket's slot for the packet tap
 * to take into a segment record (see watch_tab).  False: the slot is held
 * elsewhere or changed hands meanwhile; the caller writes the record itself. */
static __always_inline bool sys_wait(struct gs_tap_watch *w, struct sock *sk, const struct gs_tap_flow *fl,
				     const struct gs_tap_fold_ev *ev, bool send)
{
	__u64 kind = send ? GS_PEND_SEND : GS_PEND_RECV, was;
	if (!hold(w, &was))
		return false;
	if (w->sk != (__u64)(long)sk || !flow_eq(&w->flow, fl)) {
		settle(w, was);
		return false;
	}
	/* the previous one of its kind was not taken (a send: nothing of it
	 * went out yet, or not by a tapped interface; a recv: the socket sent
	 * nothing since): its record first, in the order they came */
	was = flush_held(w, was, kind);
	if (send)
		w->send = *ev;
	else
		w->recv = *ev;
	settle(w, was | kind);
	return true;
}

/* The first buffer of a send's data as the kernel holds it (the socket-layer
 * hook: the call's iov_iter, where the copy loop stands), 0 if not user
 * memory (sendfile, splice, the kernel's own sends). */
static __always_inline __u64 iter_first(const struct msghdr *msg)
{
	const struct iov_iter *it = &msg->msg_iter;
	__u8 type = it->iter_type;
	__u64 off = it->iov_offset, base;
	struct iovec v = {};
	if (type == bpf_core_enum_value(enum iter_type, ITER_UBUF)) {
		base = (__u64)it->ubuf;
		/* loaded here: one load for both branches would be from two
		 * kinds of pointer, which the verifier refuses */
		barrier_var(base);
	} else if (type == bpf_core_enum_value(enum iter_type, ITER_IOVEC)) {
		if (bpf_probe_read_kernel(&v, sizeof v, it->__iov))
			return 0;
		base = (__u64)v.iov_base;
		barrier_var(base);
	} else {
		return 0;
	}
	return base + off;
}

/* A send by a followed process on TCP socket `sk`: `seq`, the sequence number
 * its first byte gets; `len` the bytes asked (0: not known).  Its first bytes,
 * when wanted, from `msg` (the socket-layer hook) or else from `arg` (the
 * syscall hooks: the buffer of sendto and write, the msghdr of sendmsg, the
 * iovec array of writev; user memory, read only when the head is wanted). */
static __always_inline int send_event(struct sock *sk, __u32 seq, __u64 len, __u32 call, __u64 arg,
				      const struct msghdr *msg)
{
	struct gs_tap_fold_ev snd;
	struct gs_tap_flow fl;
	struct gs_tap_sys *r;
	struct gs_tap_watch *w;
	bool known, head;
	__u64 id, now, buf, was;
	__u32 tid;

	sock_flow(sk, &fl);
	if (!wanted_flow(sk, &fl))
		return 0;
	id = bpf_get_current_pid_tgid();
	tid = (__u32)id;
	w = watched_slot(sk, &fl, &known);
	if (msg && w) {
		/* tcp_sendmsg_locked's copy loop passes here once per chunk
		 * (under the socket lock): a later pass of the same call is this
		 * thread, this msghdr, and the bytes it copied since the last
		 * pass are exactly those write_seq moved by.  A pass that copied
		 * nothing (the loop waited for memory) is the same call only on
		 * a blocking send: a non-blocking one that copied nothing
		 * returned EAGAIN, and this is the send tried again. */
		__u32 left = len > 0xffffffffu ? 0xffffffffu : (__u32)len, moved = seq - w->cont_seq;
		bool more = known && w->cont_tid == tid && w->cont_msg == (__u64)(long)msg &&
			    moved == w->cont_left - left && (moved || !(msg->msg_flags & MSG_DONTWAIT));
		w->cont_msg = (__u64)(long)msg;
		w->cont_seq = seq;
		w->cont_left = left;
		w->cont_tid = tid;
		if (more)
			return 0;
	}
	now = bpf_ktime_get_ns();
	/* the buffer's first bytes: on a socket seen for the first time (where a
	 * message starts tells the packet tap's framing), and where other
	 * threads sent lately */
	head = !known || !w || w->last_tid != tid || now - w->switch_ns < SWITCH_QUIET_NS;
	if (w && w->last_tid != tid) {
		if (w->last_tid)
			w->switch_ns = now;
		w->last_tid = tid;
	}
	snd.ts_ns = now;
	snd.seq = seq;
	/* 0: not known (the syscall hooks of sendmsg, writev: the sum of the iovec) */
	snd.len = len > 0xffffffffu ? 0xffffffffu : (__u32)len;
	snd.tgid = id >> 32;
	snd.tid = tid;
	snd.call = (__u16)call;
	__builtin_memset(snd.pad, 0, sizeof snd.pad);
	/* the common case: no record now, the segment's record carries it */
	if (!head && w && sys_wait(w, sk, &fl, &snd, true))
		return 0;
	/* a record of its own: a send still waiting on the socket goes first */
	if (w && known && (w->state & GS_PEND_SEND) && hold(w, &was))
		settle(w, flush_held(w, was, GS_PEND_SEND));
	/* without the head, the short form */
	if (head)
		r = bpf_ringbuf_reserve(&events, sizeof *r, 0);
	else
		r = bpf_ringbuf_reserve(&events, GS_TAP_SYS_SHORT, 0);
	if (!r) {
		count(GS_CNT_RB_LOST);
		if (w && !known)
			w->sk = 0; /* not watched yet: the next send tries again */
		return 0;
	}
	r->kind = GS_REC_SEND;
	r->tgid = snd.tgid;
	r->tid = tid;
	r->ts_ns = now;
	r->ts_enter = 0;
	r->flow = fl;
	r->seq = snd.seq;
	r->len = snd.len;
	r->call = (__u16)call;
	r->pad = 0;
	r->head_len = 0;
	/* the message it starts with: threads sending on one connection enter in
	 * one order and queue their bytes in another */
	if (head) {
		if (msg)
			buf = iter_first(msg);
		else
			buf = call == GS_CALL_SENDMSG ? msg_first(arg) : call == GS_CALL_WRITEV ? iov_first(arg) : arg;
		if (buf && bpf_probe_read_user(r->head, GS_TAP_USER_HEAD, (void *)buf) == 0)
			r->head_len = len && len < GS_TAP_USER_HEAD ? (__u8)len : GS_TAP_USER_HEAD;
		else
			__builtin_memset(r->head, 0, GS_TAP_USER_HEAD);
	}
	if (!known)
		watch(&fl, r->head_len >= 4 && r->head[0] == 'G' && r->head[1] == 'I' &&
		      r->head[2] == 'O' && r->head[3] == 'P', r->seq);
	bpf_ringbuf_submit(r, wake_flags());
	return 0;
}

/* The socket-layer send: tcp:tcp_sendmsg_locked, in the copy loop of
 * tcp_sendmsg_locked under the socket lock, before the pass copies: the
 * first pass's write_seq is the sequence number of the call's first byte,
 * whatever other threads send on the socket (they wait for the lock), and
 * msg_data_left() then is the whole length asked. */
static __always_inline int on_tcp_send(struct sock *sk, const struct msghdr *msg)
{
	if (!wanted_task())
		return 0;
	return send_event(sk, as_tcp(sk)->write_seq, msg->msg_iter.count, GS_CALL_TCP_SEND, 0, msg);
}

/* A recv by a followed process that returned `ret` bytes of TCP socket `sk`
 * (read at its return: the bytes just copied end at copied_seq). */
static __always_inline int recv_event(struct sock *sk, long ret, __u32 call)
{
	struct gs_tap_fold_ev ev;
	struct gs_tap_watch *w;
	struct gs_tap_flow out;
	bool known;
	__u64 id;

	sock_flow(sk, &out);
	if (!wanted_flow(sk, &out))
		return 0;
	id = bpf_get_current_pid_tgid();
	ev.ts_ns = bpf_ktime_get_ns();
	ev.len = ret > 0x7fffffff ? 0x7fffffff : (__u32)ret;
	/* read at the return: the bytes just copied end at copied_seq */
	ev.seq = as_tcp(sk)->copied_seq - ev.len;
	ev.tgid = id >> 32;
	ev.tid = (__u32)id;
	ev.call = (__u16)call;
	__builtin_memset(ev.pad, 0, sizeof ev.pad);
	w = watched_slot(sk, &out, &known);
	if (!known) {
		watch(&out, false, 0);
	} else if (w && sys_wait(w, sk, &out, &ev, false)) {
		/* the common case: the next segment the socket sends carries it */
		return 0;
	}
	if (sys_rec(&ev, &out, false))
		count(GS_CNT_RB_LOST);
	return 0;
}

/* The socket-layer recv: sock:sock_recv_length, at the end of sock_recvmsg
 * (every recv-family syscall and read() of a socket pass there), `ret` its
 * return; peeked bytes are read again later, out-of-band and error-queue
 * data are not the stream's. */
static __always_inline int on_sock_recv(struct sock *sk, int ret, int flags)
{
	if (ret <= 0 || (flags & (MSG_PEEK | MSG_OOB | MSG_ERRQUEUE)))
		return 0;
	if (!wanted_task() || !is_tcp(sk))
		return 0;
	return recv_event(sk, ret, GS_CALL_SOCK_RECV);
}

/* tp_btf: the arguments as the tracepoint declares them (the verifier types
 * what is loaded from the context: sk, msg; then skb, size_goal, unused) */
SEC("tp_btf/tcp_sendmsg_locked")
int tcp_send_btf(__u64 *ctx)
{
	return on_tcp_send((struct sock *)ctx[0], (const struct msghdr *)ctx[1]);
}

/* sk, ret, flags */
SEC("tp_btf/sock_recv_length")
int sock_recv_btf(__u64 *ctx)
{
	return on_sock_recv((struct sock *)ctx[0], (int)ctx[1], (int)ctx[2]);
}

/* The same where tp_btf is refused: untyped arguments, read through
 * BTF-typed views all the same. */
SEC("raw_tp/tcp_sendmsg_locked")
int tcp_send_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_tcp_send(as_sock(ctx->args[0]),
			   bpf_rdonly_cast((void *)ctx->args[1], bpf_core_type_id_kernel(struct msghdr)));
}

SEC("raw_tp/sock_recv_length")
int sock_recv_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_sock_recv(as_sock(ctx->args[0]), (int)ctx->args[1], (int)ctx->args[2]);
}

#include "syscalls.bpf.h"

char LICENSE[] SEC("license") = "GPL";
