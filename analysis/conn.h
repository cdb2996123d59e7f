// SPDX-License-Identifier: BSD-2-Clause
/* A connection's header: its ends and liveness, what every stage of the
 * engine reads of it.  The first 64-byte line of a flow table entry (flows.h);
 * the stages are given a pointer to it with the direction they work on. */
#ifndef GS_CONN_H
#define GS_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "endpoint.h"

enum { GS_FLOW_IGNORED = 1, GS_FLOW_FORCED = 2, GS_FLOW_GIOP = 4, GS_FLOW_CLOSED = 8, GS_FLOW_TLS = 16 };

struct gs_conn {
	struct gs_endpoint ep[2];   /* ep[d] sends direction d */
	uint32_t hash;              /* flow_hash.h: what the lookup compares first */
	uint32_t gen;               /* bumped when the slot is freed: calls name it with `no` */
	uint32_t calls;             /* live calls (open or queued), linked by flow_next (calls.h) */
	uint32_t no;                /* the slot's number in the flow table */
	uint8_t flags;              /* GS_FLOW_* */
	bool in_use;
};

#endif
