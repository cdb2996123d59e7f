// SPDX-License-Identifier: BSD-2-Clause
/* HTTP basic authentication for the /metrics endpoint: the web
 * configuration's basic_auth_users (bcrypt hashes) checked with libcrypt's
 * crypt_r and compared in constant time.
 *
 * A bcrypt check costs tens of milliseconds, on the capture's own thread: a
 * credential that passed is remembered (an HMAC-SHA-256 of it under a key
 * drawn at start), so that Prometheus pays it once; the other checks are
 * bounded to one per poll, started only while those of the current second
 * took less than 100 ms, and wait for a later poll past that (a password
 * guesser gets a few guesses a second and costs the capture about a tenth of
 * its time).  Built with OpenSSL (GS_HAVE_OPENSSL). */
#ifndef GS_METRICS_AUTH_H
#define GS_METRICS_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "web_config.h"

struct gs_mauth;

enum gs_auth_result { GS_AUTH_OK, GS_AUTH_DENIED, GS_AUTH_LATER };

/* cfg->n_users > 0.  0, or an errno value with a reason naming the line of a
 * hash libcrypt does not take. */
int gs_mauth_new(struct gs_mauth **out, const struct gs_web_config *cfg, const char *file, char *err, size_t errlen);
void gs_mauth_free(struct gs_mauth *a);
/* The Authorization header's value (NULL: none).  `poll_ns` is the same for
 * every check of one poll (the budget's clock). */
enum gs_auth_result gs_mauth_check(struct gs_mauth *a, const char *authz, size_t len, int64_t poll_ns);

#endif
