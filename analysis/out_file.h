/* analysis/out_file.h -- how giopscope opens every file it writes (-o, -w, --report,
 * --trace): created or truncated, never through a symbolic link (O_NOFOLLOW: the probe
 * often runs as root, and a link planted in a shared directory must not make it
 * overwrite another file), closed on exec. */
#ifndef GIOPSCOPE_OUT_FILE_H
#define GIOPSCOPE_OUT_FILE_H

#include <stdio.h>
#include <sys/types.h>

/* A stream on PATH opened for writing with permissions MODE (e.g. 0644; 0600 for
 * captured packets), or NULL with errno set. */
FILE *gs_out_open(const char *path, mode_t mode);

/* For a file written only at the end of a run (--report): creates or truncates PATH now
 * the same way and closes it, so that a path that cannot be written is said before the
 * run, not after it. 0 or an errno value; "-" (standard output) is always 0. */
int gs_out_check(const char *path, mode_t mode);

#endif
