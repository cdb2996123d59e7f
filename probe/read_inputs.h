/* SPDX-License-Identifier: BSD-2-Clause */
/* read's inputs as one capture: each looked at before anything is read or
 * written (it opens, it is a capture, compressed or not, and its first packet),
 * then put in the order of their first packets, whatever the order on the
 * command line (mergecap's default: the parts of a rotated capture, editcap -c
 * or tcpdump -C, give the calls of the unsplit file), and an input that is
 * another one again (the same file, or one whose first packet is the same:
 * a copy, a pcapng conversion) marked to be read once. */
#ifndef GS_READ_INPUTS_H
#define GS_READ_INPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tap_pcap.h"

struct gs_input {
	const char *path;
	bool has_first;          /* it holds a packet */
	int64_t first_ts;        /* its first packet's time stamp, ns */
	uint32_t first_caplen;
	uint64_t first_hash;     /* of its first packet's bytes */
	bool stream;             /* stdin, a pipe, a device: read once, not looked into first */
	dev_t dev;               /* the file's identity (0, 0: stdin) */
	ino_t ino;
	int same_as;             /* -1, or the index (after ordering) of the input it repeats */
};

/* Looks at `path` ("-", a pipe, a device: nothing is read, in->stream true):
 * GS_READ_OK, or
 * GS_READ_CANNOT_OPEN / GS_READ_BAD_INPUT with a one-line reason in `err`. */
enum gs_read_result gs_input_peek(const char *path, struct gs_input *in, char *err, size_t errlen);

/* Orders `n` peeked inputs by their first packets (stable: equal or empty
 * ones keep the command line's order) and sets same_as of each repeat. */
void gs_inputs_order(struct gs_input *in, int n);

#endif
