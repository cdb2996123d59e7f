/* SPDX-License-Identifier: BSD-2-Clause */
#include "problems.h"

#include <stdarg.h>
#include <stdio.h>

#include "endpoint.h"

void gs_problem_note(struct gs_problem *p, uint64_t packet, const struct gs_endpoint *from,
		     const struct gs_endpoint *to, const char *fmt, ...)
{
	char what[112], a[GS_ENDPOINT_STRLEN], b[GS_ENDPOINT_STRLEN];
	va_list ap;
	if (p->packet)
		return; /* keep the first */
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	p->packet = packet;
	if (from && to) {
		gs_endpoint_str(from, a, sizeof a);
		gs_endpoint_str(to, b, sizeof b);
		snprintf(p->what, sizeof p->what, "%s -> %s: %s", a, b, what);
	} else {
		snprintf(p->what, sizeof p->what, "%s", what);
	}
}
