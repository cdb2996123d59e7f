// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The fallback hooks of attach (--syscall-hooks, or a kernel without the
 * socket layer's tracepoints): a send at its syscall's entry, a recv at its
 * return, both from the file descriptor in the task's saved user registers.
 * Included by giop_tap.bpf.c only, after the shared send/recv events
 * (send_event, recv_event) it feeds. */
#ifndef GS_SYSCALLS_BPF_H
#define GS_SYSCALLS_BPF_H

/* The syscall hooks' send: at the syscall's entry, from its file descriptor. */
static __always_inline int on_send(int fd, __u64 arg, __u64 len, __u32 call)
{
	struct send_src src = { .arg = arg };
	struct sk_info si;
	/* si.seq: the sequence number the first byte of this send will get */
	if (!wanted_task() || !sk_info_core((const struct sock *)fd_sock(fd, &sock_fops), true, netns_ino, &si))
		return 0;
	return send_event(&si, len, call, &src);
}

/* A recv's return (the entry is not traced: the file descriptor and flags are
 * still in the task's saved user registers, which the syscall does not
 * change).  `flags_arg`: which argument holds the MSG_ flags (0: none). */
static __always_inline int on_recv_exit(struct pt_regs *regs, long ret, __u32 call, int flags_arg)
{
	struct sk_info si;
	int fd;

	if (!wanted_task())
		return 0;
	fd = (int)regs->di;
	/* peeked bytes are read again later */
	if ((flags_arg == 3 && (regs->dx & MSG_PEEK)) || (flags_arg == 4 && (regs->r10 & MSG_PEEK)))
		return 0;
	if (!sk_info_core((const struct sock *)fd_sock(fd, &sock_fops), false, netns_ino, &si))
		return 0;
	return recv_event(&si, ret, call);
}

/* The fallback (attach --syscall-hooks, or a kernel without the socket layer's
 * tracepoints): the raw tracepoints raw_syscalls:sys_enter / sys_exit, one
 * program each, choosing the syscalls by number.  Not the per-syscall
 * tracepoints (syscalls:sys_enter_sendto, ...), which run through perf events
 * and cost more per call (docs/benchmarks.md: bench-attach-toggle and the
 * syscall floor).  The price: the program runs for every syscall of the
 * machine (a compare and a return for the others). */
#if defined(__TARGET_ARCH_x86)
#define NR_READ 0
#define NR_WRITE 1
#define NR_READV 19
#define NR_WRITEV 20
#define NR_SENDTO 44
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47
#define USER64_CS 0x33          /* a 64-bit task's code segment: ia32 syscalls number differently */
#else
#error "syscall numbers and registers: x86-64 only"
#endif

/* the syscall's user registers (raw_syscalls hand the same pointer over, untyped) */
static __always_inline struct pt_regs *user_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

SEC("raw_tp/sys_enter")
int sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	long id = (long)ctx->args[1];
	struct pt_regs *regs;
	__u32 call;

	switch (id) {
	case NR_SENDTO: call = GS_CALL_SENDTO; break;
	case NR_WRITE: call = GS_CALL_WRITE; break;
	case NR_SENDMSG: call = GS_CALL_SENDMSG; break;
	case NR_WRITEV: call = GS_CALL_WRITEV; break;
	default: return 0;
	}
	regs = user_regs();
	if (!regs || regs->cs != USER64_CS)
		return 0;
	/* sendmsg and writev: the length is the iovec's sum, not known here */
	return on_send((int)regs->di, regs->si,
		       call == GS_CALL_SENDMSG || call == GS_CALL_WRITEV ? 0 : regs->dx, call);
}

SEC("raw_tp/sys_exit")
int sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	long ret = (long)ctx->args[1];
	struct pt_regs *regs;

	if (ret <= 0)
		return 0;
	regs = user_regs();
	if (!regs || regs->cs != USER64_CS)
		return 0;
	switch ((long)regs->orig_ax) {
	case NR_RECVFROM: return on_recv_exit(regs, ret, GS_CALL_RECVFROM, 4);
	case NR_RECVMSG: return on_recv_exit(regs, ret, GS_CALL_RECVMSG, 3);
	case NR_READ: return on_recv_exit(regs, ret, GS_CALL_READ, 0);
	case NR_READV: return on_recv_exit(regs, ret, GS_CALL_READV, 0);
	default: return 0;
	}
}

#endif
