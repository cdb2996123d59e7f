/* SPDX-License-Identifier: BSD-2-Clause */
/* The N slowest calls, with their split and the reasons the wire shows.
 *
 * A bounded min-heap of copies (the fastest kept call is replaced first), so a
 * day of traffic costs N records.  Reasons are tags with their evidence:
 *   server          the far side of the capture point held the call (>= half)
 *   network         the request and reply took long to cross (>= half)
 *   retransmission  segments were resent; how long after the message began
 *   queued          waited behind another call on the same connection: which, how long;
 *                   or, for most of the server's time, in the server's receive queue
 *                   before the ORB read the request (recvq_ns: attach, or a capture's
 *                   out-of-order replies), for a CPU or for the ORB's threads (--sched);
 *                   the process's own split is then not given
 *   nagle           a message's last segment was held until an ACK (delayed-ACK stall)
 *   zero-window     a receiver stopped reading
 *   capture-loss    the capture missed bytes of the call: its figures are bounds
 * and under attach --sched / --orb, of server_process_us (t4..t5):
 *   cpu-starved     a third or more in the run queue (runnable, waiting for a CPU)
 *   blocked         a third or more off CPU, blocked (sleep, lock, I/O)
 *   on-cpu          a third or more on CPU
 *   orb             a third or more in the ORB outside the servant (orb_in + orb_out)
 * The split: total_us, server_us, network_us (total - server, where both
 * messages were seen whole) and, under attach, server_process_us and
 * client_syscall_us (docs/output.md).
 */
#ifndef GS_TAIL_H
#define GS_TAIL_H

#include <stdint.h>
#include <stdio.h>
#include "call.h"
#include "engine.h"
#include "sink_pairs.h"

struct gs_tail_entry {
	struct gs_call call;
	char op[64];
	char queued_op[64];
	/* attach's syscall instants (0: not seen); has_times: the call came with them */
	struct gs_call_times times;
	bool has_times;
};

struct gs_tail {
	struct gs_tail_entry *v;
	uint32_t n, max;
};

int gs_tail_init(struct gs_tail *t, uint32_t max);
void gs_tail_free(struct gs_tail *t);
/* Keeps the call if it is among the slowest answered ones so far. */
void gs_tail_add(struct gs_tail *t, const struct gs_engine *e, const struct gs_call *c);
/* The same, with attach's syscall instants of the call (NULL: none, as
 * gs_tail_add): the tail then shows server_process_us and client_syscall_us. */
void gs_tail_add_times(struct gs_tail *t, const struct gs_engine *e, const struct gs_call *c,
		       const struct gs_call_times *times);
/* The split of a call (ns; false when not known):
 *   network: total - server, the request's and the reply's own crossing of
 *            the capture point (first to last byte of each), known when both
 *            were seen to their last byte;
 *   server_process: t5 - t4 (attach, server followed);
 *   client_syscall: t8 - t1 (attach, client followed). */
bool gs_tail_network_ns(const struct gs_call *c, int64_t *ns);
bool gs_tail_server_process_ns(const struct gs_tail_entry *en, int64_t *ns);
bool gs_tail_client_syscall_ns(const struct gs_tail_entry *en, int64_t *ns);
/* Reasons as text ("server 5001.2 us (99%); queued ..."); returns the tags as a
 * bit set (GS_TAG_*). */
enum {
	GS_TAG_SERVER = 1, GS_TAG_NETWORK = 2, GS_TAG_RETRANSMISSION = 4, GS_TAG_QUEUED = 8,
	GS_TAG_NAGLE = 16, GS_TAG_ZERO_WINDOW = 32, GS_TAG_CAPTURE_LOSS = 64, GS_TAG_LOSS = 128,
	GS_TAG_CPU_STARVED = 256, GS_TAG_BLOCKED = 512, GS_TAG_ON_CPU = 1024, GS_TAG_ORB = 2048,
};
/* The reasons of attach --sched / --orb (cpu-starved, blocked, on-cpu, orb),
 * appended to `buf` (which holds `at` bytes of text already); returns the tags. */
unsigned gs_times_reasons(const struct gs_call_times *t, char *buf, size_t len, size_t at);
unsigned gs_call_reasons(const struct gs_call *c, const char *queued_op, char *buf, size_t len);
/* The same with attach's times (NULL: none): the wait in the receive queue
 * says whether it was for a CPU (--sched). */
unsigned gs_call_reasons_times(const struct gs_call *c, const struct gs_call_times *t, const char *queued_op,
			       char *buf, size_t len);
/* The request waited in the server's receive queue (recvq_ns) for at least
 * half of the server's time: the call reads `queued`, not `server`. */
bool gs_recvq_dominates(const struct gs_call *c);
/* "queued X us in the receive queue[ (for a CPU: run queue Y us | for the
 * ORB's threads: run queue Y us)]" appended at buf + at; returns the new end. */
size_t gs_recvq_reason(const struct gs_call *c, const struct gs_call_times *t, char *buf, size_t len, size_t at);
/* Writes the kept calls, slowest first: a table (text) or JSON lines. */
void gs_tail_write(FILE *out, bool jsonl, struct gs_tail *t);

#endif
