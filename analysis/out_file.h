/* SPDX-License-Identifier: BSD-2-Clause */
/* analysis/out_file.h -- how giopscope writes every file (-o, -w, --report, --trace).
 *
 * Never through a symbolic link (the probe often runs as root, and a link planted in a
 * shared directory must not make it overwrite another file), closed on exec, and never at
 * the expense of what the user already has: the data goes to a new file with a unique
 * name in the same folder (".NAME.XXXXXX", created exclusively, O_NOFOLLOW), which
 * replaces NAME by rename(2) only when the command says so (gs_out_commit, or
 * gs_out_close with keep).  A run that fails at set-up discards it: an existing NAME is
 * left as it was and no temporary file stays behind.
 *
 * Written in place, as before, only where a temporary file cannot be: standard output
 * ("-"), an existing NAME that is not a regular file (a terminal, /dev/null, a FIFO), and
 * a folder where we may not create files while NAME itself may be written. */
#ifndef GIOPSCOPE_OUT_FILE_H
#define GIOPSCOPE_OUT_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct gs_out {
	FILE *f;                  /* NULL until gs_out_create succeeded */
	const char *path;         /* the final name (the caller's string, kept as is) */
	char tmp[PATH_MAX];       /* the temporary name; "" once renamed, or when in place */
};

/* Opens a new stream for PATH: 0, or an errno value (ELOOP: PATH is a symbolic link;
 * EISDIR: a folder).  MODE as for open(2), the umask applied (0666 for an ordinary output;
 * 0600 for captured packets); an existing regular PATH lends its permissions (and, where
 * allowed, its owner) to the file that replaces it.  "-" is standard output. */
int gs_out_create(struct gs_out *o, const char *path, mode_t mode);

/* Puts the file under its final name now (the stream stays open and writable): 0 or an
 * errno value.  Nothing to do when already there or in place. */
int gs_out_commit(struct gs_out *o);

/* Closes the stream (standard output is only flushed).  KEEP: the file goes under its
 * final name (gs_out_commit) unless writing it failed; !KEEP: a file not committed yet is
 * removed, and an existing PATH stays as it was.  Returns 0, or the errno value of the
 * failed write, flush or rename.  Harmless on a zeroed or already closed struct. */
int gs_out_close(struct gs_out *o, bool keep);

/* For a file written only at the end of a run (--report): says now, without touching
 * PATH, whether gs_out_create would succeed.  0 or an errno value; "-" is always 0. */
int gs_out_check(const char *path, mode_t mode);

/* The one-line reason a file cannot be written, without "giopscope CMD: ":
 * "PATH: is a symbolic link, not followed" or "cannot write PATH: <strerror>". */
const char *gs_out_why(char *buf, size_t len, const char *path, int err);

#endif
