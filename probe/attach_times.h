/* SPDX-License-Identifier: BSD-2-Clause */
/* The syscall instants of `giopscope attach`, kept per direction of each
 * connection until the calls they belong to end: sends (entry time, first
 * sequence number, the message the buffer starts with) and recvs (return time, sequence range returned).  A call
 * finds its instants by the TCP sequence numbers of its first and last bytes,
 * which is exact however the process splits or merges messages into syscalls.
 *
 * Bounded: a fixed table of directions (the oldest is replaced when a probe
 * window is full) with the last GS_TIMES_RING sends and recvs of each, and
 * apart from them the sends that handed over the first byte of the last
 * GS_TIMES_PINS messages (gs_times_pin_send) and the recvs that returned the
 * last byte of the last GS_TIMES_PINS whole messages (gs_times_expect_end): a
 * message written or read in more syscalls than the ring holds (omniORB
 * writes a 1.28 MB reply as 157 Fragments of 8 KiB, a send each), or behind
 * such a one of another thread on the same connection, still has its
 * instants when its call ends. */
#ifndef GS_ATTACH_TIMES_H
#define GS_ATTACH_TIMES_H

#include <stdbool.h>
#include <stdint.h>

#include "../analysis/call.h"

#define GS_TIMES_RING 64
#define GS_TIMES_PINS 16

struct gs_times_ev {
	uint32_t seq, len;        /* len 0: not known (a send by sendmsg/writev) */
	int64_t ts;               /* wall clock ns */
	uint32_t rid;             /* the GIOP message the buffer starts with, if it */
	uint32_t tid;             /* the thread that made the syscall (0: not known) */
	int64_t mono;             /* the record's own clock (CLOCK_MONOTONIC ns) */
	/* attach --sched: the thread's time per scheduler state up to the
	 * syscall (gs_tlog_cum), taken when the record came */
	bool has_cum;
	int64_t cum[4];           /* GS_TLOG_CUM (analysis/thread_log.h) */
	uint8_t type;             /* does (has_id): threads sending on one connection */
	bool has_id;              /* enter in one order and queue in another */
};

/* The requests whose read gs_times tells (on_read's kind). */
enum gs_times_req { GS_TREQ_NONE = 0, GS_TREQ_TWOWAY, GS_TREQ_ONEWAY, GS_TREQ_LOCATE };

/* What a syscall's buffer starts with, when that is a GIOP header. */
struct gs_times_id {
	bool has_id;
	uint8_t type;
	uint32_t rid;
};

/* What the lookups compare of an event, kept dense beside the rings (slot i
 * of send_key is send[i]'s): a lookup scans 64 of them, 1 KiB, instead of 64
 * events of 80 bytes, two cache lines each. */
struct gs_times_key {
	uint32_t seq, len;
	int64_t ts;
};

struct gs_times_dir {
	struct gs_endpoint src, dst;
	bool used;
	int64_t last_use;
	uint32_t n_send, n_recv;  /* events ever added (the rings keep the last ones) */
	struct gs_times_key send_key[GS_TIMES_RING];
	struct gs_times_key recv_key[GS_TIMES_RING];
	uint32_t send_rid[GS_TIMES_RING];
	uint16_t send_idt[GS_TIMES_RING]; /* has_id ? 0x100 | type : 0 */
	struct gs_times_ev send[GS_TIMES_RING];
	struct gs_times_ev recv[GS_TIMES_RING];
	/* the last bytes of whole messages whose recv is still to come
	 * (gs_times_expect_end; 0 in end_set: taken), and the recvs that
	 * returned them */
	uint32_t n_end, n_rpin;
	uint32_t end_seq[GS_TIMES_PINS];
	bool end_set[GS_TIMES_PINS];
	/* a Request's or LocateRequest's end (gs_times_expect_request): its
	 * id and enum gs_times_req; GS_TREQ_NONE: another message's */
	uint32_t end_rid[GS_TIMES_PINS];
	uint8_t end_req[GS_TIMES_PINS];
	struct gs_times_key rpin_key[GS_TIMES_PINS];
	struct gs_times_ev rpin[GS_TIMES_PINS];
	/* the sends that started the last messages (gs_times_pin_send) */
	uint32_t n_pin;
	struct gs_times_key pin_key[GS_TIMES_PINS];
	uint32_t pin_rid[GS_TIMES_PINS];
	uint16_t pin_idt[GS_TIMES_PINS];
	struct gs_times_ev pin[GS_TIMES_PINS];
};

