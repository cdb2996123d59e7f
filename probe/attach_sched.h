/* SPDX-License-Identifier: BSD-2-Clause */
/* `giopscope attach --sched`: the scheduler probes (ebpf/sched.bpf.c) of the
 * followed thread groups, read into a thread log (analysis/thread_log.h).
 * The only file that sees the sched skeleton; a build without eBPF gets a
 * stub that says so. */
#ifndef GS_ATTACH_SCHED_H
#define GS_ATTACH_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "../analysis/thread_log.h"
#include "attach_load.h"

struct gs_sched_probe;

/* Loads and attaches the probes for the thread groups `tgids` (at most
 * GS_SCHED_TGIDS, 16); their records go into `log`.  0, or 2 with the reason
 * in `err`. */
int gs_sched_probe_open(struct gs_sched_probe **out, const uint32_t *tgids, uint32_t n, struct gs_tlog *log,
			char *err, size_t errlen);
/* Moves every record waiting in the ring into the log. */
void gs_sched_probe_drain(struct gs_sched_probe *p);
/* Every record stamped up to the time returned (CLOCK_MONOTONIC ns) has been
 * drained into the log (probe/ring_mark.h); *stalls: drains that found a
 * record reserved and not yet written. */
int64_t gs_sched_probe_complete(const struct gs_sched_probe *p, uint64_t *stalls);
/* Records the kernel side wrote (the closing report sets them beside those read). */
uint64_t gs_sched_probe_written(const struct gs_sched_probe *p);
/* Records written and lost (ring full) so far; the time (CLOCK_MONOTONIC) of
 * the last loss in *last_lost (0: none). */
void gs_sched_probe_counts(const struct gs_sched_probe *p, uint64_t *records, uint64_t *lost, int64_t *last_lost);
void gs_sched_probe_close(struct gs_sched_probe *p);
/* attach --check: each program loaded alone as gs_sched_probe_open would,
 * nothing attached, a row each; returns how many were refused. */
int gs_sched_probe_check(const uint32_t *tgids, uint32_t n, gs_verdict_fn fn, void *arg);

#endif
