/* SPDX-License-Identifier: BSD-2-Clause */
/* The pcap tap, offline: pcap and pcapng files (or stdin) through libpcap with
 * nanosecond time stamps, fed frame by frame to an engine. */
#ifndef GS_TAP_PCAP_H
#define GS_TAP_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../analysis/engine.h"

enum gs_read_result {
	GS_READ_OK = 0,
	GS_READ_BAD_INPUT = 1,   /* not a capture, truncated, unsupported link type */
	GS_READ_CANNOT_OPEN = 2, /* missing file, no permission */
};

struct gs_read_progress {
	bool enabled;            /* print a progress line to stderr (a terminal) */
	uint64_t packets;        /* across files */
	int64_t last_print_ns;
};

/* The progress line (stderr, at most once a second; `last`: the closing one,
 * with a newline): `path`, how far into it (`pos` of `size` bytes; -1 or a
 * size of 0: not known) and p->packets.  read draws it every 65536 packets,
 * with `last` at the end of a file when it drew one. */
void gs_read_progress_line(struct gs_read_progress *p, const char *path, off_t pos, off_t size, bool last);

/* The one-line error of a capture file cut short while it was read (truncated
 * under the read), after `n` packets: the readers' and the walks' alike. */
void gs_read_cut_short(char *err, size_t errlen, const char *path, uint64_t n);

/* Whether `path` opens for reading (and is not a folder), before any output is touched:
 * GS_READ_OK, or GS_READ_CANNOT_OPEN with `err` holding the same one-line reason
 * gs_pcap_read_file would give.  "-" (stdin) is always GS_READ_OK. */
enum gs_read_result gs_pcap_check_file(const char *path, char *err, size_t errlen);

/* Reads one file ("-": stdin) into the engine.  On failure `err` holds a
 * one-line reason; frames read before the failure were fed. */
enum gs_read_result gs_pcap_read_file(const char *path, struct gs_engine *e,
				      struct gs_read_progress *prog, int *snaplen,
				      char *err, size_t errlen);

/* The same, every frame handed to `fn` instead of an engine (read --threads). */
typedef void (*gs_frame_fn)(void *arg, int dlt, int64_t ts_ns, const uint8_t *data, uint32_t caplen,
			    uint32_t wirelen);
enum gs_read_result gs_pcap_read_file_fn(const char *path, gs_frame_fn fn, void *arg,
					 struct gs_read_progress *prog, int *snaplen,
					 char *err, size_t errlen);
/* The same from the record at file offset `start` on (the file's first `n0`
 * records read already, counted in messages): libpcap reads the rest. */
enum gs_read_result gs_pcap_read_file_from(const char *path, off_t start, uint64_t n0, gs_frame_fn fn, void *arg,
					   struct gs_read_progress *prog, int *snaplen, char *err, size_t errlen);

#endif
