/* SPDX-License-Identifier: BSD-2-Clause */
/* The nesting stage (nest.h).  A call C made by host H is nested in P when H
 * served P and P encloses C at H: P's request was whole before C's request
 * began, C's reply was whole before P's reply began (and C does not go to P's
 * own server endpoint).  Exactly one such P: C's parent (basis time); several:
 * undecided (counted); none: top level.
 *
 * Calls are held in arrival order and written in that order (a FIFO delay line):
 * - ordered (read): a call comes after every call that may enclose it (those
 *   began earlier), so it is decided when it comes; it is written once no child
 *   can come any more (a later call began after its reply's first byte).
 * - unordered (live, attach): a child ends before its parents, so it waits for
 *   them hold_ns of capture clock, and is decided when written.
 * The host index (a fixed number of buckets, each with the held calls served by
 * and made by its hosts) keeps a call's look-up to the calls of its own hosts. */
#include "nest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GS_NEST_BUCKETS 4096u
#define NEST_CAP0 256u
#define NO_END INT64_MAX

struct gs_nest_ent {
	struct gs_call c;
	const struct gs_engine *e;
	uint64_t cand;              /* the (last) enclosing call seen, by seq */
	uint64_t s_prev, s_next;    /* served list (seq + 1; 0: none) */
	uint64_t m_prev, m_next;    /* made list */
	uint32_t sb, mb;            /* their buckets */
	uint32_t ncand;             /* enclosing calls seen */
	uint32_t spans;             /* its nested calls' intervals (index + 1) */
	uint32_t my_span;           /* the interval it gave its parent (index + 1) */
	int64_t arrive;             /* capture clock when it came */
	bool has_t, decided, revoked;
	bool wait;                  /* unordered: its client's host serves calls: it waits */
};

/* The server endpoints the hosts of a bucket served calls on: none, one, several. */
struct gs_nest_server {
	struct gs_endpoint ep;
	uint8_t seen;               /* 0, 1 (ep), 2: more than one */
};

/* A call written with a parent by time (unordered), as much as the rule reads. */
#define NEST_GHOSTS 1024u
struct gs_nest_ghost {
	struct gs_endpoint client, server;
	int64_t start, end;
	uint32_t mb;                /* its client's bucket; GS_NEST_BUCKETS: empty */
	bool counted;
};

struct gs_nest_span {
	int64_t a, b;               /* the nested call's [t_request_first, end] */
	struct gs_endpoint client, server;
	uint32_t rid, op;
	uint32_t next;              /* index + 1; the free list too */
	bool dead;                  /* taken back: its call had another enclosing call */
};

/* ---- hosts ------------------------------------------------------------------- */

static bool host_self(const struct gs_nest *n, const struct gs_endpoint *ep)
{
	return n->own.n && gs_host_addrs_has(&n->own, ep);
}

static bool host_same(const struct gs_nest *n, const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	bool sa = host_self(n, a), sb = host_self(n, b);
	if (sa || sb)
		return sa && sb;
	return a->family == b->family && memcmp(a->addr, b->addr, a->family == 4 ? 4 : 16) == 0;
}

static uint32_t host_bucket(const struct gs_nest *n, const struct gs_endpoint *ep)
{
	uint64_t w[2];
	if (host_self(n, ep))
		return 0; /* all the capture host's addresses: one host */
	memcpy(w, ep->addr, sizeof w);
	if (ep->family == 4)
		w[0] &= 0xffffffffu, w[1] = 0; /* IPv4 in the first 4 bytes, the rest not the key */
	/* buckets 1..GS_NEST_BUCKETS-1: the top bits of a multiplicative hash */
	return (uint32_t)(((w[0] ^ (w[1] * 0xc2b2ae3d27d4eb4fULL)) * 0x9e3779b97f4a7c15ULL) >> 52) %
		       (GS_NEST_BUCKETS - 1) + 1;
}

/* ---- the ring ------------------------------------------------------------------ */

static struct gs_nest_ent *at(const struct gs_nest *n, uint64_t seq)
{
	return &n->ent[seq & (n->cap - 1)];
}

static struct gs_nest_ent *held(const struct gs_nest *n, uint64_t seq)
{
	return seq >= n->head && seq < n->tail ? at(n, seq) : NULL;
}

