/* SPDX-License-Identifier: BSD-2-Clause */
/* Results shared by the packet decoders. */
#ifndef GS_DECODE_H
#define GS_DECODE_H

enum gs_dec {
	GS_DEC_OK = 0,
	GS_DEC_SKIP,      /* well-formed, but not something we decode (ARP, UDP, ...) */
	GS_DEC_TRUNCATED, /* the capture stopped before the header did (snaplen) */
	GS_DEC_INVALID,   /* the header contradicts itself (bad version, bad length) */
};

const char *gs_dec_name(enum gs_dec r);

#endif
