/* SPDX-License-Identifier: BSD-2-Clause */
/* The syscall instants of `giopscope attach`, kept per direction of each
 * connection until the calls they belong to end: sends (entry time, first
 * sequence number, the message the buffer starts with) and recvs (return time, sequence range returned).  A call
 * finds its instants by the TCP sequence numbers of its first and last bytes,
 * which is exact however the process splits or merges messages into syscalls.
 *
 * Bounded: a fixed table of directions (the oldest is replaced when a probe
 * window is full) with the last GS_TIMES_RING sends and recvs of each. */
#ifndef GS_ATTACH_TIMES_H
#define GS_ATTACH_TIMES_H

#include <stdbool.h>
#include <stdint.h>

#include "../analysis/call.h"

#define GS_TIMES_RING 64

struct gs_times_ev {
	uint32_t seq, len;        /* len 0: not known (a send by sendmsg/writev) */
	int64_t ts;               /* wall clock ns */
	uint32_t rid;             /* the GIOP message the buffer starts with, if it */
	uint32_t tid;             /* the thread that made the syscall (0: not known) */
	int64_t mono;             /* the record's own clock (CLOCK_MONOTONIC ns) */
	/* attach --sched: the thread's time per scheduler state up to the
	 * syscall (gs_tlog_cum), taken when the record came */
	bool has_cum;
	int64_t cum[4];           /* GS_TLOG_CUM (analysis/thread_log.h) */
	uint8_t type;             /* does (has_id): threads sending on one connection */
	bool has_id;              /* enter in one order and queue in another */
};

/* What a syscall's buffer starts with, when that is a GIOP header. */
struct gs_times_id {
	bool has_id;
	uint8_t type;
	uint32_t rid;
};

/* What the lookups compare of an event, kept dense beside the rings (slot i
 * of send_key is send[i]'s): a lookup scans 64 of them, 1 KiB, instead of 64
 * events of 80 bytes, two cache lines each. */
struct gs_times_key {
	uint32_t seq, len;
	int64_t ts;
};

struct gs_times_dir {
	struct gs_endpoint src, dst;
	bool used;
	int64_t last_use;
	uint32_t n_send, n_recv;  /* events ever added (the rings keep the last ones) */
	struct gs_times_key send_key[GS_TIMES_RING];
	struct gs_times_key recv_key[GS_TIMES_RING];
	uint32_t send_rid[GS_TIMES_RING];
	uint16_t send_idt[GS_TIMES_RING]; /* has_id ? 0x100 | type : 0 */
	struct gs_times_ev send[GS_TIMES_RING];
	struct gs_times_ev recv[GS_TIMES_RING];
};

struct gs_times {
	struct gs_times_dir *dirs;
	uint32_t mask;
	uint64_t replaced;        /* directions pushed out by newer ones */
};

/* `slots`: a power of two.  0 or an errno value. */
int gs_times_init(struct gs_times *t, uint32_t slots);
void gs_times_free(struct gs_times *t);
void gs_times_add(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
		  bool send, uint32_t seq, uint32_t len, int64_t ts, const struct gs_times_id *id);
/* The same, with the thread that made the syscall and the record's own time. */
struct gs_times_ev *gs_times_add_tid(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
				     bool send, uint32_t seq, uint32_t len, int64_t ts,
				     const struct gs_times_id *id, uint32_t tid, int64_t mono);
/* The send (recv) of direction `d` made at `ts` (as returned by gs_times_send /
 * gs_times_recv); NULL if not kept. */
const struct gs_times_ev *gs_times_ev_at(const struct gs_times_dir *d, bool send, int64_t ts);
/* The message a buffer's first bytes start, if they hold enough of it. */
struct gs_times_id gs_times_id_of(const uint8_t *head, uint32_t len);
/* The direction src -> dst, or NULL if nothing was seen of it. */
const struct gs_times_dir *gs_times_dir(const struct gs_times *t, const struct gs_endpoint *src,
					const struct gs_endpoint *dst);
/* Entry time of the send that handed over the message of type `type` and
 * request id `rid` whose first byte is `seq`, at or before `not_after`; 0 if
 * none.  A send whose buffer starts with that very message wins; else the one
 * whose bytes hold `seq` and start closest before it (of equals, a send tried
 * again after EAGAIN, the latest). */
int64_t gs_times_send(const struct gs_times_dir *d, uint32_t seq, int64_t not_after, uint8_t type,
		      uint32_t rid);
/* Return time of the recv that returned byte `seq`; 0 if none. */
int64_t gs_times_recv(const struct gs_times_dir *d, uint32_t seq);

#endif
