#include "thread_log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* probe window of the open-addressing table */
#define PROBE 16

int gs_tlog_init(struct gs_tlog *l, uint32_t threads)
{
	memset(l, 0, sizeof *l);
	if (threads < PROBE || (threads & (threads - 1)))
		return EINVAL;
	l->slot = calloc(threads, sizeof *l->slot);
	l->wakes = calloc(GS_TLOG_WAKES, sizeof *l->wakes);
	if (!l->slot || !l->wakes) {
		free(l->slot);
		free(l->wakes);
		memset(l, 0, sizeof *l);
		return ENOMEM;
	}
	l->mask = threads - 1;
	return 0;
}

void gs_tlog_free(struct gs_tlog *l)
{
	free(l->pend);
	if (l->slot)
		for (uint32_t i = 0; i <= l->mask; i++)
			free(l->slot[i]);
	free(l->slot);
	free(l->wakes);
	memset(l, 0, sizeof *l);
}

static uint32_t hash(uint32_t tid)
{
	return tid * 2654435761u;
}

static struct gs_tlog_thread *find(const struct gs_tlog *l, uint32_t tid)
{
	uint32_t h = hash(tid);
	for (uint32_t i = 0; i < PROBE; i++) {
		struct gs_tlog_thread *t = l->slot[(h + i) & l->mask];
		if (t && t->tid == tid)
			return t;
	}
	return NULL;
}

static struct gs_tlog_thread *get(struct gs_tlog *l, uint32_t tid)
{
	struct gs_tlog_thread *t = find(l, tid), **old = NULL;
	uint32_t h = hash(tid);
	if (t)
		return t;
	/* a free slot of the window, else the thread idle longest */
	for (uint32_t i = 0; i < PROBE; i++) {
		struct gs_tlog_thread **c = &l->slot[(h + i) & l->mask];
		if (!*c) {
			old = c;
			break;
		}
		if (!old || (*c)->last_ts < (*old)->last_ts)
			old = c;
	}
	if (!*old) {
		*old = malloc(sizeof **old);
		if (!*old) {
			l->no_memory++;
			return NULL;
		}
	} else {
		l->replaced++;
	}
	t = *old;
	t->tid = tid;
	t->cur = GS_TS_UNKNOWN;
	t->last_ts = 0;
	t->n_states = t->n_upcalls = 0;
	return t;
}

static void set_state(struct gs_tlog *l, int64_t ts, uint32_t tid, uint8_t state)
{
	struct gs_tlog_thread *t = get(l, tid);
	struct gs_tlog_state *s;
	if (!t)
		return;
	if (ts > t->last_ts)
		t->last_ts = ts;
	if (t->cur == state)
		return;
	s = &t->states[t->n_states % GS_TLOG_STATES];
	if (t->n_states) {
		const struct gs_tlog_state *p = &t->states[(t->n_states - 1) % GS_TLOG_STATES];
		int64_t d = ts > p->ts ? ts - p->ts : 0;
		memcpy(s->cum, p->cum, sizeof s->cum);
		if (p->state >= GS_TS_ONCPU && p->state <= GS_TS_BLOCKED)
			s->cum[p->state - 1] += d;
	} else {
		memset(s->cum, 0, sizeof s->cum);
	}
	t->n_states++;
	s->ts = ts;
	s->state = state;
	t->cur = state;
}

void gs_tlog_switch(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable)
{
	if (prev)
		set_state(l, ts, prev, prev_runnable ? GS_TS_RUNQ : GS_TS_BLOCKED);
	if (next)
		set_state(l, ts, next, GS_TS_ONCPU);
}

void gs_tlog_wakeup(struct gs_tlog *l, int64_t ts, uint32_t tid, uint32_t waker)
{
	struct gs_tlog_thread *t = get(l, tid);
	struct gs_tlog_wake *w = &l->wakes[l->n_wakes++ % GS_TLOG_WAKES];
	w->ts = ts;
	w->tid = tid;
	w->waker = waker;
	/* a wake-up of a thread that is not blocked (it was still on its way to
	 * sleep, or the record of its switch-in came first) changes nothing */
	if (t && (t->cur == GS_TS_BLOCKED || t->cur == GS_TS_UNKNOWN))
		set_state(l, ts, tid, GS_TS_RUNQ);
}

