/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the kernel side of `giopscope attach` (giop_tap.bpf.c) and its user
 * side (probe/attach_*.c) share: fixed-width records of the ring buffer, the
 * flow key and framing state, the counters.  Every struct is pinned in size:
 * both sides are compiled separately (clang -target bpf / cc) and must agree.
 */
#ifndef GS_GIOP_TAP_H
#define GS_GIOP_TAP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GS_TAP_HEAD_MAX 256       /* bytes shipped of each GIOP message head */
#define GS_TAP_HEADS 16           /* message heads one segment record carries */
#define GS_TAP_DATA_MAX (GS_TAP_HEADS * GS_TAP_HEAD_MAX)
#define GS_TAP_USER_HEAD 32       /* bytes shipped of a send/recv user buffer */
#define GS_TAP_COMM_LEN 16
#define GS_TAP_PORT_WORDS 1024    /* 65536 bits: the watched ports */
#define GS_TAP_RODATA_PIDS 8      /* up to this many pids are filtered without a map */
/* An ingress receive stamp older than this at the tap is not taken (a stamp
 * of another clock, or one carried over from elsewhere): the tap's own. */
#define GS_TAP_RX_AGE_MAX 100000000ull

/* Record kinds (first word of every ring-buffer record). */
enum gs_tap_kind {
	GS_REC_SEG = 1,    /* a TCP segment seen by the packet tap */
	GS_REC_SEND = 2,   /* a send entered TCP (or its syscall, fallback) (t1/t5) */
	GS_REC_RECV = 3,   /* a socket receive returned data (t4/t8) */
	GS_REC_FOLD = 4,   /* user space only: syscalls taken from watch_tab (gs_tap_fold_rec) */
};

/* gs_tap_seg.flags */
enum {
	GS_SEG_EGRESS = 1,       /* seen leaving (tc egress), else arriving */
	GS_SEG_HEADS_LOST = 2,   /* more messages started than GS_TAP_HEADS */
	GS_SEG_RESYNC = 4,       /* framing was lost and found again here */
	/* more heads of the segment whose earlier record came just before (a
	 * segment starting more than GS_TAP_HEADS messages -- oneway floods
	 * coalesced into one send -- is shipped in several records, each for a
	 * part of its payload: see gs_tap_seg.seq), not a new segment */
	GS_SEG_MORE = 8,
};
/* Message starts framed in one segment at most (a 64 KiB GSO segment of
 * 12-byte messages has 5461); past it the rest of the segment is not framed
 * (GS_CNT_FRAME_BOUND) and the next segment resyncs. */
#define GS_TAP_FRAME_HEADS_MAX 8192

/* The syscall of a gs_tap_sys record. */
enum gs_tap_call {
	GS_CALL_SENDTO = 1, GS_CALL_SENDMSG, GS_CALL_WRITE, GS_CALL_WRITEV,
	GS_CALL_RECVFROM, GS_CALL_RECVMSG, GS_CALL_READ, GS_CALL_READV,
	/* the socket-layer hooks (any syscall): tcp:tcp_sendmsg_locked's first
	 * pass of a call, sock:sock_recv_length */
	GS_CALL_TCP_SEND, GS_CALL_SOCK_RECV,
	/* fentry/fexit or kprobes on tcp_sendmsg_locked and tcp_recvmsg (a
	 * kernel without those tracepoints) */
	GS_CALL_TCP_SEND_FN, GS_CALL_TCP_RECV_FN,
};

/* How the syscall probes choose processes. */
enum gs_tap_filter {
	GS_FILTER_PIDS = 0,      /* tgid in the `pids` map */
	GS_FILTER_COMM = 1,      /* the thread group leader's comm equals filter_comm */
	GS_FILTER_PORTS = 2,     /* any process, on a socket with a watched port */
};

