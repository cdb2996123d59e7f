/* SPDX-License-Identifier: BSD-2-Clause */
/* Loss a source reports (kernel, interface, its own), for the progress line, the summary and
 * the metrics: its own header, so that what shows it need not see the session. */
#ifndef GS_DROPS_H
#define GS_DROPS_H

#include <stdint.h>

struct gs_drops {
	uint64_t kernel;          /* dropped by the kernel (pcap_stats ps_drop, ring buffer) */
	uint64_t iface;           /* dropped by the interface / NIC (ps_ifdrop, imissed) */
	uint64_t other;           /* e.g. rx_nombuf, map full */
	const char *other_name;
};

#endif
