/* SPDX-License-Identifier: BSD-2-Clause */
/* What conn.c (the ORBs' side) and conn_tcp.c (the TCP side) share. */
#ifndef GEN_CONN_IMPL_H
#define GEN_CONN_IMPL_H

#include "conn.h"

#define US 1000ull

static inline uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint16_t mss_of(const struct conn *c)
{
	return c->p.client.v6 ? 1440 : 1460;
}

/* conn_tcp.c */
uint32_t tcp_seq_of(const struct side *s);
void tcp_emit(struct gen *g, struct conn *c, int i, uint8_t flags, uint32_t seq,
	      const uint8_t *p, size_t n, uint16_t mss);
void tcp_tx(struct gen *g, struct conn *c, int i);        /* the next segment of side i */
void tcp_retransmit(struct gen *g, struct conn *c, int i);
void tcp_kick(struct gen *g, struct side *s);             /* data written: send it soon */
void tcp_state(struct gen *g, struct conn *c);            /* handshake and close steps */

/* conn.c: side i's message in `slot` has arrived whole at the other end */
void call_arrived(struct gen *g, struct conn *c, int i, uint32_t slot);

#endif