/* Counters (a per-CPU array indexed by these). */
enum gs_tap_counter {
	GS_CNT_SEGMENTS,         /* not counted in the kernel: user space counts the records */
	GS_CNT_SYSCALLS,         /* (idem) */
	GS_CNT_RB_LOST,          /* records the ring buffer had no room for */
	GS_CNT_FLOWS_NEW,        /* framing states created */
	GS_CNT_FLOWS_MIDSTREAM,  /* ... for a connection already running (no SYN seen) */
	GS_CNT_HEADS_LOST,       /* message heads not shipped (GS_TAP_HEADS per segment) */
	GS_CNT_RESYNC,           /* framing lost (hole, not GIOP) */
	GS_CNT_FLOW_MAP_FULL,    /* framing state could not be stored */
	GS_CNT_FCACHE_HASHED,    /* framing states put in `flows`: their fcache slot was held */
	GS_CNT_FCACHE_EVICTED,   /* fcache slots taken from an idle direction (its state moved to `flows`) */
	/* Ingress segments: which instant their record carries (docs/attach.md,
	 * "Ingress instants"); egress segments are in none of the three. */
	GS_CNT_RX_STAMPED,       /* the kernel's receive stamp (skb->tstamp) */
	GS_CNT_RX_UNSTAMPED,     /* none taken (no rx timestamping on the host): the tap's own */
	GS_CNT_RX_FAR,           /* one older than GS_TAP_RX_AGE_MAX or in the future: the tap's own */
	GS_CNT_FRAME_BOUND,      /* segments with more than GS_TAP_FRAME_HEADS_MAX message starts */
	GS_CNT_FRAME_WAIT_LONG,  /* segments that waited past the bound for the one before (busy_end) */
	GS_CNT_HOLE_CONFIRMED,   /* resyncs after a hole whose late segments, framed, ended right there */
	GS_CNT__MAX
};

/* The counters live in .bss, one row per CPU (no atomics, no shared cache
 * lines): user space reads them through the skeleton's mapping, which needs no
 * privilege once it is mapped. */
#define GS_TAP_MAX_CPUS 512
#define GS_TAP_CNT_ROW 16
_Static_assert(GS_CNT__MAX <= GS_TAP_CNT_ROW, "counter row too small");

/* One direction of a TCP connection: the sender's address first. */
struct gs_tap_flow {
	__u8 saddr[16];          /* IPv4 in the first 4 bytes, network byte order */
	__u8 daddr[16];
	__u16 sport, dport;      /* host byte order */
	__u8 family;             /* 4 or 6 */
	__u8 pad[3];
};
_Static_assert(sizeof(struct gs_tap_flow) == 40, "gs_tap_flow layout");

/* Per direction: where the next GIOP header starts (its `fcache` slot, or the
 * LRU hash `flows`: giop_tap.bpf.c). */
enum { GS_FS_UNSYNC = 0, GS_FS_SYNC = 1, GS_FS_PARTIAL = 2 };

struct gs_tap_fstate {
	__u32 next_hdr;          /* sequence number of the next header (SYNC) */
	__u32 head_end;          /* head bytes wanted up to here ... */
	__u32 cont_seq;          /* ... from the segment that starts here */
	__u32 hdr_seq;           /* PARTIAL: sequence number of the header's first byte */
	__u8 mode;               /* GS_FS_* */
	__u8 hdr_have;           /* PARTIAL: header bytes held in hdr[] */
	__u8 hdr[12];
	__u8 pad[2];
	/* a CPU is framing the segment that ends here (0: none): a segment
	 * starting here on another CPU waits for it (giop_tap.bpf.c, frame()) */
	__u32 busy_end;
	/* a hole (a segment came before the one ahead of it: sent by two
	 * threads, two segments can reach tc in the other order): framing
	 * resynced at hole_end (0: no hole), the header expected at hole_hdr
	 * lies in segments still to come; when they come they are framed from
	 * there (giop_tap.bpf.c, frame()) */
	__u32 hole_hdr;
	__u32 hole_end;
};
_Static_assert(sizeof(struct gs_tap_fstate) == 44, "gs_tap_fstate layout");

/* A framing state direct-mapped by its connection direction (`fcache` in the
 * object's .bss, GS_TAP_FCACHE_SLOTS of them; giop_tap.bpf.c says how a slot
 * is taken and given back).  Only the kernel side uses it. */
struct gs_tap_fcache {
	__u64 use;               /* 0 free, 1 being written, else: idle after this (ns) */
	struct gs_tap_flow key;
	struct gs_tap_fstate st;
	__u8 pad[36];
};
_Static_assert(sizeof(struct gs_tap_fcache) == 128, "gs_tap_fcache layout: two cache lines");
#define GS_TAP_FCACHE_SLOTS 4096

