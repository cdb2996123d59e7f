/* SPDX-License-Identifier: BSD-2-Clause */
/* The first malformed and the first truncated message of a run, kept with the packet number
 * and the connection they came from, for the one-line error at the end (probe/cmd_read.c)
 * and the summary.  The framer notes them; the engine holds them. */
#ifndef GS_PROBLEMS_H
#define GS_PROBLEMS_H

#include <stdint.h>

#include "call.h"

struct gs_problem {
	uint64_t packet;              /* 1-based packet number (across files); 0: none yet */
	char what[256];
};

/* Keeps the first: p is written only while it holds none.  `from` and `to` are the ends of
 * the direction the message went (NULL: no connection to name). */
void gs_problem_note(struct gs_problem *p, uint64_t packet, const struct gs_endpoint *from,
		     const struct gs_endpoint *to, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
