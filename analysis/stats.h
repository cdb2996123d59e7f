/* Latency statistics of calls, grouped (by operation for now).
 *
 * Each group holds two histograms (total_us and server_us).  Groups are
 * created on first use up to a bound; calls of further groups go to one
 * "(other)" group, and that is counted.
 */
#ifndef GS_STATS_H
#define GS_STATS_H

#include <stdint.h>
#include "call.h"
#include "hist.h"
#include "intern.h"

#define GS_STATS_TOP_BITS 42  /* histograms up to 2^42 ns: 73 minutes */

enum gs_group_by { GS_BY_OP = 0 };

struct gs_group {
	uint32_t key;          /* interned operation; GS_NONE for (other) */
	uint8_t kind;          /* gs_call_kind of the first call */
	uint64_t calls, answered, errors, oneways, no_reply;
	struct gs_hist total, server;
};

struct gs_stats {
	struct gs_group *groups;
	uint32_t n, max;
	uint32_t *by_key;      /* interned id -> group + 1 (size max_keys) */
	uint32_t max_keys;
	uint32_t other;        /* index of (other), GS_NONE until needed */
	uint64_t other_calls;
	struct gs_group all;
};

int gs_stats_init(struct gs_stats *s, uint32_t max_groups, uint32_t max_keys);
void gs_stats_free(struct gs_stats *s);
void gs_stats_add(struct gs_stats *s, const struct gs_call *c);
/* True when the call ended in an error: an exception, an unknown object, no reply. */
bool gs_call_is_error(const struct gs_call *c);

#endif
