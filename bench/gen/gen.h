/* SPDX-License-Identifier: BSD-2-Clause */
/* State shared by the whole capture: the clock, the output, the mode, the counts. */
#ifndef GEN_GEN_H
#define GEN_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "pcap_out.h"
#include "rng.h"

#define T_NEVER UINT64_MAX

struct gen {
	struct rng rng;
	struct pcap_out out;
	uint64_t now;           /* ns since the epoch; only goes up */
	double retransmit;      /* probability that a data segment is lost after the tap */
	double v6_share;
	double cancel;          /* probability that a two-way call is cancelled */
	bool open_all;          /* every request goes out before the first reply */
	bool no_close;          /* connections are left open: no FIN, no CloseConnection */
	bool no_replies;        /* servers never answer a two-way call (or a LocateRequest) */
	bool replies_open;      /* open_all: they all went out */
	bool flip;              /* replies_open just became true: every connection's next
				   event moved, the scheduler must look again */
	uint64_t total_calls, requests_sent;
	struct buf scratch;     /* a message being built */

	/* what was generated, printed at the end */
	uint64_t n_conns, n_requests, n_locates, n_oneway, n_cancel, n_user_ex, n_sys_ex,
		n_forward, n_fragmented, n_fragments, n_rtx, n_close_msgs, by_minor[3],
		n_unanswered, n_left_open;
};

#endif
