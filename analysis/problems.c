/* SPDX-License-Identifier: BSD-2-Clause */
/* The first malformed and the first truncated message of a run, kept with the
 * packet number and connection they came from, for the one-line error at the
 * end (probe/cmd_read.c) and the summary. */
#include "engine_impl.h"

#include <stdarg.h>
#include <stdio.h>

#include "endpoint.h"

void gs_note_problem(struct gs_engine *e, struct gs_problem *p, const struct gs_flow *f, int d,
		     const char *fmt, ...)
{
	char what[112], a[GS_ENDPOINT_STRLEN], b[GS_ENDPOINT_STRLEN];
	va_list ap;
	if (p->packet)
		return; /* keep the first */
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	p->packet = e->packet_no;
	if (f) {
		gs_endpoint_str(&f->ep[d], a, sizeof a);
		gs_endpoint_str(&f->ep[!d], b, sizeof b);
		snprintf(p->what, sizeof p->what, "%s -> %s: %s", a, b, what);
	} else {
		snprintf(p->what, sizeof p->what, "%s", what);
	}
}
