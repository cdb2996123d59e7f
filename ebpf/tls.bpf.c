// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The TLS probes of `giopscope attach`: the plaintext boundary of OpenSSL 3
 * in the followed processes (uprobes attached to the libssl each one maps),
 * matched to the TCP connection by thread.
 *
 *   SSL_write / SSL_write_ex entry     the plaintext handed to TLS (t1 / t5)
 *   SSL_read / SSL_read_ex return      the plaintext TLS returned (t4 / t8)
 *   SSL_do_handshake                   marks the connection as TLS
 *
 * A thread inside one of these calls has an entry in `calls`.  The TCP send
 * (tp_btf/tcp_sendmsg_locked) and receive (tp_btf/sock_recv_length) the same
 * thread makes inside the call name the socket: its connection, the sequence
 * number of the ciphertext, and the instant TCP got or gave it.  A write's
 * record is written at its first TCP send, before the ciphertext can reach
 * the peer, so that in the ring the sender's record comes before the
 * receiver's; a read's when it returns.  Only the first GS_TLS_HEAD_MAX
 * plaintext bytes of each call are shipped: the GIOP message head, never a
 * whole payload.
 *
 * The records go into the packet tap's ring buffer (user space gives this
 * object that map), so everything reaches user space in one order.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tls.h"
#include "sock.bpf.h"

#define MSG_PEEK 2

/* the BPF_KPROBE / BPF_PROG wrappers hand every program a ctx it may not use */
#pragma clang diagnostic ignored "-Wunused-parameter"

/* replaced by the packet tap's ring buffer before loading (bpf_map__reuse_fd) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

/* A thread inside a TLS call. */
struct call {
	__u64 ts_call;
	__u64 ts_tcp;
	__u64 ssl;
	__u64 buf;
	__u64 len_ptr;           /* _ex: where the byte count goes */
	__u32 num;
	__u16 fn;
	__u8 have_sock;
	__u8 has_base;
	struct gs_tap_flow flow;
	__u32 tcp_seq, base_local, base_remote;
	__u32 tcp_seq_first;     /* the first TCP send's or receive's first byte */
};

/* LRU: a thread that dies inside a TLS call leaves its entry behind */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct call);
} calls SEC(".maps");

/* The connection of each TLS session, for a read that TLS served from what
 * an earlier read received (no TCP receive inside it). */
struct conn {
	struct gs_tap_flow flow;
	__u32 base_local, base_remote;
	__u8 has_base;
	__u8 pad[7];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct conn);
} sessions SEC(".maps");

