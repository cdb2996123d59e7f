// SPDX-License-Identifier: BSD-2-Clause
/* The request head of a scrape (GET /metrics HTTP/1.1 ...): what the /metrics
 * responder (metrics.c) needs of it, read with bounds checks from the bytes a
 * client sent.  No allocation; the text is not changed. */
#ifndef GS_METRICS_HTTP_H
#define GS_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

enum gs_http_method { GS_HTTP_GET, GS_HTTP_HEAD, GS_HTTP_OTHER };

struct gs_http_req {
	enum gs_http_method method;
	const char *path;        /* the target up to '?' (not NUL-terminated) */
	size_t path_len;
	const char *authz;       /* the Authorization header's value, NULL without */
	size_t authz_len;
};

/* The length of the request head (up to and with its blank line) when buf
 * holds all of it, else 0. */
size_t gs_http_head_len(const char *buf, size_t n);
/* Parses a whole head of `n` bytes: true, or false when it is not a request
 * line and headers (a 400). */
bool gs_http_parse(const char *buf, size_t n, struct gs_http_req *r);
/* path equals the NUL-terminated p */
bool gs_http_path_is(const struct gs_http_req *r, const char *p);

#endif
