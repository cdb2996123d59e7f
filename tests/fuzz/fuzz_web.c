// SPDX-License-Identifier: BSD-2-Clause
/* libFuzzer harness: what the /metrics endpoint reads from outside, the web
 * configuration file (probe/web_config.c) and a client's request head
 * (probe/metrics_http.c).  The first byte picks which (even: the file, odd:
 * the request); the rest is copied to the END of a heap buffer of exactly its
 * size, so that a read past it runs into ASan's red zone.  Checked:
 *  - a file accepted has NUL-terminated names within their fields, at most
 *    GS_WEB_USERS_MAX users each with a bcrypt hash, cert and key with TLS;
 *    a file refused says which line ("line N: ...");
 *  - a request head's length lies within the bytes, its path and
 *    Authorization value too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../probe/metrics_http.h"
#include "../../probe/web_config.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_web: invariant broken: %s\n", what);
		abort();
	}
}

static void field(const char *f, size_t size, const char *what)
{
	check(memchr(f, '\0', size) != NULL, what);
}

static void web_config(const char *p, size_t n)
{
	static struct gs_web_config c;
	char why[512];
	why[0] = '\0';
	if (!gs_web_config_parse(&c, p, n, why, sizeof why)) {
		check(strncmp(why, "line ", 5) == 0, "a refusal names its line");
		return;
	}
	field(c.cert_file, sizeof c.cert_file, "cert_file terminated");
	field(c.key_file, sizeof c.key_file, "key_file terminated");
	field(c.client_ca_file, sizeof c.client_ca_file, "client_ca_file terminated");
	check(!c.tls || (c.cert_file[0] && c.key_file[0]), "TLS has cert and key");
	check(c.n_users <= GS_WEB_USERS_MAX, "users bounded");
	for (unsigned i = 0; i < c.n_users; i++) {
		field(c.users[i].name, sizeof c.users[i].name, "user name terminated");
		check(gs_web_bcrypt_ok(c.users[i].hash), "a user's hash is bcrypt");
	}
}

static void http(const char *p, size_t n)
{
	struct gs_http_req r;
	size_t head = gs_http_head_len(p, n);
	check(head <= n, "head within the bytes");
	if (!gs_http_parse(p, head ? head : n, &r))
		return;
	check(r.path >= p && r.path + r.path_len <= p + n, "path within the bytes");
	check(!r.authz || (r.authz >= p && r.authz + r.authz_len <= p + n), "Authorization within the bytes");
	(void)gs_http_path_is(&r, "/metrics");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;
	if (size < 1)
		return 0;
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	if (data[0] & 1)
		http(buf, size - 1);
	else
		web_config(buf, size - 1);
	free(buf);
	return 0;
}
