// SPDX-License-Identifier: BSD-2-Clause
#include "session_fit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "read_shards.h"

static void no_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	(void)arg;
	(void)e;
	(void)c;
}

/* Whether the tables of `cfg` are allocated (then freed at once). */
static bool fits(const struct gs_config *cfg, unsigned threads)
{
	if (threads > 1) {
		struct gs_shards *s = NULL;
		if (gs_shards_new(&s, cfg, threads, no_call, NULL) != 0)
			return false;
		gs_shards_free(s);
		return true;
	}
	struct gs_engine *e = NULL;
	if (gs_engine_new(&e, cfg, no_call, NULL) != 0)
		return false;
	gs_engine_free(e);
	return true;
}

/* A byte count the way --max-memory takes it: the largest of g, m, k that
 * divides it. */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	if (v && v % (1ull << 30) == 0)
		snprintf(buf, len, "%" PRIu64 "g", v >> 30);
	else if (v && v % (1ull << 20) == 0)
		snprintf(buf, len, "%" PRIu64 "m", v >> 20);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

int gs_session_fit(const struct gs_session_opts *o, char *why, size_t whylen)
{
	struct gs_session_opts t;
	struct gs_config cfg;
	/* the options given on their own first: they win over --max-memory */
	static const struct {
		const char *name;
		size_t off;
	} table[] = {
		{ "--max-flows", offsetof(struct gs_config, max_flows) },
		{ "--max-open-calls", offsetof(struct gs_config, max_open_calls) },
		{ "--order-window", offsetof(struct gs_config, order_window) },
	};
	const bool given[] = { o->set_flows, o->set_calls, o->set_window };
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		uint32_t v, was;
		if (!given[i])
			continue;
		memcpy(&was, (const char *)&o->cfg + table[i].off, sizeof was);
		for (v = was / 2; v >= 2; v /= 2) {
			memcpy(&t, o, sizeof t);
			memcpy((char *)&t.cfg + table[i].off, &v, sizeof v);
			if (gs_session_budget(&t, t.max_memory, &cfg) && fits(&cfg, t.threads)) {
				snprintf(why, whylen, "%s %" PRIu32 " asks for more memory than this process can have; "
					 "%s %" PRIu32 " fits", table[i].name, was, table[i].name, v);
				return 0;
			}
		}
	}
	/* the budget, given or not (the defaults' own tables, on a small host) */
	{
		uint64_t was = o->max_memory, m;
		char a[32], b[32];
		long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
		/* no more than the host's memory is offered, allocatable or not
		 * (tables are touched only as they fill) */
		uint64_t phys = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : UINT64_MAX;
		if (!was) /* none given: from the largest budget the ranges take, down */
			was = 1ull << 50;
		for (m = was / 2; m >= GS_MIN_MEMORY; m /= 2) {
			if (m > phys)
				continue;
			memcpy(&t, o, sizeof t);
			t.max_memory = m;
			if (gs_session_budget(&t, m, &cfg) && fits(&cfg, t.threads)) {
				fmt_size(a, sizeof a, o->max_memory);
				fmt_size(b, sizeof b, m);
				if (o->max_memory)
					snprintf(why, whylen, "--max-memory %s asks for more memory than this process can have; "
						 "--max-memory %s fits", a, b);
				else
					snprintf(why, whylen, "the tables ask for more memory than this process can have; "
						 "--max-memory %s fits", b);
				return 0;
			}
		}
	}
	return ENOENT;
}
