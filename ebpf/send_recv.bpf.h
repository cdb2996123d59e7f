// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the send/recv hooks do, whichever hook calls them: follow the process,
 * watch its connections, and put each send's and recv's instant, with its
 * sequence number, in the ring or in watch_tab for the packet tap.  Included
 * by giop_tap.bpf.c only. */
#ifndef GS_SEND_RECV_BPF_H
#define GS_SEND_RECV_BPF_H

/* The current process is the one that had its pid when attach started: its
 * thread-group leader started in that clock tick (checked only once the pid
 * matched, so it costs nothing to the other processes). */
static __always_inline bool same_start(__u64 start)
{
	struct task_struct *task;
	__u64 st;
	if (!start_tick_ns)
		return true;
	task = bpf_get_current_task_btf();
	st = task->group_leader->start_boottime;
	return st >= start && st - start < start_tick_ns;
}

static __always_inline bool wanted_task(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *start;
	if (filter_mode == GS_FILTER_PIDS) {
		if (n_target_pids) {
			for (__u32 i = 0; i < GS_TAP_RODATA_PIDS && i < n_target_pids; i++)
				if (target_pids[i] == tgid)
					return same_start(target_start[i]);
			return false;
		}
		start = bpf_map_lookup_elem(&pids, &tgid);
		return start && same_start(*start);
	}
	if (filter_mode == GS_FILTER_COMM) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		char comm[GS_TAP_COMM_LEN];
		if (BPF_CORE_READ_STR_INTO(&comm, task, group_leader, comm) < 0)
			return false;
		for (int i = 0; i < GS_TAP_COMM_LEN; i++) {
			if (comm[i] != filter_comm[i])
				return false;
			if (!comm[i])
				break;
		}
		return true;
	}
	return true; /* GS_FILTER_PORTS: decided by the socket's ports */
}

static __always_inline bool wanted_flow(const struct sk_info *si)
{
	if (netns_ino && si->netns != netns_ino)
		return false;
	if (filter_mode != GS_FILTER_PORTS)
		return true;
	return port_watched(si->fl.sport) || port_watched(si->fl.dport);
}

/* The other direction of a connection: the same addresses swapped. */
static __always_inline void reverse(const struct gs_tap_flow *fl, struct gs_tap_flow *rev)
{
	__builtin_memcpy(rev->saddr, fl->daddr, 16);
	__builtin_memcpy(rev->daddr, fl->saddr, 16);
	rev->sport = fl->dport;
	rev->dport = fl->sport;
	rev->family = fl->family;
	rev->pad[0] = rev->pad[1] = rev->pad[2] = 0;
}

/* A connection the followed process uses is watched by the packet tap from
 * now on (`out`: the direction the process sends).  A send that starts with a
 * GIOP header tells where a message begins: framing starts (or starts again)
 * there.  The common case, a known connection, costs one lookup. */
static __always_inline void watch(const struct gs_tap_flow *out, bool giop_at, __u32 seq)
{
	struct gs_tap_fstate init = {};
	struct gs_tap_fstate *st = fstate_find(out);
	struct gs_tap_flow in;
	__u32 idx;
	__u64 now;
	if (st) {
		if (giop_at && st->mode == GS_FS_UNSYNC) {
			st->mode = GS_FS_SYNC;
			st->next_hdr = seq;
		}
		return;
	}
	if (giop_at) {
		init.mode = GS_FS_SYNC;
		init.next_hdr = seq;
	}
	now = bpf_ktime_get_ns();
	fstate_new(out, &init, now, &idx);
	reverse(out, &in);
	if (!fstate_find(&in)) {
		__builtin_memset(&init, 0, sizeof init);
		fstate_new(&in, &init, now, &idx);
	}
}

/* The first buffer of an iovec array in user memory. */
static __always_inline __u64 iov_first(__u64 iov)
{
	struct iovec v = {};
	if (!iov || bpf_probe_read_user(&v, sizeof v, (void *)iov))
		return 0;
	return (__u64)v.iov_base;
}

static __always_inline __u64 msg_first(__u64 msg)
{
	struct user_msghdr m = {};
	if (!msg || bpf_probe_read_user(&m, sizeof m, (void *)msg) || !m.msg_iovlen)
		return 0;
	return iov_first((__u64)m.msg_iov);
}

/* The slot of socket `sk` (connection `out`, the direction it sends) in
 * watch_tab; *known: it is there already.  NULL: the slot is held by another
 * CPU at this very moment (a syscall is handed over there): do without it. */
