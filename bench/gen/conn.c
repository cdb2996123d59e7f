/* SPDX-License-Identifier: BSD-2-Clause */
/* The ORBs' side of a simulated connection: which call the client makes next and
 * when (up to `mux` outstanding, think times), when the server answers (service
 * times, so replies come back out of order), GIOP fragments written one by one,
 * cancels, the CloseConnection; and the choice of the connection's next event.
 * conn_tcp.c puts what they write on the wire. */
#include "conn_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ev { EV_NONE, EV_STATE, EV_TX, EV_RTX, EV_ACK, EV_CAPP, EV_SAPP };
/* what an application event does */
enum { APP_PARTIAL, APP_NEW, APP_CANCEL, APP_REPLY, APP_CLOSE_MSG };

#define BACKLOG_MAX (64u << 10)   /* an ORB blocks when its socket buffer is this full */

static void *grow(void *p, uint32_t *cap, size_t elem)
{
	*cap = *cap ? *cap * 2 : 16;
	p = realloc(p, *cap * elem);
	if (!p) {
		fputs("giopgen: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

/* ---------------------------------------------------------------- calls */
static uint32_t slot_alloc(struct conn *c)
{
	if (c->nfree)
		return c->free_slots[--c->nfree];
	if (c->ncalls == c->calls_cap) {
		/* free_slots never holds more than calls: same capacity */
		uint32_t cap = c->calls_cap;
		c->calls = grow(c->calls, &cap, sizeof *c->calls);
		cap = c->calls_cap;
		c->free_slots = grow(c->free_slots, &cap, sizeof *c->free_slots);
		c->calls_cap = cap;
	}
	return c->ncalls++;
}

static void slot_free(struct conn *c, uint32_t slot)
{
	c->calls[slot].state = CS_FREE;
	c->free_slots[c->nfree++] = slot;
}

static void push_u32(uint32_t **a, uint32_t *n, uint32_t *cap, uint32_t v)
{
	if (*n == *cap)
		*a = grow(*a, cap, sizeof **a);
	(*a)[(*n)++] = v;
}

static void fifo_push(struct side *s, uint64_t end, uint32_t slot)
{
	if (s->fcount == s->fcap) {
		uint32_t cap = (uint32_t)s->fcap;
		struct fifo_ent *n = malloc((cap ? cap * 2 : 16) * sizeof *n);
		if (!n) {
			fputs("giopgen: out of memory\n", stderr);
			exit(2);
		}
		for (size_t i = 0; i < s->fcount; i++)
			n[i] = s->fifo[(s->fhead + i) % s->fcap];
		free(s->fifo);
		s->fifo = n;
		s->fhead = 0;
		s->fcap = cap ? cap * 2 : 16;
	}
	s->fifo[(s->fhead + s->fcount++) % s->fcap] = (struct fifo_ent){end, slot};
}

static uint64_t think(struct gen *g, const struct conn *c)
{
	return (uint64_t)(rng_lognorm(&g->rng, c->p.think_us, 0.3) * US);
}

/* side i's message in `slot` has arrived whole at the other end */
void call_arrived(struct gen *g, struct conn *c, int i, uint32_t slot)
{
	struct call *k = &c->calls[slot];
	if (i == 1) {   /* a reply: the client thread is free again */
		slot_free(c, slot);
		c->outstanding--;
		if (!g->open_all)
			c->t_next_req = min64(c->t_next_req, g->now + think(g, c));
		return;
	}
	if (g->open_all && ++g->requests_sent == g->total_calls) {
		g->replies_open = true;
		g->flip = true;
	}
	if (g->no_replies && !k->oneway) {
		/* the server never answers: the client's thread gives up (as after a
		 * timeout) and goes on with its next call */
		g->n_unanswered++;
		slot_free(c, slot);
		c->outstanding--;
		if (!g->open_all)
			c->t_next_req = min64(c->t_next_req, g->now + think(g, c));
	} else if (k->oneway) {
		slot_free(c, slot);
		c->outstanding--;
		if (!g->open_all)
			c->t_next_req = min64(c->t_next_req, g->now + think(g, c) / 4);
	} else if (k->cancel) {
		k->state = CS_CANCEL_DUE;
		k->t = g->now + rng_range(&g->rng, 20 * US, 200 * US);
		push_u32(&c->cancels, &c->ncancels, &c->cancel_cap, slot);
	} else {
		k->state = CS_AT_SERVER;
		k->t += g->now;   /* k->t held the service time */
		push_u32(&c->ready, &c->nready, &c->ready_cap, slot);
	}
}

/* ---------------------------------------------------------------- messages */
static void next_piece(struct gen *g, struct conn *c, int i, struct partial *pt)
{
	struct side *s = &c->s[i];
	size_t before = s->out.len;
	bool more = giop_next_fragment(&s->out, pt->m.p, pt->m.len, &pt->off, c->p.frag, pt->rid);
	s->written += s->out.len - before;
	g->n_fragments++;
	if (more) {
		pt->t_next = g->now + rng_range(&g->rng, 2 * US, 12 * US);   /* marshalling */
	} else {
		fifo_push(s, s->written, pt->slot);
		pt->used = false;
		s->npart--;
	}
	tcp_kick(g, s);
}

/* the message in g->scratch goes out: whole, or as its first fragment */
static void send_msg(struct gen *g, struct conn *c, int i, uint32_t slot, uint32_t rid, bool fragmentable)
{
	struct side *s = &c->s[i];
	if (fragmentable && c->p.frag && g->scratch.len > c->p.frag) {
		struct partial *pt = s->part;
		while (pt->used)
			pt++;
		struct buf tmp = pt->m;
		pt->m = g->scratch;
		g->scratch = tmp;
		pt->off = 12;
		pt->rid = rid;
		pt->slot = slot;
		pt->used = true;
		s->npart++;
		g->n_fragmented++;
		next_piece(g, c, i, pt);
		return;
	}
	buf_put(&s->out, g->scratch.p, g->scratch.len);
	s->written += g->scratch.len;
	if (slot != UINT32_MAX)
		fifo_push(s, s->written, slot);
	tcp_kick(g, s);
}

static void new_request(struct gen *g, struct conn *c)
{
	struct call_plan pl;
	uint32_t slot = slot_alloc(c);
	struct call *k = &c->calls[slot];
	size_t keylen;
	const unsigned char *key = object_key(&c->p, rng_below(&g->rng, 3), &keylen);

	plan_call(&g->rng, &pl, g->open_all ? 0 : g->cancel);
	*k = (struct call){.rid = c->next_rid++, .kind = (uint8_t)pl.kind, .op = (uint8_t)pl.op,
			   .outcome = (uint8_t)pl.outcome, .state = CS_SENDING, .oneway = pl.oneway,
			   .cancel = pl.cancel, .n_rep = pl.n_rep, .sysex = pl.sysex,
			   .t = (uint64_t)(pl.svc_us * US)};
	c->calls_left--;
	c->outstanding++;
	g->by_minor[c->p.minor]++;
	struct msg_common m = {c->p.minor, c->p.cle, k->rid};
	g->scratch.len = 0;
	if (pl.kind == K_LOCATE) {
		g->n_locates++;
		giop_locate_request(&g->scratch, &m, key, keylen);
	} else {
		const struct op *o = &ops[pl.op];
		struct request_spec r = {m, !pl.oneway, key, keylen, o->name, c->p.contexts,
					 c->p.priority, o->req, pl.n_req, NULL};
		if (!c->first_sent && c->p.minor >= 1)
			r.contexts |= CTX_CODESETS;   /* code set negotiation, first request only */
		g->n_requests++;
		g->n_oneway += pl.oneway;
		g->n_cancel += pl.cancel;
		giop_request(&g->scratch, &r);
	}
	c->first_sent = true;
	send_msg(g, c, 0, slot, k->rid, pl.kind == K_REQUEST);
	if (g->open_all)
		c->t_next_req = g->now + rng_range(&g->rng, 1000, 3000);
	else if (c->p.mux > 1)
		c->t_next_req = g->now + (uint64_t)rng_exp(&g->rng, c->p.think_us * US / c->p.mux);
	else
		c->t_next_req = T_NEVER;   /* until the reply */
}

static void send_reply(struct gen *g, struct conn *c, uint32_t slot)
{
	struct call *k = &c->calls[slot];
	struct msg_common m = {c->p.minor, c->p.sle, k->rid};
	k->state = CS_REPLYING;
	g->scratch.len = 0;
	if (k->kind == K_LOCATE) {
		unsigned st = k->outcome == O_LOC_HERE ? 1 : k->outcome == O_LOC_UNKNOWN ? 0 : 2;
		giop_locate_reply(&g->scratch, &m, st);
	} else {
		const struct op *o = &ops[k->op];
		switch (k->outcome) {
		case O_USER_EX:
			g->n_user_ex++;
			giop_reply(&g->scratch, &m, 1, BODY_USER_EX, 0, o->ex_id);
			break;
		case O_SYSTEM_EX:
			g->n_sys_ex++;
			giop_reply(&g->scratch, &m, 2, BODY_SYS_EX, k->sysex, NULL);
			break;
		case O_FORWARD:
			g->n_forward++;
			giop_reply(&g->scratch, &m, 3, BODY_IOR, k->rid & 0xff, NULL);
			break;
		default:
			giop_reply(&g->scratch, &m, 0, o->rep, k->n_rep, NULL);
		}
	}
	send_msg(g, c, 1, slot, k->rid, k->kind == K_REQUEST);
	if (g->open_all)
		c->t_srv_next = g->now + rng_range(&g->rng, 1000, 4000);
}

static void send_cancel(struct gen *g, struct conn *c, uint32_t idx)
{
	uint32_t slot = c->cancels[idx];
	struct msg_common m = {c->p.minor, c->p.cle, c->calls[slot].rid};
	c->cancels[idx] = c->cancels[--c->ncancels];
	g->scratch.len = 0;
	giop_cancel(&g->scratch, &m);
	send_msg(g, c, 0, UINT32_MAX, 0, false);
	slot_free(c, slot);
	c->outstanding--;
	c->t_next_req = min64(c->t_next_req, g->now + think(g, c));
}

/* ---------------------------------------------------------------- choosing */
static bool closable(const struct gen *g, const struct conn *c)
{
	/* --open-all --no-replies: no connection closes before every request went out,
	 * so that every call is open at once */
	if (g->no_replies && g->open_all && !g->replies_open)
		return false;
	for (int i = 0; i < 2; i++)
		if (c->s[i].head != c->s[i].out.len || c->s[i].npart || c->s[i].rtx_len)
			return false;
	return !c->calls_left && !c->outstanding;
}

static size_t backlog(const struct side *s)
{
	return s->out.len - s->head;
}

/* earliest partial of side s, or T_NEVER */
static uint64_t partial_time(const struct side *s, uint32_t *which)
{
	uint64_t t = T_NEVER;
	for (uint32_t j = 0; j < MAX_PARTIAL; j++)
		if (s->part[j].used && s->part[j].t_next < t) {
			t = s->part[j].t_next;
			*which = j;
		}
	return t;
}

static uint64_t client_app(struct gen *g, const struct conn *c, int *what, uint32_t *arg)
{
	const struct side *s = &c->s[0];
	uint64_t t = partial_time(s, arg);
	*what = APP_PARTIAL;
	/* GIOP 1.1 Fragments belong to the previous message: nothing may come between */
	if ((c->p.minor < 2 && s->npart) || backlog(s) > BACKLOG_MAX)
		return t;
	for (uint32_t j = 0; j < c->ncancels; j++)
		if (c->calls[c->cancels[j]].t < t) {
			t = c->calls[c->cancels[j]].t;
			*what = APP_CANCEL;
			*arg = j;
		}
	uint32_t mux = g->open_all ? UINT32_MAX : c->p.mux;
	if (c->calls_left && c->outstanding < mux && s->npart < MAX_PARTIAL && c->t_next_req < t) {
		t = c->t_next_req;
		*what = APP_NEW;
	}
	return t;
}

static uint64_t server_app(struct gen *g, const struct conn *c, int *what, uint32_t *arg)
{
	const struct side *s = &c->s[1];
	uint64_t t = partial_time(s, arg);
	*what = APP_PARTIAL;
	if ((c->p.minor < 2 && s->npart) || backlog(s) > BACKLOG_MAX)
		return t;
	if (c->nready && s->npart < MAX_PARTIAL) {
		if (g->open_all) {
			if (g->replies_open && c->t_srv_next < t) {
				/* all at once: any of them, in no particular order */
				t = c->t_srv_next;
				*what = APP_REPLY;
				*arg = UINT32_MAX;
			}
		} else {
			for (uint32_t j = 0; j < c->nready; j++)
				if (c->calls[c->ready[j]].t < t) {
					t = c->calls[c->ready[j]].t;
					*what = APP_REPLY;
					*arg = j;
				}
		}
	}
	if (c->p.server_closes && !c->close_msg && closable(g, c) && c->t_last + 50 * US < t) {
		t = c->t_last + 50 * US;
		*what = APP_CLOSE_MSG;
	}
	return t;
}

static uint64_t pick(struct gen *g, const struct conn *c, enum ev *ev, int *side, int *what,
		     uint32_t *arg)
{
	uint64_t best = T_NEVER, t;
	int w;
	uint32_t a = 0;
	*ev = EV_NONE;
	if (c->state != ST_OPEN) {
		*ev = c->state == ST_DONE ? EV_NONE : EV_STATE;
		return c->t_state;
	}
	for (int i = 0; i < 2; i++) {
		const struct side *s = &c->s[i];
		if (s->t_tx < best)
			best = s->t_tx, *ev = EV_TX, *side = i;
		if (s->t_rtx < best)
			best = s->t_rtx, *ev = EV_RTX, *side = i;
		if (s->t_ack < best)
			best = s->t_ack, *ev = EV_ACK, *side = i;
	}
	if ((t = client_app(g, c, &w, &a)) < best)
		best = t, *ev = EV_CAPP, *side = 0, *what = w, *arg = a;
	if ((t = server_app(g, c, &w, &a)) < best)
		best = t, *ev = EV_SAPP, *side = 1, *what = w, *arg = a;
	if (best == T_NEVER && closable(g, c) && (c->close_msg || !c->p.server_closes)) {
		best = c->t_last + 30 * US;
		*ev = EV_STATE;
	}
	return best;
}

uint64_t conn_next(struct gen *g, struct conn *c)
{
	enum ev ev;
	int side, what;
	uint32_t arg;
	return pick(g, c, &ev, &side, &what, &arg);
}

/* ---------------------------------------------------------------- events */
void conn_step(struct gen *g, struct conn *c)
{
	enum ev ev;
	int side = 0, what = 0;
	uint32_t arg = 0;
	uint64_t t = pick(g, c, &ev, &side, &what, &arg);
	if (t > g->now)
		return;   /* nothing due after all: the scheduler asks again */
	c->t_last = g->now;
	switch (ev) {
	case EV_NONE:
		break;
	case EV_STATE:
		tcp_state(g, c);
		break;
	case EV_TX:
		tcp_tx(g, c, side);
		break;
	case EV_RTX:
		tcp_retransmit(g, c, side);
		break;
	case EV_ACK:
		tcp_emit(g, c, side, TH_ACK, tcp_seq_of(&c->s[side]), NULL, 0, 0);
		break;
	case EV_CAPP:
	case EV_SAPP:
		switch (what) {
		case APP_PARTIAL:
			next_piece(g, c, side, &c->s[side].part[arg]);
			break;
		case APP_NEW:
			new_request(g, c);
			break;
		case APP_CANCEL:
			send_cancel(g, c, arg);
			break;
		case APP_REPLY:
			if (arg == UINT32_MAX)
				arg = rng_below(&g->rng, c->nready);
			{
				uint32_t slot = c->ready[arg];
				c->ready[arg] = c->ready[--c->nready];
				send_reply(g, c, slot);
			}
			break;
		case APP_CLOSE_MSG:
			g->scratch.len = 0;
			giop_close_connection(&g->scratch, c->p.minor, c->p.sle);
			send_msg(g, c, 1, UINT32_MAX, 0, false);
			c->close_msg = true;
			g->n_close_msgs++;
			break;
		}
		break;
	}
}

void conn_init(struct gen *g, struct conn *c, uint64_t id, uint64_t calls, uint64_t t_start)
{
	memset(c, 0, sizeof *c);
	plan_conn(&g->rng, &c->p, g->v6_share);
	c->id = id;
	c->calls_left = calls;
	c->next_rid = rng_below(&g->rng, 4) == 0 ? 0 : rng_range(&g->rng, 1, 5000);
	c->state = ST_SYN;
	c->t_state = t_start;
	c->t_next_req = T_NEVER;
	c->t_srv_next = 0;
	if (g->no_close)
		c->p.server_closes = false;   /* no CloseConnection either */
	for (int i = 0; i < 2; i++) {
		struct side *s = &c->s[i];
		s->ep = i ? c->p.server : c->p.client;
		s->isn = (uint32_t)rng_u64(&g->rng);
		s->t_tx = s->t_ack = s->t_rtx = T_NEVER;
	}
	g->n_conns++;
}

void conn_free(struct conn *c)
{
	for (int i = 0; i < 2; i++) {
		buf_free(&c->s[i].out);
		for (int j = 0; j < MAX_PARTIAL; j++)
			buf_free(&c->s[i].part[j].m);
		free(c->s[i].fifo);
	}
	free(c->calls);
	free(c->free_slots);
	free(c->ready);
	free(c->cancels);
}
