// SPDX-License-Identifier: BSD-2-Clause
/* TCP reassembly (reasm.c): one direction's segments become in-order bytes
 * for the framer.  Its state is struct gs_reasm (the bound on held bytes in
 * all, and what it hands on to) and, per direction, struct gs_reasm_dir: the
 * sequence space, the peer's ACK, what is held out of order, the FIN.  A
 * direction's part holds the framer's (framer.h), which holds pairing's, each
 * on the 64-byte lines its fields are used on (flows.h). */
#ifndef GS_REASM_H
#define GS_REASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../decoders/packet.h"
#include "conn.h"
#include "counters.h"
#include "evidence.h"
#include "framer.h"
#include "pairing.h"

/* An out-of-order segment held until the bytes before it arrive. */
struct gs_ooo {
	struct gs_ooo *next;
	uint64_t off;       /* stream offset of the first byte */
	uint32_t len;       /* wire bytes */
	uint32_t cap;       /* captured bytes stored in data[] */
	int64_t ts;
	uint64_t packet;
	/* it brought bytes below the highest byte seen then (lost or reordered
	 * before the tap), and how long after the earliest held byte above it */
	int64_t fill_wait;  /* -1: not a gap fill */
	uint8_t data[];
};

/* One direction: its first line is what every packet reads or writes
 * (reassembly's offsets, the peer's ACK, the held/awaited test); then what
 * each message uses (the framer's part, which holds pairing's); the rest is
 * for the rare cases. */
struct gs_reasm_dir {
	/* line 1 */
	uint32_t base_seq;       /* sequence number of stream offset 0 */
	bool started;            /* base_seq is known */
	bool syn_seen;
	bool fin_seen;
	bool fin_done;           /* every byte before the FIN was delivered */
	/* on the engine's pending list: the engine keeps it, here because every
	 * packet reads it with the rest of this line */
	bool pending;
	struct gs_frame_flags fs; /* the framer's state (framer.h) */
	uint64_t next;           /* stream offset of the next byte expected */
	uint64_t ack_max;        /* highest offset the peer acknowledged at all */
	int64_t acked_ts;        /* when the peer first acknowledged bytes we lack; 0: none */
	struct gs_ooo *ooo;
	int64_t peer_ack_ts;     /* when the peer last acknowledged new bytes of this direction */
	int64_t zero_window_ts;  /* this direction's receiver advertised 0 since then; 0: not
	                          * (read at every packet the other way) */
	/* line 2, with the framer's current message */
	uint64_t high;           /* stream offset one past the highest byte seen (held included) */
	struct gs_framer_dir fr; /* framer.h */
	/* the rest */
	uint64_t acked;          /* highest offset the peer acknowledged, when past `next`
	                          * (read only while acked_ts is set) */
	uint32_t ooo_bytes;
	uint64_t fin_off;
};

struct gs_reasm {
	struct gs_framer *fm;       /* where in-order bytes go */
	struct gs_pairing *pr;      /* a direction's end, retransmissions held for later */
	struct gs_evidence *ev;     /* retransmissions, zero windows */
	struct gs_counters *cnt;
	const int64_t *now;         /* the engine's capture clock */
	const uint64_t *packet_no;  /* the engine's packet number */
	uint64_t ooo_total;         /* bytes held out of order, in all */
	uint64_t max_ooo_total;
	uint32_t max_ooo_bytes;     /* ... and per direction */
	ptrdiff_t dir_stride;       /* bytes from a direction's part to the other's */
};

/* A fresh direction (its connection's slot zeroed). */
static inline void gs_reasm_dir_init(struct gs_reasm_dir *rd)
{
	gs_pair_dir_init(&rd->fr.pr);
}

/* The stream offset of sequence number `seq` (64-bit: wrap-around is handled here). */
static inline int64_t gs_stream_off(const struct gs_reasm_dir *dr, uint32_t seq)
{
	uint32_t expect = dr->base_seq + (uint32_t)dr->next;
	return (int64_t)dr->next + (int32_t)(seq - expect);
}

/* A hole the peer acknowledged is declared lost after this long (the wait
 * absorbs capture reordering: the missing segment may just come later). */
#define GS_ACK_GAP_GRACE_NS (10 * 1000 * 1000LL)
/* Held out-of-order data with no such evidence waits this long for the hole. */
#define GS_REORDER_TIMEOUT_NS (1000 * 1000 * 1000LL)

/* The peer of direction rd acknowledged `ack`.  Past what we have, it is
 * evidence the capture missed bytes; the hole is declared only after a grace
 * period (gs_reasm_expire), as a capture may list a segment after the ACK
 * that covers it.  Inline: every packet but a few carries an ACK. */
static inline void gs_reasm_ack(const struct gs_reasm *rs, struct gs_reasm_dir *rd, uint32_t ack)
{
	int64_t acked;
	if (!rd->started)
		return;
	acked = gs_stream_off(rd, ack);
	if (acked > (int64_t)rd->ack_max && acked <= (int64_t)rd->next + 1) {
		rd->ack_max = (uint64_t)acked;
		rd->peer_ack_ts = *rs->now;
	}
	if (acked <= (int64_t)rd->next)
		return;
	if (rd->fin_seen && (uint64_t)acked > rd->fin_off)
		acked = (int64_t)rd->fin_off;
	if ((uint64_t)acked <= rd->next)
		return;
	/* one past everything we have, nothing held: the ACK of a FIN we missed */
	if ((uint64_t)acked == rd->next + 1 && !rd->ooo && !rd->fin_seen)
		return;
	if (rd->acked_ts == 0 || (uint64_t)acked > rd->acked) {
		if (rd->acked_ts == 0)
			rd->acked_ts = *rs->now;
		if ((uint64_t)acked > rd->acked)
			rd->acked = (uint64_t)acked;
	}
}

/* A segment of direction d (rd its part) of connection c. */
void gs_reasm_segment(struct gs_reasm *rs, struct gs_conn *c, struct gs_reasm_dir *rd, int d,
		      const struct gs_packet *pk);
/* A segment of which only the pieces pc[0..n) were captured (gs_engine_segment). */
void gs_reasm_pieces(struct gs_reasm *rs, struct gs_conn *c, struct gs_reasm_dir *rd, int d,
		     const struct gs_packet *pk, const struct gs_piece *pc, uint32_t n);
/* End of input or of the connection: what is held goes in, across the holes. */
void gs_reasm_flush(struct gs_reasm *rs, struct gs_conn *c, struct gs_reasm_dir *rd, int d);
/* Gives up on holes acknowledged or waited for long enough (at the engine's now). */
void gs_reasm_expire(struct gs_reasm *rs, struct gs_conn *c, struct gs_reasm_dir *rd, int d);
/* The direction's held bytes and side tables go back. */
void gs_reasm_free(struct gs_reasm *rs, struct gs_reasm_dir *rd);

#endif
