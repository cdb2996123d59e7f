/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the TLS probes of `giopscope attach` (tls.bpf.c) and their user side
 * (probe/attach_tls.c) share.  Fixed-width records, pinned in size: the two
 * sides are compiled apart (clang -target bpf / cc) and must agree.
 *
 * The TLS probes write into the packet tap's ring buffer (user space hands
 * its map to this object before loading), so that their records and the
 * packet tap's come in the order they happened; their kinds follow the
 * packet tap's (ebpf/giop_tap.h, enum gs_tap_kind).
 */
#ifndef GS_TLS_H
#define GS_TLS_H

#include "giop_tap.h"

#define GS_TLS_HEAD_MAX 256      /* plaintext bytes shipped of a TLS read or write */

enum gs_tls_kind {
	GS_REC_TLS_SEND = 16,    /* SSL_write/SSL_write_ex: plaintext handed to TLS */
	GS_REC_TLS_RECV = 17,    /* SSL_read/SSL_read_ex returned plaintext */
	GS_REC_TLS_CONN = 18,    /* a handshake ran on this connection: it carries TLS */
};

/* The TLS call's own function, for the record. */
enum gs_tls_fn {
	GS_TLS_FN_WRITE = 1, GS_TLS_FN_WRITE_EX, GS_TLS_FN_READ, GS_TLS_FN_READ_EX,
	GS_TLS_FN_HANDSHAKE,
};

/* One TLS call of a followed thread, matched to its TCP connection by the
 * socket send or receive the same thread made inside it.
 *
 * SEND: written at the first TCP send inside SSL_write (before the
 * ciphertext can reach the peer): ts_call is SSL_write's entry, ts_tcp that
 * TCP send's, tcp_seq the sequence number the ciphertext's first byte gets.
 * RECV: written when SSL_read returns plaintext: ts_call is its return, ts_tcp
 * the last TCP receive inside it (0: the plaintext was already buffered in
 * TLS, read by an earlier call), tcp_seq the sequence number after the last
 * ciphertext byte received (tcp_seq_first: the first).  CONN: a handshake's
 * first TCP send or receive.
 *
 * base_local / base_remote: the sequence number of each direction's first
 * data byte (ISN + 1), from the socket (snd_una - bytes_acked, rcv_nxt -
 * bytes_received); valid when has_base. */
struct gs_tls_rec {
	__u32 kind;              /* enum gs_tls_kind */
	__u32 tgid, tid;
	__u16 fn;                /* enum gs_tls_fn */
	__u8 has_base;
	__u8 pad0;
	__u64 ts_call;           /* CLOCK_MONOTONIC ns */
	__u64 ts_tcp;
	__u64 ssl;               /* the SSL object's address (identifies the TLS session) */
	struct gs_tap_flow flow; /* local -> remote */
	__u32 tcp_seq;
	__u32 plain_len;         /* SEND: bytes asked; RECV: bytes returned */
	__u32 base_local, base_remote;
	__u32 head_len;          /* plaintext bytes in head[] */
	__u32 tcp_seq_first;     /* SEND: tcp_seq; RECV: the first ciphertext byte received inside */
	__u8 head[GS_TLS_HEAD_MAX];
};
_Static_assert(sizeof(struct gs_tls_rec) == 360, "gs_tls_rec layout");
_Static_assert(__builtin_offsetof(struct gs_tls_rec, head) == 104, "gs_tls_rec head");
/* A record with head_len 0 ends before head: CONN records */
#define GS_TLS_REC_SHORT 104

#endif
