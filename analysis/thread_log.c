/* SPDX-License-Identifier: BSD-2-Clause */
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
	l->complete = INT64_MAX;
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
	t->pc_known = false;
	t->runs = 0;
	t->pc_ts = 0;
	return t;
}

/* krt: the kernel's CPU time of the thread at ts (a switch record's), or
 * GS_TLOG_NO_KCPU: the last change's carried on (a wake-up), or none */
static void set_state(struct gs_tlog *l, int64_t ts, uint32_t tid, uint8_t state, int64_t krt, bool from_switch,
		      bool from_idle)
{
	struct gs_tlog_thread *t = get(l, tid);
	struct gs_tlog_state *s;
	if (!t)
		return;
	if (ts < t->last_ts)
		l->late++;
	if (ts > t->last_ts)
		t->last_ts = ts;
	if (t->cur == state) {
		/* the same state again (a switch-in the kernel made without a
		 * record, then this switch-out): only the kernel's count moved */
		const struct gs_tlog_state *p = t->n_states ? &t->states[(t->n_states - 1) % GS_TLOG_STATES] : NULL;
		if (!from_switch || krt == GS_TLOG_NO_KCPU || !p || p->krt == krt)
			return;
	}
	s = &t->states[t->n_states % GS_TLOG_STATES];
	if (t->n_states) {
		const struct gs_tlog_state *p = &t->states[(t->n_states - 1) % GS_TLOG_STATES];
		int64_t d = ts > p->ts ? ts - p->ts : 0;
		memcpy(s->cum, p->cum, sizeof s->cum);
		if (p->state >= GS_TS_ONCPU && p->state <= GS_TS_BLOCKED)
			s->cum[p->state - 1] += d;
		/* off CPU the kernel's count stands still: a wake-up carries it */
		if (!from_switch && p->state != GS_TS_ONCPU)
			krt = p->krt;
	} else {
		memset(s->cum, 0, sizeof s->cum);
	}
	s->krt = krt;
	t->n_states++;
	s->ts = ts;
	s->state = state;
	s->woken = !from_switch && state == GS_TS_RUNQ;
	s->from_idle = from_idle && state == GS_TS_ONCPU;
	t->cur = state;
}

/* `runs`: the thread's switches-in counted by the kernel as of this record;
 * `add`: this record's own switch-in, which the kernel counts after it */
static void count_runs(struct gs_tlog *l, uint32_t tid, int64_t ts, uint32_t runs, uint32_t add)
{
	struct gs_tlog_thread *t = find(l, tid);
	if (!t)
		return;
	if (t->pc_known && runs != t->runs && runs - t->runs < (1u << 31)) {
		/* ran in between without a record: its states there are wrong */
		l->missed += runs - t->runs;
		gs_tlog_loss(l, t->pc_ts, ts);
	}
	t->runs = runs + add;
	t->pc_ts = ts;
	t->pc_known = true;
}

void gs_tlog_switch(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
		    int64_t pcount, int64_t prev_pcount, int64_t rt, int64_t prev_rt)
{
	gs_tlog_switch_idle(l, ts, prev, next, prev_runnable, pcount, prev_pcount, rt, prev_rt, false);
}

void gs_tlog_switch_idle(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
			 int64_t pcount, int64_t prev_pcount, int64_t rt, int64_t prev_rt, bool from_idle)
{
	if (prev)
		set_state(l, ts, prev, prev_runnable ? GS_TS_RUNQ : GS_TS_BLOCKED, prev_rt, true, false);
	if (next)
		set_state(l, ts, next, GS_TS_ONCPU, rt, true, from_idle && !prev);
	/* prev: its runs so far, this one included; next: before this one */
	if (prev && prev_pcount >= 0)
		count_runs(l, prev, ts, (uint32_t)prev_pcount, 0);
	if (next && pcount >= 0)
		count_runs(l, next, ts, (uint32_t)pcount, 1);
}

