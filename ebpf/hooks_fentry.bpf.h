// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The send/recv hooks on the TCP functions themselves, where the kernel has
 * no socket-layer tracepoints (Debian 12's 6.1 has neither, 6.12 no
 * tcp:tcp_sendmsg_locked): fentry on tcp_sendmsg_locked (called once per
 * send, with the socket locked: write_seq is the call's first byte) and fexit
 * on tcp_recvmsg (its return: copied_seq ends the bytes just copied).  Typed
 * arguments, a trampoline per function (5.5+, x86-64).  Included by
 * giop_tap.bpf.c only. */
#ifndef GS_HOOKS_FENTRY_BPF_H
#define GS_HOOKS_FENTRY_BPF_H

SEC("fentry/tcp_sendmsg_locked")
int BPF_PROG(tcp_send_fentry, struct sock *sk, struct msghdr *msg, size_t size)
{
	struct send_src src = {};
	struct sk_info si;
	if (!wanted_task() || !sk_info_btf(sk, true, netns_ino, &si))
		return 0;
	src.kmsg_btf = msg;
	return send_event(&si, size, GS_CALL_TCP_SEND_FN, &src);
}

/* tcp_recvmsg(sk, msg, len, flags, addr_len) since 5.19 */
SEC("fexit/tcp_recvmsg")
int BPF_PROG(tcp_recv_fexit, struct sock *sk, struct msghdr *msg, size_t len, int flags, int *addr_len, int ret)
{
	struct sk_info si;
	if (!stream_recv(ret, flags) || !wanted_task() || !sk_info_btf(sk, false, netns_ino, &si))
		return 0;
	return recv_event(&si, ret, GS_CALL_TCP_RECV_FN);
}

#endif