/* Twice the room, in place where realloc can: a held call's slot stays or moves
 * up by the old size (its seq's next bit), into the new half, never onto another. */
static bool grow(struct gs_nest *n)
{
	uint32_t old = n->cap, cap = old * 2;
	struct gs_nest_ent *ne;
	if (cap > n->max_held || cap < old)
		return false;
	if (n->times) {
		struct gs_call_times *nt = realloc(n->times, (size_t)cap * sizeof *nt);
		if (!nt)
			return false;
		n->times = nt;
	}
	if (!(ne = realloc(n->ent, (size_t)cap * sizeof *ne)))
		return false;
	n->ent = ne;
	for (uint64_t s = n->head; s < n->tail; s++) {
		if (!(s & old))
			continue;
		ne[s & (cap - 1)] = ne[s & (old - 1)];
		if (n->times)
			n->times[s & (cap - 1)] = n->times[s & (old - 1)];
	}
	n->cap = cap;
	return true;
}

/* The ring never passes max_held slots (grow); the interval pool 2 * max_held
 * (span_room), and settle_spans sorts at most as many pointers to them. */
uint64_t gs_nest_memory_per_held(bool times)
{
	return sizeof(struct gs_nest_ent) + (times ? sizeof(struct gs_call_times) : 0) +
	       2 * (sizeof(struct gs_nest_span) + sizeof(struct gs_nest_span *));
}

uint64_t gs_nest_memory_bound(uint32_t max_held, bool times, bool ordered)
{
	/* init takes 2 at least: counted in the fixed part */
	uint64_t b = (uint64_t)max_held * gs_nest_memory_per_held(times) + 2 * gs_nest_memory_per_held(times) +
		     GS_NEST_BUCKETS * (2 * sizeof(uint64_t) + sizeof(struct gs_nest_server));
	if (!ordered)
		b += NEST_GHOSTS * sizeof(struct gs_nest_ghost) + GS_NEST_BUCKETS * sizeof(uint16_t);
	return b;
}

int gs_nest_init(struct gs_nest *n, bool ordered, uint32_t max_held, int64_t hold_ns, gs_nest_fn fn, void *arg)
{
	uint32_t cap = NEST_CAP0;
	memset(n, 0, sizeof *n);
	if (max_held < 2)
		max_held = 2;
	while (cap > max_held)
		cap /= 2;
	n->fn = fn;
	n->arg = arg;
	n->ordered = ordered;
	n->max_held = max_held;
	n->hold_ns = hold_ns;
	n->cap = cap;
	n->max_start = INT64_MIN;
	n->horizon = INT64_MIN;
	n->clock = INT64_MIN;
	n->ent = malloc((size_t)cap * sizeof *n->ent);
	n->served = calloc(GS_NEST_BUCKETS, sizeof *n->served);
	n->made = calloc(GS_NEST_BUCKETS, sizeof *n->made);
	n->servers = calloc(GS_NEST_BUCKETS, sizeof *n->servers);
	if (!ordered) {
		n->ghost = calloc(NEST_GHOSTS, sizeof *n->ghost);
		n->ghosts_in = calloc(GS_NEST_BUCKETS, sizeof *n->ghosts_in);
		for (uint32_t i = 0; n->ghost && i < NEST_GHOSTS; i++)
			n->ghost[i].mb = GS_NEST_BUCKETS;
	}
	if (!n->ent || !n->served || !n->made || !n->servers || (!ordered && (!n->ghost || !n->ghosts_in))) {
		gs_nest_free(n);
		return ENOMEM;
	}
	return 0;
}

void gs_nest_free(struct gs_nest *n)
{
	free(n->ent);
	free(n->served);
	free(n->made);
	free(n->servers);
	n->servers = NULL;
	free(n->ghost);
	free(n->ghosts_in);
	n->ghost = NULL;
	n->ghosts_in = NULL;
	free(n->span);
	free(n->times);
	n->times = NULL;
	n->ent = NULL;
	n->served = n->made = NULL;
	n->span = NULL;
}

/* ---- lists ---------------------------------------------------------------------- */

