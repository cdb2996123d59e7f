/* SPDX-License-Identifier: BSD-2-Clause */
/* What the kernel's verifier log says (text only, no libbpf: unit tested):
 * the instructions it went through, whether it gave up at its limit, and
 * its reason for refusing a program. */
#ifndef GS_VERIFIER_LOG_H
#define GS_VERIFIER_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The count of the last "processed N insns" (the statistics line), -1: none. */
int64_t gs_vlog_insns(const char *log);
/* The verifier gave up at its instruction limit ("BPF program is too large"). */
bool gs_vlog_too_large(const char *log);
/* The last two lines that are not statistics, joined by "; " (the verifier
 * writes its reason last); "" when there are none. */
void gs_vlog_reason(const char *log, char *out, size_t len);
/* gs_vlog_reason finds a line: the program was refused, not just counted. */
bool gs_vlog_has_reason(const char *log);
/* "1 000 001": a count as the messages write it. */
const char *gs_vlog_count(int64_t n, char *buf, size_t len);

#endif
