/* SPDX-License-Identifier: BSD-2-Clause */
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../decoders/giop/giop.h"
#include "endpoint.h"

#include <stdio.h>

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

static void parts_free(struct gs_group *g)
{
	if (!g->parts)
		return;
	for (int k = 0; k < GS_PART__N; k++)
		gs_hist_free(&g->parts->h[k]);
	free(g->parts);
	g->parts = NULL;
}

static void nest_free(struct gs_group *g)
{
	if (!g->nest)
		return;
	gs_hist_free(&g->nest->own);
	gs_hist_free(&g->nest->down);
	free(g->nest);
	g->nest = NULL;
}

void gs_stats_free(struct gs_stats *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		gs_hist_free(&s->groups[i].total);
		gs_hist_free(&s->groups[i].server);
		parts_free(&s->groups[i]);
		nest_free(&s->groups[i]);
	}
	if (s->groups && s->other != GS_NONE) {
		gs_hist_free(&s->groups[s->other].total);
		gs_hist_free(&s->groups[s->other].server);
		parts_free(&s->groups[s->other]);
		nest_free(&s->groups[s->other]);
	}
	gs_hist_free(&s->all.total);
	gs_hist_free(&s->all.server);
	parts_free(&s->all);
	nest_free(&s->all);
	if (s->has_labels)
		gs_intern_free(&s->labels);
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

/* Counts a call in its group (g, NULL when none) and in the whole (all): the
 * call's facts read once, each latency's bucket found once for both. */
/* A rare count of a call: in the whole and in its group. */
static inline void count_rare(uint64_t *all, uint64_t *g)
{
	(*all)++;
	if (g)
		(*g)++;
}

/* Inline in each caller: a call of the summary is one function call, not three. */
static inline __attribute__((always_inline)) void account(struct gs_stats *s, struct gs_group *g,
							   const struct gs_call *c)
{
	struct gs_group *all = &s->all;
	bool answered = (c->flags & GS_CF_REP_SEEN) && c->outcome == GS_OUT_REPLY;
	all->calls++;
	if (g)
		g->calls++;
	/* most calls are answered without an error, a loss or a gap fill */
	if (gs_call_is_error(c))
		count_rare(&all->errors, g ? &g->errors : NULL);
	if (c->outcome == GS_OUT_ONEWAY)
		count_rare(&all->oneways, g ? &g->oneways : NULL);
	if (c->outcome == GS_OUT_NO_REPLY)
		count_rare(&all->no_reply, g ? &g->no_reply : NULL);
	if (c->flags & GS_CF_CAPTURE_LOSS)
		count_rare(&all->capture_loss, g ? &g->capture_loss : NULL);
	else if (gs_call_gap_filled(c))
		count_rare(&all->gap_filled, g ? &g->gap_filled : NULL);
	if (!answered)
		return;
	all->answered++;
	if (g) {
		g->answered++;
		if (!s->folded) {
			/* the whole's histograms take it at gs_stats_fold */
			gs_hist_record(&g->total, c->t_reply_last - c->t_request_first);
			gs_hist_record(&g->server, c->t_reply_first - c->t_request_last);
			return;
		}
		gs_hist_record2(&g->total, &all->total, c->t_reply_last - c->t_request_first);
		gs_hist_record2(&g->server, &all->server, c->t_reply_first - c->t_request_last);
	} else {
		gs_hist_record(&all->total, c->t_reply_last - c->t_request_first);
		gs_hist_record(&all->server, c->t_reply_first - c->t_request_last);
	}
}

static __attribute__((noinline)) struct gs_group *group_new(struct gs_stats *s, uint32_t slot, uint32_t key,
							     uint8_t kind);

/* The group of a key: found inline (every call but a group's first), made,
 * or the overflow group, out of line. */
static inline __attribute__((always_inline)) struct gs_group *group_for(struct gs_stats *s, uint32_t key,
									 uint8_t kind)
{
	uint32_t slot;
	/* LocateRequests have no operation: give them a key of their own */
	if (kind == GS_KIND_LOCATE_REQUEST)
		slot = s->max_keys - 1;
	else
		slot = key < s->max_keys - 1 ? key : GS_NONE;
	if (slot != GS_NONE && s->by_key[slot])
		return &s->groups[s->by_key[slot] - 1];
	return group_new(s, slot, key, kind);
}

static struct gs_group *group_new(struct gs_stats *s, uint32_t slot, uint32_t key, uint8_t kind)
{
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
	account(s, g, c);
}

