// SPDX-License-Identifier: BSD-2-Clause
/* The GIOP framer (framer.c): cuts one direction's in-order bytes into GIOP
 * messages and hands pairing each decoded head and each message's end.  Its
 * state is struct gs_framer (the pool of heads that span segments, where the
 * first malformed and truncated messages are noted) and, per direction, the
 * framing state on the direction's first line (struct gs_frame_flags, which
 * every packet reads) and struct gs_framer_dir: pairing's part, whose current
 * message (struct gs_msg, pairing.h) the framer writes, and its own search
 * for a header. */
#ifndef GS_FRAMER_H
#define GS_FRAMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "counters.h"
#include "pairing.h"
#include "problems.h"

enum gs_frame_state {
	GS_FR_SYNC = 0,  /* at a message boundary */
	GS_FR_MSG,       /* inside a message */
	GS_FR_LOST,      /* framing lost: looking for the next GIOP header */
	GS_FR_NOT_GIOP,  /* this connection does not carry GIOP */
};

/* On the direction's first line: whether it holds back output depends on them. */
struct gs_frame_flags {
	uint8_t fstate;          /* enum gs_frame_state */
	bool decoded;            /* current message's head decoded (or given up) */
};

struct gs_framer_dir {
	struct gs_pair_dir pr;   /* pairing.h, with the current message */
	uint64_t scanned;        /* bytes searched for a header without finding one */
};

/* Where a chunk of in-order bytes came from (reassembly -> framer), and what
 * the framer and pairing read of the direction's reassembly. */
struct gs_src {
	int64_t ts;         /* capture time of the packet that brought them first */
	uint64_t packet;    /* that packet's number */
	int64_t fill_wait;  /* >= 0: the packet filled a gap, this long after the
	                     * earliest byte above the gap had arrived; -1: not a fill */
	int64_t peer_ack_ts; /* when the peer last acknowledged new bytes this way */
	uint32_t seq_base;  /* TCP sequence number of stream offset 0 */
	bool syn_seen;      /* the capture saw the direction open */
};

struct gs_framer {
	struct gs_pairing *pr;      /* where decoded messages go */
	struct gs_counters *cnt;
	const uint64_t *packet_no;  /* the engine's packet number, for the problems */
	struct gs_problem *first_malformed, *first_truncated;
	/* heads that span segments, head_max bytes a slot */
	uint8_t *head_pool;
	uint32_t *head_free;
	uint32_t head_free_n, head_slots;
	uint32_t head_max, max_message_size;
	bool heads_only;            /* the tap ships message heads only (on purpose) */
	ptrdiff_t dir_stride;       /* bytes from a direction's parts to the other's */
};

/* The pool: `slots` heads of `head_max` bytes (address space: table_mem.h).
 * Returns 0 or ENOMEM; gs_framer_free gives it back (also after a failure). */
int gs_framer_init(struct gs_framer *fm, uint32_t slots, uint32_t head_max);
void gs_framer_free(struct gs_framer *fm);

/* In-order bytes of direction d (fs, fd its parts) at stream offset off;
 * data holds `cap` of `len` bytes (NULL: a gap, bytes the capture never had). */
void gs_framer_bytes(struct gs_framer *fm, struct gs_conn *c, struct gs_frame_flags *fs, struct gs_framer_dir *fd,
		     int d, uint64_t off, const uint8_t *data, uint32_t cap, uint32_t len, const struct gs_src *src);
/* The direction's head slot goes back to the pool. */
void gs_framer_release(struct gs_framer *fm, struct gs_framer_dir *fd);

#endif
