/* SPDX-License-Identifier: BSD-2-Clause */
/* From the ring buffer of the eBPF taps to the session: segment records
 * become gs_engine_segment() calls (metadata and message heads, the engine
 * frames and pairs as for a capture), syscall records are kept by sequence
 * number (attach_times), and each call the engine ends waits here, briefly,
 * for the syscall instants of the processes followed before it is written. */
#ifndef GS_ATTACH_FEED_H
#define GS_ATTACH_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ebpf/giop_tap.h"
#include "attach_parent.h"
#include "attach_times.h"
#include "session.h"

struct gs_pending;

struct gs_feed {
	struct gs_session *s;
	struct gs_times times;
	/* each call's parent by thread and receive-queue wait (cmd_attach sets
	 * nest.upcalls with --orb) */
	struct gs_aparent nest;
	int64_t mono_to_real;     /* CLOCK_MONOTONIC ns + this = wall-clock ns */
	int64_t wait_ns;          /* the longest a call waits for an instant */
	struct gs_pending *q;     /* calls waiting, oldest first (a ring) */
	uint32_t q_cap, q_head, q_n;
	uint32_t since_settle;    /* syscall records since the queue was last looked at */
	uint64_t polls;           /* polls of the ring (and sweeps of the watch table) ended */
	struct gs_piece pieces[GS_TAP_HEADS];
	/* attach --sched / --orb: the columns (GS_TIMES_COLS_*) and what fills
	 * them, called for each call just before it is written */
	uint8_t cols;
	void (*enrich)(void *arg, const struct gs_feed *f, const struct gs_call *c, struct gs_call_times *t);
	/* ... and for each syscall instant as it comes */
	void (*on_instant)(void *arg, struct gs_times_ev *ev);
	/* ... and whether a call whose instants are all there can be enriched
	 * yet (NULL: yes); a call not ready waits as for an instant */
	bool (*ready)(void *arg, const struct gs_feed *f, const struct gs_call *c, const struct gs_call_times *t);
	void *enrich_arg;
	/* what happened, for the closing report */
	uint64_t segments, syscalls, bad_records;
	uint64_t heads_lost_segments;  /* segments flagged GS_SEG_HEADS_LOST */
	uint64_t seg_more;             /* later records of segments shipped in several (GS_SEG_MORE) */
	uint64_t instants_missing;     /* calls written without an instant they waited for */
	uint64_t queue_full;           /* calls written early: the queue was full */
};

/* Takes over the session's ended calls.  0 or an errno value. */
int gs_feed_init(struct gs_feed *f, struct gs_session *s, uint32_t queue, int64_t wait_ns);
void gs_feed_free(struct gs_feed *f);
/* A ring-buffer record (a gs_attach_record_fn). */
void gs_feed_record(void *arg, const void *rec, size_t len);
/* A poll of the ring, and the sweep of the kernel's watch table after it,
 * ended: a call a followed server thread sent waits for two (its parent by
 * thread needs every read before its send). */
void gs_feed_polled(struct gs_feed *f);
/* Samples the offset between the monotonic clock of the records and the wall
 * clock of the output. */
void gs_feed_clock(struct gs_feed *f);
/* Writes the waiting calls whose instants are all there, or waited long
 * enough; `all`: every waiting call. */
void gs_feed_settle(struct gs_feed *f, bool all);

#endif
