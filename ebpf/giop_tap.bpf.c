// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
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
#include <bpf/bpf_tracing.h>

#include "giop_tap.h"
#include "giop_frame.bpf.h"
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
	__u32 ifindex = skb->ifindex, l2, l2v, fi, flags;
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
	flags = egress ? GS_SEG_EGRESS : 0;
	claim_ok = fold_sends && (egress || (l2v & GS_TAP_IF_CLAIM_IN));
	/* the common data segment: one load, one record (one_fast) */
	if (p.plen >= GIOP_HDR && !(p.flags & TCP_SYN) && one_fast(skb, &p, fi, flags, claim_ok) == 0)
		return TCX_NEXT;
	/* the general way: framed, then written (two global functions) */
	frame_seg(skb, &p, fi, flags);
	write_seg(skb, &p, fi, claim_ok);
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

#include "sock.bpf.h"
#include "send_recv.bpf.h"
/* the send/recv hooks, one family per kernel feature (user space loads one
 * send and one recv program: probe/attach_bpf.c) */
/* the BPF_PROG / BPF_KPROBE wrappers hand every program a ctx it may not use */
#pragma clang diagnostic ignored "-Wunused-parameter"
#include "hooks_tracepoint.bpf.h"
#include "hooks_fentry.bpf.h"
#include "hooks_kprobe.bpf.h"
#include "syscalls.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
