// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The send/recv hooks on the socket layer's tracepoints (the default where
 * the kernel has them): tcp:tcp_sendmsg_locked (6.6+), in tcp_sendmsg_locked's
 * copy loop under the socket lock, before each pass copies, and
 * sock:sock_recv_length (6.3+), at the end of sock_recvmsg (every
 * recv-family syscall and read() of a socket pass there).  They run for socket
 * sends and receives only.  tp_btf where the verifier takes it (typed
 * arguments), raw_tp otherwise (the same tracepoints, read with CO-RE).
 * Included by giop_tap.bpf.c only. */
#ifndef GS_HOOKS_TRACEPOINT_BPF_H
#define GS_HOOKS_TRACEPOINT_BPF_H

/* The first pass's write_seq is the sequence number of the call's first
 * byte, whatever other threads send on the socket (they wait for the lock),
 * and msg_data_left() then is the whole length asked; later passes of the
 * same call are told apart in send_event (send_src.pass_msg). */
SEC("tp_btf/tcp_sendmsg_locked")
int tcp_send_btf(__u64 *ctx)
{
	/* sk, msg; then skb, size_goal */
	struct sock *sk = (struct sock *)ctx[0];
	const struct msghdr *msg = (const struct msghdr *)ctx[1];
	struct send_src src = {};
	struct sk_info si;
	if (!wanted_task() || !sk_info_btf(sk, true, netns_ino, &si))
		return 0;
	src.kmsg_btf = msg;
	src.pass_msg = (__u64)(long)msg;
	src.dontwait = (msg->msg_flags & MSG_DONTWAIT) != 0;
	return send_event(&si, msg->msg_iter.count, GS_CALL_TCP_SEND, &src);
}

/* sk, ret, flags */
SEC("tp_btf/sock_recv_length")
int sock_recv_btf(__u64 *ctx)
{
	struct sock *sk = (struct sock *)ctx[0];
	int ret = (int)ctx[1], flags = (int)ctx[2];
	struct sk_info si;
	if (!stream_recv(ret, flags) || !wanted_task() || !sk_info_btf(sk, false, netns_ino, &si))
		return 0;
	return recv_event(&si, ret, GS_CALL_SOCK_RECV);
}

SEC("raw_tp/tcp_sendmsg_locked")
int tcp_send_raw(struct bpf_raw_tracepoint_args *ctx)
{
	const struct sock *sk = (const struct sock *)ctx->args[0];
	const struct msghdr *msg = (const struct msghdr *)ctx->args[1];
	struct send_src src = {};
	struct sk_info si;
	if (!wanted_task() || !sk_info_core(sk, true, netns_ino, &si))
		return 0;
	src.kmsg_core = ctx->args[1];
	src.pass_msg = ctx->args[1];
	src.dontwait = (BPF_CORE_READ(msg, msg_flags) & MSG_DONTWAIT) != 0;
	return send_event(&si, BPF_CORE_READ(msg, msg_iter.count), GS_CALL_TCP_SEND, &src);
}

SEC("raw_tp/sock_recv_length")
int sock_recv_raw(struct bpf_raw_tracepoint_args *ctx)
{
	int ret = (int)ctx->args[1], flags = (int)ctx->args[2];
	struct sk_info si;
	if (!stream_recv(ret, flags) || !wanted_task() || !sk_info_core((const struct sock *)ctx->args[0], false, netns_ino, &si))
		return 0;
	return recv_event(&si, ret, GS_CALL_SOCK_RECV);
}

#endif
