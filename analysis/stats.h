/* SPDX-License-Identifier: BSD-2-Clause */
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

enum gs_group_by { GS_BY_OP = 0, GS_BY_CONN, GS_BY_OBJECT, GS_BY_SERVER, GS_BY_PRIORITY };

/* "op", "conn", "object", "server", "priority" -> enum; -1 when unknown. */
int gs_group_by_parse(const char *s);
const char *gs_group_by_title(enum gs_group_by by);

/* attach --sched / --orb: the parts of server_process_us (t4..t5) */
enum gs_part {
	GS_PART_ONCPU, GS_PART_RUNQ, GS_PART_BLOCKED,     /* --sched */
	GS_PART_ORB_IN, GS_PART_SERVANT, GS_PART_ORB_OUT, /* --orb */
	GS_PART__N
};
enum { GS_PARTS_SCHED = 1, GS_PARTS_ORB = 2 };
/* One call's parts (ns); `sched` / `orb`: which are known. */
struct gs_call_parts {
	bool sched, orb;
	int64_t ns[GS_PART__N];
};
/* A group's histograms of them (those of the kinds asked for). */
struct gs_group_parts {
	struct gs_hist h[GS_PART__N];
};

/* The nesting split of a group's server time (gs_stats_nesting): over its
 * answered calls, the server's own part (server_us - downstream_us) and the
 * part with nested calls open (downstream_us, 0 for a call without any). */
struct gs_group_nest {
	struct gs_hist own, down;
	uint64_t nested;          /* calls with a parent (parent_basis) */
	uint64_t with_down;       /* answered calls that had nested calls open */
};

struct gs_group {
	uint32_t key;          /* interned operation; GS_NONE for (other) */
	uint8_t kind;          /* gs_call_kind of the first call */
	uint64_t calls, answered, errors, oneways, no_reply;
	uint64_t gap_filled;   /* calls whose request or reply waited for a gap fill */
	uint64_t capture_loss; /* calls that lack bytes in the capture (times are bounds) */
	struct gs_hist total, server;
	struct gs_group_parts *parts; /* NULL until a call brings parts (gs_stats_parts) */
	struct gs_group_nest *nest;   /* NULL until the group's first call under gs_stats_nesting */
};

struct gs_stats {
	struct gs_group *groups;
	uint32_t n, max;
	uint32_t *by_key;      /* interned id -> group + 1 (size max_keys) */
	uint32_t max_keys;
	uint32_t other;        /* index of (other), GS_NONE until needed */
	uint64_t other_calls;
	/* The whole's counters take every call; its histograms, until folded,
	 * only the latencies of calls without a group: gs_stats_fold adds the
	 * groups' then, and from then on each call goes to both (until then a
	 * call costs one histogram record and bucket line, not two).  Whoever reads
	 * all.total or all.server folds first; gs_stats_merge folds the
	 * destination and takes an unfolded source's groups into the whole. */
	struct gs_group all;
	bool folded;
	enum gs_group_by by;
	struct gs_intern labels;  /* group labels when not by operation */
	bool has_labels;
	uint8_t parts;            /* GS_PARTS_*: the summary shows these parts (attach --sched/--orb) */
	uint64_t parts_no_memory; /* calls whose parts a group could not keep */
	bool nesting;             /* the calls come through the nesting stage: split server time */
	uint64_t nest_no_memory;  /* calls whose split a group could not keep */
};

int gs_stats_init(struct gs_stats *s, uint32_t max_groups, uint32_t max_keys);
void gs_stats_free(struct gs_stats *s);
void gs_stats_add(struct gs_stats *s, const struct gs_call *c);
/* Groups by something else than the operation (call before adding). */
int gs_stats_group_by(struct gs_stats *s, enum gs_group_by by);
/* Adds a call to the group its `by` key names (strings: the engine's). */
void gs_stats_add_call(struct gs_stats *s, const struct gs_intern *strings, const struct gs_call *c);
/* attach --sched / --orb: keep and show the parts `kinds` (GS_PARTS_*) per
 * group (six more histograms a group at most, allocated with its first call
 * that has them). */
void gs_stats_parts(struct gs_stats *s, unsigned kinds);
/* The calls carry the nesting stage's fields: keep each group's split of
 * server time into own and downstream, and its nested calls (two more
 * histograms a group, allocated with its first call). */
void gs_stats_nesting(struct gs_stats *s, bool on);
/* gs_stats_add_call() with the call's parts (NULL: none known). */
void gs_stats_add_call_parts(struct gs_stats *s, const struct gs_intern *strings, const struct gs_call *c,
			     const struct gs_call_parts *p);
/* Adds the groups of `src` (by operation, another engine's names) into `s`
 * (read --threads: one gs_stats a thread, merged at the end); `map` turns a
 * key of src into one of s.  Groups beyond s's bound go to (other). */
/* Adds the groups' latencies to the whole's histograms, once (see `folded`). */
void gs_stats_fold(struct gs_stats *s);
void gs_stats_merge(struct gs_stats *s, const struct gs_stats *src, uint32_t (*map)(void *arg, uint32_t key),
		    void *arg);
/* The label of a group, printable, into buf. */
const char *gs_stats_label(const struct gs_stats *s, const struct gs_group *g,
			   const struct gs_intern *strings, char *buf, size_t len);
/* True when the call ended in an error: an exception, an unknown object, no reply. */
bool gs_call_is_error(const struct gs_call *c);

#endif
