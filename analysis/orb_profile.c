/* SPDX-License-Identifier: BSD-2-Clause */
#include "orb_profile.h"

#include <stdio.h>
#include <string.h>

#include "thread_log.h"

static bool perr(char *err, size_t errlen, const char *where, unsigned line, const char *why)
{
	snprintf(err, errlen, "ORB profile %s, line %u: %s", where, line, why);
	return false;
}

bool gs_orb_profile_parse(struct gs_orb_profile *p, const char *text, const char *where, char *err, size_t errlen)
{
	unsigned line = 0;
	bool start = false, end = false;
	memset(p, 0, sizeof *p);
	while (*text) {
		char buf[512], *tok[5], *save = NULL, *w;
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		int k = 0;
		line++;
		if (len >= sizeof buf)
			return perr(err, errlen, where, line, "line too long");
		memcpy(buf, text, len);
		buf[len] = '\0';
		text += len + (nl ? 1 : 0);
		if ((w = strchr(buf, '#')) != NULL)
			*w = '\0';
		for (w = strtok_r(buf, " \t\r", &save); w && k < 5; w = strtok_r(NULL, " \t\r", &save))
			tok[k++] = w;
		if (k == 0)
			continue;
		if (strcmp(tok[0], "orb") == 0 && k == 2) {
			if (strlen(tok[1]) >= sizeof p->name)
				return perr(err, errlen, where, line, "orb name too long");
			strcpy(p->name, tok[1]);
		} else if (strcmp(tok[0], "library") == 0 && k == 2) {
			if (strlen(tok[1]) >= sizeof p->library)
				return perr(err, errlen, where, line, "library name too long");
			strcpy(p->library, tok[1]);
		} else if (strcmp(tok[0], "probe") == 0 && k == 4) {
			if (p->n == GS_ORB_PROBES)
				return perr(err, errlen, where, line, "too many probes (at most 16)");
			if (strlen(tok[3]) >= GS_ORB_SYM_MAX)
				return perr(err, errlen, where, line, "symbol too long");
			if (strcmp(tok[1], "start") == 0)
				p->probe[p->n].edge = GS_TEDGE_START;
			else if (strcmp(tok[1], "end") == 0)
				p->probe[p->n].edge = GS_TEDGE_END;
			else
				return perr(err, errlen, where, line, "the edge is start or end");
			if (strcmp(tok[2], "entry") == 0)
				p->probe[p->n].ret = false;
			else if (strcmp(tok[2], "return") == 0)
				p->probe[p->n].ret = true;
			else
				return perr(err, errlen, where, line, "where is entry or return");
			strcpy(p->probe[p->n].sym, tok[3]);
			start |= p->probe[p->n].edge == GS_TEDGE_START;
			end |= p->probe[p->n].edge == GS_TEDGE_END;
			p->n++;
		} else {
			return perr(err, errlen, where, line,
				    "want: orb NAME, library FILE or probe start|end entry|return SYMBOL");
		}
	}
	if (!p->name[0] || !p->library[0])
		return perr(err, errlen, where, line, "no orb or library line");
	if (!start || !end)
		return perr(err, errlen, where, line, "wants at least one start and one end probe");
	return true;
}

