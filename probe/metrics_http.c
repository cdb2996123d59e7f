// SPDX-License-Identifier: BSD-2-Clause
#include "metrics_http.h"

#include <string.h>
#include <strings.h>

size_t gs_http_head_len(const char *buf, size_t n)
{
	/* a bare "\n\n" too: some hand-written clients (printf | nc) send it */
	for (size_t i = 0; i + 1 < n; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < n && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static const char *find(const char *p, const char *end, char ch)
{
	return p < end ? memchr(p, ch, (size_t)(end - p)) : NULL;
}

bool gs_http_parse(const char *buf, size_t n, struct gs_http_req *r)
{
	const char *end = buf + n, *eol = find(buf, end, '\n'), *sp1, *sp2, *le, *q, *p;
	memset(r, 0, sizeof *r);
	if (!eol)
		return false;
	le = eol > buf && eol[-1] == '\r' ? eol - 1 : eol;
	sp1 = find(buf, le, ' ');
	sp2 = sp1 ? find(sp1 + 1, le, ' ') : NULL;
	if (!sp1 || !sp2 || sp1 == buf || sp2 == sp1 + 1 || le - (sp2 + 1) < 5 || memcmp(sp2 + 1, "HTTP/", 5) != 0)
		return false;
	if (sp1 - buf == 3 && !memcmp(buf, "GET", 3))
		r->method = GS_HTTP_GET;
	else if (sp1 - buf == 4 && !memcmp(buf, "HEAD", 4))
		r->method = GS_HTTP_HEAD;
	else
		r->method = GS_HTTP_OTHER;
	r->path = sp1 + 1;
	q = find(r->path, sp2, '?');
	r->path_len = (size_t)((q ? q : sp2) - r->path);
	/* the headers: only Authorization is wanted (the first one) */
	for (p = eol + 1; p < end;) {
		const char *hl = find(p, end, '\n'), *he, *colon, *v;
		if (!hl)
			break;
		he = hl > p && hl[-1] == '\r' ? hl - 1 : hl;
		colon = find(p, he, ':');
		if (colon && colon - p == 13 && !strncasecmp(p, "Authorization", 13) && !r->authz) {
			for (v = colon + 1; v < he && (*v == ' ' || *v == '\t'); v++)
				;
			while (he > v && (he[-1] == ' ' || he[-1] == '\t'))
				he--;
			r->authz = v;
			r->authz_len = (size_t)(he - v);
		}
		p = hl + 1;
	}
	return true;
}

bool gs_http_path_is(const struct gs_http_req *r, const char *p)
{
	size_t n = strlen(p);
	return r->path_len == n && !memcmp(r->path, p, n);
}
