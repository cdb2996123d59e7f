/* SPDX-License-Identifier: BSD-2-Clause */
/* One TCP connection between a client ORB and a server ORB, simulated as a
 * sequence of timed events: handshake, requests and replies (possibly in GIOP
 * fragments, several outstanding, answered out of order), segments of at most one
 * MSS, delayed and immediate ACKs, losses seen as retransmissions, and the close. */
#ifndef GEN_CONN_H
#define GEN_CONN_H

#include "gen.h"
#include "workload.h"

enum call_state { CS_FREE, CS_SENDING, CS_AT_SERVER, CS_CANCEL_DUE, CS_REPLYING };

struct call {
	uint32_t rid;
	uint8_t kind, op, outcome, state;
	bool oneway, cancel;
	uint32_t n_rep, sysex;
	uint64_t t;             /* when the reply (or the CancelRequest) is due */
};

/* a message going out in fragments: the whole of it, and how far it got */
struct partial {
	struct buf m;
	size_t off;
	uint32_t rid, slot;
	uint64_t t_next;
	bool used;
};

#define MAX_PARTIAL 4

struct fifo_ent {
	uint64_t end;           /* stream offset just past the message's last byte */
	uint32_t slot;
};

/* one direction: 0 client to server, 1 server to client */
struct side {
	struct endpoint ep;
	struct buf out;         /* written by the ORB, not yet sent: out.p[head, len) */
	size_t head;
	uint64_t written, sent; /* stream offsets */
	uint32_t isn;
	bool syn_sent, fin_sent;
	uint64_t t_tx;          /* next segment */
	uint64_t t_ack;         /* a pure ACK this side owes the other */
	unsigned unacked;
	uint64_t t_rtx;         /* retransmission of a lost segment */
	uint8_t rtx[1500];
	size_t rtx_len;
	uint64_t rtx_off;
	struct partial part[MAX_PARTIAL];
	unsigned npart;
	struct fifo_ent *fifo;  /* messages in write order, to see when each has gone */
	size_t fhead, fcount, fcap;
};

enum conn_state { ST_SYN, ST_SYNACK, ST_ACK, ST_OPEN, ST_FIN2, ST_LASTACK, ST_DONE };

struct conn {
	struct conn_params p;
	struct side s[2];
	enum conn_state state;
	uint64_t t_state, t_last;
	uint64_t calls_left;
	uint32_t next_rid, outstanding;
	uint64_t t_next_req, t_srv_next;
	bool first_sent, close_msg;
	struct call *calls;
	uint32_t ncalls, calls_cap, *free_slots, nfree;
	uint32_t *ready, nready, ready_cap;     /* at the server, reply not begun */
	uint32_t *cancels, ncancels, cancel_cap;
	uint64_t key;                           /* scheduler */
	uint64_t id;
};

void conn_init(struct gen *g, struct conn *c, uint64_t id, uint64_t calls, uint64_t t_start);
/* time of the connection's next event (T_NEVER once closed) */
uint64_t conn_next(struct gen *g, struct conn *c);
/* performs the event due at g->now */
void conn_step(struct gen *g, struct conn *c);
void conn_free(struct conn *c);

#endif
