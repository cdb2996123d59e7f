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
 */
#ifndef GS_TAIL_H
#define GS_TAIL_H

#include <stdint.h>
#include <stdio.h>
#include "call.h"
#include "engine.h"

struct gs_tail_entry {
	struct gs_call call;
	char op[64];
	char queued_op[64];
};

struct gs_tail {
	struct gs_tail_entry *v;
	uint32_t n, max;
};

int gs_tail_init(struct gs_tail *t, uint32_t max);
void gs_tail_free(struct gs_tail *t);
/* Keeps the call if it is among the slowest answered ones so far. */
void gs_tail_add(struct gs_tail *t, const struct gs_engine *e, const struct gs_call *c);
/* Reasons as text ("server 5001.2 us (99%); queued ..."); returns the tags as a
 * bit set (GS_TAG_*). */
enum {
	GS_TAG_SERVER = 1, GS_TAG_NETWORK = 2, GS_TAG_RETRANSMISSION = 4, GS_TAG_QUEUED = 8,
	GS_TAG_NAGLE = 16, GS_TAG_ZERO_WINDOW = 32, GS_TAG_CAPTURE_LOSS = 64,
};
unsigned gs_call_reasons(const struct gs_call *c, const char *queued_op, char *buf, size_t len);
/* Writes the kept calls, slowest first: a table (text) or JSON lines. */
void gs_tail_write(FILE *out, bool jsonl, struct gs_tail *t);

#endif
