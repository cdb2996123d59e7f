/* SPDX-License-Identifier: BSD-2-Clause */
/* Compressed captures read transparently (read): a stream whose first bytes
 * say gzip or zstd is handed to libpcap as a stream of its decompressed bytes
 * (a stdio cookie stream), from a file or from stdin alike.  By content, never
 * by name: a .pcap.gz that is not compressed is read as it is.  The bytes are
 * untrusted like any capture's: the libraries bound their own memory (zstd's
 * window at 2^27, as its command-line tool), a corrupt or cut stream is one
 * line, and tests/fuzz/fuzz_decomp.c feeds them arbitrary bytes. */
#ifndef GS_DECOMP_H
#define GS_DECOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum gs_decomp_kind { GS_DECOMP_NONE, GS_DECOMP_GZIP, GS_DECOMP_ZSTD };

struct gs_decomp;

/* Looks at the first bytes of `in` (at its start; `seekable`: a regular file,
 * looked at with pread, its position left alone) and sets *out to the stream to read: `in`
 * itself when it is not compressed and seekable, else a cookie stream that
 * owns `in` (closing it closes `in`, unless `in` is stdin).  *d (NULL for
 * `in` itself) stays valid until *out is closed, for gs_decomp_why.
 * 0, or EINVAL with `err` holding a one-line reason (a compression giopscope
 * does not read, or one this build lacks), or an errno value; on failure `in`
 * is left to the caller.  `ahead`: inflate on a thread of its own, ahead of
 * the reader (what is read to the end; not what is only looked into). */
int gs_decomp_open(FILE *in, bool seekable, bool ahead, const char *name, FILE **out, struct gs_decomp **d,
		   char *err, size_t errlen);
enum gs_decomp_kind gs_decomp_kind(const struct gs_decomp *d);
/* What went wrong in the compressed stream (corrupt, cut short), or NULL: a
 * reader that met the end or an error asks before it blames the capture. */
const char *gs_decomp_why(struct gs_decomp *d);
/* The compression's name for messages: "gzip", "zstd", "" for none. */
const char *gs_decomp_name(enum gs_decomp_kind k);

#endif
