/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the ORB upcall probes of `giopscope attach --orb` (orb_upcall.bpf.c) and
 * their user side (probe/attach_orb.c) share.  Fixed-width, pinned in size. */
#ifndef GS_ORB_UPCALL_H
#define GS_ORB_UPCALL_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GS_ORB_TGIDS 16          /* thread groups followed (read-only data) */

/* Which edge of the upcall a probe marks: its attach cookie. */
enum gs_orb_edge {
	GS_ORB_UPCALL_START = 1, /* arguments unmarshalled: the servant is next */
	GS_ORB_UPCALL_END = 2,   /* the servant is done: reply or exception next */
};

struct gs_orb_ev {
	__u64 ts_ns;             /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 tgid, tid;
	__u32 edge;              /* enum gs_orb_edge */
	__u32 probe;             /* index of the profile line that fired */
};
_Static_assert(sizeof(struct gs_orb_ev) == 24, "gs_orb_ev layout");

/* the cookie: edge in the low byte, profile line index above */
#define GS_ORB_COOKIE(edge, line) ((__u64)(edge) | ((__u64)(line) << 8))

enum gs_orb_counter {
	GS_ORB_CNT_LOST,         /* records the ring had no room for */
	GS_ORB_CNT__MAX
};
#define GS_ORB_MAX_CPUS 512
#define GS_ORB_CNT_ROW 8
_Static_assert(GS_ORB_CNT__MAX <= GS_ORB_CNT_ROW, "counter row too small");

#endif