static void link_ent(struct gs_nest *n, uint64_t seq)
{
	struct gs_nest_ent *x = at(n, seq);
	x->sb = host_bucket(n, &x->c.server);
	x->mb = host_bucket(n, &x->c.client);
	x->s_prev = 0;
	x->s_next = n->served[x->sb];
	if (x->s_next)
		at(n, x->s_next - 1)->s_prev = seq + 1;
	n->served[x->sb] = seq + 1;
	x->m_prev = 0;
	x->m_next = n->made[x->mb];
	if (x->m_next)
		at(n, x->m_next - 1)->m_prev = seq + 1;
	n->made[x->mb] = seq + 1;
}

static void unlink_ent(struct gs_nest *n, struct gs_nest_ent *x)
{
	if (x->s_prev)
		at(n, x->s_prev - 1)->s_next = x->s_next;
	else
		n->served[x->sb] = x->s_next;
	if (x->s_next)
		at(n, x->s_next - 1)->s_prev = x->s_prev;
	if (x->m_prev)
		at(n, x->m_prev - 1)->m_next = x->m_next;
	else
		n->made[x->mb] = x->m_next;
	if (x->m_next)
		at(n, x->m_next - 1)->m_prev = x->m_prev;
}

/* ---- the rule --------------------------------------------------------------------- */

static bool has_reply(const struct gs_call *c)
{
	return (c->flags & GS_CF_REP_SEEN) != 0;
}

/* The end of a call at its client's host: its reply whole; a oneway's request
 * whole (nothing comes back); NO_END: a call not answered cannot be enclosed. */
static int64_t call_end(const struct gs_call *c)
{
	if (has_reply(c))
		return c->t_reply_last;
	if (c->flags & GS_CF_ONEWAY)
		return c->t_request_last;
	return NO_END;
}

static bool ep_same(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	return a->port == b->port && a->family == b->family && memcmp(a->addr, b->addr, 16) == 0;
}

/* A call to the very endpoint that serves p is another client of p's server (one
 * host: loopback, or clients beside their server), not a call p's server made. */
static bool encloses(const struct gs_nest *n, const struct gs_call *p, const struct gs_call *c)
{
	int64_t end = call_end(c);
	return end != NO_END && has_reply(p) && p->t_request_last <= c->t_request_first &&
	       end <= p->t_reply_first && host_same(n, &p->server, &c->client) && !ep_same(&p->server, &c->server);
}

/* ---- nested intervals ----------------------------------------------------------------- */

static bool span_room(struct gs_nest *n)
{
	uint32_t cap;
	struct gs_nest_span *ns;
	if (n->span_free)
		return true;
	if (n->span_used < n->span_cap)
		return true;
	cap = n->span_cap ? n->span_cap * 2 : NEST_CAP0;
	/* one interval a held call, and the written children of held parents */
	if (cap > 2 * n->max_held)
		cap = 2 * n->max_held;
	if (cap <= n->span_cap)
		return false;
	ns = realloc(n->span, (size_t)cap * sizeof *ns);
	if (!ns)
		return false;
	n->span = ns;
	n->span_cap = cap;
	return true;
}

/* Gives child c's interval to parent p: false when the pool is at its bound. */
static bool give_span(struct gs_nest *n, struct gs_nest_ent *p, struct gs_nest_ent *c)
{
	uint32_t i;
	struct gs_nest_span *s;
	if (!span_room(n))
		return false;
	if (n->span_free) {
		i = n->span_free - 1;
		n->span_free = n->span[i].next;
	} else {
		i = n->span_used++;
	}
	s = &n->span[i];
	s->a = c->c.t_request_first;
	s->b = call_end(&c->c);
	s->client = c->c.client;
	s->server = c->c.server;
	s->rid = c->c.request_id;
	s->op = c->c.op;
	s->dead = false;
	s->next = p->spans;
	p->spans = i + 1;
	c->my_span = i + 1;
	return true;
}

static int span_cmp(const void *a, const void *b)
{
	const struct gs_nest_span *x = *(const struct gs_nest_span *const *)a;
	const struct gs_nest_span *y = *(const struct gs_nest_span *const *)b;
	return x->a < y->a ? -1 : x->a > y->a;
}

/* downstream_ns and hold_* of p from its nested calls' intervals, clipped to its
 * server time; the intervals go back to the pool. */
