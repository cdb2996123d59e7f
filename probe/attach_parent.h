/* SPDX-License-Identifier: BSD-2-Clause */
/* `giopscope attach`: what the syscall instants tell of a call besides its
 * four instants, set on the call before the sinks see it: its parent by
 * thread (analysis/thread_parent.h: the request the sending thread was
 * serving; with --orb, checked against the upcall running on it) and the
 * wait of its request in the server's socket receive queue (recvq_ns, from
 * the request's last byte reaching the host to the recv that returned it). */
#ifndef GS_ATTACH_PARENT_H
#define GS_ATTACH_PARENT_H

#include <stdio.h>

#include "../analysis/call.h"
#include "../analysis/sink_pairs.h"
#include "../analysis/thread_log.h"
#include "../analysis/thread_parent.h"
#include "attach_times.h"

struct gs_aparent {
	struct gs_tparent tp;
	const struct gs_tlog *upcalls;  /* attach --orb's log (NULL: no --orb) */
	uint64_t asked;                 /* calls whose sending thread was known */
};

/* 0 or an errno value. */
int gs_aparent_init(struct gs_aparent *a);
void gs_aparent_free(struct gs_aparent *a);
/* gs_times' on_read: a followed thread read a Request or LocateRequest. */
void gs_aparent_on_read(void *arg, const struct gs_times_dir *d, uint32_t rid, uint8_t kind,
			const struct gs_times_ev *ev);
/* Whether the call's parent must wait for the syscalls that may still sit in
 * the kernel's watch table (a recv waits there for a segment to carry it, or
 * for the reader's sweep after each poll): its sending thread has read
 * requests, and fewer than two polls ended since the call was queued
 * (`queued_poll`; `polls`: those ended so far). */
bool gs_aparent_wait(const struct gs_aparent *a, const struct gs_times *times, const struct gs_call *c,
		     const struct gs_call_times *t, uint64_t queued_poll, uint64_t polls);
/* A call about to be written, with its instants `t`: its reply ends the
 * serving of its request; its parent and receive-queue wait are found.
 * Returns `c` when nothing was found, else `own`, a copy with them set. */
const struct gs_call *gs_aparent_call(struct gs_aparent *a, const struct gs_times *times, const struct gs_call *c,
				      const struct gs_call_times *t, struct gs_call *own);
/* The closing report's line (nothing when no call was asked about). */
void gs_aparent_report(const struct gs_aparent *a, FILE *out);

#endif
