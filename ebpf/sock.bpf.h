// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A TCP socket as the send/recv hooks need it (struct sk_info: the
 * connection, the socket's address and network namespace, the sequence number
 * a send starts at or a recv ends at), read two ways:
 *
 *   sk_info_btf  from a BTF-typed socket pointer (tp_btf, fentry/fexit): plain
 *                loads the JIT makes fault-safe, the TCP fields through
 *                bpf_skc_to_tcp_sock() (5.9+);
 *   sk_info_core from an address (raw_tp, kprobes, the syscall hooks): CO-RE
 *                bpf_probe_read_kernel() reads, one helper call per field.
 *
 * Neither needs a kfunc (bpf_rdonly_cast is 6.2+: an object that names it is
 * refused whole by libbpf on Debian 12's 6.1).  Included by giop_tap.bpf.c
 * only. */
#ifndef GS_SOCK_BPF_H
#define GS_SOCK_BPF_H

#define GS_AF_INET 2
#define GS_AF_INET6 10
#define GS_S_IFMT 0170000
#define GS_S_IFSOCK 0140000
#define GS_SOCK_STREAM 1
#define GS_IPPROTO_TCP 6

struct sk_info {
	struct gs_tap_flow fl;   /* local -> remote */
	__u64 addr;              /* the socket's address: tells a later socket on the same 4-tuple */
	__u32 netns;             /* its network namespace's inode (read only when netns_ino is set) */
	__u32 seq;               /* write_seq (send) or copied_seq (recv) */
};

/* before 6.4, iov_iter's iovec pointer was `iov` (then `__iov`) */
struct iov_iter___old {
	const struct iovec *iov;
} __attribute__((preserve_access_index));

/* An IPv6 socket talking IPv4 (v4-mapped) is an IPv4 flow: that is what the
 * wire, and so the packet tap, carries.  `l`, `r`: the two addresses as read. */
static __always_inline void flow_family(struct gs_tap_flow *fl, bool v6, const __u32 *l, const __u32 *r,
					__u32 l4, __u32 r4)
{
	__u32 *fl_l = (__u32 *)fl->saddr, *fl_r = (__u32 *)fl->daddr;
	/* the flow is a map key: every byte counts */
	fl->pad[0] = fl->pad[1] = fl->pad[2] = 0;
	fl->family = 4;
	if (v6) {
		for (int i = 0; i < 4; i++) {
			fl_l[i] = l[i];
			fl_r[i] = r[i];
		}
		/* ::ffff:a.b.c.d */
		if (r[0] || r[1] || r[2] != bpf_htonl(0xffff))
			fl->family = 6;
	}
	if (fl->family == 4) {
		for (int i = 1; i < 4; i++)
			fl_l[i] = fl_r[i] = 0;
		fl_l[0] = l4;
		fl_r[0] = r4;
	}
}

/* ------------------------------------------------------------ typed */

/* `sk` is a TCP socket over IPv4/IPv6 (its type and protocol from the sock:
 * MPTCP and the rest have no tcp_sock to read). */
static __always_inline bool is_tcp_btf(struct sock *sk)
{
	__u16 family;
	if (sk->sk_type != GS_SOCK_STREAM)
		return false;
	family = sk->__sk_common.skc_family;
	if (family != GS_AF_INET && family != GS_AF_INET6)
		return false;
	/* a bitfield before 5.6, a u16 since: CO-RE reads either (libbpf's
	 * macro does void * arithmetic) */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpointer-arith"
	return BPF_CORE_READ_BITFIELD(sk, sk_protocol) == GS_IPPROTO_TCP;
#pragma clang diagnostic pop
}

/* The connection of `sk` as the flow local -> remote. */
static __always_inline void sock_flow_btf(struct sock *sk, struct gs_tap_flow *fl)
{
	__u32 l[4] = {}, r[4] = {};
	bool v6 = sk->__sk_common.skc_family == GS_AF_INET6;
	if (v6) {
		for (int i = 0; i < 4; i++) {
			l[i] = sk->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[i];
			r[i] = sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32[i];
		}
	}
	flow_family(fl, v6, l, r, sk->__sk_common.skc_rcv_saddr, sk->__sk_common.skc_daddr);
	fl->sport = sk->__sk_common.skc_num;
	fl->dport = bpf_ntohs(sk->__sk_common.skc_dport);
}

/* False: not a TCP socket over IPv4/IPv6.  `netns`: read its namespace too. */
static __always_inline bool sk_info_btf(struct sock *sk, bool send, bool netns, struct sk_info *si)
{
	struct tcp_sock *tp;
	if (!sk || !is_tcp_btf(sk))
		return false;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return false;
	sock_flow_btf(sk, &si->fl);
	si->addr = (__u64)(long)sk;
	si->netns = netns ? sk->__sk_common.skc_net.net->ns.inum : 0;
	si->seq = send ? tp->write_seq : tp->copied_seq;
	return true;
}

/* The first buffer of a send's data as the kernel holds it (the call's
 * iov_iter, where the copy loop stands), 0 if not user memory (sendfile,
 * splice, the kernel's own sends). */
static __always_inline __u64 iter_first_btf(const struct msghdr *msg)
{
	const struct iov_iter *it = &msg->msg_iter;
	__u8 type = it->iter_type;
	__u64 off = it->iov_offset, base;
	const struct iovec *iov;
	struct iovec v = {};
	if (type == bpf_core_enum_value(enum iter_type, ITER_UBUF)) {
		/* read as a number: a plain load of this union member is a typed
		 * iovec pointer to some verifiers (6.1), and the offset may not be
		 * added to it */
		if (bpf_probe_read_kernel(&base, sizeof base, &it->ubuf))
			return 0;
	} else if (type == bpf_core_enum_value(enum iter_type, ITER_IOVEC)) {
		if (bpf_core_field_exists(it->__iov))
			iov = it->__iov;
		else
			iov = ((const struct iov_iter___old *)it)->iov;
		if (bpf_probe_read_kernel(&v, sizeof v, iov))
			return 0;
		base = (__u64)v.iov_base;
		barrier_var(base);
	} else {
		return 0;
	}
	return base + off;
}

/* ------------------------------------------------------------ CO-RE reads */

static __always_inline bool sk_info_core(const struct sock *sk, bool send, bool netns, struct sk_info *si)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;
	__u32 l[4] = {}, r[4] = {};
	__u16 family;
	bool v6;
	if (!sk || BPF_CORE_READ(sk, sk_type) != GS_SOCK_STREAM)
		return false;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != GS_AF_INET && family != GS_AF_INET6)
		return false;
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpointer-arith"
	if (BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) != GS_IPPROTO_TCP)
		return false;