bool gs_tlog_counted(const struct gs_tlog *l, uint32_t tid, int64_t ts)
{
	const struct gs_tlog_thread *t = find(l, tid);
	return !t || !t->pc_known || t->pc_ts > ts;
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
		set_state(l, ts, tid, GS_TS_RUNQ, GS_TLOG_NO_KCPU, false, false);
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

/* No wake-up to count from (kcpu_at's `woke`). */
#define NO_WAKE INT64_MIN

/* the kernel's CPU time at `ts`, `e` the change at or before it, `nx` the
 * change after it (NULL: none yet): see gs_tlog_cum().  `woke`: when `ts`
 * ends an interval and e's run began inside it with a switch from the idle
 * task after a wake-up, the wake-up's instant (else NO_WAKE).  The kernel
 * charges a thread from its run queue's clock as last updated before the
 * switch-in; a wake-up onto an idle CPU updated that clock and asked the idle
 * task to reschedule, which skips the update at the switch
 * (rq_clock_skip_update()): the wait the instants count as run queue is on
 * the thread's CPU clock, inside the interval.  The count back from the run's
 * end holds it only as far as the run's end charged its instants (a tail
 * after the last clock update, steal: not), forward from the switch-in not
 * at all; so the count is then the most the kernel can have charged by `ts`,
 * forward from the wake-up, not past the run's end count (above the count by
 * at most what it charged between `ts` and the switch-out).  Only once the
 * run's end is in the log.  (A wake-up onto a busy CPU may or may not skip
 * the update: a switch-in at the next tick or when the running task blocks
 * updates it, the wait is not charged, and only the count back says which) */
static int64_t kcpu_at(const struct gs_tlog_state *e, const struct gs_tlog_state *nx, int64_t ts, int64_t woke)
{
	int64_t k, up;
	bool end_known;
	if (e->krt == GS_TLOG_NO_KCPU)
		return GS_TLOG_NO_KCPU;
	if (e->state != GS_TS_ONCPU)
		return e->krt;
	k = e->krt + (ts - e->ts);
	end_known = nx && nx->krt != GS_TLOG_NO_KCPU && nx->krt >= e->krt;
	if (end_known) {
		/* the later of forward from the run's start (not past its
		 * end's count) and back from its end: each falls short only of
		 * what the kernel charged outside the instants (a lead-in from
		 * the wake-up's clock; a tail after the last clock update) */
		int64_t back = nx->krt - (nx->ts - ts);
		if (k > nx->krt)
			k = nx->krt;
		k = back > k ? back : k;
	}
	/* (a run not ended yet: no end count bounds the most, which would grow
	 * with ts past whatever the run's end turns out to have charged) */
	if (woke == NO_WAKE || !end_known)
		return k;
	up = e->krt + (ts - woke);
	if (up > nx->krt)
		up = nx->krt;
	return up > k ? up : k;
}

/* cum at `ts`: from the last change at or before it; `oncpu`: the thread is
 * known on CPU at ts, so before its first change (if none was pushed out)
 * it was on CPU too.  `end_of`: `ts` ends an interval that began at end_of
 * (the kernel's count is then taken as the most it can have charged by ts
 * when the run at ts was switched in from the idle task after a wake-up
 * inside the interval: kcpu_at);
 * NO_WAKE: ts starts one (the count is taken as the least) */
static bool cum_at(const struct gs_tlog_thread *t, int64_t ts, bool oncpu, int64_t end_of, int64_t cum[GS_TLOG_CUM])
{
	uint64_t n = kept(t), at = 0;
	const struct gs_tlog_state *e = NULL, *w;
	int64_t woke = NO_WAKE;
	/* newest first: the instants asked for are recent */
	for (uint64_t k = n; k-- > 0;)
		if (nth(t, k)->ts <= ts) {
			e = nth(t, k);
			at = k;
			break;
		}
	if (!e) {
		if (!oncpu || !n || t->n_states > GS_TLOG_STATES)
			return false;
		e = nth(t, 0);
		memcpy(cum, e->cum, 3 * sizeof *cum);
		cum[GS_TS_ONCPU - 1] -= e->ts - ts;
		/* back from the first change, a switch-out with its count */
		cum[GS_TLOG_KCPU] = e->krt == GS_TLOG_NO_KCPU ? GS_TLOG_NO_KCPU : e->krt - (e->ts - ts);
		return true;
	}
	memcpy(cum, e->cum, 3 * sizeof *cum);
	if (e->state >= GS_TS_ONCPU && e->state <= GS_TS_BLOCKED)
		cum[e->state - 1] += ts - e->ts;
	else
		return false;
	/* the run at ts began inside the interval, woken there onto an idle CPU */
	if (end_of != NO_WAKE && e->state == GS_TS_ONCPU && e->from_idle && at > 0 &&
	    (w = nth(t, at - 1))->state == GS_TS_RUNQ && w->woken && w->ts >= end_of)
		woke = w->ts;
	cum[GS_TLOG_KCPU] = kcpu_at(e, at + 1 < n ? nth(t, at + 1) : NULL, ts, woke);
	return true;
}

bool gs_tlog_cum(const struct gs_tlog *l, uint32_t tid, int64_t ts, int64_t cum[GS_TLOG_CUM])
{
	const struct gs_tlog_thread *t = find(l, tid);
	return gs_tlog_known(l, ts) && t && cum_at(t, ts, true, NO_WAKE, cum);
}

void gs_tlog_set_complete(struct gs_tlog *l, int64_t ts)
{
	if (l->complete == INT64_MAX || ts > l->complete)
		l->complete = ts;
}

bool gs_tlog_known(const struct gs_tlog *l, int64_t ts)
{
	return ts <= l->complete;
}

void gs_tlog_loss(struct gs_tlog *l, int64_t from, int64_t to)
{
	struct gs_tlog_loss *x = &l->losses[l->n_losses++ % GS_TLOG_LOSSES];
	x->from = from;
	x->to = to;
}

bool gs_tlog_lost_in(const struct gs_tlog *l, int64_t from, int64_t to)
{
	uint64_t n = l->n_losses < GS_TLOG_LOSSES ? l->n_losses : GS_TLOG_LOSSES;
	int64_t oldest = INT64_MAX;
	for (uint64_t k = 0; k < n; k++) {
		const struct gs_tlog_loss *x = &l->losses[(l->n_losses - n + k) % GS_TLOG_LOSSES];
		if (x->from <= to && x->to >= from)
			return true;
		if (x->from < oldest)
			oldest = x->from;
	}
	/* windows pushed out: whatever came before the oldest kept is unknown */
	return l->n_losses > GS_TLOG_LOSSES && from < oldest;
}

static void set_split(struct gs_tlog_split *o, const int64_t a[GS_TLOG_CUM], const int64_t b[GS_TLOG_CUM])
{
	o->oncpu += b[0] - a[0];
	o->runq += b[1] - a[1];
	o->blocked += b[2] - a[2];
	if (a[GS_TLOG_KCPU] == GS_TLOG_NO_KCPU || b[GS_TLOG_KCPU] == GS_TLOG_NO_KCPU)
		o->kernel = false;
	else
		o->oncpu_inst += b[GS_TLOG_KCPU] - a[GS_TLOG_KCPU]; /* the kernel's, until done() */
}

/* the split begun with kernel = true: oncpu as the kernel charged it, the
 * difference to the instants' taken from runq, then blocked (oncpu not
 * above the interval: the three add up to it) */
static void split_done(struct gs_tlog_split *o)
{
	int64_t k = o->oncpu_inst, rq = o->runq, bl = o->blocked;
	o->oncpu_inst = o->oncpu;
	if (!o->kernel)
		return;
	if (k < 0) {
		/* (a count that went back: the instants') */
		o->kernel = false;
		return;
	}
	rq -= k - o->oncpu;
	if (rq < 0) {
		bl += rq;
		rq = 0;
	}
	if (bl < 0) {
		k += bl;
		bl = 0;
	}
	o->oncpu = k;
	o->runq = rq;
	o->blocked = bl;
}

/* the wake-ups in [from, to], oldest first (at most `cap`; false when more) */
#define CHAIN_WAKES 1024
static bool wakes_in(const struct gs_tlog *l, int64_t from, int64_t to, const struct gs_tlog_wake **out,
		     size_t *n_out)
{
	uint64_t n = l->n_wakes < GS_TLOG_WAKES ? l->n_wakes : GS_TLOG_WAKES;
	size_t m = 0;
	/* newest first: the interval is recent; the ring is in the order the
	 * events were applied, which is their time order */
	for (uint64_t k = n; k-- > 0;) {
		const struct gs_tlog_wake *w = &l->wakes[(l->n_wakes - n + k) % GS_TLOG_WAKES];
		if (w->ts > to)
			continue;
		if (w->ts < from)
			break;
		if (m == CHAIN_WAKES)
			return false;
		out[m++] = w;
	}
	/* reversed into time order (insertion: nearly sorted already) */
	for (size_t i = 0; i < m / 2; i++) {
		const struct gs_tlog_wake *x = out[i];
		out[i] = out[m - 1 - i];
		out[m - 1 - i] = x;
	}
	for (size_t i = 1; i < m; i++)
		for (size_t j = i; j > 0 && out[j - 1]->ts > out[j]->ts; j--) {
			const struct gs_tlog_wake *x = out[j];
			out[j] = out[j - 1];
			out[j - 1] = x;
		}
	*n_out = m;
	return true;
}

bool gs_tlog_split(const struct gs_tlog *l, uint32_t first, int64_t from, const int64_t *cum_from, uint32_t last,
		   int64_t to, const int64_t *cum_to, struct gs_tlog_split *out)
{
	const struct gs_tlog_thread *a = find(l, first), *b = find(l, last);
	int64_t ca[GS_TLOG_CUM], cb[GS_TLOG_CUM];
	memset(out, 0, sizeof *out);
	if (to < from || !first || !last || !gs_tlog_known(l, to))
		return false;
	out->kernel = true;
	if (first == last) {
		/* a thread never seen to change state stayed on CPU */
		if (!b && !cum_from && !cum_to) {
			out->oncpu = out->oncpu_inst = to - from;
			out->kernel = false;
			return true;
		}
		/* the logs first (a run's end may be there by now), then what
		 * was taken when the syscall came */
		if (!(b && cum_at(b, from, true, NO_WAKE, ca))) {
			if (!cum_from)
				return false;
			memcpy(ca, cum_from, sizeof ca);
		}
		if (!(b && cum_at(b, to, true, from, cb))) {
			if (!cum_to)
				return false;
			memcpy(cb, cum_to, sizeof cb);
		}
		set_split(out, ca, cb);
		split_done(out);
		return true;
	}
	if (!a || !b)
		return false;
	{
		/* the threads reached from `first`, each by the wake-up that reached it first */
		struct reach {
			uint32_t tid;
			int64_t ts;     /* woken at (first: from) */
			int parent;     /* index of the waker (-1: first) */
			uint32_t depth; /* threads before it in the chain */
		} r[32];
		const struct gs_tlog_wake *ws[CHAIN_WAKES];
		const struct gs_tlog_wake **w = ws;
		size_t nw = 0, nr = 1;
		int hit = -1, chain[GS_TLOG_CHAIN];
		uint32_t len = 0;
		int64_t c0[GS_TLOG_CUM], c1[GS_TLOG_CUM];
		if (!wakes_in(l, from, to, w, &nw))
			return false;
		r[0] = (struct reach){ first, from, -1, 0 };
		for (size_t k = 0; k < nw && hit < 0; k++) {
			int by = -1;
			bool known = false;
			for (size_t i = 0; i < nr; i++) {
				if (r[i].tid == w[k]->tid)
					known = true;
				if (r[i].tid == w[k]->waker && r[i].ts <= w[k]->ts && by < 0)
					by = (int)i;
			}
			if (known || by < 0 || r[by].depth + 1 >= GS_TLOG_CHAIN || nr == sizeof r / sizeof *r)
				continue;
			/* a thread without a log cannot be split: not a link */
			if (w[k]->tid != last && !find(l, w[k]->tid))
				continue;
			r[nr] = (struct reach){ w[k]->tid, w[k]->ts, by, r[by].depth + 1 };
			if (w[k]->tid == last)
				hit = (int)nr;
			nr++;
		}
		if (hit < 0)
			return false;
		for (int i = hit; i >= 0; i = r[i].parent)
			chain[len++] = i;
		/* chain[len - 1] is first, chain[0] is last */
		for (uint32_t j = len; j-- > 0;) {
			const struct reach *x = &r[chain[j]];
			const struct gs_tlog_thread *t = find(l, x->tid);
			int64_t end = j ? r[chain[j - 1]].ts : to;
			if (!t)
				return false;
			if (j == len - 1) {
				if (!cum_at(t, from, true, NO_WAKE, c0)) {
					if (!cum_from)
						return false;
					memcpy(c0, cum_from, sizeof c0);
				}
			} else if (!cum_at(t, x->ts, false, NO_WAKE, c0)) {
				return false;
			}
			if (!cum_at(t, end, true, j == len - 1 ? from : x->ts, c1)) {
				if (j != 0 || !cum_to)
					return false;
				memcpy(c1, cum_to, sizeof c1);
			}
			set_split(out, c0, c1);
		}
		split_done(out);
		out->handoff_tid = last;
		out->handoff_ts = r[hit].ts;
		out->hops = len - 1;
	}
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

bool gs_tlog_states_in(const struct gs_tlog *l, uint32_t tid, int64_t from, int64_t to, int64_t out[3])
{
	const struct gs_tlog_thread *t = find(l, tid);
	int64_t a[GS_TLOG_CUM], b[GS_TLOG_CUM];
	if (!t || from > to || !gs_tlog_known(l, to) || !cum_at(t, from, false, NO_WAKE, a) ||
	    !cum_at(t, to, true, NO_WAKE, b))
		return false;
	for (int i = 0; i < 3; i++)
		out[i] = b[i] - a[i];
	return true;
}

int gs_tlog_upcall_at(const struct gs_tlog *l, uint32_t tid, int64_t ts, int64_t *start)
{
	const struct gs_tlog_thread *t = find(l, tid);
	uint64_t n;
	if (!t || !t->n_upcalls || !gs_tlog_known(l, ts))
		return -1;
	n = t->n_upcalls < GS_TLOG_UPCALLS ? t->n_upcalls : GS_TLOG_UPCALLS;
	/* newest first: the instants asked for are recent */
	for (uint64_t k = n; k-- > 0;) {
		const struct gs_tlog_edge *x = &t->upcalls[(t->n_upcalls - n + k) % GS_TLOG_UPCALLS];
		if (x->ts > ts)
			continue;
		if (x->edge != GS_TEDGE_START)
			return 0;
		*start = x->ts;
		return 1;
	}
	return t->n_upcalls > GS_TLOG_UPCALLS ? -1 : 0;
}

/* ---- events held until their time ---------------------------------------- */

static void apply(struct gs_tlog *l, const struct gs_tlog_pending *e)
{
	switch (e->kind) {
	case 1:
		gs_tlog_switch_idle(l, e->ts, e->a, e->b, (e->flag & 1) != 0, e->pc, e->prev_pc, e->rt, e->prev_rt,
				    (e->flag & 2) != 0);
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
	gs_tlog_push_switch_pc(l, ts, prev, next, prev_runnable, -1, -1);
}

void gs_tlog_push_switch_pc(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
			    int64_t pcount, int64_t prev_pcount)
{
	gs_tlog_push_switch_rt(l, ts, prev, next, prev_runnable, pcount, prev_pcount, GS_TLOG_NO_KCPU,
			       GS_TLOG_NO_KCPU);
}

void gs_tlog_push_switch_rt(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
			    int64_t pcount, int64_t prev_pcount, int64_t rt, int64_t prev_rt)
{
	gs_tlog_push_switch_idle(l, ts, prev, next, prev_runnable, pcount, prev_pcount, rt, prev_rt, false);
}

void gs_tlog_push_switch_idle(struct gs_tlog *l, int64_t ts, uint32_t prev, uint32_t next, bool prev_runnable,
			      int64_t pcount, int64_t prev_pcount, int64_t rt, int64_t prev_rt, bool from_idle)
{
	struct gs_tlog_pending e = { ts,	  prev, next, pcount, prev_pcount, rt, prev_rt, 1,
				     (uint8_t)((prev_runnable ? 1 : 0) | (from_idle ? 2 : 0)) };
	push(l, &e);
}

void gs_tlog_push_wakeup(struct gs_tlog *l, int64_t ts, uint32_t tid, uint32_t waker)
{
	struct gs_tlog_pending e = { ts, tid, waker, -1, -1, GS_TLOG_NO_KCPU, GS_TLOG_NO_KCPU, 2, 0 };
	push(l, &e);
}

void gs_tlog_push_upcall(struct gs_tlog *l, int64_t ts, uint32_t tid, enum gs_tedge edge)
{
	struct gs_tlog_pending e = { ts, tid, (uint32_t)edge, -1, -1, GS_TLOG_NO_KCPU, GS_TLOG_NO_KCPU, 3, 0 };
	push(l, &e);
}

void gs_tlog_advance(struct gs_tlog *l, int64_t ts)
{
	/* never past what is known complete: an event still held in a ring
	 * would come after later ones of its thread, and the thread's states
	 * would be applied out of order */
	if (ts > l->complete)
		ts = l->complete;
	while (l->n_pend && l->pend[l->head].ts <= ts) {
		apply(l, &l->pend[l->head++]);
		l->n_pend--;
	}
	if (!l->n_pend)
		l->head = 0;
}
