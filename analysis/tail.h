/* SPDX-License-Identifier: BSD-2-Clause */
/* The N slowest calls, with their split and the reasons the wire shows.
 *
 * A bounded min-heap of copies (the fastest kept call is replaced first), so a
 * day of traffic costs N records.  Reasons are tags with their evidence:
 *   server          the far side of the capture point held the call (>= half)
 *   network         the request and reply took long to cross (>= half)
 *   retransmission  segments were resent; how long after the message began
 *   queued          waited behind another call on the same connection: which, how long
 *   nagle           a message's last segment was held until an ACK (delayed-ACK stall)
 *   zero-window     a receiver stopped reading
 *   capture-loss    the capture missed bytes of the call: its figures are bounds
 * and under attach --sched / --orb, of server_process_us (t4..t5):
 *   cpu-starved     a third or more in the run queue (runnable, waiting for a CPU)
 *   blocked         a third or more off CPU, blocked (sleep, lock, I/O)
 *   on-cpu          a third or more on CPU
 *   orb             a third or more in the ORB outside the servant (orb_in + orb_out)
 *   downstream      nested calls were open for >= half of the server time: the one
 *                   that held it longest, and its own reasons, down the chain
 * The split: total_us, server_us, network_us (total - server, where both
 * messages were seen whole) and, under attach, server_process_us and
 * client_syscall_us (docs/output.md).
 */
#ifndef GS_TAIL_H
#define GS_TAIL_H

#include <stdint.h>
#include <stdio.h>
#include "call.h"
#include "intern.h"
#include "engine.h"
#include "sink_pairs.h"

/* How many nested calls a kept call's chain follows below it (the call that
 * held it longest, the one that held that one longest, ...): a chain of tiers
 * deeper than this ends in a hop marked not kept. */
#define GS_TAIL_DEPTH 4
/* Nested calls kept for the order in which children end before their parent
 * (live capture, attach): the last ones seen, a ring. */
#define GS_TAIL_RECENT 256
/* Kept calls that may hold a chain at once (each GS_TAIL_DEPTH copies). */
#define GS_TAIL_CHAINS 1024

struct gs_tail_entry {
	struct gs_call call;
	char op[64];
	char queued_op[64];
	char hold_op[64];      /* the operation of call.hold_* (the nested call that held it) */
	/* attach's syscall instants (0: not seen); has_times: the call came with them */
	struct gs_call_times times;
	bool has_times;
	/* copies of the nested calls that held it, longest first: chain[0] is
	 * call.hold_*, chain[k + 1] is chain[k].call.hold_*; NULL until one comes
	 * (copies in the chain have no chain of their own) */
	struct gs_tail_entry *chain;
	uint8_t depth;         /* hops of chain filled */
};

struct gs_tail {
	struct gs_tail_entry *v;
	uint32_t n, max;
	/* the recent nested calls (tail_chain.c): allocated with the first one */
	struct gs_tail_entry *recent;
	uint32_t recent_n, recent_next;
	uint32_t chains;          /* entries of v holding a chain allocation */
	uint64_t chains_refused;  /* a kept call's chain not kept: GS_TAIL_CHAINS or no memory */
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
	GS_TAG_DOWNSTREAM = 4096,
};
/* The reasons of attach --sched / --orb (cpu-starved, blocked, on-cpu, orb),
 * appended to `buf` (which holds `at` bytes of text already); returns the tags. */
unsigned gs_times_reasons(const struct gs_call_times *t, char *buf, size_t len, size_t at);
unsigned gs_call_reasons(const struct gs_call *c, const char *queued_op, char *buf, size_t len);
/* The tail with the strings the calls' ids name (gs_tail_add_times takes
 * them from the engine). */
void gs_tail_add_strings(struct gs_tail *t, const struct gs_intern *strings, const struct gs_call *c,
			 const struct gs_call_times *times);

/* tail_chain.c: the nested calls that held the kept ones.
 * A call with a parent (parent_basis) is offered before it may be kept: the
 * kept calls (and their chains) waiting for it as the one that held them take
 * a copy (ordered output: the parent comes first), and it joins the ring of
 * recent nested calls, where a call kept later finds its child (live output:
 * children end first). */
void gs_tail_chain_offer(struct gs_tail *t, const struct gs_tail_entry *en);
/* A kept entry (chain reset): follows its hold_* down the recent ring. */
void gs_tail_chain_start(struct gs_tail *t, struct gs_tail_entry *en);
void gs_tail_chain_free(struct gs_tail *t);
/* `downstream`: when at least half of the call's server time had nested calls
 * open, "downstream D us (P% of server) in nested calls, longest OP at SERVER
 * request R, H us", then " -> [CHILD]" with `child` (the held-by call's own
 * reasons) or " (not seen)" when child is NULL; appended at `at`.  Returns
 * GS_TAG_DOWNSTREAM or 0. */
unsigned gs_downstream_reason(const struct gs_call *c, const char *hold_op, const char *child, char *buf,
			      size_t len, size_t at);
/* A kept entry's reasons (the wire's, attach's, downstream), each hop of its
 * chain from `from` down in brackets; returns the tags of the entry's own. */
unsigned gs_tail_entry_reasons(const struct gs_tail_entry *en, char *buf, size_t len);
/* The chain of a kept entry as a JSON array ("chain":[...]) of hops, each with
 * its own figures, tags and reasons; nothing when the call had no nested call. */
void gs_tail_chain_json(FILE *out, const struct gs_tail_entry *en);
/* The tag names, bit k of the set is names[k] (GS_TAG_*). */
void gs_tail_tags_json(FILE *out, unsigned tags);

/* Writes the kept calls, slowest first: a table (text) or JSON lines. */
void gs_tail_write(FILE *out, bool jsonl, struct gs_tail *t);

#endif
