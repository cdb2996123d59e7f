/* SPDX-License-Identifier: BSD-2-Clause */
/* `giopscope attach`: the call a thread was serving when it sent a request,
 * the parent of a nested call by thread (parent_basis `thread`,
 * ../shared/pairs-csv.md).
 *
 * The feed tells this module every Request a followed thread read (the recv
 * that returned its last byte: the thread, the instant) and every reply sent
 * (the instant); a call sent by a thread then asks which request that thread
 * was serving at its send.  The thread that read a request is the one that
 * runs its upcall in omniORB, in thread-per-connection and thread-pool modes
 * alike (the pool's worker reads the request it is given, then dispatches
 * it); with `attach --orb` the upcall edges say whether the sending thread
 * was inside an upcall at all, and which one.  Where the evidence does not
 * decide (a thread of which nothing is kept, one recv that returned two
 * requests, a oneway without --orb, an upcall on a thread that did not read
 * its request) the answer says why and nothing is guessed.
 *
 * All instants are one clock (attach: the wall-clock ns of the calls' instants).
 * Bounded: requests in an open-addressing table keyed by their identity (the
 * oldest of a probe window is replaced: counted when it was still open), and
 * threads, each with its last GS_TPAR_PER_THREAD requests read (the one idle
 * longest is replaced: counted). */
#ifndef GS_THREAD_PARENT_H
#define GS_THREAD_PARENT_H

#include <stdbool.h>
#include <stdint.h>

#include "call.h"

/* a thread's reads kept: a call is decided when it is written, which can be
 * a few hundred ms after its send (attach waits for the instants of the calls
 * before it); a thread serving 1 ms calls reads that many meanwhile */
#define GS_TPAR_PER_THREAD 512

/* What a request read was. */
enum gs_tpar_kind {
	GS_TPAR_READ_TWOWAY = 0,
	GS_TPAR_READ_ONEWAY,      /* no reply ends its serving */
	GS_TPAR_READ_LOCATE,           /* a LocateRequest: the ORB answers it, no upcall; never a parent */
};

struct gs_tpar_req {
	struct gs_endpoint client, server;
	uint32_t rid;
	uint32_t tid;             /* the thread whose recv returned the request's last byte */
	uint32_t serial;          /* 0: free slot */
	uint8_t kind;             /* enum gs_tpar_kind */
	int64_t t_read;           /* that recv's return */
	int64_t t_reply;          /* the reply's send entered (0: not seen yet) */
};

struct gs_tpar_thread {
	uint32_t tid;             /* 0: free slot */
	uint32_t n;               /* requests ever read (the ring keeps the last ones) */
	int64_t last;             /* its last read, for replacing the idle longest */
	/* its reads in the order they came (so by time): when, where the
	 * request lies in `req`, and its serial while it is still that request */
	struct gs_tpar_read {
		int64_t t;
		uint32_t slot, serial;
	} read[GS_TPAR_PER_THREAD];
};

/* What gs_tparent_decide found. */
enum gs_tpar_verdict {
	GS_TPAR_PARENT = 0,       /* *out: the request the thread was serving */
	GS_TPAR_TOP,              /* the thread served nothing then: a top-level call */
	GS_TPAR_UNKNOWN,          /* nothing kept of the thread (replaced), or of its request */
	GS_TPAR_TIE,              /* one recv returned two requests: which one it served is not seen */
	GS_TPAR_ONEWAY,           /* serving a oneway, whose end no reply marks (decided with --orb) */
	GS_TPAR_NOT_READER,       /* --orb: an upcall ran on a thread that did not read its request */
	GS_TPAR_VERDICTS
};

/* The upcall edges of the sending thread at its send (attach --orb). */
enum gs_tpar_upcall {
	GS_TPAR_UPCALL_UNKNOWN = -1,  /* no --orb, or its log does not tell */
	GS_TPAR_UPCALL_NONE = 0,      /* no upcall was running on the thread */
	GS_TPAR_UPCALL_RUNNING = 1,   /* one was, started at upcall_start */
};

struct gs_tparent {
	struct gs_tpar_req *req;
	uint32_t req_mask;
	struct gs_tpar_thread *thr;
	uint32_t thr_mask;
	uint32_t next_serial;
	/* what happened, for the closing report */
	uint64_t reads;           /* requests read by a followed thread */
	uint64_t replaced_open;   /* requests pushed out before their reply was seen */
	uint64_t threads_replaced;
	uint64_t verdicts[GS_TPAR_VERDICTS];
};

/* `requests`, `threads`: powers of two, at least 16.  0 or an errno value. */
int gs_tparent_init(struct gs_tparent *p, uint32_t requests, uint32_t threads);
/* (threads' logs are allocated as threads are first seen; `threads` of them at most) */
void gs_tparent_free(struct gs_tparent *p);
/* Thread `tid`'s recv returned the last byte of request `rid` sent by `client`
 * to `server`, at `t`. */
void gs_tparent_read(struct gs_tparent *p, const struct gs_endpoint *client, const struct gs_endpoint *server,
		     uint32_t rid, enum gs_tpar_kind kind, uint32_t tid, int64_t t);
/* Whether thread `tid` has read a request (of those kept). */
bool gs_tparent_knows(const struct gs_tparent *p, uint32_t tid);
/* The reply to that request was sent at `t` (the send's entry). */
void gs_tparent_replied(struct gs_tparent *p, const struct gs_endpoint *client, const struct gs_endpoint *server,
			uint32_t rid, int64_t t);
/* Thread `tid` entered the send of a request at `t_send`: the request it was
 * serving then (*out, valid until the next read), or why none is named.
 * `upcall`: what --orb's edges say of the thread at t_send (upcall_start: the
 * running upcall's start).  Counted in verdicts[]. */
enum gs_tpar_verdict gs_tparent_decide(struct gs_tparent *p, uint32_t tid, int64_t t_send, enum gs_tpar_upcall upcall,
				       int64_t upcall_start, const struct gs_tpar_req **out);
/* The verdict's name for the closing report. */
const char *gs_tparent_verdict_name(enum gs_tpar_verdict v);

#endif
