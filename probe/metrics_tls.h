// SPDX-License-Identifier: BSD-2-Clause
/* TLS for the /metrics endpoint (OpenSSL 3): a server context made from the
 * web configuration's tls_server_config at start (the keys read then, before
 * -Z drops privileges), and non-blocking server connections on the
 * responder's sockets.  Built only with OpenSSL (GS_HAVE_OPENSSL); without it
 * gs_mtls_new says so and nothing else is reached. */
#ifndef GS_METRICS_TLS_H
#define GS_METRICS_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include "web_config.h"

struct gs_mtls;        /* the server context */
struct gs_mtls_conn;   /* one connection */

/* cfg->tls must be set.  0, or an errno value with a one-line reason in err
 * naming the configuration line at fault (`file` is the configuration's name). */
int gs_mtls_new(struct gs_mtls **out, const struct gs_web_config *cfg, const char *file, char *err, size_t errlen);
void gs_mtls_free(struct gs_mtls *t);

/* A connection on the accepted socket fd (not owned).  NULL: out of memory. */
struct gs_mtls_conn *gs_mtls_conn_new(struct gs_mtls *t, int fd);
void gs_mtls_conn_free(struct gs_mtls_conn *c);
/* The handshake: 1 done, 0 wants the socket again later, -1 failed. */
int gs_mtls_handshake(struct gs_mtls_conn *c);
/* Bytes read or written (> 0), 0 when the peer closed, -EAGAIN to try again
 * later, -EIO when the connection failed. */
ssize_t gs_mtls_read(struct gs_mtls_conn *c, void *buf, size_t n);
ssize_t gs_mtls_write(struct gs_mtls_conn *c, const void *buf, size_t n);

#endif
