/* SPDX-License-Identifier: BSD-2-Clause */
/* The probe's set-up functions say why they failed into the caller's buffer
 * (docs/design.md, "Errors"), and return the command's exit status for it. */
#ifndef GS_ERR_BUF_H
#define GS_ERR_BUF_H

#include <stddef.h>

/* Formats the reason into err (errlen bytes, always terminated); returns 2, a
 * usage or environment error. */
int gs_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
