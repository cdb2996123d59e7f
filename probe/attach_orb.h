/* SPDX-License-Identifier: BSD-2-Clause */
/* `giopscope attach --orb PROFILE`: uprobes on an ORB's upcall boundary
 * (ebpf/orb_upcall.bpf.c), read into a thread log (analysis/thread_log.h).
 *
 * An ORB profile is data (probe/orb_profiles/NAME.txt, compiled in; or a file
 * given by path): the ORB's shared library and, per probe, a mangled symbol,
 * the edge it marks (start: the servant is next; end: the servant is done) and
 * where (entry or return).  docs/attach.md, "ORB profiles". */
#ifndef GS_ATTACH_ORB_H
#define GS_ATTACH_ORB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../analysis/orb_profile.h"
#include "../analysis/thread_log.h"
#include "attach_load.h"

/* A compiled-in profile by name, or (with a '/') a profile file.  0, or 1
 * with a one-line reason (unknown name, bad line) in `err`. */
int gs_orb_profile_load(struct gs_orb_profile *p, const char *name, char *err, size_t errlen);
/* The names of the compiled-in profiles, comma separated. */
const char *gs_orb_profile_names(char *buf, size_t len);

/* Each of `tgids` maps the profile's library: 0, or 2 with the one-line
 * reason ("pid N does not map LIB: not a NAME program") in `err`. */
int gs_orb_check_pids(const struct gs_orb_profile *prof, const uint32_t *tgids, uint32_t n, char *err,
		      size_t errlen);

struct gs_orb_probe;

/* Attaches the profile's probes to the processes `tgids` (each must map the
 * profile's library).  0, or 2 with the one-line reason in `err`. */
int gs_orb_probe_open(struct gs_orb_probe **out, const struct gs_orb_profile *prof, const uint32_t *tgids,
		      uint32_t n, struct gs_tlog *log, char *err, size_t errlen);
void gs_orb_probe_drain(struct gs_orb_probe *p);
/* As gs_sched_probe_complete(), for the upcall ring. */
int64_t gs_orb_probe_complete(const struct gs_orb_probe *p, uint64_t *stalls);
void gs_orb_probe_counts(const struct gs_orb_probe *p, uint64_t *records, uint64_t *lost, int64_t *last_lost);
void gs_orb_probe_close(struct gs_orb_probe *p);
/* attach --check: the upcall programs loaded alone as gs_orb_probe_open
 * would, nothing attached, a row each; returns how many were refused. */
int gs_orb_probe_check(const uint32_t *tgids, uint32_t n, gs_verdict_fn fn, void *arg);

#endif
