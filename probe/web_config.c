// SPDX-License-Identifier: BSD-2-Clause
/* A strict reader for the web configuration (web_config.h): one pass over the
 * lines, every byte read inside [text, text + len), nothing allocated. */
#include "web_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum section { SEC_NONE, SEC_TLS, SEC_USERS };

struct rd {
	struct gs_web_config *c;
	unsigned line;
	char *why;
	size_t whylen;
};

static bool fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->why, r->whylen, "line %u: ", r->line);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->whylen)
		vsnprintf(r->why + n, r->whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

/* A quoted scalar starting at *pp (the quote); its text into out.  Only one
 * line: YAML's multi-line quoted scalars are not taken. */
static bool quoted(struct rd *r, const char **pp, const char *end, char *out, size_t outlen)
{
	const char *p = *pp;
	char q = *p++;
	size_t n = 0;
	for (;;) {
		char ch;
		if (p == end)
			return fail(r, "the quoted text has no closing %c (one line only)", q);
		ch = *p++;
		if (ch == q) {
			if (q == '\'' && p < end && *p == '\'') { /* '' is a quote inside '...' */
				p++;
			} else {
				break;
			}
		} else if (q == '"' && ch == '\\') {
			if (p == end)
				return fail(r, "the quoted text has no closing \"");
			ch = *p++;
			if (ch != '\\' && ch != '"' && ch != '/')
				return fail(r, "escape \\%c is not supported in \"...\" (only \\\\, \\\" and \\/; "
					    "or use '...')", ch >= 0x20 && ch < 0x7f ? ch : '?');
		}
		if (n + 1 >= outlen)
			return fail(r, "the value is longer than %zu bytes", outlen - 1);
		out[n++] = ch;
	}
	out[n] = '\0';
	*pp = p;
	return true;
}

/* A plain scalar: a key ends at ':' followed by a space or the line's end; a
 * value at " #" or the line's end, trailing spaces dropped. */
static bool plain(struct rd *r, const char **pp, const char *end, char *out, size_t outlen, bool key)
{
	const char *p = *pp, *s = p, *e;
	size_t n;
	/* YAML's indicators that would make this something other than text */
	if (p < end && strchr("[]{}#&*!|>%@`,", *p))
		return fail(r, "'%c' starts YAML that is not supported here (flow style, anchors, tags, "
			    "block text): write a plain or quoted value", *p);
	if (p < end && (*p == '-' || *p == '?' || *p == ':') && (p + 1 == end || p[1] == ' '))
		return fail(r, "lists and complex keys are not supported: one 'key: value' a line");
	while (p < end) {
		if (*p == ':' && (p + 1 == end || p[1] == ' ')) {
			if (key)
				break;
			return fail(r, "a value with ': ' in it must be quoted");
		}
		if (!key && *p == '#' && p > s && p[-1] == ' ')
			break;
		p++;
	}
	for (e = p; e > s && e[-1] == ' '; e--)
		;
	n = (size_t)(e - s);
	if (n + 1 > outlen)
		return fail(r, "the %s is longer than %zu bytes", key ? "key" : "value", outlen - 1);
	memcpy(out, s, n);
	out[n] = '\0';
	*pp = p;
	return true;
}

/* What may follow a value: spaces and a comment. */
static bool line_end(struct rd *r, const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	if (p < end && *p != '#')
		return fail(r, "unexpected text after the value: '%.*s'", (int)(end - p > 40 ? 40 : end - p), p);
	return true;
}

static bool is_null(const char *v, bool was_quoted)
{
	return !was_quoted && (!*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
			       !strcmp(v, "NULL"));
}

static bool set_once(struct rd *r, unsigned *line, const char *key)
{
	if (*line)
		return fail(r, "%s given twice (also on line %u)", key, *line);
	*line = r->line;
	return true;
}

static bool set_path(struct rd *r, char *dst, unsigned *line, const char *key, const char *v, bool q)
{
	if (!set_once(r, line, key))
		return false;
	if (is_null(v, q) || !*v) /* '' too: a file name, not nothing */
		return fail(r, "%s wants a file name", key);
	if (strlen(v) >= GS_WEB_PATH_MAX)
		return fail(r, "%s is longer than %d bytes", key, GS_WEB_PATH_MAX - 1);
	strcpy(dst, v);
	return true;
}

static int tls_version(const char *v)
{
	static const char *const names[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
	for (int i = 0; i < 4; i++)
		if (!strcmp(v, names[i]))
			return 10 + i;
	return 0;
}

static bool tls_key(struct rd *r, const char *k, const char *v, bool q, unsigned *line_auth, unsigned *line_min,
		    unsigned *line_max)
{
	static const char *const unsupported[] = { "cipher_suites", "curve_preferences", "prefer_server_cipher_suites",
						    "client_allowed_sans", "cert", "key", "client_ca" };
	static const struct { const char *name; enum gs_web_client_auth v; } auth[] = {
		{ "NoClientCert", GS_WEB_NO_CLIENT_CERT },
		{ "RequestClientCert", GS_WEB_REQUEST_CLIENT_CERT },
		{ "RequireAnyClientCert", GS_WEB_REQUIRE_ANY_CLIENT_CERT },
		{ "RequireClientCert", GS_WEB_REQUIRE_ANY_CLIENT_CERT },
		{ "VerifyClientCertIfGiven", GS_WEB_VERIFY_CLIENT_CERT_IF_GIVEN },
		{ "RequireAndVerifyClientCert", GS_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT },
	};
	struct gs_web_config *c = r->c;
	if (!strcmp(k, "cert_file"))
		return set_path(r, c->cert_file, &c->line_cert, k, v, q);
	if (!strcmp(k, "key_file"))
		return set_path(r, c->key_file, &c->line_key, k, v, q);
	if (!strcmp(k, "client_ca_file"))
		return set_path(r, c->client_ca_file, &c->line_ca, k, v, q);
	if (!strcmp(k, "client_auth_type")) {
		if (!set_once(r, line_auth, k))
			return false;
		for (size_t i = 0; i < sizeof auth / sizeof *auth; i++)
			if (!strcmp(v, auth[i].name)) {
				c->client_auth = auth[i].v;
				return true;
			}
		return fail(r, "client_auth_type '%s' is not one of NoClientCert, RequestClientCert, "
			    "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert", v);
	}
	if (!strcmp(k, "min_version") || !strcmp(k, "max_version")) {
		bool min = k[1] == 'i';
		int ver = tls_version(v);
		if (!set_once(r, min ? line_min : line_max, k))
			return false;
		if (!ver)
			return fail(r, "%s '%s' is not one of TLS10, TLS11, TLS12, TLS13", k, v);
		*(min ? &c->min_version : &c->max_version) = ver;
		return true;
	}
	for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++)
		if (!strcmp(k, unsupported[i]))
			return fail(r, "tls_server_config: %s is not supported by giopscope (OpenSSL's defaults "
				    "apply; cert_file and key_file for files)", k);
	return fail(r, "tls_server_config has no key '%s' (cert_file, key_file, client_ca_file, "
		    "client_auth_type, min_version, max_version)", k);
}

bool gs_web_bcrypt_ok(const char *h)
{
	int cost;
	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[2] == '\0' || h[3] != '$' ||
	    h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return false;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (int i = 7; i < 60; i++)
		if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", h[i]) || h[i] == '\0')
			return false;
	return true;
}

static bool user_key(struct rd *r, const char *k, const char *v, bool q)
{
	struct gs_web_config *c = r->c;
	struct gs_web_user *u;
	if (!*k || strchr(k, ':'))
		return fail(r, "basic_auth_users: a user name must be non-empty and without ':'");
	if (strlen(k) >= GS_WEB_NAME_MAX)
		return fail(r, "basic_auth_users: the user name is longer than %d bytes", GS_WEB_NAME_MAX - 1);
	for (unsigned i = 0; i < c->n_users; i++)
		if (!strcmp(c->users[i].name, k))
			return fail(r, "user '%s' given twice (also on line %u)", k, c->users[i].line);
	if (c->n_users == GS_WEB_USERS_MAX)
		return fail(r, "more than %d basic_auth_users", GS_WEB_USERS_MAX);
	/* bcrypt only, as exporter-toolkit */
	if (is_null(v, q) || !gs_web_bcrypt_ok(v))
		return fail(r, "the password of user '%s' is not a bcrypt hash ($2b$, a cost of 04..31, 53 "
			    "characters; htpasswd -nbBC 10 USER PASSWORD makes one)", k);
	u = &c->users[c->n_users++];
	strcpy(u->name, k);
	memcpy(u->hash, v, 61);
	u->line = r->line;
	return true;
}

/* One line with something on it, `p` after its `indent` spaces. */
static bool entry(struct rd *r, const char *p, const char *end, unsigned indent, enum section *sec,
		  unsigned *child_indent, unsigned *lines)
{
	char k[GS_WEB_NAME_MAX], v[GS_WEB_PATH_MAX];
	bool q = false;
	if (*p == '"' || *p == '\'') {
		if (!quoted(r, &p, end, k, sizeof k))
			return false;
	} else if (!plain(r, &p, end, k, sizeof k, true)) {
		return false;
	}
	if (p == end || *p != ':')
		return fail(r, "'%s' is not followed by ':' (key: value)", k);
	p++;
	while (p < end && *p == ' ')
		p++;
	v[0] = '\0';
	if (p < end && *p != '#') {
		if (*p == '"' || *p == '\'') {
			q = true;
			if (!quoted(r, &p, end, v, sizeof v) || !line_end(r, p, end))
				return false;
		} else if (!plain(r, &p, end, v, sizeof v, false)) {
			return false;
		}
	}
	if (indent == 0) {
		*child_indent = 0;
		if (!strcmp(k, "tls_server_config")) {
			if (!set_once(r, &r->c->line_tls, k))
				return false;
			*sec = SEC_TLS;
		} else if (!strcmp(k, "basic_auth_users")) {
			if (!set_once(r, &lines[0], k))
				return false;
			*sec = SEC_USERS;
		} else if (!strcmp(k, "http_server_config") || !strcmp(k, "rate_limit")) {
			return fail(r, "%s is not supported by giopscope (tls_server_config and basic_auth_users are)", k);
		} else {
			return fail(r, "unknown key '%s' (tls_server_config, basic_auth_users)", k);
		}
		if (!is_null(v, q))
			return fail(r, "%s wants its keys on the lines below it, indented", k);
		return true;
	}
	if (*sec == SEC_NONE)
		return fail(r, "an indented line before tls_server_config or basic_auth_users");
	if (!*child_indent)
		*child_indent = indent;
	else if (indent != *child_indent)
		return fail(r, "indented by %u spaces where this block's keys are indented by %u", indent,
			    *child_indent);
	if (*sec == SEC_USERS)
		return user_key(r, k, v, q);
	return tls_key(r, k, v, q, &lines[1], &lines[2], &lines[3]);
}

bool gs_web_config_parse(struct gs_web_config *c, const char *text, size_t len, char *why, size_t whylen)
{
	struct rd r = { c, 0, why, whylen };
	const char *p = text, *end = text + len;
	enum section sec = SEC_NONE;
	unsigned child_indent = 0, lines[4] = { 0 }; /* basic_auth_users, client_auth_type, min, max */
	bool content = false;

	memset(c, 0, sizeof *c);
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark, as editors write */
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *s = p;
		unsigned indent = 0;
		r.line++;
		p = nl ? nl + 1 : end;
		if (le > s && le[-1] == '\r')
			le--;
		for (const char *t = s; t < le; t++)
			if ((unsigned char)*t < 0x20 && *t != '\t')
				return fail(&r, "control character 0x%02x (not a text file?)", (unsigned char)*t);
		while (s < le && *s == ' ') {
			s++;
			indent++;
		}
		if (s < le && *s == '\t')
			return fail(&r, "a tab in the indentation (YAML indents with spaces)");
		if (s == le || *s == '#')
			continue;
		if (indent == 0 && le - s >= 3 && !memcmp(s, "---", 3) && (le - s == 3 || s[3] == ' ' || s[3] == '#')) {
			if (content)
				return fail(&r, "a second YAML document ('---'): one document only");
			continue;
		}
		if (indent == 0 && le - s >= 3 && !memcmp(s, "...", 3))
			return fail(&r, "'...' (end of document) is not supported");
		content = true;
		if (!entry(&r, s, le, indent, &sec, &child_indent, lines))
			return false;
	}
	/* exporter-toolkit: a tls_server_config without cert and key serves plain HTTP */
	if (c->line_cert || c->line_key || c->line_ca || lines[1] || lines[2] || lines[3]) {
		r.line = c->line_tls;
		if (!c->line_cert || !c->line_key)
			return fail(&r, "tls_server_config wants both cert_file and key_file");
		c->tls = true;
	}
	if (c->line_ca && c->client_auth == GS_WEB_NO_CLIENT_CERT) {
		r.line = c->line_ca;
		return fail(&r, "client_ca_file without a client_auth_type that checks client certificates "
			    "(RequireAndVerifyClientCert or VerifyClientCertIfGiven)");
	}
	if (!c->line_ca && (c->client_auth == GS_WEB_VERIFY_CLIENT_CERT_IF_GIVEN ||
			    c->client_auth == GS_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT)) {
		r.line = lines[1];
		return fail(&r, "client_auth_type verifies client certificates: it needs client_ca_file");
	}
	if (c->min_version && c->max_version && c->min_version > c->max_version) {
		r.line = lines[2];
		return fail(&r, "min_version is above max_version");
	}
	return true;
}

