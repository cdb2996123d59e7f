/* SPDX-License-Identifier: BSD-2-Clause */
/* --metrics ADDR:PORT: Prometheus text exposition on GET /metrics, served
 * from the session's tick without threads.
 *
 * A non-blocking listening socket on exactly the address given (numeric IPv4
 * or [IPv6], numeric port; nothing is resolved); each poll serves the
 * connections it holds, accepts what waits, renders the exposition once for
 * the clients that asked and writes what the sockets take.  With a web
 * configuration (metrics_web.h): TLS and basic authentication.
 *
 * Bounds, against clients that hold connections open (docs/report.md):
 * one request per connection, GS_METRICS_CLIENTS at once, 4 KiB of request,
 * the whole request (TLS handshake included) within GS_METRICS_REQUEST_MS of
 * the connection, the whole response within GS_METRICS_CONN_MS.  When every
 * slot is taken, a new connection takes the slot of the oldest one that has
 * not sent a whole request yet, from the peer address holding the most slots
 * (from its own address: only one accepted at an earlier poll); failing that
 * it is closed.  Each of these is counted, and served as metrics. */
#ifndef GS_METRICS_H
#define GS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "../analysis/engine.h"
#include "../analysis/stats.h"
#include "drops.h"

#define GS_METRICS_CLIENTS 64
#define GS_METRICS_REQUEST_MS 2000
#define GS_METRICS_CONN_MS 10000

struct gs_metrics;
struct gs_metrics_web;

/* Parses "A.B.C.D:PORT" or "[v6]:PORT" and listens there (port 0: any free
 * one, see gs_metrics_port).  `web` (NULL: plain HTTP, no authentication)
 * is taken over, freed by gs_metrics_close or here on failure.  Returns 0, or
 * an errno value with a one-line reason in err (EINVAL: not a numeric address
 * and port). */
int gs_metrics_open(struct gs_metrics **out, const char *spec, struct gs_metrics_web *web, char *err, size_t errlen);
/* Serves what is pending; never blocks (a bcrypt check excepted, bounded by
 * metrics_auth.h).  Call it from the tick (every 100 ms or more often).
 * drops may be NULL. */
void gs_metrics_poll(struct gs_metrics *m, const struct gs_engine *e, const struct gs_stats *stats,
		     const struct gs_drops *drops);
/* The nesting stage's counts to show (read at each scrape, on the polling thread). */
struct gs_nest_counts;
void gs_metrics_nest(struct gs_metrics *m, const struct gs_nest_counts *nest);
void gs_metrics_close(struct gs_metrics *m);

uint16_t gs_metrics_port(const struct gs_metrics *m);
struct gs_metrics_info {
	uint64_t scrapes;      /* 200 responses to /metrics */
	uint64_t refused;      /* new connections closed at once: no slot could be had */
	uint64_t evicted;      /* connections without a whole request closed for a newer one */
	uint64_t timed_out;    /* request or response not done within its time */
	uint64_t tls_failed;   /* TLS handshakes that failed (plain HTTP to the TLS port too) */
	uint64_t unauthorized; /* 401 responses */
	uint64_t bad;          /* malformed or too long requests, other paths or methods */
};
void gs_metrics_get_info(const struct gs_metrics *m, struct gs_metrics_info *info);

#endif
