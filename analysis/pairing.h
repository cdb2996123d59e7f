// SPDX-License-Identifier: BSD-2-Clause
/* Pairing (pairing.c): GIOP messages of a connection become calls.  Its state
 * is struct gs_pairing (the side tables it allocates, where the calls and the
 * evidence go) and, per direction, struct gs_pair_dir: the call the current
 * message belongs to, the GIOP 1.1 fragment chain, the message log of
 * fragmented messages, the retransmitted ranges held until their messages are
 * decoded, the open calls (calls.h) and the call answered last (evidence.h).
 * The framer's current message (struct gs_msg) is declared here, as pairing
 * reads it, and embedded in pairing's part at the offsets its lines need: the
 * framer writes it.  What pairing reads of reassembly comes as values. */
#ifndef GS_PAIRING_H
#define GS_PAIRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../decoders/giop/giop.h"
#include "calls.h"
#include "conn.h"
#include "counters.h"
#include "evidence.h"
#include "intern.h"

/* Retransmitted ranges remembered per direction while their bytes are held. */
#define GS_RTX_PENDING 256

struct gs_range {
	uint64_t off0, off1;
	int64_t ts;         /* when the retransmission came */
};

/* The framer's current message of a direction: its extent, the earliest and
 * the latest packet that brought a byte of it first (its t_first and
 * completion), its last two segments' times, the gap fills among its packets
 * and the longest wait for one (a gap, bytes the capture never had, moves none
 * of these), the head gathered across segments.  The direction's second line
 * and the start of its third (the framer writes it; flows.h, the lines). */
struct gs_msg {
	uint64_t start, end;     /* end valid once the 12-byte header is known */
	int64_t t_first;
	int64_t t_min, t_max;
	int64_t prev_seg_ts;     /* time of the previous segment */
	int64_t last_seg_ts;     /* time of its latest segment */
	/* line 3 */
	int64_t fill_wait;
	uint32_t head_len;       /* bytes gathered in the framer's head pool */
	uint32_t head_slot;      /* that pool's slot, GS_NONE when none */
	uint32_t fills;
	bool missing;            /* lost bytes in the capture */
	bool more_frags;         /* continues in a Fragment */
};

/* Pairing's part of a direction, from its second line (flows.h). */
struct gs_pair_dir {
	struct gs_msg msg;
	/* line 3: the current message's call, the open calls this way, a
	 * request's operation: with lines 1-2 all a whole-message packet touches
	 * this way */
	uint32_t msg_call;       /* call the current message belongs to, GS_NONE if none */
	uint32_t msg_serial;     /* ... and that call's serial, in case the slot was reused */
	uint32_t last_op;        /* interned operation of the last request: most repeat it */
	struct gs_calls_dir oc;  /* the open calls this way (calls.h) */
	/* messages of calls begun with the more-fragments flag whose last Fragment
	 * has not come: while there are any, every message goes to the log */
	uint32_t frag_open;
	uint16_t rtx_n;
	uint8_t msg_half;        /* 0 request side, 1 reply side */
	bool prev_fill_set;      /* prev_fill_* (below) hold the previous message's last fill */
	/* the end of line 3 and line 4: the call answered last, written at each
	 * reply by the queued evidence only (not by a lean engine) */
	struct gs_ev_dir ev;     /* evidence.h */

	/* the rest: the rare cases */
	/* retransmitted ranges whose messages are not decoded yet (bytes held out
	 * of order, or a head still being gathered): charged to the calls whose
	 * messages they overlap once a decoded message reaches their end */
	struct gs_range *rtx;    /* allocated on first use, at most GS_RTX_PENDING */
	struct gs_msglog *mlog;  /* allocated at the first fragmented message, or NULL */
	/* packet numbers of the current message's first and last fill (valid
	 * while msg.fills > 0; the framer writes them) */
	uint64_t msg_fill_first, msg_fill_last;
	/* the call and last fill packet of the previous message, when it had fills
	 * (prev_fill_set): a packet that fills bytes of two Fragments of one call
	 * counts once */
	uint32_t prev_fill_call, prev_fill_serial;
	uint64_t prev_fill_pkt;
	uint32_t frag_call;      /* GIOP 1.1: message that continues in the next Fragment */
	uint32_t frag_serial;
	uint8_t frag_half;
};

