// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The send/recv hooks as kprobes on the same TCP functions as
 * hooks_fentry.bpf.h, where the kernel refuses fentry (no BPF trampoline):
 * a kprobe on tcp_sendmsg_locked, and on tcp_recvmsg a kprobe that keeps
 * the socket and flags per thread for the kretprobe that sees the return.
 * Untyped: the socket is read with CO-RE.  Included by giop_tap.bpf.c only. */
#ifndef GS_HOOKS_KPROBE_BPF_H
#define GS_HOOKS_KPROBE_BPF_H

struct recv_arg {
	__u64 sk;
	__s32 flags;
	__u32 pad;
};

/* a thread's tcp_recvmsg under way (LRU: a return never seen, the task
 * killed in it, cannot fill it) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct recv_arg);
} recv_args SEC(".maps");

SEC("kprobe/tcp_sendmsg_locked")
int BPF_KPROBE(tcp_send_kprobe, struct sock *sk, struct msghdr *msg, size_t size)
{
	struct send_src src = {};
	struct sk_info si;
	if (!wanted_task() || !sk_info_core(sk, true, netns_ino, &si))
		return 0;
	src.kmsg_core = (__u64)(long)msg;
	return send_event(&si, size, GS_CALL_TCP_SEND_FN, &src);
}

/* tcp_recvmsg(sk, msg, len, flags, addr_len) since 5.19 */
SEC("kprobe/tcp_recvmsg")
int BPF_KPROBE(tcp_recv_kprobe, struct sock *sk, struct msghdr *msg, size_t len, int flags)
{
	struct recv_arg a = { .sk = (__u64)(long)sk, .flags = flags };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	if (!wanted_task())
		return 0;
	bpf_map_update_elem(&recv_args, &tid, &a, BPF_ANY);
	return 0;
}

SEC("kretprobe/tcp_recvmsg")
int BPF_KRETPROBE(tcp_recv_kretprobe, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct recv_arg *p = bpf_map_lookup_elem(&recv_args, &tid), a;
	struct sk_info si;
	if (!p)
		return 0;
	a = *p;
	bpf_map_delete_elem(&recv_args, &tid);
	if (!stream_recv(ret, a.flags) || !sk_info_core((const struct sock *)a.sk, false, netns_ino, &si))
		return 0;
	return recv_event(&si, ret, GS_CALL_TCP_RECV_FN);
}

#endif