static __always_inline struct gs_tap_watch *watched_slot(__u64 sk, const struct gs_tap_flow *out,
							 bool *known)
{
	__u64 p = sk, tag, was;
	struct gs_tap_watch *w = watch_of(out, &tag);

	*known = w->sk == p && w->tag == tag;
	if (*known)
		return w;
	/* watch() comes next: from now on this slot is this socket's.  Its
	 * owner changes while the slot is held, and what still waits in it for
	 * the previous owner goes out first, as records of their own. */
	if (!hold(w, &was))
		return NULL;
	flush_held(w, was, GS_PEND_SEND | GS_PEND_RECV);
	w->sk = p;
	w->tag = tag;
	w->flow = *out;
	w->last_tid = 0;
	w->switch_ns = 0;
	w->cont_tid = 0;
	settle(w, 0);
	return w;
}

/* A send without head or a recv, left in its socket's slot for the packet tap
 * to take into a segment record (see watch_tab).  False: the slot is held
 * elsewhere or changed hands meanwhile; the caller writes the record itself. */
static __always_inline bool sys_wait(struct gs_tap_watch *w, __u64 sk, const struct gs_tap_flow *fl,
				     const struct gs_tap_fold_ev *ev, bool send)
{
	__u64 kind = send ? GS_PEND_SEND : GS_PEND_RECV, was;
	if (!hold(w, &was))
		return false;
	if (w->sk != sk || !flow_eq(&w->flow, fl)) {
		settle(w, was);
		return false;
	}
	/* the previous one of its kind was not taken (a send: nothing of it
	 * went out yet, or not by a tapped interface; a recv: the socket sent
	 * nothing since): its record first, in the order they came */
	was = flush_held(w, was, kind);
	if (send)
		w->send = *ev;
	else
		w->recv = *ev;
	settle(w, was | kind);
	return true;
}

/* Where a send's data is, to read its first bytes when they are wanted: the
 * kernel's msghdr of the call (BTF-typed, or an address read with CO-RE), or
 * the syscall's argument (the buffer of sendto and write, the msghdr of
 * sendmsg, the iovec array of writev: user memory).  Read only when the head
 * is wanted. */
struct send_src {
	const struct msghdr *kmsg_btf;
	__u64 kmsg_core;
	__u64 arg;
	/* a hook run once per pass of tcp_sendmsg_locked's copy loop (the
	 * tracepoint): the call's msghdr, and whether it may not block */
	__u64 pass_msg;
	bool dontwait;
};

/* A send by a followed process on TCP socket `si` (si->seq: the sequence
 * number its first byte gets); `len` the bytes asked (0: not known). */
