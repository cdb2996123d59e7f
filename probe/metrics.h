/* SPDX-License-Identifier: BSD-2-Clause */
/* --metrics ADDR:PORT: Prometheus text exposition on GET /metrics, served
 * from the session's tick without threads.
 *
 * A non-blocking listening socket on exactly the address given (numeric IPv4
 * or [IPv6], numeric port; nothing is resolved); each poll accepts what
 * waits, reads requests, renders the exposition once for the clients that
 * asked and writes what the sockets take.  One request per connection, at
 * most GS_METRICS_CLIENTS at once (more are refused and counted), 4 KiB of
 * request, 5 s per connection, 16 MiB of response.
 */
#ifndef GS_METRICS_H
#define GS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "../analysis/engine.h"
#include "../analysis/stats.h"
#include "session.h"

#define GS_METRICS_CLIENTS 8

struct gs_metrics;

/* Parses "A.B.C.D:PORT" or "[v6]:PORT" and listens there (port 0: any free
 * one, see gs_metrics_port).  Returns 0, or an errno value with a one-line
 * reason in err (EINVAL: not a numeric address and port). */
int gs_metrics_open(struct gs_metrics **out, const char *spec, char *err, size_t errlen);
/* Serves what is pending; never blocks.  Call it from the tick (every
 * 100 ms or so).  drops may be NULL. */
void gs_metrics_poll(struct gs_metrics *m, const struct gs_engine *e, const struct gs_stats *stats,
		     const struct gs_drops *drops);
void gs_metrics_close(struct gs_metrics *m);

uint16_t gs_metrics_port(const struct gs_metrics *m);
struct gs_metrics_info {
	uint64_t scrapes;      /* 200 responses to /metrics */
	uint64_t refused;      /* connections closed at once: every slot busy */
	uint64_t bad;          /* malformed, too long or timed-out requests, other paths */
};
void gs_metrics_get_info(const struct gs_metrics *m, struct gs_metrics_info *info);

#endif
