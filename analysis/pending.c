/* SPDX-License-Identifier: BSD-2-Clause */
/* The pending list: the directions that hold back output (bytes held out of
 * order, a hole, a head still being gathered), linked through their gs_dir,
 * and the earliest time a call not created yet may start at, which bounds
 * what the output may write.  Only the list: when a direction joins or
 * leaves it, and what follows from that, engine.c decides. */
#include "pending.h"

#include "call.h"

void gs_pending_remove(struct gs_pending *p, uint32_t id)
{
	struct gs_pend_link *l = gs_pend_link(p, id);
	if (l->prev != GS_NONE)
		gs_pend_link(p, l->prev)->next = l->next;
	else
		p->head = l->next;
	if (l->next != GS_NONE)
		gs_pend_link(p, l->next)->prev = l->prev;
	p->count--;
	p->dirty = true;
}

void gs_pending_insert(struct gs_pending *p, uint32_t id)
{
	struct gs_pend_link *l = gs_pend_link(p, id);
	l->prev = GS_NONE;
	l->next = p->head;
	if (p->head != GS_NONE)
		gs_pend_link(p, p->head)->prev = id;
	p->head = id;
	p->count++;
	p->dirty = true;
}

int64_t gs_pending_min(struct gs_pending *p)
{
	if (!p->dirty)
		return p->min;
	p->min = INT64_MAX;
	for (uint32_t id = p->head; id != GS_NONE; id = gs_pend_link(p, id)->next) {
		int64_t t = p->earliest(p->arg, id);
		if (t < p->min)
			p->min = t;
	}
	p->dirty = false;
	return p->min;
}
