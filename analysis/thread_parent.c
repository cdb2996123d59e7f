/* SPDX-License-Identifier: BSD-2-Clause */
#include "thread_parent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* probe window of both open-addressing tables */
#define PROBE 8

int gs_tparent_init(struct gs_tparent *p, uint32_t requests, uint32_t threads)
{
	memset(p, 0, sizeof *p);
	if (requests < 16 || (requests & (requests - 1)) || threads < 16 || (threads & (threads - 1)))
		return EINVAL;
	p->req = calloc(requests, sizeof *p->req);
	p->thr = calloc(threads, sizeof *p->thr);
	if (!p->req || !p->thr) {
		gs_tparent_free(p);
		return ENOMEM;
	}
	p->req_mask = requests - 1;
	p->thr_mask = threads - 1;
	p->next_serial = 1;
	return 0;
}

void gs_tparent_free(struct gs_tparent *p)
{
	free(p->req);
	free(p->thr);
	p->req = NULL;
	p->thr = NULL;
}

static bool same_ep(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	return a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, a->family == 6 ? 16 : 4) == 0;
}

/* splitmix64's finalizer: every input bit reaches the low bits the
 * tables index by */
static uint32_t mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (uint32_t)h;
}

static uint32_t req_hash(const struct gs_endpoint *c, const struct gs_endpoint *s, uint32_t rid)
{
	/* the ports and the id tell connections apart; the addresses' low
	 * bytes are mixed in for hosts that reuse ports */
	uint32_t ca, sa;
	memcpy(&ca, c->addr + (c->family == 6 ? 12 : 0), 4);
	memcpy(&sa, s->addr + (s->family == 6 ? 12 : 0), 4);
	return mix(((uint64_t)c->port << 48 | (uint64_t)s->port << 32 | rid) ^ ((uint64_t)ca << 17 ^ sa));
}

static struct gs_tpar_req *req_find(const struct gs_tparent *p, const struct gs_endpoint *c,
				    const struct gs_endpoint *s, uint32_t rid)
{
	uint32_t h = req_hash(c, s, rid);
	for (uint32_t i = 0; i < PROBE; i++) {
		struct gs_tpar_req *r = &p->req[(h + i) & p->req_mask];
		if (r->serial && r->rid == rid && same_ep(&r->client, c) && same_ep(&r->server, s))
			return r;
	}
	return NULL;
}

/* A slot for a new request: a free one of the window, else the answered one
 * read longest ago, else the one read longest ago (counted: it was open). */
static struct gs_tpar_req *req_slot(struct gs_tparent *p, uint32_t h)
{
	struct gs_tpar_req *old = NULL;
	for (uint32_t i = 0; i < PROBE; i++) {
		struct gs_tpar_req *r = &p->req[(h + i) & p->req_mask];
		if (!r->serial)
			return r;
		if (!old || (r->t_reply && !old->t_reply) ||
		    ((r->t_reply != 0) == (old->t_reply != 0) && r->t_read < old->t_read))
			old = r;
	}
	if (!old->t_reply)
		p->replaced_open++;
	return old;
}

static struct gs_tpar_thread *thr_find(const struct gs_tparent *p, uint32_t tid)
{
	uint32_t h = mix(tid);
	for (uint32_t i = 0; i < PROBE; i++) {
		struct gs_tpar_thread *t = &p->thr[(h + i) & p->thr_mask];
		if (t->tid == tid)
			return t;
	}
	return NULL;
}

static struct gs_tpar_thread *thr_get(struct gs_tparent *p, uint32_t tid)
{
	struct gs_tpar_thread *t = thr_find(p, tid), *old = NULL;
	uint32_t h = mix(tid);
	if (t)
		return t;
	for (uint32_t i = 0; i < PROBE; i++) {
		struct gs_tpar_thread *c = &p->thr[(h + i) & p->thr_mask];
		if (!c->tid) {
			old = c;
			break;
		}
		if (!old || c->last < old->last)
			old = c;
	}
	if (old->tid)
		p->threads_replaced++;
	memset(old, 0, sizeof *old);
	old->tid = tid;
	return old;
}

void gs_tparent_read(struct gs_tparent *p, const struct gs_endpoint *client, const struct gs_endpoint *server,
		     uint32_t rid, enum gs_tpar_kind kind, uint32_t tid, int64_t t)
{
	struct gs_tpar_req *r;
	struct gs_tpar_thread *th;
	uint32_t k;
	if (!tid)
		return; /* a read whose thread is not known decides nothing */
	p->reads++;
	r = req_find(p, client, server, rid);
	if (!r)
		r = req_slot(p, req_hash(client, server, rid));
	memset(r, 0, sizeof *r);
	r->client = *client;
	r->server = *server;
	r->rid = rid;
	r->tid = tid;
	r->kind = (uint8_t)kind;
	r->t_read = t;
	r->serial = p->next_serial++;
	if (!p->next_serial)
		p->next_serial = 1; /* 0 marks a free slot */
	th = thr_get(p, tid);
	k = th->n++ % GS_TPAR_PER_THREAD;
	th->read[k].t = t;
	th->read[k].slot = (uint32_t)(r - p->req);
	th->read[k].serial = r->serial;
	th->last = t;
}