struct gs_tap_head {
	__u32 off;               /* offset in the segment's payload */
	__u32 len;               /* bytes of it shipped */
};

/* A segment: metadata, then `n_heads` struct gs_tap_head, then `data_len`
 * bytes: the heads' bytes one after another.  Right-sized: a segment that
 * starts no message (an ACK, the middle of a large message) is this header
 * alone, 80 bytes (not 208 with room for 16 heads), written straight into the
 * ring.  The record may be longer than that (the kernel reserves one of a few
 * fixed sizes): what follows the data is not to be read. */
struct gs_tap_seg {
	__u32 kind;              /* GS_REC_SEG */
	__u32 ifindex;
	__u64 ts_ns;             /* CLOCK_MONOTONIC: bpf_ktime_get_ns(), or on ingress the kernel's
				  * receive stamp when it took one (GS_CNT_RX_*) */
	struct gs_tap_flow flow;
	/* seq, len: the segment's; for a segment shipped in several records
	 * (GS_SEG_MORE), the part of its payload this record covers (the
	 * records' parts follow one another; heads' offsets are from this seq;
	 * only the last part has FIN, PSH, RST, only the first SYN) */
	__u32 seq, ack;
	__u32 len;               /* TCP payload bytes on the wire (or of the part) */
	__u16 window;            /* as in the header (unscaled) */
	__u8 tcp_flags;
	__u8 flags;              /* GS_SEG_* */
	__u16 n_heads;
	__u16 data_len;
	__u32 sys_off;           /* 0, or where a struct gs_tap_seg_fold lies in the record */
};
_Static_assert(sizeof(struct gs_tap_seg) == 80, "gs_tap_seg layout");

/* A syscall folded into a segment record: the facts of a GS_REC_SEND or
 * GS_REC_RECV record without head, so that it costs no ring record of its own
 * (docs/benchmarks.md: what a ring record costs).  Its flow is the segment's
 * (a send) or the segment's reversed (a recv). */
struct gs_tap_fold_ev {
	__u64 ts_ns;             /* send: entry; recv: return */
	__u32 seq;               /* as gs_tap_sys.seq */
	__u32 len;               /* as gs_tap_sys.len */
	__u32 tgid, tid;
	__u16 call;              /* enum gs_tap_call; 0: none */
	__u8 pad[6];
};
_Static_assert(sizeof(struct gs_tap_fold_ev) == 32, "gs_tap_fold_ev layout");

/* At seg.sys_off (8-aligned, after the heads' data) of a segment record that
 * carries syscalls: the send whose first byte the segment carries, and the
 * last recv on the socket before the segment left it (a segment the socket
 * sends; call 0: none).  User space takes them, in the order they happened,
 * as the records they stand for, before the segment. */
struct gs_tap_seg_fold {
	struct gs_tap_fold_ev send;
	struct gs_tap_fold_ev recv;
};
_Static_assert(sizeof(struct gs_tap_seg_fold) == 64, "gs_tap_seg_fold layout");

/* Syscalls the reader took out of watch_tab (no segment came to carry them),
 * handed to the feed like a record of the ring so that one piece of code
 * turns folded syscalls into events.  Never written by the kernel. */
struct gs_tap_fold_rec {
	__u32 kind;              /* GS_REC_FOLD */
	__u32 pad;
	struct gs_tap_flow flow; /* the socket's sending direction (local -> remote) */
	struct gs_tap_seg_fold fold;
};
_Static_assert(sizeof(struct gs_tap_fold_rec) == 112, "gs_tap_fold_rec layout");

/* the largest segment record */
#define GS_TAP_SEG_MAX (sizeof(struct gs_tap_seg) + GS_TAP_HEADS * sizeof(struct gs_tap_head) + GS_TAP_DATA_MAX)