static __always_inline __u32 tid_of(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

static __always_inline void enter(__u16 fn, const void *ssl, const void *buf, __u64 num, const void *len_ptr)
{
	__u32 tid = tid_of();
	struct call c = {};
	/* a handshake run from inside a read or write belongs to that call */
	if (fn == GS_TLS_FN_HANDSHAKE && bpf_map_lookup_elem(&calls, &tid))
		return;
	c.ts_call = bpf_ktime_get_ns();
	c.ssl = (__u64)(long)ssl;
	c.buf = (__u64)(long)buf;
	c.len_ptr = (__u64)(long)len_ptr;
	c.num = num > 0xffffffffull ? 0xffffffffu : (__u32)num;
	c.fn = fn;
	bpf_map_update_elem(&calls, &tid, &c, BPF_ANY);
}

/* The sequence numbers of both directions' first data byte, when the socket
 * holds them steady across the reads (a softirq may move them meanwhile). */
static __always_inline bool bases(struct tcp_sock *tp, __u32 *local, __u32 *remote)
{
	__u32 una = tp->snd_una, nxt = tp->rcv_nxt;
	__u64 acked = tp->bytes_acked, rcvd = tp->bytes_received;
	if (tp->snd_una != una || tp->rcv_nxt != nxt)
		return false;
	*local = una - (__u32)acked;
	*remote = nxt - (__u32)rcvd;
	return true;
}

static __always_inline bool tcp_sock_ok(struct sock *sk)
{
	__u16 family = sk->__sk_common.skc_family;
	if (sk->sk_type != GS_SOCK_STREAM || (family != GS_AF_INET && family != GS_AF_INET6))
		return false;
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpointer-arith"
	return BPF_CORE_READ_BITFIELD(sk, sk_protocol) == GS_IPPROTO_TCP;
#pragma clang diagnostic pop
}

static __always_inline void remember(struct call *c)
{
	struct conn k = {};
	__builtin_memcpy(&k.flow, &c->flow, sizeof k.flow);
	k.base_local = c->base_local;
	k.base_remote = c->base_remote;
	k.has_base = c->has_base;
	bpf_map_update_elem(&sessions, &c->ssl, &k, BPF_ANY);
}

/* Writes the record of `c`: `plain` plaintext bytes, the first of them at
 * `buf` in the thread's memory. */
static __always_inline void emit(struct call *c, __u32 kind, __u64 ts_call, __u32 plain)
{
	struct gs_tls_rec *r = bpf_ringbuf_reserve(&events, sizeof *r, 0);
	__u32 n;
	if (!r)
		return;
	r->kind = kind;
	r->tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	r->tid = tid_of();
	r->fn = c->fn;
	r->has_base = c->has_base;
	r->pad0 = 0;
	r->ts_call = ts_call;
	r->ts_tcp = c->ts_tcp;
	r->ssl = c->ssl;
	__builtin_memcpy(&r->flow, &c->flow, sizeof r->flow);
	r->tcp_seq = c->tcp_seq;
	r->plain_len = plain;
	r->base_local = c->base_local;
	r->base_remote = c->base_remote;
	r->tcp_seq_first = c->tcp_seq_first;
	n = kind == GS_REC_TLS_CONN ? 0 : plain;
	if (n > GS_TLS_HEAD_MAX)
		n = GS_TLS_HEAD_MAX;
	r->head_len = 0;
	if (n > 0) {
		/* 1..GS_TLS_HEAD_MAX in a form the verifier follows (a power of two) */
		__u32 m = n - 1;
		barrier_var(m);
		m &= GS_TLS_HEAD_MAX - 1;
		if (!bpf_probe_read_user(r->head, m + 1, (const void *)(long)c->buf))
			r->head_len = m + 1;
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* The socket of a TCP send or receive made inside a TLS call. */
static __always_inline void take_sock(struct call *c, struct sock *sk, struct tcp_sock *tp, __u32 seq, __u32 first)
{
	if (!c->have_sock)
		c->tcp_seq_first = first;
	sock_flow_btf(sk, &c->flow);
	c->tcp_seq = seq;
	c->ts_tcp = bpf_ktime_get_ns();
	c->has_base = bases(tp, &c->base_local, &c->base_remote);
	c->have_sock = 1;
	remember(c);
}

/* A TCP send entering tcp_sendmsg_locked's loop, of this thread's TLS call
 * (if any): the first time round nothing is queued yet, write_seq is the
 * number the first byte gets. */
static __always_inline int on_tcp_send(struct sock *sk)
{
	__u32 tid = tid_of();
	struct call *c = bpf_map_lookup_elem(&calls, &tid);
	struct tcp_sock *tp;
	if (!c || c->have_sock || !sk || !tcp_sock_ok(sk) || !(tp = bpf_skc_to_tcp_sock(sk)))
		return 0;
	take_sock(c, sk, tp, tp->write_seq, tp->write_seq);
	if (c->fn == GS_TLS_FN_HANDSHAKE)
		emit(c, GS_REC_TLS_CONN, c->ts_call, 0);
	else if (c->fn == GS_TLS_FN_WRITE || c->fn == GS_TLS_FN_WRITE_EX)
		emit(c, GS_REC_TLS_SEND, c->ts_call, c->num);
	return 0;
}

/* A TCP receive of this thread's TLS call that returned `ret` bytes. */
static __always_inline int on_tcp_recv(struct sock *sk, int ret, int flags)
{
	__u32 tid = tid_of();
	struct call *c = bpf_map_lookup_elem(&calls, &tid);
	struct tcp_sock *tp;
	bool first;
	if (!c || ret <= 0 || (flags & MSG_PEEK) || !sk || !tcp_sock_ok(sk) || !(tp = bpf_skc_to_tcp_sock(sk)))
		return 0;
	first = !c->have_sock;
	/* copied_seq has moved past what this receive returned */
	take_sock(c, sk, tp, tp->copied_seq, tp->copied_seq - (__u32)ret);
	if (first && c->fn == GS_TLS_FN_HANDSHAKE)
		emit(c, GS_REC_TLS_CONN, c->ts_call, 0);
	return 0;
}

/* The socket layer's tracepoints where the kernel has them (6.6+, 6.3+),
 * else fentry/fexit on the TCP functions (probe/attach_tls.c loads one pair) */
SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(tls_tcp_send, struct sock *sk, const struct msghdr *msg, const struct sk_buff *skb, int size_goal)
{
	return on_tcp_send(sk);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(tls_tcp_recv, struct sock *sk, int ret, int flags)
{
	return on_tcp_recv(sk, ret, flags);
}

SEC("fentry/tcp_sendmsg_locked")
int BPF_PROG(tls_tcp_send_fentry, struct sock *sk, struct msghdr *msg, size_t size)
{
	return on_tcp_send(sk);
}

/* tcp_recvmsg(sk, msg, len, flags, addr_len) since 5.19 */
SEC("fexit/tcp_recvmsg")
int BPF_PROG(tls_tcp_recv_fexit, struct sock *sk, struct msghdr *msg, size_t len, int flags, int *addr_len, int ret)
{
	return on_tcp_recv(sk, ret, flags);
}

SEC("uprobe")
int BPF_KPROBE(gs_ssl_write, void *ssl, const void *buf, int num)
{
	if (num > 0)
		enter(GS_TLS_FN_WRITE, ssl, buf, (__u64)num, NULL);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gs_ssl_write_ex, void *ssl, const void *buf, __u64 num, __u64 *written)
{
	if (num > 0)
		enter(GS_TLS_FN_WRITE_EX, ssl, buf, num, written);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gs_ssl_read, void *ssl, void *buf, int num)
{
	if (num > 0)
		enter(GS_TLS_FN_READ, ssl, buf, (__u64)num, NULL);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gs_ssl_read_ex, void *ssl, void *buf, __u64 num, __u64 *readbytes)
{
	if (num > 0)
		enter(GS_TLS_FN_READ_EX, ssl, buf, num, readbytes);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(gs_ssl_handshake, void *ssl)
{
	enter(GS_TLS_FN_HANDSHAKE, ssl, NULL, 0, NULL);
	return 0;
}

/* SSL_write, SSL_write_ex return: the call is over (its record, if any,
 * went at its first TCP send) */
SEC("uretprobe")
int BPF_KRETPROBE(gs_ssl_call_ret)
{
	__u32 tid = tid_of();
	bpf_map_delete_elem(&calls, &tid);
	return 0;
}

/* SSL_do_handshake returns: its entry goes, unless it belongs to a read or
 * write the handshake ran inside */
SEC("uretprobe")
int BPF_KRETPROBE(gs_ssl_handshake_ret)
{
	__u32 tid = tid_of();
	struct call *c = bpf_map_lookup_elem(&calls, &tid);
	if (c && c->fn == GS_TLS_FN_HANDSHAKE)
		bpf_map_delete_elem(&calls, &tid);
	return 0;
}

static __always_inline void read_ret(__u64 got)
{
	__u32 tid = tid_of();
	struct call *c = bpf_map_lookup_elem(&calls, &tid);
	__u64 now = bpf_ktime_get_ns();
	if (!c)
		return;
	if (got && got <= c->num) {
		if (!c->have_sock) {
			/* TLS had it buffered: the session's connection */
			struct conn *k = bpf_map_lookup_elem(&sessions, &c->ssl);
			if (k) {
				__builtin_memcpy(&c->flow, &k->flow, sizeof c->flow);
				c->base_local = k->base_local;
				c->base_remote = k->base_remote;
				c->has_base = k->has_base;
				c->have_sock = 1;
				c->ts_tcp = 0;
				c->tcp_seq = 0;
				c->tcp_seq_first = 0;
			}
		}
		if (c->have_sock)
			emit(c, GS_REC_TLS_RECV, now, (__u32)got);
	}
	bpf_map_delete_elem(&calls, &tid);
}

SEC("uretprobe")
int BPF_KRETPROBE(gs_ssl_read_ret, int ret)
{
	read_ret(ret > 0 ? (__u64)ret : 0);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(gs_ssl_read_ex_ret, int ret)
{
	__u32 tid = tid_of();
	struct call *c = bpf_map_lookup_elem(&calls, &tid);
	__u64 got = 0;
	if (c && ret == 1 && c->len_ptr &&
	    bpf_probe_read_user(&got, sizeof got, (const void *)(long)c->len_ptr))
		got = 0;
	read_ret(ret == 1 ? got : 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
