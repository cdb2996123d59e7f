/* From a file descriptor of the current task to its TCP socket and the
 * connection's two ends.  Kernel structures are read through BTF-typed
 * pointers (bpf_get_current_task_btf, bpf_rdonly_cast): plain loads the JIT
 * makes fault-safe, with CO-RE offsets of the running kernel, instead of one
 * bpf_probe_read_kernel() call per field -- this runs on every send and recv
 * of the followed processes.  Included by giop_tap.bpf.c only. */
#ifndef GS_SOCK_BPF_H
#define GS_SOCK_BPF_H

#define GS_AF_INET 2
#define GS_AF_INET6 10
#define GS_S_IFMT 0170000
#define GS_S_IFSOCK 0140000
#define GS_SOCK_STREAM 1
#define GS_IPPROTO_TCP 6

/* A read-only, BTF-typed view of a kernel pointer (the verifier turns the
 * call into a register move). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

static __always_inline struct sock *as_sock(__u64 p)
{
	return bpf_rdonly_cast((void *)p, bpf_core_type_id_kernel(struct sock));
}

/* `sk` is a TCP socket over IPv4/IPv6 (its type and protocol from the sock,
 * not from struct socket: the line read next anyway). */
static __always_inline bool is_tcp(struct sock *sk)
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

/* The TCP socket behind `fd` of the current task, or NULL (not a socket, not
 * TCP over IPv4/IPv6: MPTCP and the rest have no tcp_sock to read).
 * `sock_fops`: the file operations every socket has, 0 until learned here
 * from a socket's inode; once known, a file is told a socket by them (one
 * line of the file instead of its inode's too). */
static __always_inline struct sock *fd_tcp_sock(int fd, __u64 *sock_fops)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file **fds;
	struct file *f = NULL;
	struct socket *so;
	struct sock *sk;
	__u64 fops, known;

	if (!fdt || fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	/* the one helper call: an array indexed by a number from user space */
	if (bpf_probe_read_kernel(&f, sizeof f, &fds[fd]) || !f)
		return NULL;
	f = bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
	fops = (__u64)(long)f->f_op;
	known = *sock_fops;
	if (known) {
		if (fops != known)
			return NULL;
	} else {
		/* only sockets have a socket inode; private_data is then the socket */
		if ((f->f_inode->i_mode & GS_S_IFMT) != GS_S_IFSOCK)
			return NULL;
		*sock_fops = fops;
	}
	so = bpf_rdonly_cast(f->private_data, bpf_core_type_id_kernel(struct socket));
	sk = so->sk;
	if (!sk || !is_tcp(sk))
		return NULL;
	return sk;
}

static __always_inline struct tcp_sock *as_tcp(struct sock *sk)
{
	return bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
}

/* The connection of `sk` as the flow local -> remote.  An IPv6 socket
 * talking IPv4 (v4-mapped) is an IPv4 flow: that is what the wire, and so the
 * packet tap, carries. */
static __always_inline void sock_flow(struct sock *sk, struct gs_tap_flow *fl)
{
	__u32 *l = (__u32 *)fl->saddr, *r = (__u32 *)fl->daddr;
	/* the flow is a map key: every byte counts */
	fl->pad[0] = fl->pad[1] = fl->pad[2] = 0;
	fl->family = 4;
	fl->sport = sk->__sk_common.skc_num;
	fl->dport = bpf_ntohs(sk->__sk_common.skc_dport);
	if (sk->__sk_common.skc_family == GS_AF_INET6) {
		for (int i = 0; i < 4; i++) {
			l[i] = sk->__sk_common.skc_v6_rcv_saddr.in6_u.u6_addr32[i];
			r[i] = sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32[i];
		}
		/* ::ffff:a.b.c.d */
		if (r[0] || r[1] || r[2] != bpf_htonl(0xffff))
			fl->family = 6;
	}
	if (fl->family == 4) {
		for (int i = 1; i < 4; i++)
			l[i] = r[i] = 0;
		l[0] = sk->__sk_common.skc_rcv_saddr;
		r[0] = sk->__sk_common.skc_daddr;
	}
}

#endif