void gs_tlog_upcall(struct gs_tlog *l, int64_t ts, uint32_t tid, enum gs_tedge edge)
{
	struct gs_tlog_thread *t = get(l, tid);
	struct gs_tlog_edge *e;
	if (!t)
		return;
	if (ts > t->last_ts)
		t->last_ts = ts;
	e = &t->upcalls[t->n_upcalls++ % GS_TLOG_UPCALLS];
	e->ts = ts;
	e->edge = (uint8_t)edge;
}

/* The kept state changes of `t` in time order: index k of n (oldest first). */
static const struct gs_tlog_state *nth(const struct gs_tlog_thread *t, uint64_t k)
{
	uint64_t n = t->n_states < GS_TLOG_STATES ? t->n_states : GS_TLOG_STATES;
	return &t->states[(t->n_states - n + k) % GS_TLOG_STATES];
}

static uint64_t kept(const struct gs_tlog_thread *t)
{
	return t->n_states < GS_TLOG_STATES ? t->n_states : GS_TLOG_STATES;
}

/* cum at `ts`: from the last change at or before it; `oncpu`: the thread is
 * known on CPU at ts, so before its first change (if none was pushed out)
 * it was on CPU too */
static bool cum_at(const struct gs_tlog_thread *t, int64_t ts, bool oncpu, int64_t cum[3])
{
	uint64_t n = kept(t);
	const struct gs_tlog_state *e = NULL;
	/* newest first: the instants asked for are recent */
	for (uint64_t k = n; k-- > 0;)
		if (nth(t, k)->ts <= ts) {
			e = nth(t, k);
			break;
		}
	if (!e) {
		if (!oncpu || !n || t->n_states > GS_TLOG_STATES)
			return false;
		e = nth(t, 0);
		memcpy(cum, e->cum, 3 * sizeof *cum);
		cum[GS_TS_ONCPU - 1] -= e->ts - ts;
		return true;
	}
	memcpy(cum, e->cum, 3 * sizeof *cum);
	if (e->state >= GS_TS_ONCPU && e->state <= GS_TS_BLOCKED)
		cum[e->state - 1] += ts - e->ts;
	else
		return false;
	return true;
}

bool gs_tlog_cum(const struct gs_tlog *l, uint32_t tid, int64_t ts, int64_t cum[3])
{
	const struct gs_tlog_thread *t = find(l, tid);
	return t && cum_at(t, ts, true, cum);
}

static void set_split(struct gs_tlog_split *o, const int64_t a[3], const int64_t b[3])
{
	o->oncpu += b[0] - a[0];
	o->runq += b[1] - a[1];
	o->blocked += b[2] - a[2];
}

bool gs_tlog_split(const struct gs_tlog *l, uint32_t first, int64_t from, const int64_t *cum_from, uint32_t last,
		   int64_t to, const int64_t *cum_to, struct gs_tlog_split *out)
{
	const struct gs_tlog_thread *a = find(l, first), *b = find(l, last);
	int64_t ca[3], cb[3], cw_a[3], cw_b[3], tw = 0;
	uint64_t n;
	memset(out, 0, sizeof *out);
	if (to < from || !first || !last)
		return false;
	if (first == last) {
		/* a thread never seen to change state stayed on CPU */
		if (!b && !cum_from && !cum_to) {
			out->oncpu = to - from;
			return true;
		}
		if (!cum_from && !(b && cum_at(b, from, true, ca)))
			return false;
		if (!cum_to && !(b && cum_at(b, to, true, cb)))
			return false;
		set_split(out, cum_from ? cum_from : ca, cum_to ? cum_to : cb);
		return true;
	}
	if (!a || !b)
		return false;
	n = l->n_wakes < GS_TLOG_WAKES ? l->n_wakes : GS_TLOG_WAKES;
	for (uint64_t k = 0; k < n; k++) {
		const struct gs_tlog_wake *w = &l->wakes[(l->n_wakes - n + k) % GS_TLOG_WAKES];
		if (w->tid == last && w->waker == first && w->ts >= from && w->ts <= to) {
			tw = w->ts;
			break;
		}
	}
	if (!tw)
		return false;
	/* first: on CPU at from and at tw (it ran the wake-up); last: from tw on */
	if ((!cum_from && !cum_at(a, from, true, ca)) || !cum_at(a, tw, true, cw_a) ||
	    !cum_at(b, tw, false, cw_b) || (!cum_to && !cum_at(b, to, true, cb)))
		return false;
	set_split(out, cum_from ? cum_from : ca, cw_a);
	set_split(out, cw_b, cum_to ? cum_to : cb);
	out->handoff_tid = last;
	out->handoff_ts = tw;
	return true;
}

