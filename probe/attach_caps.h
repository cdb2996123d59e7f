/* SPDX-License-Identifier: BSD-2-Clause */
/* The capabilities `giopscope attach` needs to load and attach its eBPF taps
 * (giving them up once that is done: privdrop.h, shared with -Z). */
#ifndef GS_ATTACH_CAPS_H
#define GS_ATTACH_CAPS_H

#include <stdbool.h>
#include <stddef.h>

/* True when the effective set allows loading (CAP_BPF, or CAP_SYS_ADMIN),
 * tracing (CAP_PERFMON, or CAP_SYS_ADMIN) and tc attachment (CAP_NET_ADMIN);
 * otherwise `why` names the missing ones. */
bool gs_caps_enough(char *why, size_t len);

#endif