static void settle_spans(struct gs_nest *n, struct gs_call *p, uint32_t head)
{
	struct gs_nest_span *one[64], **v = one;
	uint32_t k = 0, cnt = 0;
	int64_t lo = p->t_request_last, hi = p->t_reply_first, until = INT64_MIN, sum = 0;
	for (uint32_t i = head; i; i = n->span[i - 1].next)
		cnt++;
	if (cnt > 64 && !(v = malloc(cnt * sizeof *v)))
		v = NULL;
	for (uint32_t i = head, nx; i; i = nx) {
		struct gs_nest_span *s = &n->span[i - 1];
		nx = s->next;
		if (!s->dead && has_reply(p)) {
			int64_t a = s->a < lo ? lo : s->a, b = s->b > hi ? hi : s->b;
			if (b > a && b - a > p->hold_ns) {
				p->hold_ns = b - a;
				p->hold_client = s->client;
				p->hold_server = s->server;
				p->hold_request_id = s->rid;
				p->hold_op = s->op;
			}
			if (v && b > a) {
				s->a = a;
				s->b = b;
				v[k++] = s;
			}
		}
	}
	/* the union of the intervals: in start order, what each adds past the last end */
	if (v && k > 1)
		qsort(v, k, sizeof *v, span_cmp);
	for (uint32_t j = 0; v && j < k; j++) {
		int64_t a = v[j]->a > until ? v[j]->a : until;
		if (v[j]->b > a)
			sum += v[j]->b - a;
		if (v[j]->b > until)
			until = v[j]->b;
	}
	p->downstream_ns = sum;
	/* give the intervals back (after the sort: it read them) */
	for (uint32_t i = head, nx; i; i = nx) {
		nx = n->span[i - 1].next;
		n->span[i - 1].next = n->span_free;
		n->span_free = i;
	}
	if (v != one)
		free(v);
}

/* ---- deciding ------------------------------------------------------------------------- */

/* The held call that attach named as x's parent (thread), if held. */
static struct gs_nest_ent *find_parent(const struct gs_nest *n, const struct gs_call *c)
{
	uint32_t b = host_bucket(n, &c->parent_server);
	for (uint64_t s = n->served[b]; s; s = at(n, s - 1)->s_next) {
		struct gs_nest_ent *p = at(n, s - 1);
		if (p->c.request_id == c->parent_request_id && ep_same(&p->c.server, &c->parent_server) &&
		    ep_same(&p->c.client, &c->parent_client))
			return p;
	}
	return NULL;
}

static void set_parent(struct gs_call *c, const struct gs_call *p)
{
	c->parent_client = p->client;
	c->parent_server = p->server;
	c->parent_request_id = p->request_id;
	c->parent_basis = GS_PARENT_TIME;
}

static void clear_parent(struct gs_call *c)
{
	memset(&c->parent_client, 0, sizeof c->parent_client);
	memset(&c->parent_server, 0, sizeof c->parent_server);
	c->parent_request_id = 0;
	c->parent_basis = GS_PARENT_NONE;
}

/* early: unordered, written by the bound before its hold passed (counted by the
 * caller): the calls seen enclosing it may not be all of them, so no parent by time. */
static void decide(struct gs_nest *n, struct gs_nest_ent *x, bool early)
{
	struct gs_nest_ent *p;
	int64_t end = call_end(&x->c);
	if (x->decided)
		return;
	x->decided = true;
	if (x->c.parent_basis == GS_PARENT_THREAD) {
		/* attach decided: kept; its interval still counts in the parent's downstream */
		if ((p = find_parent(n, &x->c)) != NULL && p != x && !give_span(n, p, x))
			n->n.early++;
		return;
	}
	x->c.parent_basis = GS_PARENT_NONE;
	if (end == NO_END || early)
		return; /* not answered: nothing encloses it; early: not all were seen */
	/* ordered: a call gone already (written early, or the input out of start order)
	 * might have enclosed it */
	if (n->ordered && end <= n->horizon) {
		n->n.early++;
		return;
	}
	if (x->ncand >= 2) {
		n->n.undecided++;
		return;
	}
	if (x->ncand == 0)
		return;
	if (!(p = held(n, x->cand))) {
		n->n.early++; /* its one enclosing call is gone: another may have been too */
		return;
	}
	if (!give_span(n, p, x)) {
		n->n.early++;
		return;
	}
	set_parent(&x->c, &p->c);
}

