/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/tc_floor.h -- what bench/tc_floor.bpf.c and bench/tc_floor.c share: the variants of
 * the bench-only empty tap (what a tc hook on the server's veth costs a round trip
 * before the tap's own work). */
#ifndef GS_TC_FLOOR_H
#define GS_TC_FLOOR_H

enum tc_floor_variant {
	TCF_EMPTY = 0,   /* return at once (the hook's fixed cost) */
	TCF_HEADERS = 1, /* + bpf_skb_load_bytes of IPv4 + TCP and a watch-table lookup */
	TCF_RING = 2,    /* + a ring record of the tap's segment size (reserve, stamp, submit) */
	TCF_STORE = 3,   /* + the same record written into this CPU's one slot (warm lines), no ring */
	TCF_RING2 = 4,   /* ring, but ingress and egress each with a ring of their own */
	TCF_BATCH = 5,   /* the record staged in this CPU's area, the area written to the ring with
			  * one bpf_ringbuf_output when full, when its oldest record is stage_ns old
			  * (seen at a run), or at this CPU's BPF timer tick (every stage_ns while
			  * records come) */
	TCF_STAGEW = 6,  /* batch's writes into the area (stage_n records in turn) without its
			  * flushes and timer: what writing the area's lines costs alone */
	TCF_COLDW = 7,   /* the record into a 1 MiB area per CPU, the next 80 bytes each run (as
			  * a ring's), no ring: what writing lines not in cache costs alone */
};
#define TCF_COLD_N 13100 /* 64 + 13100 x 80 bytes: 1 MiB */
#define TCF_COLD_CPUS 8  /* coldw's areas: CPU ids modulo 8 (this benchmark runs on 2) */

/* variant batch: a staged batch as it goes to the ring (one ring record): this header, then
 * n struct gs_tap_seg in the order they were staged (time order of one CPU) */
struct tcf_batch_hdr {
	__u32 kind;      /* TCF_REC_BATCH */
	__u16 cpu;       /* the CPU whose records these are */
	__u16 n;         /* records that follow */
	__u64 first_ts;  /* the oldest record's ts_ns */
};
#define TCF_REC_BATCH 0x7c4b
#define TCF_STAGE_N 48   /* 16 + 48 x 80 = 3856 bytes: the area fits 4 KiB */
#define TCF_STAGE_NS_DEFAULT 1000000ULL /* 1 ms */

#define TCF_WATCH_SLOTS 4096 /* as GS_TAP_WATCH_SLOTS */
#define TCF_MAX_CPUS 512
#define TCF_CNT_IN 0       /* runs that read the headers, ingress */
#define TCF_CNT_OUT 1      /* ... egress */
#define TCF_CNT_TCP 2      /* of them IPv4/TCP */
#define TCF_CNT_RB_LOST 3  /* ring full (batch: a batch lost, its records in TCF_CNT_B_LOST_RECS) */
#define TCF_CNT_B_FULL 4   /* batch: flushes at a run, the area full */
#define TCF_CNT_B_AGED 5   /* batch: flushes at a run, the oldest record older than stage_ns */
#define TCF_CNT_B_TIMER 6  /* batch: flushes at the timer's tick */
#define TCF_CNT_WATCH 7    /* runs whose connection's watch slot matched */
#define TCF_CNT_B_RECS 8   /* batch: records written to the ring by flushes */
#define TCF_CNT_B_FIRED 9  /* batch: timer callbacks */
#define TCF_CNT_B_ARMED 10 /* batch: timer starts (at a run, or re-armed by the callback) */
#define TCF_CNT_B_LOST_RECS 11 /* batch: records of batches the ring had no room for */
#define TCF_CNT_B_ODDCPU 12 /* batch: a callback on another CPU than its timer's (not expected) */
#define TCF_CNT_B_CB_NS 13  /* batch: ns spent in the timer's callbacks */
#define TCF_CNT_ROW 16

#endif
