/* SPDX-License-Identifier: BSD-2-Clause */
/* The TCP side of a simulated connection: segments of at most one MSS with the
 * right sequence and acknowledgement numbers, delayed and immediate ACKs, a lost
 * segment seen as a retransmission (the receiver repeats its ACK until then), and
 * the handshake and close. conn.c decides what the ORBs write; this sends it. */
#include "conn_impl.h"

#include <string.h>

/* what side i acknowledges of the other: everything it sent, except what is
 * lost and not yet retransmitted (then the ACKs are duplicates) */
static uint32_t ack_of(const struct conn *c, int i)
{
	const struct side *p = &c->s[!i];
	if (!p->syn_sent)
		return 0;
	return p->isn + 1 + (uint32_t)(p->rtx_len ? p->rtx_off : p->sent) + p->fin_sent;
}

uint32_t tcp_seq_of(const struct side *s)
{
	return s->isn + 1 + (uint32_t)s->sent + s->fin_sent;
}

void tcp_emit(struct gen *g, struct conn *c, int i, uint8_t flags, uint32_t seq,
		 const uint8_t *p, size_t n, uint16_t mss)
{
	struct side *s = &c->s[i];
	pcap_out_tcp(&g->out, g->now, &s->ep, &c->s[!i].ep, seq, ack_of(c, i), flags, p, n, mss);
	if (flags & TH_ACK) {
		s->unacked = 0;
		s->t_ack = T_NEVER;
	}
}

/* the receiver acks every second segment at once, a lone one after a delay
 * (unless a reply takes the ACK along first) */
static void received(struct gen *g, struct side *r)
{
	if (++r->unacked >= 2)
		r->t_ack = min64(r->t_ack, g->now + rng_range(&g->rng, 2000, 8000));
	else if (r->t_ack == T_NEVER)
		r->t_ack = g->now + rng_range(&g->rng, 20 * US, 40 * US);
}

static uint64_t delivered(const struct side *s)
{
	return s->rtx_len ? s->rtx_off : s->sent;
}

static void pop_arrived(struct gen *g, struct conn *c, int i)
{
	struct side *s = &c->s[i];
	while (s->fcount && s->fifo[s->fhead].end <= delivered(s)) {
		uint32_t slot = s->fifo[s->fhead].slot;
		s->fhead = (s->fhead + 1) % s->fcap;
		s->fcount--;
		call_arrived(g, c, i, slot);
	}
}

void tcp_tx(struct gen *g, struct conn *c, int i)
{
	struct side *s = &c->s[i];
	size_t avail = s->out.len - s->head, n = avail < mss_of(c) ? avail : mss_of(c);
	const uint8_t *p = s->out.p + s->head;

	tcp_emit(g, c, i, TH_ACK | (n == avail ? TH_PSH : 0), tcp_seq_of(s), p, n, 0);
	if (g->retransmit > 0 && !s->rtx_len && rng_chance(&g->rng, g->retransmit)) {
		/* lost after the tap: the receiver holds later bytes and repeats its ACK
		 * until the sender (fast retransmit or RTO) sends it again */
		memcpy(s->rtx, p, n);
		s->rtx_len = n;
		s->rtx_off = s->sent;
		s->t_rtx = g->now + rng_range(&g->rng, 60 * US, 400 * US);
		g->n_rtx++;
	}
	s->head += n;
	s->sent += n;
	if (s->head == s->out.len) {
		s->head = s->out.len = 0;
		s->t_tx = T_NEVER;
	} else {
		/* 10 Gb/s on the wire plus a little jitter */
		s->t_tx = g->now + (n + 78) * 8 / 10 + rng_below(&g->rng, 300);
	}
	received(g, &c->s[!i]);
	pop_arrived(g, c, i);
}

void tcp_retransmit(struct gen *g, struct conn *c, int i)
{
	struct side *s = &c->s[i];
	size_t n = s->rtx_len;
	s->rtx_len = 0;   /* first, so that this segment carries the current ACK state */
	tcp_emit(g, c, i, TH_ACK | TH_PSH, s->isn + 1 + (uint32_t)s->rtx_off, s->rtx, n, 0);
	s->t_rtx = T_NEVER;
	c->s[!i].t_ack = min64(c->s[!i].t_ack, g->now + rng_range(&g->rng, 2000, 6000));
	pop_arrived(g, c, i);
}

void tcp_kick(struct gen *g, struct side *s)
{
	if (s->t_tx == T_NEVER)
		s->t_tx = g->now + rng_range(&g->rng, 500, 3000);   /* through the stack */
}

void tcp_state(struct gen *g, struct conn *c)
{
	int closer = c->p.server_closes ? 1 : 0;
	struct side *cl = &c->s[0], *sv = &c->s[1];
	switch (c->state) {
	case ST_SYN:
		tcp_emit(g, c, 0, TH_SYN, cl->isn, NULL, 0, mss_of(c));
		cl->syn_sent = true;
		c->state = ST_SYNACK;
		c->t_state = g->now + rng_range(&g->rng, 5 * US, 15 * US);
		break;
	case ST_SYNACK:
		tcp_emit(g, c, 1, TH_SYN | TH_ACK, sv->isn, NULL, 0, mss_of(c));
		sv->syn_sent = true;
		c->state = ST_ACK;
		c->t_state = g->now + rng_range(&g->rng, 30 * US, 80 * US);
		break;
	case ST_ACK:
		tcp_emit(g, c, 0, TH_ACK, tcp_seq_of(cl), NULL, 0, 0);
		c->state = ST_OPEN;
		c->t_next_req = g->now + rng_range(&g->rng, 1 * US, 30 * US);
		break;
	case ST_OPEN:   /* everything said: the closer sends its FIN */
		if (g->no_close) {
			/* --no-close: both ends go quiet, the connection is never closed */
			g->n_left_open++;
			c->state = ST_DONE;
			c->t_state = T_NEVER;
			break;
		}
		tcp_emit(g, c, closer, TH_FIN | TH_ACK, tcp_seq_of(&c->s[closer]), NULL, 0, 0);
		c->s[closer].fin_sent = true;
		c->state = ST_FIN2;
		c->t_state = g->now + rng_range(&g->rng, 10 * US, 40 * US);
		break;
	case ST_FIN2:
		tcp_emit(g, c, !closer, TH_FIN | TH_ACK, tcp_seq_of(&c->s[!closer]), NULL, 0, 0);
		c->s[!closer].fin_sent = true;
		c->state = ST_LASTACK;
		c->t_state = g->now + rng_range(&g->rng, 30 * US, 80 * US);
		break;
	case ST_LASTACK:
		tcp_emit(g, c, closer, TH_ACK, tcp_seq_of(&c->s[closer]), NULL, 0, 0);
		c->state = ST_DONE;
		c->t_state = T_NEVER;
		break;
	case ST_DONE:
		break;
	}
}
