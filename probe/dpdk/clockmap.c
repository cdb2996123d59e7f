/* SPDX-License-Identifier: BSD-2-Clause */
#include "clockmap.h"

void gs_clockmap_init(struct gs_clockmap *m, uint64_t tick, int64_t wall_ns, double ticks_per_sec)
{
	m->anchor_tick = m->meas_tick = tick;
	m->anchor_ns = m->meas_ns = wall_ns;
	m->ns_per_tick = ticks_per_sec > 0 ? 1e9 / ticks_per_sec : 1.0;
	m->step_ns = 10 * 1000000LL;
	m->resets = 0;
}

int64_t gs_clockmap_ns(const struct gs_clockmap *m, uint64_t tick)
{
	/* a counter value taken just before the anchor (another thread, a NIC
	 * stamp older than the last update) is a small negative distance */
	int64_t d = (int64_t)(tick - m->anchor_tick);
	return m->anchor_ns + (int64_t)((double)d * m->ns_per_tick);
}

void gs_clockmap_update(struct gs_clockmap *m, uint64_t tick, int64_t wall_ns)
{
	int64_t dt_ns = wall_ns - m->meas_ns;
	uint64_t dticks = tick - m->meas_tick;
	int64_t here = gs_clockmap_ns(m, tick);
	int64_t err = wall_ns - here;
	double rate;

	if (dt_ns <= 0 || dticks == 0)
		return;
	if (err > m->step_ns || err < -m->step_ns) {
		/* the wall clock was set, or the rate was far off: a new line */
		m->anchor_tick = tick;
		m->anchor_ns = wall_ns;
		m->meas_tick = tick;
		m->meas_ns = wall_ns;
		m->resets++;
		return;
	}
	/* the rate of the last interval, corrected so that the error is gone
	 * after an interval as long as the last one */
	rate = (double)dt_ns / (double)dticks;
	rate *= 1.0 + (double)err / (double)dt_ns;
	if (rate <= 0)
		return;
	m->anchor_tick = tick;
	m->anchor_ns = here;
	m->ns_per_tick = rate;
	m->meas_tick = tick;
	m->meas_ns = wall_ns;
}