/* x came after y and encloses it (unordered arrival; ordered: a start equal to
 * y's, or input out of order): one more candidate for y.  Decided already: its
 * first enclosing call becomes its parent; a second takes a parent back. */
static void late_candidate(struct gs_nest *n, struct gs_nest_ent *y, uint64_t xseq)
{
	y->ncand++;
	y->cand = xseq;
	if (!y->decided)
		return;
	if (y->ncand == 1 && y->c.parent_basis == GS_PARENT_NONE && !y->revoked &&
	    call_end(&y->c) > n->horizon) {
		struct gs_nest_ent *p = held(n, xseq);
		if (p && give_span(n, p, y))
			set_parent(&y->c, &p->c);
		return;
	}
	if (y->ncand == 2 && y->c.parent_basis == GS_PARENT_NONE)
		n->n.undecided++; /* (named nothing: stays so) */
	if (y->c.parent_basis != GS_PARENT_TIME)
		return;
	if (y->my_span)
		n->span[y->my_span - 1].dead = true;
	y->my_span = 0;
	clear_parent(&y->c);
	y->revoked = true;
	n->n.undecided++;
}

/* ---- live: a second enclosing call after the parent was named ------------------------------ */

static void ghost_add(struct gs_nest *n, const struct gs_nest_ent *x)
{
	struct gs_nest_ghost *g = &n->ghost[n->ghost_next];
	n->ghost_next = (n->ghost_next + 1) % NEST_GHOSTS;
	if (g->mb < GS_NEST_BUCKETS)
		n->ghosts_in[g->mb]--;
	g->client = x->c.client;
	g->server = x->c.server;
	g->start = x->c.t_request_first;
	g->end = call_end(&x->c);
	g->mb = x->mb;
	g->counted = false;
	n->ghosts_in[g->mb]++;
}

/* p came: a call written with its parent (another call) that p encloses too was
 * named before all its enclosing calls had ended: counted, the row is out. */
static void ghost_check(struct gs_nest *n, const struct gs_call *p, uint32_t sb)
{
	if (!n->ghosts_in[sb])
		return;
	for (uint32_t i = 0; i < NEST_GHOSTS; i++) {
		struct gs_nest_ghost *g = &n->ghost[i];
		if (g->mb != sb || g->counted || p->t_request_last > g->start || g->end > p->t_reply_first ||
		    !host_same(n, &p->server, &g->client) || ep_same(&p->server, &g->server))
			continue;
		g->counted = true;
		n->n.late++;
	}
}

/* ---- writing ---------------------------------------------------------------------------- */

static void write_head(struct gs_nest *n, bool early)
{
	struct gs_nest_ent *x = at(n, n->head);
	if (early)
		n->n.early++;
	decide(n, x, early && !n->ordered);
	x->c.downstream_ns = 0;
	x->c.hold_ns = 0;
	if (x->spans)
		settle_spans(n, &x->c, x->spans);
	x->spans = 0;
	if (has_reply(&x->c) && x->c.t_reply_first > n->horizon)
		n->horizon = x->c.t_reply_first;
	unlink_ent(n, x);
	n->head++;
	if (x->c.parent_basis == GS_PARENT_TIME) {
		n->n.parent_time++;
		if (n->ghost)
			ghost_add(n, x);
	} else if (x->c.parent_basis == GS_PARENT_THREAD) {
		n->n.parent_thread++;
	}
	n->fn(n->arg, x->e, &x->c, x->has_t ? &n->times[(n->head - 1) & (n->cap - 1)] : NULL);
}

/* Writes the head while nothing more can change it. */
static void pump(struct gs_nest *n)
{
	while (n->head < n->tail) {
		struct gs_nest_ent *x = at(n, n->head);
		if (n->ordered) {
			/* a nested call begins before its parent's reply: a later start past it
			 * means none can come */
			if (has_reply(&x->c) && n->max_start <= x->c.t_reply_first)
				return;
		} else if (x->wait && n->clock - x->arrive < n->hold_ns &&
			   /* attach named its parent: it goes once that came (its interval to it) */
			   !(x->c.parent_basis == GS_PARENT_THREAD && find_parent(n, &x->c))) {
			return;
		}
		write_head(n, false);
	}
}

