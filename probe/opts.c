/* SPDX-License-Identifier: BSD-2-Clause */
#include "opts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool gs_parse_u64(const char *s, uint64_t min, uint64_t max, bool size, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	if (size && *end) {
		switch (tolower((unsigned char)*end)) {
		case 'k': mult = 1ull << 10; break;
		case 'm': mult = 1ull << 20; break;
		case 'g': mult = 1ull << 30; break;
		default: return false;
		}
		end++;
		if (*end == 'b' || *end == 'B')
			end++;
	}
	if (*end)
		return false;
	if (v > UINT64_MAX / mult)
		return false;
	v *= mult;
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool gs_parse_seconds(const char *s, int64_t max_ns, int64_t *out)
{
	char *end;
	unsigned long long whole;
	int64_t ns = 0, scale = 100000000;
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	whole = strtoull(s, &end, 10);
	if (errno || whole > (unsigned long long)(max_ns / 1000000000))
		return false;
	if (*end == '.') {
		end++;
		if (!isdigit((unsigned char)*end))
			return false;
		for (; isdigit((unsigned char)*end); end++) {
			ns += (*end - '0') * scale;
			scale /= 10;
		}
	}
	if (*end)
		return false;
	ns += (int64_t)whole * 1000000000;
	if (ns > max_ns)
		return false;
	*out = ns;
	return true;
}

bool gs_parse_list(const char *s, gs_list_item_fn item, void *arg, char *why, size_t whylen)
{
	const char *p = s;
	if (!s || !*s) {
		snprintf(why, whylen, "an empty list");
		return false;
	}
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char buf[GS_LIST_ITEM_MAX + 1];
		const char *bad;
		if (len == 0) {
			snprintf(why, whylen, "an empty item in '%s' (%s)", s,
				 p == s ? "a comma at the start" : comma ? "two commas in a row" : "a comma at the end");
			return false;
		}
		if (len > GS_LIST_ITEM_MAX) {
			snprintf(why, whylen, "'%.*s...' in '%.*s...' is too long", 16, p, 32, s);
			return false;
		}
		memcpy(buf, p, len);
		buf[len] = '\0';
		if ((bad = item(arg, buf)) != NULL) {
			if (!comma && p == s)
				snprintf(why, whylen, "'%s': %s", buf, bad);
			else
				snprintf(why, whylen, "'%s' in '%.200s': %s", buf, s, bad);
			return false;
		}
		if (!comma)
			return true;
		p = comma + 1;
	}
}

bool gs_same_terminal(FILE *out)
{
	struct stat a, b;
	int fd = out ? fileno(out) : -1;
	if (fd < 0 || !isatty(fd) || !isatty(STDERR_FILENO))
		return false;
	if (fstat(fd, &a) != 0 || fstat(STDERR_FILENO, &b) != 0)
		return false;
	return a.st_rdev == b.st_rdev;
}

/* a port or a range "a-b" (a <= b) */
static const char *port_item(void *arg, const char *s)
{
	uint8_t *bitmap = arg;
	const char *dash = strchr(s, '-');
	char first[GS_LIST_ITEM_MAX + 1];
	uint64_t a, b;
	snprintf(first, sizeof first, "%.*s", dash ? (int)(dash - s) : (int)strlen(s), s);
	if (!gs_parse_u64(first, 0, 65535, false, &a))
		return "not a port (0..65535) or a range of them (e.g. 10000-10010)";
	b = a;
	if (dash && !gs_parse_u64(dash + 1, 0, 65535, false, &b))
		return "not a range of ports (e.g. 10000-10010)";
	if (b < a)
		return "a range ends below its start";
	for (uint64_t port = a; port <= b; port++)
		bitmap[port >> 3] |= (uint8_t)(1u << (port & 7));
	return NULL;
}

bool gs_parse_ports(const char *s, uint8_t bitmap[8192], char *why, size_t whylen)
{
	memset(bitmap, 0, 8192);
	if (gs_parse_list(s, port_item, bitmap, why, whylen))
		return true;
	memset(bitmap, 0, 8192);
	return false;
}

struct pid_list {
	uint32_t *pids, *n, max;
};

static const char *pid_item(void *arg, const char *s)
{
	struct pid_list *l = arg;
	uint64_t v;
	if (!gs_parse_u64(s, 1, 0x7fffffff, false, &v))
		return "not a process id (1..2147483647)";
	if (*l->n >= l->max)
		return "too many process ids";
	l->pids[(*l->n)++] = (uint32_t)v;
	return NULL;
}

bool gs_parse_pids(const char *s, uint32_t *pids, uint32_t *n, uint32_t max, char *why, size_t whylen)
{
	struct pid_list l = { pids, n, max };
	uint32_t before = *n;
	if (gs_parse_list(s, pid_item, &l, why, whylen))
		return true;
	*n = before;
	return false;
}