/* dir/name for a relative name in the file at `path` */
static bool resolve(char *name, const char *path)
{
	const char *slash = strrchr(path, '/');
	char tmp[GS_WEB_PATH_MAX];
	int n;
	if (!*name || name[0] == '/' || !slash)
		return true;
	n = snprintf(tmp, sizeof tmp, "%.*s/%s", (int)(slash - path), path, name);
	if (n < 0 || (size_t)n >= sizeof tmp)
		return false;
	memcpy(name, tmp, (size_t)n + 1);
	return true;
}

int gs_web_config_load(struct gs_web_config *c, const char *path, char *err, size_t errlen)
{
	char *buf, why[512];
	struct stat st;
	ssize_t got;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return e;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > GS_WEB_FILE_MAX) {
		snprintf(err, errlen, "%s: not a file of at most %d bytes", path, GS_WEB_FILE_MAX);
		close(fd);
		return EINVAL;
	}
	buf = malloc(GS_WEB_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return ENOMEM;
	}
	/* to the end, bounded: the size fstat gave may change while reading */
	while (n <= GS_WEB_FILE_MAX && (got = read(fd, buf + n, GS_WEB_FILE_MAX + 1 - n)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			snprintf(err, errlen, "%s: %s", path, strerror(e));
			free(buf);
			close(fd);
			return e;
		}
		n += (size_t)got;
	}
	close(fd);
	if (n > GS_WEB_FILE_MAX) {
		snprintf(err, errlen, "%s: longer than %d bytes", path, GS_WEB_FILE_MAX);
		free(buf);
		return EINVAL;
	}
	if (!gs_web_config_parse(c, buf, n, why, sizeof why)) {
		snprintf(err, errlen, "%s: %s", path, why);
		free(buf);
		return EINVAL;
	}
	free(buf);
	if (!resolve(c->cert_file, path) || !resolve(c->key_file, path) || !resolve(c->client_ca_file, path)) {
		snprintf(err, errlen, "%s: a file name in it is too long with the folder", path);
		return EINVAL;
	}
	return 0;
}