/* A send (at entry) or a recv (at return) by a followed process. */
struct gs_tap_sys {
	__u32 kind;              /* GS_REC_SEND or GS_REC_RECV */
	__u32 tgid, tid;
	__u32 seq;               /* sequence number of the first byte handed over / returned */
	__u64 ts_ns;             /* send: entry; recv: return (CLOCK_MONOTONIC) */
	__u64 ts_enter;          /* 0 (the recv's entry is not traced) */
	struct gs_tap_flow flow; /* the data's direction: send local->remote, recv remote->local */
	__u32 len;               /* send: bytes asked; recv: bytes returned */
	__u16 call;              /* enum gs_tap_call */
	__u8 head_len;
	__u8 pad;
	__u8 head[GS_TAP_USER_HEAD]; /* send: the first bytes of the user buffer */
};
_Static_assert(sizeof(struct gs_tap_sys) == 112, "gs_tap_sys layout");
/* A record with head_len 0 ends before `head` (a recv, a send whose buffer
 * was not read): 32 bytes less through the ring. */
#define GS_TAP_SYS_SHORT 80
_Static_assert(__builtin_offsetof(struct gs_tap_sys, head) == GS_TAP_SYS_SHORT, "gs_tap_sys short form");

/* Per socket a followed process uses, direct-mapped by its connection
 * (`watch_tab` in the object's .bss, GS_TAP_WATCH_SLOTS of them): whether the
 * syscall probes know it, which thread sent on it last, and the syscalls
 * waiting to be folded into a segment record: the last send without head (for
 * the segment that carries its first byte) and the last recv (for the next
 * segment the socket sends: a reply, an ACK, a FIN).  `state` hands them over:
 * GS_PEND_SEND, GS_PEND_RECV say which wait; GS_PEND_BUSY, set by a compare
 * and exchange, that one CPU holds the slot (the syscall probes, the packet
 * tap and user space may reach for it at once: one takes, the others do
 * without).  Whoever holds the slot writes `state` anew when it lets go.
 * What waits is taken by the packet tap into its segment record, written as
 * its own record by the next syscall of its kind on the socket or by a new
 * owner of the slot, or read out by user space at each poll. */
enum { GS_PEND_SEND = 1, GS_PEND_RECV = 2, GS_PEND_BUSY = 4 };

struct gs_tap_watch {
	__u64 sk;                /* the socket's address (0: free) */
	__u64 tag;               /* its connection, hashed (the slot's index comes from it) */
	__u64 state;             /* GS_PEND_* */
	__u32 last_tid;          /* the last thread that sent on it (0: none yet) */
	__u32 pad0;
	struct gs_tap_fold_ev send; /* GS_PEND_SEND: the send waiting */
	struct gs_tap_flow flow; /* the socket's connection, local -> remote */
	__u64 switch_ns;         /* when a send by another thread than the last one came */
	__u8 pad1[16];
	struct gs_tap_fold_ev recv; /* GS_PEND_RECV: the recv waiting */
	/* tcp:tcp_sendmsg_locked runs once per pass of the copy loop: the last
	 * pass seen on the socket (under its lock), so that a later pass of the
	 * same call is told from a new call (see on_tcp_send) */
	__u64 cont_msg;          /* the call's struct msghdr (kernel address) */
	__u32 cont_seq;          /* write_seq at that pass */
	__u32 cont_left;         /* bytes the call still had to copy then */
	__u32 cont_tid;          /* the thread (0: none) */
	__u8 pad2[12];
};
_Static_assert(sizeof(struct gs_tap_watch) == 192, "gs_tap_watch layout");
_Static_assert(__builtin_offsetof(struct gs_tap_watch, flow) == 64, "gs_tap_watch: a line each");
_Static_assert(__builtin_offsetof(struct gs_tap_watch, recv) == 128, "gs_tap_watch: a line each");
#define GS_TAP_WATCH_SLOTS 4096

/* Per interface (an array by ifindex): 1 + how many link-layer bytes precede
 * the IP header on a tapped one, 0 on the others.  The first GS_TAP_RODATA_IFACES
 * are also in read-only data (no map lookup per packet). */
#define GS_TAP_RODATA_IFACES 8
#define GS_TAP_MAX_IFINDEX 65536
struct gs_tap_iface {
	__u32 l2_len;
};
/* Or'ed into that value: the ingress hook takes waiting sends too (loopback,
 * tapped on ingress only: what a local socket sends is seen there). */
#define GS_TAP_IF_CLAIM_IN 0x10000u
#define GS_TAP_IF_L2_MASK 0xffffu

#endif