bool gs_tparent_knows(const struct gs_tparent *p, uint32_t tid)
{
	return tid && thr_find(p, tid) != NULL;
}

void gs_tparent_replied(struct gs_tparent *p, const struct gs_endpoint *client, const struct gs_endpoint *server,
			uint32_t rid, int64_t t)
{
	struct gs_tpar_req *r = req_find(p, client, server, rid);
	if (r && !r->t_reply)
		r->t_reply = t;
}

static enum gs_tpar_verdict verdict(struct gs_tparent *p, enum gs_tpar_verdict v)
{
	p->verdicts[v]++;
	return v;
}

enum gs_tpar_verdict gs_tparent_decide(struct gs_tparent *p, uint32_t tid, int64_t t_send, enum gs_tpar_upcall upcall,
				       int64_t upcall_start, const struct gs_tpar_req **out)
{
	const struct gs_tpar_thread *th;
	const struct gs_tpar_req *best = NULL;
	bool running = upcall == GS_TPAR_UPCALL_RUNNING, tie = false, lost = false;
	/* the request must have been read before the upcall began (--orb), else
	 * before the send */
	int64_t bound = running ? upcall_start : t_send, best_t = 0;
	uint32_t n;
	*out = NULL;
	if (upcall == GS_TPAR_UPCALL_NONE)
		return verdict(p, GS_TPAR_TOP); /* sent outside any upcall */
	if (!tid)
		return verdict(p, GS_TPAR_UNKNOWN);
	th = thr_find(p, tid);
	if (!th) {
		/* a thread that read no request: an application's own thread, or
		 * (--orb) an upcall fed by another thread; unless it was replaced */
		if (p->threads_replaced)
			return verdict(p, GS_TPAR_UNKNOWN);
		return verdict(p, running ? GS_TPAR_NOT_READER : GS_TPAR_TOP);
	}
	n = th->n < GS_TPAR_PER_THREAD ? th->n : GS_TPAR_PER_THREAD;
	/* newest first (a thread's reads come in time order): the first at or
	 * before the bound, and whether the one before it was at the same
	 * instant (one recv, two requests) */
	for (uint32_t k = 0; k < n; k++) {
		const struct gs_tpar_read *x = &th->read[(th->n - 1 - k) % GS_TPAR_PER_THREAD];
		const struct gs_tpar_req *r = &p->req[x->slot];
		if (x->t > bound)
			continue;
		if (best) {
			tie = x->t == best_t;
			break;
		}
		/* a slot reused since: that request is gone; it was the one
		 * served then, so nothing can be said */
		if (r->serial != x->serial) {
			lost = true;
			break;
		}
		best = r;
		best_t = x->t;
	}
	if (lost)
		return verdict(p, GS_TPAR_UNKNOWN);
	if (!best) {
		/* every read kept came after: what came before was pushed out */
		if (th->n > GS_TPAR_PER_THREAD)
			return verdict(p, GS_TPAR_UNKNOWN);
		return verdict(p, running ? GS_TPAR_NOT_READER : GS_TPAR_TOP);
	}
	if (tie)
		return verdict(p, GS_TPAR_TIE);
	/* a LocateRequest runs no upcall: the thread served nothing a call is
	 * made for */
	if (best->kind == GS_TPAR_READ_LOCATE)
		return verdict(p, GS_TPAR_TOP);
	if (running) {
		/* the thread's last request was answered before the send: the
		 * upcall serves a request another thread read */
		if (best->t_reply && best->t_reply <= t_send)
			return verdict(p, GS_TPAR_NOT_READER);
	} else {
		if (best->t_reply && best->t_reply <= t_send)
			return verdict(p, GS_TPAR_TOP); /* answered: serving nothing */
		if (best->kind == GS_TPAR_READ_ONEWAY)
			return verdict(p, GS_TPAR_ONEWAY);
	}
	*out = best;
	return verdict(p, GS_TPAR_PARENT);
}

const char *gs_tparent_verdict_name(enum gs_tpar_verdict v)
{
	static const char *const names[GS_TPAR_VERDICTS] = {
		"named", "top-level", "thread or request no longer kept", "one recv read two requests",
		"serving a oneway (--orb decides)", "upcall on a thread that did not read its request",
	};
	return (unsigned)v < GS_TPAR_VERDICTS ? names[v] : "?";
}
