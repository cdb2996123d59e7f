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

/* Record kinds (first word of every ring-buffer record). */
enum gs_tap_kind {
	GS_REC_SEG = 1,    /* a TCP segment seen by the packet tap */
	GS_REC_SEND = 2,   /* a send-family syscall entered (t1/t5) */
	GS_REC_RECV = 3,   /* a recv-family syscall returned data (t4/t8) */
};

/* gs_tap_seg.flags */
enum {
	GS_SEG_EGRESS = 1,       /* seen leaving (tc egress), else arriving */
	GS_SEG_HEADS_LOST = 2,   /* more messages started than GS_TAP_HEADS */
	GS_SEG_RESYNC = 4,       /* framing was lost and found again here */
};

/* The syscall of a gs_tap_sys record. */
enum gs_tap_call {
	GS_CALL_SENDTO = 1, GS_CALL_SENDMSG, GS_CALL_WRITE, GS_CALL_WRITEV,
	GS_CALL_RECVFROM, GS_CALL_RECVMSG, GS_CALL_READ, GS_CALL_READV,
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
	GS_CNT_INFLIGHT_FULL,    /* unused (recv entries are no longer traced): always 0 */
	GS_CNT_FLOW_MAP_FULL,    /* framing state could not be stored */
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

/* Per direction: where the next GIOP header starts (LRU hash `flows`). */
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
};
_Static_assert(sizeof(struct gs_tap_fstate) == 32, "gs_tap_fstate layout");

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
	__u64 ts_ns;             /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	struct gs_tap_flow flow;
	__u32 seq, ack;
	__u32 len;               /* TCP payload bytes on the wire */
	__u16 window;            /* as in the header (unscaled) */
	__u8 tcp_flags;
	__u8 flags;              /* GS_SEG_* */
	__u16 n_heads;
	__u16 data_len;
	__u32 pad;
};
_Static_assert(sizeof(struct gs_tap_seg) == 80, "gs_tap_seg layout");
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

/* Per interface (an array by ifindex): 1 + how many link-layer bytes precede
 * the IP header on a tapped one, 0 on the others.  The first GS_TAP_RODATA_IFACES
 * are also in read-only data (no map lookup per packet). */
#define GS_TAP_RODATA_IFACES 8
#define GS_TAP_MAX_IFINDEX 65536
struct gs_tap_iface {
	__u32 l2_len;
};

#endif