struct gs_times {
	struct gs_times_dir *dirs;
	uint32_t mask;
	uint64_t replaced;        /* directions pushed out by newer ones */
	/* the recv just added, when it was pinned: its copy, and the event the
	 * caller may still complete (gs_times_repin) */
	struct gs_times_ev *pinned_from, *pinned_to;
	/* a followed thread's recv returned the last byte of a Request
	 * (gs_times_expect_request); NULL: nobody asks */
	void (*on_read)(void *arg, const struct gs_times_dir *d, uint32_t rid, uint8_t kind,
			const struct gs_times_ev *ev);
	void *read_arg;
};

/* `slots`: a power of two.  0 or an errno value. */
int gs_times_init(struct gs_times *t, uint32_t slots);
void gs_times_free(struct gs_times *t);
void gs_times_add(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
		  bool send, uint32_t seq, uint32_t len, int64_t ts, const struct gs_times_id *id);
/* The same, with the thread that made the syscall and the record's own time. */
struct gs_times_ev *gs_times_add_tid(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
				     bool send, uint32_t seq, uint32_t len, int64_t ts,
				     const struct gs_times_id *id, uint32_t tid, int64_t mono);
/* After the caller completed the event gs_times_add_tid returned (the
 * scheduler totals of attach --sched): the same in its pinned copy, if any. */
void gs_times_repin(struct gs_times *t);
/* The send (recv) of direction `d` made at `ts` (as returned by gs_times_send /
 * gs_times_recv); NULL if not kept. */
const struct gs_times_ev *gs_times_ev_at(const struct gs_times_dir *d, bool send, int64_t ts);
/* The message a buffer's first bytes start, if they hold enough of it. */
struct gs_times_id gs_times_id_of(const uint8_t *head, uint32_t len);
/* The direction src -> dst, or NULL if nothing was seen of it. */
const struct gs_times_dir *gs_times_dir(const struct gs_times *t, const struct gs_endpoint *src,
					const struct gs_endpoint *dst);
/* Entry time of the send that handed over the message of type `type` and
 * request id `rid` whose first byte is `seq`, at or before `not_after`; 0 if
 * none.  A send whose buffer starts with that very message wins; else the one
 * whose bytes hold `seq` and start closest before it (of equals, a send tried
 * again after EAGAIN, the latest). */
int64_t gs_times_send(const struct gs_times_dir *d, uint32_t seq, int64_t not_after, uint8_t type,
		      uint32_t rid);
/* A message (Request, Reply, LocateRequest, LocateReply) starts at byte `seq`
 * of direction src -> dst (the packet tap saw its header): the send that
 * holds that byte, if kept, is kept apart too, so that the later sends of a
 * long message cannot push it out before its call ends. */
void gs_times_pin_send(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
		       uint32_t seq);
/* A whole message (its last Fragment, if fragmented) ends at byte `last` of
 * direction src -> dst (the packet tap saw its header, which gives its size):
 * the recv that returns that byte, when it comes, is kept apart too. */
void gs_times_expect_end(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
			 uint32_t last);
/* The same for a Request or LocateRequest (id `rid`, `kind`) ending at byte `last`: the recv that
 * returns that byte is also told to on_read (the thread that read it).  The
 * direction is kept from now on even if no followed process received on it
 * yet (the first request of a connection comes before its first recv). */
void gs_times_expect_request(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
			     uint32_t last, uint32_t rid, enum gs_times_req kind);
/* Return time of the recv that returned byte `seq`; 0 if none. */
int64_t gs_times_recv(const struct gs_times_dir *d, uint32_t seq);

#endif
