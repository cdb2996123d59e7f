#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../decoders/giop/giop.h"

static int group_init(struct gs_group *g, uint32_t key, uint8_t kind)
{
	int err;
	memset(g, 0, sizeof *g);
	g->key = key;
	g->kind = kind;
	if ((err = gs_hist_init(&g->total, GS_STATS_TOP_BITS)) != 0)
		return err;
	if ((err = gs_hist_init(&g->server, GS_STATS_TOP_BITS)) != 0) {
		gs_hist_free(&g->total);
		return err;
	}
	return 0;
}

int gs_stats_init(struct gs_stats *s, uint32_t max_groups, uint32_t max_keys)
{
	int err;
	memset(s, 0, sizeof *s);
	s->groups = calloc(max_groups + 1, sizeof *s->groups);
	s->by_key = calloc(max_keys, sizeof *s->by_key);
	if (!s->groups || !s->by_key) {
		gs_stats_free(s);
		return ENOMEM;
	}
	s->max = max_groups;
	s->max_keys = max_keys;
	s->other = GS_NONE;
	if ((err = group_init(&s->all, GS_NONE, 0)) != 0) {
		gs_stats_free(s);
		return err;
	}
	return 0;
}

void gs_stats_free(struct gs_stats *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		gs_hist_free(&s->groups[i].total);
		gs_hist_free(&s->groups[i].server);
	}
	if (s->groups && s->other != GS_NONE) {
		gs_hist_free(&s->groups[s->other].total);
		gs_hist_free(&s->groups[s->other].server);
	}
	gs_hist_free(&s->all.total);
	gs_hist_free(&s->all.server);
	free(s->groups);
	free(s->by_key);
	memset(s, 0, sizeof *s);
}

bool gs_call_is_error(const struct gs_call *c)
{
	if (c->outcome == GS_OUT_NO_REPLY)
		return true;
	if (c->outcome != GS_OUT_REPLY || !(c->flags & GS_CF_STATUS_KNOWN))
		return false;
	if (c->reply_type == GIOP_REPLY)
		return c->status == GIOP_USER_EXCEPTION || c->status == GIOP_SYSTEM_EXCEPTION;
	return c->status == GIOP_UNKNOWN_OBJECT || c->status == GIOP_LOC_SYSTEM_EXCEPTION;
}

static void account(struct gs_group *g, const struct gs_call *c)
{
	g->calls++;
	if (gs_call_is_error(c))
		g->errors++;
	if (c->outcome == GS_OUT_ONEWAY)
		g->oneways++;
	if (c->outcome == GS_OUT_NO_REPLY)
		g->no_reply++;
	if ((c->flags & GS_CF_REP_SEEN) && c->outcome == GS_OUT_REPLY) {
		g->answered++;
		gs_hist_record(&g->total, c->t_reply_last - c->t_request_first);
		gs_hist_record(&g->server, c->t_reply_first - c->t_request_last);
	}
}

static struct gs_group *group_for(struct gs_stats *s, uint32_t key, uint8_t kind)
{
	uint32_t slot;
	/* LocateRequests have no operation: give them a key of their own */
	if (kind == GS_KIND_LOCATE_REQUEST)
		slot = s->max_keys - 1;
	else
		slot = key < s->max_keys - 1 ? key : GS_NONE;
	if (slot != GS_NONE && s->by_key[slot])
		return &s->groups[s->by_key[slot] - 1];
	if (slot != GS_NONE && s->n < s->max && group_init(&s->groups[s->n], key, kind) == 0) {
		s->by_key[slot] = ++s->n;
		return &s->groups[s->n - 1];
	}
	s->other_calls++;
	if (s->other == GS_NONE) {
		if (group_init(&s->groups[s->max], GS_NONE, 0) != 0)
			return NULL;
		s->other = s->max;
	}
	return &s->groups[s->other];
}

void gs_stats_add(struct gs_stats *s, const struct gs_call *c)
{
	struct gs_group *g = group_for(s, c->op, c->kind);
	if (g)
		account(g, c);
	account(&s->all, c);
}