int gs_group_by_parse(const char *s)
{
	static const char *const names[] = { "op", "conn", "object", "server", "priority" };
	for (int i = 0; i < 5; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

const char *gs_group_by_title(enum gs_group_by by)
{
	switch (by) {
	case GS_BY_CONN: return "connection";
	case GS_BY_OBJECT: return "object key";
	case GS_BY_SERVER: return "server";
	case GS_BY_PRIORITY: return "RT priority";
	default: return "operation";
	}
}

int gs_stats_group_by(struct gs_stats *s, enum gs_group_by by)
{
	int err;
	s->by = by;
	if (by == GS_BY_OP || s->has_labels)
		return 0;
	if ((err = gs_intern_init(&s->labels, s->max_keys, (size_t)s->max_keys * 64)) != 0)
		return err;
	s->has_labels = true;
	return 0;
}

/* Object keys are often binary: printable bytes as is, the rest as \xNN. */
static size_t key_text(const char *k, size_t n, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (size_t i = 0; i < n && o + 5 < len; i++) {
		unsigned char ch = (unsigned char)k[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			buf[o++] = (char)ch;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	buf[o] = '\0';
	return o;
}

void gs_stats_parts(struct gs_stats *s, unsigned kinds)
{
	s->parts = (uint8_t)(kinds & (GS_PARTS_SCHED | GS_PARTS_ORB));
}

/* the parts of one call into a group's histograms (made on first use) */
static void add_parts(struct gs_stats *s, struct gs_group *g, const struct gs_call_parts *p)
{
	int lo = p->sched && (s->parts & GS_PARTS_SCHED) ? GS_PART_ONCPU : GS_PART_ORB_IN;
	int hi = p->orb && (s->parts & GS_PARTS_ORB) ? GS_PART__N : GS_PART_ORB_IN;
	if (lo >= hi)
		return;
	if (!g->parts) {
		g->parts = calloc(1, sizeof *g->parts);
		for (int k = 0; g->parts && k < GS_PART__N; k++) {
			unsigned kind = k < GS_PART_ORB_IN ? GS_PARTS_SCHED : GS_PARTS_ORB;
			if ((s->parts & kind) && gs_hist_init(&g->parts->h[k], GS_STATS_TOP_BITS) != 0) {
				parts_free(g);
				break;
			}
		}
		if (!g->parts) {
			s->parts_no_memory++;
			return;
		}
	}
	for (int k = lo; k < hi; k++)
		if (k < GS_PART_ORB_IN || p->orb)
			gs_hist_record(&g->parts->h[k], p->ns[k]);
}

void gs_stats_nesting(struct gs_stats *s, bool on)
{
	s->nesting = on;
}

/* A group's split, made with its first call (false: no memory, counted). */
static bool nest_ready(struct gs_stats *s, struct gs_group *g)
{
	if (g->nest)
		return true;
	g->nest = calloc(1, sizeof *g->nest);
	if (g->nest && gs_hist_init(&g->nest->own, GS_STATS_TOP_BITS) == 0) {
		if (gs_hist_init(&g->nest->down, GS_STATS_TOP_BITS) == 0)
			return true;
		gs_hist_free(&g->nest->own);
	}
	free(g->nest);
	g->nest = NULL;
	s->nest_no_memory++;
	return false;
}

static void nest_record(struct gs_stats *s, struct gs_group *g, const struct gs_call *c)
{
	int64_t srv, down;
	if (!nest_ready(s, g))
		return;
	if (c->parent_basis != GS_PARENT_NONE)
		g->nest->nested++;
	if (!(c->flags & GS_CF_REP_SEEN) || c->outcome != GS_OUT_REPLY)
		return;
	srv = c->t_reply_first - c->t_request_last;
	/* the nested calls' union lies inside server time; a clock step could
	 * say otherwise: the split stays within it */
	down = c->downstream_ns < 0 ? 0 : c->downstream_ns > srv ? (srv > 0 ? srv : 0) : c->downstream_ns;
	if (down)
		g->nest->with_down++;
	gs_hist_record(&g->nest->own, srv - down);
	gs_hist_record(&g->nest->down, down);
}

/* Out of line: only a session whose calls went through the nesting stage. */
static __attribute__((noinline)) void add_nest(struct gs_stats *s, struct gs_group *g, const struct gs_call *c)
{
	if (g)
		nest_record(s, g, c);
	nest_record(s, &s->all, c);
}

void gs_stats_add_call(struct gs_stats *s, const struct gs_intern *strings, const struct gs_call *c)
{
	/* by operation, no parts: what gs_stats_add_call_parts does then, without
	 * the frame its labels need */
	if (s->by == GS_BY_OP || !s->has_labels) {
		struct gs_group *g = group_for(s, c->op, c->kind);
		account(s, g, c);
		if (s->nesting)
			add_nest(s, g, c);
		return;
	}
	gs_stats_add_call_parts(s, strings, c, NULL);
}

void gs_stats_add_call_parts(struct gs_stats *s, const struct gs_intern *strings, const struct gs_call *c,
			     const struct gs_call_parts *p)
{
	char label[160], a[GS_ENDPOINT_STRLEN], b[GS_ENDPOINT_STRLEN];
	size_t n = 0, kn;
	const char *k;
	uint32_t id;
	struct gs_group *g;
	if (s->by == GS_BY_OP || !s->has_labels) {
		g = group_for(s, c->op, c->kind);
		account(s, g, c);
		goto nest;
	}
	switch (s->by) {
	case GS_BY_CONN:
		gs_endpoint_str(&c->client, a, sizeof a);
		gs_endpoint_str(&c->server, b, sizeof b);
		n = (size_t)snprintf(label, sizeof label, "%s -> %s", a, b);
		break;
	case GS_BY_OBJECT:
		k = gs_intern_get(strings, c->object_key, &kn);
		n = kn ? key_text(k, kn, label, sizeof label) : (size_t)snprintf(label, sizeof label, "(none)");
		break;
	case GS_BY_SERVER:
		n = gs_endpoint_str(&c->server, label, sizeof label);
		break;
	case GS_BY_PRIORITY:
		if (c->flags & GS_CF_HAS_PRIORITY)
			n = (size_t)snprintf(label, sizeof label, "%d", c->priority);
		else
			n = (size_t)snprintf(label, sizeof label, "(none)");
		break;
	default:
		break;
	}
	if (n >= sizeof label)
		n = sizeof label - 1;
	id = gs_intern(&s->labels, label, n);
	g = group_for(s, id == GS_INTERN_FULL ? GS_NONE : id, GS_KIND_REQUEST);
	account(s, g, c);
nest:
	if (s->nesting)
		add_nest(s, g, c);
	if (!p || !s->parts || (!p->sched && !p->orb))
		return;
	if (g)
		add_parts(s, g, p);
	add_parts(s, &s->all, p);
}

const char *gs_stats_label(const struct gs_stats *s, const struct gs_group *g,
			   const struct gs_intern *strings, char *buf, size_t len)
{
	size_t n, i;
	const char *t;
	if (g->key == GS_NONE) {
		snprintf(buf, len, "(other)");
		return buf;
	}
	if (s->by == GS_BY_OP && g->kind == GS_KIND_LOCATE_REQUEST) {
		snprintf(buf, len, "(LocateRequest)");
		return buf;
	}
	t = gs_intern_get(s->by == GS_BY_OP ? strings : &s->labels, g->key, &n);
	if (n == 0) {
		snprintf(buf, len, "(unknown)");
		return buf;
	}
	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++) /* a name from the wire may hold anything */
		buf[i] = (t[i] >= 0x20 && t[i] < 0x7f) ? t[i] : '?';
	buf[n] = '\0';
	return buf;
}

static void group_merge(struct gs_group *g, const struct gs_group *src)
{
	g->calls += src->calls;
	g->answered += src->answered;
	g->errors += src->errors;
	g->oneways += src->oneways;
	g->no_reply += src->no_reply;
	g->gap_filled += src->gap_filled;
	g->capture_loss += src->capture_loss;
	gs_hist_merge(&g->total, &src->total);
	gs_hist_merge(&g->server, &src->server);
}

/* The split of src's group into g's (made here when src's has one). */
static void nest_merge(struct gs_stats *s, struct gs_group *g, const struct gs_group *src)
{
	if (!src->nest || !nest_ready(s, g))
		return;
	g->nest->nested += src->nest->nested;
	g->nest->with_down += src->nest->with_down;
	gs_hist_merge(&g->nest->own, &src->nest->own);
	gs_hist_merge(&g->nest->down, &src->nest->down);
}

/* The groups' latencies into the whole's histograms (to is s->all, or the
 * destination's of a merge). */
static void fold_groups(struct gs_group *to, const struct gs_stats *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		gs_hist_merge(&to->total, &s->groups[i].total);
		gs_hist_merge(&to->server, &s->groups[i].server);
	}
	if (s->other != GS_NONE) {
		gs_hist_merge(&to->total, &s->groups[s->other].total);
		gs_hist_merge(&to->server, &s->groups[s->other].server);
	}
}

void gs_stats_fold(struct gs_stats *s)
{
	if (s->folded)
		return;
	fold_groups(&s->all, s);
	s->folded = true;
}

void gs_stats_merge(struct gs_stats *s, const struct gs_stats *src, uint32_t (*map)(void *arg, uint32_t key),
		    void *arg)
{
	/* the groups merged here reach the whole's histograms through src's
	 * whole (and its groups while src is not folded), not through s's
	 * groups: s is folded first */
	gs_stats_fold(s);
	for (uint32_t i = 0; i < src->n; i++) {
		const struct gs_group *sg = &src->groups[i];
		struct gs_group *g = group_for(s, map(arg, sg->key), sg->kind);
		if (!g)
			continue;
		if (s->other != GS_NONE && g == &s->groups[s->other])
			s->other_calls += sg->calls - 1; /* group_for counted one */
		group_merge(g, sg);
		nest_merge(s, g, sg);
	}
	if (src->other != GS_NONE) {
		const struct gs_group *so = &src->groups[src->other];
		s->other_calls += src->other_calls;
		if (s->other == GS_NONE && group_init(&s->groups[s->max], GS_NONE, 0) == 0)
			s->other = s->max;
		if (s->other != GS_NONE) {
			group_merge(&s->groups[s->other], so);
			nest_merge(s, &s->groups[s->other], so);
		}
	}
	group_merge(&s->all, &src->all);
	nest_merge(s, &s->all, &src->all);
	s->nesting |= src->nesting;
	if (!src->folded) /* what src's whole has not taken yet */
		fold_groups(&s->all, src);
}
