/* SPDX-License-Identifier: BSD-2-Clause */
/* A free-running counter (the TSC, or a NIC's time stamp clock) mapped onto
 * CLOCK_REALTIME nanoseconds.
 *
 * The map is a line through an anchor (counter, ns) with a rate in ns per
 * tick.  Re-anchoring once a second never steps the time: the new anchor is
 * the old line's value at that instant, and the rate for the next interval is
 * the one measured over the last interval, bent so that the error against the
 * wall clock is gone by the end of the next interval (slewing, as NTP does).
 * Only a wall-clock step larger than `step_ns` (someone set the clock) resets
 * the line.  Pure C, no DPDK: the counter readings come from the caller. */
#ifndef GS_DPDK_CLOCKMAP_H
#define GS_DPDK_CLOCKMAP_H

#include <stdbool.h>
#include <stdint.h>

struct gs_clockmap {
	uint64_t anchor_tick;   /* the line goes through (anchor_tick, anchor_ns) */
	int64_t anchor_ns;
	double ns_per_tick;
	uint64_t meas_tick;     /* the last (counter, wall clock) pair measured */
	int64_t meas_ns;
	int64_t step_ns;        /* a larger error is a clock step: start a new line */
	uint64_t resets;        /* how often that happened */
};

/* Starts the line at a (counter, wall clock) pair with a nominal rate. */
void gs_clockmap_init(struct gs_clockmap *m, uint64_t tick, int64_t wall_ns, double ticks_per_sec);
/* Wall-clock nanoseconds of a counter value.  Continuous while the wall
 * clock is not stepped; a value a little before the anchor is fine. */
int64_t gs_clockmap_ns(const struct gs_clockmap *m, uint64_t tick);
/* A new (counter, wall clock) pair, at least some 100 ms after the previous. */
void gs_clockmap_update(struct gs_clockmap *m, uint64_t tick, int64_t wall_ns);

#endif