#pragma clang diagnostic pop
	v6 = family == GS_AF_INET6;
	if (v6) {
		BPF_CORE_READ_INTO(&l, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32);
		BPF_CORE_READ_INTO(&r, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr32);
	}
	flow_family(&si->fl, v6, l, r, BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr),
		    BPF_CORE_READ(sk, __sk_common.skc_daddr));
	si->fl.sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	si->fl.dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	si->addr = (__u64)(long)sk;
	si->netns = netns ? BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum) : 0;
	si->seq = send ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
	return true;
}

/* iter_first_btf's answer from an untyped msghdr */
static __always_inline __u64 iter_first_core(const struct msghdr *msg)
{
	const struct iov_iter *it = &msg->msg_iter;
	__u8 type = BPF_CORE_READ(it, iter_type);
	__u64 off = BPF_CORE_READ(it, iov_offset);
	const struct iovec *iov;
	struct iovec v = {};
	if (type == bpf_core_enum_value(enum iter_type, ITER_UBUF))
		return (__u64)BPF_CORE_READ(it, ubuf) + off;
	if (type != bpf_core_enum_value(enum iter_type, ITER_IOVEC))
		return 0;
	if (bpf_core_field_exists(it->__iov))
		iov = BPF_CORE_READ(it, __iov);
	else
		iov = BPF_CORE_READ((const struct iov_iter___old *)it, iov);
	if (bpf_probe_read_kernel(&v, sizeof v, iov))
		return 0;
	return (__u64)v.iov_base + off;
}

/* The TCP socket behind `fd` of the current task (its address), or 0 (not a
 * socket).  `known_fops`: the file operations every socket has, 0 until
 * learned here from a socket's inode; once known, a file is told a socket by
 * them (one read instead of two). */
static __always_inline __u64 fd_sock(int fd, __u64 *known_fops)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file **fds;
	struct file *f = NULL;
	struct socket *so;
	__u64 fops, known;

	if (!fdt || fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return 0;
	fds = fdt->fd;
	/* an array indexed by a number from user space */
	if (bpf_probe_read_kernel(&f, sizeof f, &fds[fd]) || !f)
		return 0;
	fops = (__u64)(long)BPF_CORE_READ(f, f_op);
	known = *known_fops;
	if (known) {
		if (fops != known)
			return 0;
	} else {
		/* only sockets have a socket inode; private_data is then the socket */
		if ((BPF_CORE_READ(f, f_inode, i_mode) & GS_S_IFMT) != GS_S_IFSOCK)
			return 0;
		*known_fops = fops;
	}
	so = BPF_CORE_READ(f, private_data);
	return so ? (__u64)(long)BPF_CORE_READ(so, sk) : 0;
}

#endif
