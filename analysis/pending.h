// SPDX-License-Identifier: BSD-2-Clause
/* The pending list (pending.c): the directions that hold back output, and the
 * earliest time a call not created yet may start at.  Its own state only: the
 * list's head and count, the cached minimum, and each direction's link.  It
 * does not know the directions' layout nor what they hold: the engine, which
 * composes them, tells it where a direction's link lies and how early the
 * bytes a direction holds back were captured. */
#ifndef GS_PENDING_H
#define GS_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A direction's place on the list, by direction number (flow * 2 + dir).  It
 * lies in the direction's cold lines; whether the direction is on the list is
 * a flag on its first line, which every packet reads, kept by the engine. */
struct gs_pend_link {
	uint32_t prev, next;
};

struct gs_pending {
	uint32_t head;              /* direction number, GS_NONE when empty */
	uint32_t count;
	int64_t min;                /* cached earliest start among them */
	bool dirty;                 /* min must be worked out again */
	/* direction id's link: links + (id >> 1) * flow_stride + (id & 1) * dir_stride */
	char *links;
	size_t flow_stride, dir_stride;
	/* the earliest capture time of what direction id holds back (INT64_MAX: nothing) */
	int64_t (*earliest)(const void *arg, uint32_t id);
	const void *arg;
};

static inline struct gs_pend_link *gs_pend_link(const struct gs_pending *p, uint32_t id)
{
	return (struct gs_pend_link *)(p->links + (size_t)(id >> 1) * p->flow_stride + (id & 1) * p->dir_stride);
}

/* Direction id joins the list (it is not on it) or leaves it (it is on it). */
void gs_pending_insert(struct gs_pending *p, uint32_t id);
void gs_pending_remove(struct gs_pending *p, uint32_t id);
/* The earliest time a call not created yet may start at. */
int64_t gs_pending_min(struct gs_pending *p);

#endif
