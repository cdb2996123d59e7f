/* SPDX-License-Identifier: BSD-2-Clause */
/* The kernel's receive stamp for `giopscope attach`'s ingress instants
 * (ebpf/giop_tap.bpf.c, seg_time): keeping host-wide rx timestamping on while
 * attach runs (--rx-stamp; not by default, it costs every receiving process of
 * the host), and the TAI - REALTIME offset the tap converts the stamp with. */
#ifndef GS_ATTACH_RXSTAMP_H
#define GS_ATTACH_RXSTAMP_H

#include <stdint.h>

/* A socket with SO_TIMESTAMPNS: while it is open the kernel stamps every
 * received packet of the host at netif_rx / netif_receive_skb (a
 * ktime_get_real() each; docs/benchmarks.md says what that costs).
 * Its descriptor, or -errno. */
int gs_rxstamp_hold(void);

/* CLOCK_TAI - CLOCK_REALTIME in ns, whole seconds (37 s, or 0 where the TAI
 * offset was never set). */
int64_t gs_rxstamp_tai_off(void);

#endif
