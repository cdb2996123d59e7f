/* SPDX-License-Identifier: BSD-2-Clause */
/* IIOP over TLS for `giopscope attach`: uprobes on the plaintext boundary of
 * the OpenSSL 3 library a followed process maps (ebpf/tls.bpf.c), and the
 * turning of their records into what the packet tap would have shipped had
 * the connection carried plaintext.
 *
 * The TLS records share the packet tap's ring buffer.  gs_tls_feed_record is
 * the ring's record function: a TLS record becomes, for its connection, a
 * segment of the plaintext stream (sequence numbers of our own: the
 * plaintext offset) with the GIOP heads at their offsets, timed by the TCP
 * send or receive of the ciphertext made inside the TLS call, and a send or
 * recv event at the TLS call's own instant (t1/t5 at SSL_write's entry,
 * t4/t8 at SSL_read's return).  Records of the packet tap and the syscall
 * probes on a TLS connection (ciphertext) are dropped; the others pass to
 * gs_feed_record unchanged.
 */
#ifndef GS_ATTACH_TLS_H
#define GS_ATTACH_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach_load.h"

#include "../ebpf/tls.h"
#include "attach_feed.h"

#ifndef GS_TLS_CONNS
#define GS_TLS_CONNS 4096         /* TLS connections followed at once (a hash table) */
#endif
/* a closed connection's entry still sets its late ciphertext aside this long */
#ifndef GS_TLS_CLOSED_KEEP_NS
#define GS_TLS_CLOSED_KEEP_NS (10 * 1000000000LL)
#endif
#define GS_TLS_MAX_LIBS 8
#define GS_TLS_SEGS 32            /* ciphertext segments remembered per direction */
#define GS_TLS_PENDING 256        /* plaintext writes waiting for their ciphertext's segment */

/* A segment of ciphertext the packet tap saw. */
struct gs_tls_wire {
	uint32_t seq, len;
	uint64_t ts;
};

struct gs_tls_dir {
	uint64_t sent;               /* plaintext bytes the sender wrote (SEND records) */
	uint64_t got;                /* ... the receiver read (RECV records) */
	uint64_t fed;                /* ... given to the engine */
	uint64_t next_hdr;           /* offset of the next GIOP header */
	bool from_sender;            /* the stream comes from the sender's writes */
	bool lost;                   /* next_hdr unknown: wait for a chunk that starts one */
	struct gs_tls_wire wire[GS_TLS_SEGS]; /* the latest ciphertext segments, a ring */
	uint32_t wire_next;
};

struct gs_tls_conn {
	struct gs_tap_flow ab;       /* direction 0: a -> b (the first reporter's local -> remote) */
	bool used;
	bool closed;                 /* FIN both ways or RST seen: kept a while, then dropped */
	uint8_t fin;                 /* bit d: a FIN went in direction d */
	uint64_t closed_ts;
	struct gs_tls_dir d[2];
};

/* A write whose plaintext waits for the segment that carries its ciphertext's
 * first byte (the packet tap sees it after the write's record). */
struct gs_tls_pend {
	uint32_t conn;               /* index in conns */
	uint8_t dir;
	uint32_t gen;                /* the poll it came in */
	uint32_t tcp_seq;
	uint64_t off;
	uint32_t len;
	uint64_t ts_tcp;             /* if no segment comes: the TCP send's instant */
	uint32_t head_len;
	uint8_t head[GS_TLS_HEAD_MAX];
};

struct gs_tls_feed {
	struct gs_feed *feed;
	struct gs_tls_pend *pend;    /* GS_TLS_PENDING, a FIFO */
	uint32_t pend_head, pend_n, gen;
	bool active;                 /* the TLS probes are attached */
	struct gs_tls_conn *conns;   /* GS_TLS_CONNS */
	uint32_t n_conns;            /* entries used (open or closed) */
	uint64_t now;                /* the latest record's time (CLOCK_MONOTONIC) */
	/* what happened, for the closing report */
	uint64_t sends, recvs, conns_seen, conns_closed, tap_dropped, table_full, heads_unframed, bad_records;
	uint64_t wire_timed, tcp_timed;  /* chunks timed by a ciphertext segment / by the TCP call */
	uint8_t rec[sizeof(struct gs_tap_seg) + GS_TAP_HEADS * sizeof(struct gs_tap_head) + GS_TAP_DATA_MAX];
};

int gs_tls_feed_init(struct gs_tls_feed *t, struct gs_feed *feed);
void gs_tls_feed_free(struct gs_tls_feed *t);
/* A ring-buffer record (a gs_attach_record_fn; arg: the gs_tls_feed). */
void gs_tls_feed_record(void *arg, const void *rec, size_t len);
/* After each poll: writes whose ciphertext segment did not come within a
 * poll (an interface not tapped) go on, timed by their TCP send. */
void gs_tls_feed_flush(struct gs_tls_feed *t);

/* The uprobes.  `libs`: where each process maps libssl (found in
 * /proc/PID/maps), for the description. */
struct gs_tls_probes;
struct gs_tls_lib {
	uint32_t pid;
	char path[256];
};
/* Finds libssl in each pid's maps and attaches to those that map it.
 * 0: attached to *n_libs (>= 1) processes; 1: no process maps libssl,
 * nothing attached; 2: error, with the reason in `err`. */
int gs_tls_probes_open(struct gs_tls_probes **out, const uint32_t *pids, uint32_t n_pids, int ring_fd,
		       struct gs_tls_lib *libs, uint32_t *n_libs, char *err, size_t errlen);
void gs_tls_probes_close(struct gs_tls_probes *p);
/* attach --check: when one of `pids` maps libssl (the probes would load),
 * each TLS program loaded alone, nothing attached, a row each; returns how
 * many were refused (-1: no process maps libssl, nothing loaded). */
int gs_tls_probes_check(const uint32_t *pids, uint32_t n_pids, gs_verdict_fn fn, void *arg);
/* Where `pid` maps libssl.so.3 (through /proc/PID/root); false: it does not. */
bool gs_tls_find_libssl(uint32_t pid, char *path, size_t len);

#endif
