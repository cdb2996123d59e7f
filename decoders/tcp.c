/* SPDX-License-Identifier: BSD-2-Clause */
#include "tcp.h"

/* The decoder is gs_tcp_decode_inline in tcp.h: the per-packet path
 * (decoders/packet.c) inlines it; everything else calls it here. */
enum gs_dec gs_tcp_decode(struct gs_span s, struct gs_tcp *t)
{
	return gs_tcp_decode_inline(s, t);
}
