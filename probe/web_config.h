// SPDX-License-Identifier: BSD-2-Clause
/* --metrics-web-config FILE: the subset of Prometheus exporter-toolkit's web
 * configuration file (YAML) that giopscope serves:
 *
 *   tls_server_config:
 *     cert_file: server.crt          # both, or no tls_server_config at all
 *     key_file: server.key
 *     client_ca_file: ca.crt         # mutual TLS: with client_auth_type
 *     client_auth_type: RequireAndVerifyClientCert
 *     min_version: TLS12             # TLS10..TLS13 (default TLS12)
 *     max_version: TLS13
 *   basic_auth_users:
 *     prometheus: $2b$10$...         # bcrypt hashes (htpasswd -nbB)
 *
 * The reader is strict and small rather than a YAML library: block mappings
 * two levels deep, plain and quoted scalars, comments.  Anything else
 * (flow style, lists, anchors, keys exporter-toolkit has but giopscope does
 * not serve) is refused with the line it is on, as exporter-toolkit refuses
 * unknown keys. */
#ifndef GS_WEB_CONFIG_H
#define GS_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define GS_WEB_USERS_MAX 64
#define GS_WEB_NAME_MAX 128    /* user names, bytes with the NUL */
#define GS_WEB_HASH_MAX 128    /* a bcrypt hash is 60 characters */
#define GS_WEB_PATH_MAX 1024
#define GS_WEB_FILE_MAX 65536  /* a longer file is refused */

enum gs_web_client_auth {
	GS_WEB_NO_CLIENT_CERT = 0,
	GS_WEB_REQUEST_CLIENT_CERT,
	GS_WEB_REQUIRE_ANY_CLIENT_CERT,
	GS_WEB_VERIFY_CLIENT_CERT_IF_GIVEN,
	GS_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

struct gs_web_user {
	char name[GS_WEB_NAME_MAX];
	char hash[GS_WEB_HASH_MAX];
	unsigned line;
};

struct gs_web_config {
	bool tls;                       /* tls_server_config given (with its files) */
	char cert_file[GS_WEB_PATH_MAX], key_file[GS_WEB_PATH_MAX], client_ca_file[GS_WEB_PATH_MAX];
	enum gs_web_client_auth client_auth;
	int min_version, max_version;   /* 10..13 (TLS 1.0..1.3); 0: not given */
	/* the line of each key, for errors found later (a file that cannot be read) */
	unsigned line_tls, line_cert, line_key, line_ca;
	unsigned n_users;
	struct gs_web_user users[GS_WEB_USERS_MAX];
};

/* A bcrypt hash as libcrypt and exporter-toolkit take it: $2a$, $2b$ or $2y$,
 * a cost of 04..31, 53 characters of bcrypt's base64. */
bool gs_web_bcrypt_ok(const char *h);

/* Reads `len` bytes of configuration text (need not end with a NUL).  True
 * with *c filled; false with "line N: reason" in why. */
bool gs_web_config_parse(struct gs_web_config *c, const char *text, size_t len, char *why, size_t whylen);

/* Reads the file and parses it; relative file names in it are taken from the
 * file's own folder (as exporter-toolkit does).  0, or an errno value with a
 * one-line reason in err ("FILE: line N: ..."; EINVAL for the content). */
int gs_web_config_load(struct gs_web_config *c, const char *path, char *err, size_t errlen);

#endif