static __always_inline int send_event(const struct sk_info *si, __u64 len, __u32 call, const struct send_src *src)
{
	struct gs_tap_fold_ev snd;
	const struct gs_tap_flow *fl = &si->fl;
	struct gs_tap_sys *r;
	struct gs_tap_watch *w;
	bool known, head;
	__u64 id, now, buf, was, sk = si->addr;
	__u32 tid, seq = si->seq;

	if (!wanted_flow(si))
		return 0;
	id = bpf_get_current_pid_tgid();
	tid = (__u32)id;
	w = watched_slot(sk, fl, &known);
	if (src->pass_msg && w) {
		/* tcp_sendmsg_locked's copy loop passes here once per chunk
		 * (under the socket lock): a later pass of the same call is this
		 * thread, this msghdr, and the bytes it copied since the last
		 * pass are exactly those write_seq moved by.  A pass that copied
		 * nothing (the loop waited for memory) is the same call only on
		 * a blocking send: a non-blocking one that copied nothing
		 * returned EAGAIN, and this is the send tried again. */
		__u32 left = len > 0xffffffffu ? 0xffffffffu : (__u32)len, moved = seq - w->cont_seq;
		bool more = known && w->cont_tid == tid && w->cont_msg == src->pass_msg &&
			    moved == w->cont_left - left && (moved || !src->dontwait);
		w->cont_msg = src->pass_msg;
		w->cont_seq = seq;
		w->cont_left = left;
		w->cont_tid = tid;
		if (more)
			return 0;
	}
	now = bpf_ktime_get_ns();
	/* the buffer's first bytes: on a socket seen for the first time (where a
	 * message starts tells the packet tap's framing), and where other
	 * threads sent lately */
	head = !known || !w || w->last_tid != tid || now - w->switch_ns < SWITCH_QUIET_NS;
	if (w && w->last_tid != tid) {
		if (w->last_tid)
			w->switch_ns = now;
		w->last_tid = tid;
	}
	snd.ts_ns = now;
	snd.seq = seq;
	/* 0: not known (the syscall hooks of sendmsg, writev: the sum of the iovec) */
	snd.len = len > 0xffffffffu ? 0xffffffffu : (__u32)len;
	snd.tgid = id >> 32;
	snd.tid = tid;
	snd.call = (__u16)call;
	__builtin_memset(snd.pad, 0, sizeof snd.pad);
	/* the common case: no record now, the segment's record carries it */
	if (!head && w && sys_wait(w, sk, fl, &snd, true))
		return 0;
	/* a record of its own: a send still waiting on the socket goes first */
	if (w && known && (w->state & GS_PEND_SEND) && hold(w, &was))
		settle(w, flush_held(w, was, GS_PEND_SEND));
	/* without the head, the short form */
	if (head)
		r = bpf_ringbuf_reserve(&events, sizeof *r, 0);
	else
		r = bpf_ringbuf_reserve(&events, GS_TAP_SYS_SHORT, 0);
	if (!r) {
		count(GS_CNT_RB_LOST);
		if (w && !known)
			w->sk = 0; /* not watched yet: the next send tries again */
		return 0;
	}
	r->kind = GS_REC_SEND;
	r->tgid = snd.tgid;
	r->tid = tid;
	r->ts_ns = now;
	r->ts_enter = 0;
	r->flow = *fl;
	r->seq = snd.seq;
	r->len = snd.len;
	r->call = (__u16)call;
	r->pad = 0;
	r->head_len = 0;
	/* the message it starts with: threads sending on one connection enter in
	 * one order and queue their bytes in another */
	if (head) {
		if (src->kmsg_btf)
			buf = iter_first_btf(src->kmsg_btf);
		else if (src->kmsg_core)
			buf = iter_first_core((const struct msghdr *)src->kmsg_core);
		else
			buf = call == GS_CALL_SENDMSG ? msg_first(src->arg) :
			      call == GS_CALL_WRITEV ? iov_first(src->arg) : src->arg;
		if (buf && bpf_probe_read_user(r->head, GS_TAP_USER_HEAD, (void *)buf) == 0)
			r->head_len = len && len < GS_TAP_USER_HEAD ? (__u8)len : GS_TAP_USER_HEAD;
		else
			__builtin_memset(r->head, 0, GS_TAP_USER_HEAD);
	}
	if (!known)
		watch(fl, r->head_len >= 4 && r->head[0] == 'G' && r->head[1] == 'I' &&
		      r->head[2] == 'O' && r->head[3] == 'P', r->seq);
	bpf_ringbuf_submit(r, wake_flags());
	return 0;
}

/* A recv by a followed process that returned `ret` bytes of TCP socket `si`
 * (read at its return: the bytes just copied end at si->seq, copied_seq). */
static __always_inline int recv_event(const struct sk_info *si, long ret, __u32 call)
{
	const struct gs_tap_flow *out = &si->fl;
	struct gs_tap_fold_ev ev;
	struct gs_tap_watch *w;
	bool known;
	__u64 id;

	if (!wanted_flow(si))
		return 0;
	id = bpf_get_current_pid_tgid();
	ev.ts_ns = bpf_ktime_get_ns();
	ev.len = ret > 0x7fffffff ? 0x7fffffff : (__u32)ret;
	/* read at the return: the bytes just copied end at copied_seq */
	ev.seq = si->seq - ev.len;
	ev.tgid = id >> 32;
	ev.tid = (__u32)id;
	ev.call = (__u16)call;
	__builtin_memset(ev.pad, 0, sizeof ev.pad);
	w = watched_slot(si->addr, out, &known);
	if (!known) {
		watch(out, false, 0);
	} else if (w && sys_wait(w, si->addr, out, &ev, false)) {
		/* the common case: the next segment the socket sends carries it */
		return 0;
	}
	if (sys_rec(&ev, out, false))
		count(GS_CNT_RB_LOST);
	return 0;
}

/* A recv is of the stream's data: peeked bytes are read again later,
 * out-of-band and error-queue data are not the stream's. */
static __always_inline bool stream_recv(long ret, int flags)
{
	return ret > 0 && !(flags & (MSG_PEEK | MSG_OOB | MSG_ERRQUEUE));
}

#endif
