/* SPDX-License-Identifier: BSD-2-Clause */
/* What the unit tests of the text outputs share: a memory stream, a substring count, a small
 * JSON checker (RFC 8259 grammar, depth bounded) and a checker of the Prometheus text format.
 * Inline: each test file uses a part of them. */
#ifndef GS_TEST_TEXT_CHECK_H
#define GS_TEST_TEXT_CHECK_H

#include <ctype.h>

#include "unit.h"
#include "../../analysis/stats.h"


/* A memory stream whose buffer the teardown frees. */
struct mem {
	char *buf;
	size_t len;
	FILE *f;
};

static inline void mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
}

/* Closes the stream; the text stays in m->buf (NUL-terminated). */
static inline void mem_close(struct mem *m)
{
	assert_int_equal(fclose(m->f), 0);
	m->f = NULL;
	ut_keep(m->buf, free);
}

static inline size_t count(const char *hay, const char *needle)
{
	size_t n = 0, k = strlen(needle);
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += k)
		n++;
	return n;
}

/* ---- a small JSON checker (RFC 8259 grammar, depth bounded) ---------------- */

struct js {
	const char *p, *end;
	int depth;
};

static inline bool js_value(struct js *j);

static inline void js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static inline bool js_lit(struct js *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return false;
	j->p += n;
	return true;
}

static inline bool js_string(struct js *j)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	for (j->p++; j->p < j->end; j->p++) {
		unsigned char ch = (unsigned char)*j->p;
		if (ch == '"') {
			j->p++;
			return true;
		}
		if (ch < 0x20 || ch >= 0x80) /* our writers escape everything else */
			return false;
		if (ch == '\\') {
			j->p++;
			if (j->p >= j->end)
				return false;
			if (*j->p == 'u') {
				for (int k = 0; k < 4; k++)
					if (++j->p >= j->end || !isxdigit((unsigned char)*j->p))
						return false;
			} else if (!strchr("\"\\/bfnrt", *j->p)) {
				return false;
			}
		}
	}
	return false;
}

static inline bool js_number(struct js *j)
{
	const char *s = j->p;
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || !isdigit((unsigned char)*j->p))
		return false;
	if (*j->p == '0')
		j->p++;
	else
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || !isdigit((unsigned char)*j->p))
			return false;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || !isdigit((unsigned char)*j->p))
			return false;
		while (j->p < j->end && isdigit((unsigned char)*j->p))
			j->p++;
	}
	return j->p > s;
}

static inline bool js_container(struct js *j, char open, char close)
{
	bool first = true;
	if (++j->depth > 64)
		return false;
	j->p++; /* the opening bracket */
	js_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		if (!first) {
			js_ws(j);
			if (j->p < j->end && *j->p == close) {
				j->p++;
				j->depth--;
				return true;
			}
			if (j->p >= j->end || *j->p != ',')
				return false;
			j->p++;
		}
		first = false;
		js_ws(j);
		if (open == '{') {
			if (!js_string(j))
				return false;
			js_ws(j);
			if (j->p >= j->end || *j->p != ':')
				return false;
			j->p++;
		}
		if (!js_value(j))
			return false;
	}
}

static inline bool js_value(struct js *j)
{
	js_ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{': return js_container(j, '{', '}');
	case '[': return js_container(j, '[', ']');
	case '"': return js_string(j);
	case 't': return js_lit(j, "true");
	case 'f': return js_lit(j, "false");
	case 'n': return js_lit(j, "null");
	default: return js_number(j);
	}
}

static inline bool json_valid(const char *s, size_t n)
{
	struct js j = { s, s + n, 0 };
	if (!js_value(&j))
		return false;
	js_ws(&j);
	return j.p == j.end;
}

/* ---- the Prometheus text format ------------------------------------------- */

static inline bool metric_name(const char **p)
{
	const char *s = *p;
	if (!(isalpha((unsigned char)*s) || *s == '_' || *s == ':'))
		return false;
	while (isalnum((unsigned char)*s) || *s == '_' || *s == ':')
		s++;
	*p = s;
	return true;
}

/* One line of the text format 0.0.4: comment, or name{labels} value. */
static inline bool prom_line(const char *line)
{
	const char *p = line;
	if (*p == '#') {
		if (strncmp(p, "# HELP ", 7) == 0) {
			p += 7;
			return metric_name(&p) && *p == ' ';
		}
		if (strncmp(p, "# TYPE ", 7) == 0) {
			p += 7;
			if (!metric_name(&p) || *p++ != ' ')
				return false;
			return !strcmp(p, "counter") || !strcmp(p, "gauge") || !strcmp(p, "histogram");
		}
		return false;
	}
	if (!metric_name(&p))
		return false;
	if (*p == '{') {
		p++;
		for (;;) {
			if (!metric_name(&p) || *p++ != '=' || *p++ != '"')
				return false;
			while (*p && *p != '"') {
				if (*p == '\\') {
					p++;
					if (*p != '\\' && *p != '"' && *p != 'n')
						return false;
				}
				p++;
			}
			if (*p++ != '"')
				return false;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p++ != '}')
				return false;
			break;
		}
	}
	if (*p++ != ' ')
		return false;
	if (!strcmp(p, "+Inf") || !strcmp(p, "-Inf") || !strcmp(p, "NaN"))
		return true;
	{
		char *end;
		strtod(p, &end);
		return end != p && *end == '\0';
	}
}

/* The value of the sample line `prefix VALUE` (the first at or after text). */
static inline uint64_t sample_value(const char *text, const char *prefix)
{
	size_t k = strlen(prefix);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, k) == 0 && p[k] == ' ')
			return strtoull(p + k + 1, NULL, 10);
	fail_msg("no sample %s", prefix);
	return 0;
}

static inline void ut_stats_free(void *p) { gs_stats_free(p); free(p); }

#endif
