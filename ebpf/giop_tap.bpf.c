// SPDX-License-Identifier: GPL-2.0
/* The kernel side of `giopscope attach`.
 *
 * Packet tap (tc, attached as TCX links: owned by the probe's file
 * descriptors, so a killed probe leaves nothing behind): for the TCP
 * connections it watches, every segment becomes a small record (time, flow,
 * seq, ack, length, flags, window) plus the first GS_TAP_HEAD_MAX bytes of each
 * GIOP message that starts in it -- never whole payloads.  Where messages start
 * is found by framing each direction with the GIOP header's size field; the
 * framing state lives in a direct-mapped table, `fcache` (no hash lookup for
 * the common packet), and in the LRU hash `flows` for the directions whose
 * slot another one holds.
 *
 * Send/recv hooks of the followed processes: a send entering TCP (t1/t5: the
 * process hands the bytes to the kernel) and a socket receive returning (t4/t8:
 * the process has them), with the TCP sequence number of the first byte, so
 * that user space places each message's first and last byte exactly.  By
 * default the socket layer's tracepoints tcp:tcp_sendmsg_locked and
 * sock:sock_recv_length (tp_btf, or raw_tp where tp_btf is refused), which run
 * for socket sends and receives only; the syscall hooks (raw_syscalls
 * sys_enter/sys_exit, on every syscall of the host) are the fallback for
 * kernels without them (user space loads one set: probe/attach_bpf.c).
 *
 * Everything goes through one ring buffer, in the order it happened.  Records
 * do not wake the reader (it polls); a ring filling past wake_bytes does.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "giop_tap.h"
#include "giop_frame.bpf.h"
#include "sock.bpf.h"
#include "tap_maps.bpf.h"
#include "tap_watch.bpf.h"
#include "tap_fstate.bpf.h"
#include "tap_packet.bpf.h"
#include "tap_frame.bpf.h"
#include "tap_records.bpf.h"

static __always_inline int tap(struct __sk_buff *skb, bool egress)
{
	/* The record's time stamp is taken right after its place in the ring is
	 * reserved, not here: records from two CPUs then come in the ring in the
	 * order of their time stamps (the order attach's engine reads them in),
	 * which a stamp taken here, before the parsing and framing, did not
	 * ensure.  It is later than tc's start by that work (docs/attach.md). */
	__u32 ifindex = skb->ifindex, l2, l2v, fi;
	struct gs_tap_fstate *st;
	struct gs_tap_fcache *fc;
	struct gs_tap_watch *w = NULL;
	struct gs_tap_seg_fold *fold;
	struct scratch *sc;
	__u64 was = 0, left = 0;
	__u32 zero = 0;
	struct frame_ctx c;
	struct pkt p = {};
	bool claim_ok;
	int r;

	l2v = iface_l2(ifindex);
	if (!l2v)
		return TCX_NEXT;
	l2 = (l2v & GS_TAP_IF_L2_MASK) - 1;
	r = parse_direct(skb, l2, &p);
	if (r == 0 || (r < 0 && !parse(skb, l2, &p)))
		return TCX_NEXT;

	r = fc_fast(&p.flow, p.flags);
	if (r < 0)
		r = fc_get(&p.flow, p.seq, p.flags);
	if (r < 0)
		return TCX_NEXT;
	fi = (__u32)r;
	fc = bpf_map_lookup_elem(&fcache, &fi);
	if (!fc)
		return TCX_NEXT;
	st = &fc->st;
	c.n = 0;
	c.used = 0;
	c.flags = egress ? GS_SEG_EGRESS : 0;
	claim_ok = fold_sends && (egress || (l2v & GS_TAP_IF_CLAIM_IN));
	/* the common data segment: one load, one record (one_fast) */
	if (p.plen >= GIOP_HDR && !(p.flags & TCP_SYN) && one_fast(skb, &p, fi, c.flags, claim_ok) == 0)
		return TCX_NEXT;
	/* the syscalls taken live in the scratch area (the stack is short) */
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return TCX_NEXT;
	fold = &sc->fold;
	if (p.plen) {
		c.skb = skb;
		c.st = st;
		c.seq = p.seq + ((p.flags & TCP_SYN) ? 1 : 0);
		c.poff = p.poff;
		c.plen = p.plen;
		c.start = 0;
		c.fi = fi;
		frame(&c);
		/* (not kept in a variable: the tap's stack is at its limit) */
		if (!frame_more(&c))
			frame_done(&c);
		fc_put_back(&p.flow, fi, st);
	}
	/* the syscalls of a followed process waiting for this segment (its
	 * socket sends it: it leaves here, or comes back in on loopback): their
	 * records are this one's */
	if (claim_ok)
		w = claim(&p.flow, p.seq + ((p.flags & TCP_SYN) ? 1 : 0), p.plen, fold, &was, &left);
	if (c.n == 0) {
		if (w) {
			struct {
				struct gs_tap_seg h;
				struct gs_tap_seg_fold s;
			} *rs = bpf_ringbuf_reserve(&events, sizeof *rs, 0);
			if (rs) {
				seg_fill(&rs->h, &p, seg_time(skb->tstamp, c.flags), ifindex, c.flags, 0, 0);
				rs->h.sys_off = sizeof rs->h;
				rs->s = *fold;
				submit(rs);
				r = 0;
			} else {
				r = -1;
			}
		} else {
			struct gs_tap_seg *rec = bpf_ringbuf_reserve(&events, sizeof *rec, 0);
			if (rec) {
				seg_fill(rec, &p, seg_time(skb->tstamp, c.flags), ifindex, c.flags, 0, 0);
				submit(rec);
				r = 0;
			} else {
				r = -1;
			}
		}
	} else if (c.n == 1) {
		__u32 k = c.heads[0].len;
		const struct gs_tap_seg_fold *fp = w ? fold : NULL;
		r = k <= 64 ? seg_one_64(skb, &p, &c, ifindex, fp) :
		    k <= 128 ? seg_one_128(skb, &p, &c, ifindex, fp) :
		    seg_one_256(skb, &p, &c, ifindex, fp);
	} else {
		/* rare (several messages start here): records of their own
		 * first, as they would have come */
		if (w) {
			settle(w, flush_held(w, was, was & ~left));
			w = NULL;
		}
		bool more = frame_more(&c);
		r = seg_many(skb, &p, &c, ifindex, more ? c.st->next_hdr - c.seq : c.plen);
		if (more) {
			if (!r) {
				c.p = &p;
				c.ifindex = ifindex;
				bpf_loop(MORE_RECORDS, seg_more, &c, 0);
			}
			frame_done(&c);
			fc_put_back(&p.flow, fi, st);
		}
	}
	if (r)
		count(GS_CNT_RB_LOST);
	/* what was taken went with the record; the record was lost: it waits
	 * on (the next syscall of its kind, or user space, writes it) */
	if (w)
		settle(w, r ? was : left);
	return TCX_NEXT;
}

