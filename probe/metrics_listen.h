// SPDX-License-Identifier: BSD-2-Clause
/* The listening socket of --metrics ADDR:PORT: exactly the numeric address
 * given (IPv4, or [IPv6] only), nothing resolved, non-blocking. */
#ifndef GS_METRICS_LISTEN_H
#define GS_METRICS_LISTEN_H

#include <stddef.h>
#include <stdint.h>

/* Parses "A.B.C.D:PORT" or "[v6]:PORT" and listens there (port 0: any free
 * one, the port taken into *port).  The descriptor, or a negative errno value
 * with a one-line reason in err (-EINVAL: not a numeric address and port). */
int gs_metrics_listen(const char *spec, uint16_t *port, char *err, size_t errlen);

#endif
