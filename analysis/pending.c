/* SPDX-License-Identifier: BSD-2-Clause */
/* The pending list: the directions that hold back output (bytes held out of
 * order, a hole, a head still being gathered), linked through their gs_dir,
 * and the earliest time a call not created yet may start at, which bounds
 * what the output may write.  Only the list: when a direction joins or
 * leaves it, and what follows from that, engine.c decides. */
#include "engine_impl.h"

static struct gs_dir *pend_dir(struct gs_engine *e, uint32_t id)
{
	return &e->flows[id >> 1].dir[id & 1];
}

/* True when the direction holds bytes captured at or before `t` that it has not
 * delivered yet (held out of order, or a head still being gathered). */
bool gs_dir_holds_before(const struct gs_dir *dr, int64_t t)
{
	if (dr->fstate == GS_FR_MSG && !dr->decoded && dr->msg_t_first <= t)
		return true;
	for (const struct gs_ooo *o = dr->ooo; o; o = o->next)
		if (o->ts <= t)
			return true;
	return false;
}

void gs_pending_remove(struct gs_engine *e, struct gs_flow *f, int d)
{
	struct gs_dir *dr = &f->dir[d];
	if (!dr->pending)
		return;
	if (dr->pend_prev != GS_NONE)
		pend_dir(e, dr->pend_prev)->pend_next = dr->pend_next;
	else
		e->pend_head = dr->pend_next;
	if (dr->pend_next != GS_NONE)
		pend_dir(e, dr->pend_next)->pend_prev = dr->pend_prev;
	dr->pending = false;
	e->pend_count--;
	e->pend_dirty = true;
}

void gs_pending_insert(struct gs_engine *e, struct gs_flow *f, int d)
{
	struct gs_dir *dr = &f->dir[d];
	uint32_t id = gs_flow_no(e, f) * 2 + (uint32_t)d;
	if (dr->pending)
		return;
	dr->pend_prev = GS_NONE;
	dr->pend_next = e->pend_head;
	if (e->pend_head != GS_NONE)
		pend_dir(e, e->pend_head)->pend_prev = id;
	e->pend_head = id;
	dr->pending = true;
	e->pend_count++;
	e->pend_dirty = true;
}

/* The earliest time a call not created yet may start at. */
int64_t gs_pending_min(struct gs_engine *e)
{
	if (!e->pend_dirty)
		return e->pend_min;
	e->pend_min = INT64_MAX;
	for (uint32_t id = e->pend_head; id != GS_NONE;) {
		struct gs_dir *dr = pend_dir(e, id);
		for (const struct gs_ooo *o = dr->ooo; o; o = o->next)
			if (o->ts < e->pend_min)
				e->pend_min = o->ts;
		if (dr->fstate == GS_FR_MSG && !dr->decoded && dr->msg_t_first < e->pend_min)
			e->pend_min = dr->msg_t_first;
		if (dr->acked_ts && dr->acked_ts < e->pend_min)
			e->pend_min = dr->acked_ts;
		id = dr->pend_next;
	}
	e->pend_dirty = false;
	return e->pend_min;
}