SEC("tc")
int giop_tap_ingress(struct __sk_buff *skb)
{
	return tap(skb, false);
}

SEC("tc")
int giop_tap_egress(struct __sk_buff *skb)
{
	return tap(skb, true);
}

#include "send_recv.bpf.h"

/* tp_btf: the arguments as the tracepoint declares them (the verifier types
 * what is loaded from the context: sk, msg; then skb, size_goal, unused) */
SEC("tp_btf/tcp_sendmsg_locked")
int tcp_send_btf(__u64 *ctx)
{
	return on_tcp_send((struct sock *)ctx[0], (const struct msghdr *)ctx[1]);
}

/* sk, ret, flags */
SEC("tp_btf/sock_recv_length")
int sock_recv_btf(__u64 *ctx)
{
	return on_sock_recv((struct sock *)ctx[0], (int)ctx[1], (int)ctx[2]);
}

/* The same where tp_btf is refused: untyped arguments, read through
 * BTF-typed views all the same. */
SEC("raw_tp/tcp_sendmsg_locked")
int tcp_send_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_tcp_send(as_sock(ctx->args[0]),
			   bpf_rdonly_cast((void *)ctx->args[1], bpf_core_type_id_kernel(struct msghdr)));
}

SEC("raw_tp/sock_recv_length")
int sock_recv_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return on_sock_recv(as_sock(ctx->args[0]), (int)ctx->args[1], (int)ctx->args[2]);
}

#include "syscalls.bpf.h"

char LICENSE[] SEC("license") = "GPL";
