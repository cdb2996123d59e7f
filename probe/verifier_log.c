/* SPDX-License-Identifier: BSD-2-Clause */
#include "verifier_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool gs_vlog_too_large(const char *log)
{
	return log && strstr(log, "BPF program is too large") != NULL;
}

const char *gs_vlog_count(int64_t n, char *buf, size_t len)
{
	char digits[32];
	size_t nd, o = 0;
	if (n < 0)
		n = 0;
	nd = (size_t)snprintf(digits, sizeof digits, "%lld", (long long)n);
	for (size_t i = 0; i < nd && o + 2 < len; i++) {
		if (i && (nd - i) % 3 == 0)
			buf[o++] = ' ';
		buf[o++] = digits[i];
	}
	buf[o < len ? o : len - 1] = '\0';
	return buf;
}

int64_t gs_vlog_insns(const char *log)
{
	const char *p = log ? strstr(log, "processed ") : NULL;
	const char *last = NULL;
	/* the statistics line comes last; a "Processed" of the too-large line is capitalised */
	for (; p; p = strstr(p + 1, "processed "))
		last = p;
	if (!last)
		return -1;
	return strtoll(last + 10, NULL, 10);
}

static bool stats_line(const char *s, size_t n)
{
	static const char *const pre[] = { "verification time", "stack depth", "processed ", "mark_read" };
	for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
		if (n >= strlen(pre[i]) && strncmp(s, pre[i], strlen(pre[i])) == 0)
			return true;
	return false;
}

/* The last two lines of the log that are not its statistics: the verifier's reason. */
void gs_vlog_reason(const char *log, char *out, size_t len)
{
	const char *end = log + strlen(log), *lines[2] = { NULL, NULL };
	size_t lens[2] = { 0, 0 };
	int got = 0;
	while (end > log && got < 2) {
		const char *e = end, *s;
		while (e > log && e[-1] == '\n')
			e--;
		s = e;
		while (s > log && s[-1] != '\n')
			s--;
		if (e > s && !stats_line(s, (size_t)(e - s))) {
			lines[1 - got] = s;
			lens[1 - got] = (size_t)(e - s);
			got++;
		}
		end = s;
	}
	out[0] = '\0';
	for (int i = 0; i < 2; i++)
		if (lines[i])
			snprintf(out + strlen(out), len - strlen(out), "%s%.*s", out[0] ? "; " : "", (int)lens[i], lines[i]);
}

bool gs_vlog_has_reason(const char *log)
{
	char why[8];
	gs_vlog_reason(log, why, sizeof why);
	return why[0] != '\0';
}