void gs_nest_add(struct gs_nest *n, const struct gs_engine *e, const struct gs_call *c,
		 const struct gs_call_times *t)
{
	struct gs_nest_ent *x;
	uint64_t seq;
	int64_t seen = c->t_done;
	if (n->tail - n->head == n->cap && !grow(n))
		write_head(n, true); /* the bound: the oldest goes undecided */
	seq = n->tail++;
	x = at(n, seq);
	x->c = *c;
	x->has_t = false;
	if (t && (n->times || (n->times = malloc((size_t)n->cap * sizeof *n->times)) != NULL)) {
		/* attach's instants: beside the ring, only for a source that has them */
		n->times[seq & (n->cap - 1)] = *t;
		x->has_t = true;
	}
	x->e = e;
	x->cand = 0;
	x->ncand = 0;
	x->spans = x->my_span = 0;
	x->decided = x->revoked = x->wait = false;
	if (seen < c->t_request_last)
		seen = c->t_request_last;
	if (has_reply(c) && seen < c->t_reply_last)
		seen = c->t_reply_last;
	if (seen > n->clock)
		n->clock = seen;
	x->arrive = n->clock;
	link_ent(n, seq);
	if (!n->ordered) {
		/* a call waits for a parent only where its host has served calls: a client's
		 * calls go on at once (a host's calls before its first served call ended: no
		 * parent, never a wrong one) */
		const struct gs_nest_server *sv = &n->servers[x->mb];
		struct gs_nest_server *mine = &n->servers[x->sb];
		x->wait = call_end(c) != NO_END &&
			  (c->parent_basis == GS_PARENT_THREAD || sv->seen == 2 ||
			   (sv->seen == 1 && !ep_same(&sv->ep, &c->server)));
		if (has_reply(c) && mine->seen < 2 && !(mine->seen == 1 && ep_same(&mine->ep, &c->server))) {
			mine->seen++;
			mine->ep = c->server;
		}
		if (has_reply(c))
			ghost_check(n, c, x->sb);
	}
	/* the calls held that its client's host serves and that enclose it */
	for (uint64_t s = n->served[x->mb]; s; s = at(n, s - 1)->s_next) {
		struct gs_nest_ent *p = at(n, s - 1);
		if (s - 1 != seq && encloses(n, &p->c, &x->c)) {
			x->ncand++;
			x->cand = s - 1;
		}
	}
	/* the calls held that its server's host made and that it encloses: they came
	 * first (unordered: children end first; ordered: the input went back in time) */
	if (has_reply(c) && (!n->ordered || c->t_request_first <= n->max_start)) {
		for (uint64_t s = n->made[x->sb]; s; s = at(n, s - 1)->m_next) {
			struct gs_nest_ent *y = at(n, s - 1);
			if (s - 1 != seq && y->c.parent_basis != GS_PARENT_THREAD && encloses(n, &x->c, &y->c))
				late_candidate(n, y, seq);
		}
	}
	if (c->t_request_first > n->max_start)
		n->max_start = c->t_request_first;
	if (n->tail - n->head > n->n.max_held)
		n->n.max_held = n->tail - n->head;
	if (n->ordered)
		decide(n, x, false);
	pump(n);
}

void gs_nest_tick(struct gs_nest *n, int64_t now_ns)
{
	if (now_ns > n->clock)
		n->clock = now_ns;
	if (!n->ordered)
		pump(n);
}

void gs_nest_own_addr(struct gs_nest *n, uint8_t family, const uint8_t *addr)
{
	if (!gs_host_addrs_add(&n->own, family, addr))
		return;
	/* a new address moves its calls to the host's bucket: rare (a few a capture) */
	memset(n->served, 0, GS_NEST_BUCKETS * sizeof *n->served);
	memset(n->made, 0, GS_NEST_BUCKETS * sizeof *n->made);
	for (uint64_t s = n->head; s < n->tail; s++)
		link_ent(n, s);
}

void gs_nest_flush(struct gs_nest *n)
{
	while (n->head < n->tail)
		write_head(n, false);
}
