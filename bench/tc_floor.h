/* bench/tc_floor.h -- what bench/tc_floor.bpf.c and bench/tc_floor.c share: the variants of
 * the bench-only empty tap (issue 16: what a tc hook on the server's veth costs a round trip
 * before the tap's own work). */
#ifndef GS_TC_FLOOR_H
#define GS_TC_FLOOR_H

enum tc_floor_variant {
	TCF_EMPTY = 0,   /* return at once (the hook's fixed cost) */
	TCF_HEADERS = 1, /* + bpf_skb_load_bytes of IPv4 + TCP and a watch-table lookup */
	TCF_RING = 2,    /* + a ring record of the tap's segment size (reserve, stamp, submit) */
	TCF_STORE = 3,   /* + the same record written into this CPU's one slot (warm lines), no ring */
	TCF_RING2 = 4,   /* ring, but ingress and egress each with a ring of their own */
};

#define TCF_WATCH_SLOTS 4096 /* as GS_TAP_WATCH_SLOTS */
#define TCF_MAX_CPUS 512
#define TCF_CNT_IN 0       /* runs that read the headers, ingress */
#define TCF_CNT_OUT 1      /* ... egress */
#define TCF_CNT_TCP 2      /* of them IPv4/TCP */
#define TCF_CNT_RB_LOST 3  /* ring full */
#define TCF_CNT_ROW 8

#endif
