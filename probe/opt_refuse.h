/* SPDX-License-Identifier: BSD-2-Clause */
/* The end of every command's getopt_long loop: an option the command does not take, or one
 * whose value is missing, refused in one line on stderr, the same words for every command. */
#ifndef GS_OPT_REFUSE_H
#define GS_OPT_REFUSE_H

#include <stdio.h>

/* `opt` as getopt_long returned it (':' a value missing, anything else an option the command
 * does not know), `word` the command-line word it was (argv[optind - 1]), `hint` more words
 * after the pointer to --help (NULL: none).  Prints "giopscope CMD: ..." to `err` and returns
 * 2, the usage exit code, for the caller to return. */
int gs_opt_refuse(FILE *err, const char *cmd, int opt, const char *word, const char *hint);

#endif