bool gs_tlog_upcall_span(const struct gs_tlog *l, uint32_t tid, int64_t from, int64_t to, int64_t *start,
			 int64_t *end)
{
	const struct gs_tlog_thread *t = find(l, tid);
	uint64_t n;
	int64_t s = 0, e = 0;
	if (!t)
		return false;
	n = t->n_upcalls < GS_TLOG_UPCALLS ? t->n_upcalls : GS_TLOG_UPCALLS;
	for (uint64_t k = 0; k < n; k++) {
		const struct gs_tlog_edge *x = &t->upcalls[(t->n_upcalls - n + k) % GS_TLOG_UPCALLS];
		if (x->ts < from || x->ts > to)
			continue;
		if (x->edge == GS_TEDGE_START) {
			s = x->ts;
			e = 0;
		} else if (s && !e) {
			e = x->ts;
		}
	}
	if (!s || !e)
		return false;
	*start = s;
	*end = e;
	return true;
}

/* ---- events held until their time ---------------------------------------- */

static void apply(struct gs_tlog *l, const struct gs_tlog_pending *e)
{
	switch (e->kind) {
	case 1:
		gs_tlog_switch(l, e->ts, e->a, e->b, e->flag != 0);
		break;
	case 2:
		gs_tlog_wakeup(l, e->ts, e->a, e->b);
		break;
	default:
		gs_tlog_upcall(l, e->ts, e->a, (enum gs_tedge)e->b);
		break;
	}
}

static void push(struct gs_tlog *l, const struct gs_tlog_pending *e)
{
	size_t at;
	if (l->n_pend >= GS_TLOG_PENDING_MAX) {
		/* far too many waiting: the oldest goes in now */
		apply(l, &l->pend[l->head++]);
		l->n_pend--;
		l->forced++;
	}
	if (l->head + l->n_pend == l->cap) {
		if (l->head > l->cap / 2) {
			memmove(l->pend, l->pend + l->head, l->n_pend * sizeof *l->pend);
			l->head = 0;
		} else {
			size_t cap = l->cap ? l->cap * 2 : 4096;
			struct gs_tlog_pending *p = realloc(l->pend, cap * sizeof *p);
			if (!p) {
				l->no_memory++;
				apply(l, e);
				return;
			}
			l->pend = p;
			l->cap = cap;
		}
	}
	/* nearly in order: from the tail back to its place */
	at = l->head + l->n_pend;
	while (at > l->head && l->pend[at - 1].ts > e->ts) {
		l->pend[at] = l->pend[at - 1];
		at--;
	}
	l->pend[at] = *e;
	l->n_pend++;
}

void gs_tlog_push_switch(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable)
{
	struct gs_tlog_pending e = { ts, prev, next, 1, prev_runnable };
	push(l, &e);
}

void gs_tlog_push_wakeup(struct gs_tlog *l, int64_t ts, uint32_t tid, uint32_t waker)
{
	struct gs_tlog_pending e = { ts, tid, waker, 2, 0 };
	push(l, &e);
}

void gs_tlog_push_upcall(struct gs_tlog *l, int64_t ts, uint32_t tid, enum gs_tedge edge)
{
	struct gs_tlog_pending e = { ts, tid, (uint32_t)edge, 3, 0 };
	push(l, &e);
}

void gs_tlog_advance(struct gs_tlog *l, int64_t ts)
{
	while (l->n_pend && l->pend[l->head].ts <= ts) {
		apply(l, &l->pend[l->head++]);
		l->n_pend--;
	}
	if (!l->n_pend)
		l->head = 0;
}