/* Pairing's state: where the calls and their evidence go, the side tables it
 * allocates (bounded: past the bound a direction goes without, and what that
 * costs is counted). */
struct gs_pairing {
	struct gs_calls *cs;
	struct gs_evidence *ev;
	struct gs_counters *cnt;
	struct gs_intern *strings;
	/* bytes from a direction's part to the other direction's (the flow table's
	 * layout, given once by the engine) */
	ptrdiff_t dir_stride;
	uint32_t side_max;       /* message logs, range lists: at most this many each */
	uint32_t mlogs;          /* message logs (struct gs_msglog) allocated */
	uint32_t rtx_lists;      /* directions holding a list of retransmitted ranges */
	/* True when the direction whose part is pd holds bytes captured at or
	 * before t that it has not delivered (held out of order, or a head still
	 * being gathered): the engine's, which sees every stage's part. */
	bool (*holds_before)(const void *arg, const struct gs_pair_dir *pd, int64_t t);
	const void *arg;
};

/* Direction d's part of a connection, given the other's. */
static inline struct gs_pair_dir *gs_pair_peer(const struct gs_pairing *p, struct gs_pair_dir *pd, int d)
{
	return (struct gs_pair_dir *)((char *)pd + (d ? -p->dir_stride : p->dir_stride));
}

/* A fresh direction (its connection's slot zeroed): nothing belongs to a call. */
static inline void gs_pair_dir_init(struct gs_pair_dir *pd)
{
	pd->msg.head_slot = GS_NONE;
	pd->msg_call = GS_NONE;
	pd->frag_call = GS_NONE;
}

/* The open call of (connection, direction, request id), or NULL.  The common
 * cases inline, without touching the index: nothing open this way, or the
 * latest request's call (a reply to it); else the index (calls.c).  pd is
 * direction dir's part of the connection c. */
static inline struct gs_ocall *gs_pair_open_find(struct gs_pairing *p, const struct gs_conn *c,
						 const struct gs_pair_dir *pd, int dir, uint32_t rid)
{
	struct gs_calls *cs = p->cs;
	if (pd->oc.open_n == 0)
		return NULL;
	if (pd->oc.last_call < cs->n_calls) {
		struct gs_ocall *o = &cs->calls[pd->oc.last_call];
		if (o->where == GS_CALL_OPEN && o->request_id == rid && o->flow == c->no &&
		    o->flow_gen == c->gen && o->dir == dir)
			return o;
	}
	return gs_call_open_probe(cs, c->no, c->gen, dir, rid);
}

/* A decoded message head of direction d (pd its part); seq_base is the TCP
 * sequence number of the direction's stream offset 0. */
void gs_pair_message(struct gs_pairing *p, struct gs_conn *c, struct gs_pair_dir *pd, int d,
		     const struct giop_msg *m, uint32_t seq_base);
/* The current message's last byte came at ts; the peer last acknowledged new
 * bytes of this direction at peer_ack_ts. */
void gs_pair_message_end(struct gs_pairing *p, struct gs_pair_dir *pd, int d, int64_t ts,
			 int64_t peer_ack_ts);
/* Retransmitted bytes [off0, off1) seen at ts whose message is not decoded yet:
 * charged once a decoded message reaches off1. */
void gs_pair_hold_retransmit(struct gs_pairing *p, struct gs_pair_dir *pd, uint64_t off0, uint64_t off1, int64_t ts);
void gs_pair_direction_closed(struct gs_pairing *p, struct gs_conn *c, struct gs_pair_dir *pd, int d);
void gs_pair_flow_ended(struct gs_pairing *p, struct gs_conn *c, struct gs_pair_dir *pd0, bool evicted);
void gs_pair_unpark(struct gs_pairing *p, struct gs_conn *c, int requester_dir);
/* The direction's side tables go back (its connection's slot is reset). */
void gs_pair_dir_free(struct gs_pairing *p, struct gs_pair_dir *pd);

#endif
