/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* GIOP framing in the kernel: the 12-byte header gives every message's extent,
 * so knowing where one message starts finds all the next ones, also when they
 * start mid-segment or several share a segment.  Only the header is checked
 * here; user space decodes the heads the tap ships.  Included by
 * giop_tap.bpf.c only. */
#ifndef GS_GIOP_FRAME_BPF_H
#define GS_GIOP_FRAME_BPF_H

#define GIOP_HDR 12

/* before(a, b) in sequence space (RFC 1982 style, as the kernel's before()) */
static __always_inline bool seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

/* A plausible GIOP header: magic, version 1.0-1.3, a known type, no reserved
 * flag bits, a size within the bound.  Returns the whole message length
 * (header included), or 0. */
static __always_inline __u32 giop_msg_len(const __u8 *h, __u32 max_size)
{
	__u32 size;
	if (h[0] != 'G' || h[1] != 'I' || h[2] != 'O' || h[3] != 'P')
		return 0;
	if (h[4] != 1 || h[5] > 3 || h[7] > 7)
		return 0;
	/* 1.0: byte order is a boolean; 1.1+: bit 0 order, bit 1 more fragments */
	if (h[5] == 0 ? h[6] > 1 : (h[6] & ~3) != 0)
		return 0;
	if (h[6] & 1)
		size = (__u32)h[8] | (__u32)h[9] << 8 | (__u32)h[10] << 16 | (__u32)h[11] << 24;
	else
		size = (__u32)h[11] | (__u32)h[10] << 8 | (__u32)h[9] << 16 | (__u32)h[8] << 24;
	if (size > max_size)
		return 0;
	return size + GIOP_HDR;
}

#endif
