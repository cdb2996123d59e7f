/* SPDX-License-Identifier: BSD-2-Clause */
/* Loading eBPF objects with a verifier log per program: which program the
 * kernel refused and why, in words, and how many instructions the verifier
 * went through (attach's errors and `attach --check`).  Generic over
 * libbpf's bpf_object: the objects' own files (attach_bpf.c, attach_sched.c,
 * attach_orb.c, attach_tls.c) open and configure them. */
#ifndef GS_ATTACH_LOAD_H
#define GS_ATTACH_LOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* BPF_COMPLEXITY_LIMIT_INSNS: what the verifier goes through at most per program */
#define GS_VERIFIER_LIMIT 1000000

/* What became of one program. */
struct gs_prog_verdict {
	char program[64];
	char hook[96];            /* where it attaches: "tc ingress", "tp_btf/sock_recv_length" */
	bool loaded;              /* loaded, and (for a hook) the kernel has the hook */
	bool used;                /* attach would use it (--check: else a candidate not chosen) */
	int err;                  /* the load's negative errno, 0 */
	int64_t insns;            /* instructions the verifier processed, -1: not known */
	char reason[400];         /* why not, in words ("" when loaded) */
};

/* One row for `attach --check`. */
typedef void (*gs_verdict_fn)(void *arg, const struct gs_prog_verdict *v);

struct bpf_object;
struct bpf_program;

/* Opens and configures an object as attach would, not loaded; NULL with errno. */
typedef struct bpf_object *(*gs_load_open_fn)(const void *arg);

/* For the openers: an object from a skeleton's bytes (`name`: its object name)
 * with its .rodata section copied into `ro` (at most `ro_len` bytes: the
 * skeleton's struct, which may be longer by its tail padding; *ro_sz: the
 * section's size), for the caller to set; NULL with errno. */
struct bpf_object *gs_load_open_mem(const void *bytes, size_t sz, const char *name, void *ro, size_t ro_len,
				    size_t *ro_sz);
/* The .rodata section set from `ro` (its *ro_sz bytes), before the load. */
int gs_load_set_rodata(struct bpf_object *o, const void *ro, size_t ro_sz);

/* Loads program `name` of the object alone (the others not loaded, nothing
 * attached) at log level 4 (the verifier's statistics and its reason when it
 * refuses): fills v->loaded, err, insns, reason.  False: no such program in
 * the object (nothing filled). */
bool gs_load_alone(gs_load_open_fn open, const void *arg, const char *name, struct gs_prog_verdict *v);

/* Every program of the object, each loaded alone (all of them used by
 * attach), a row each; `hook`: the section name.  Returns how many were refused. */
int gs_load_check_all(gs_load_open_fn open, const void *arg, gs_verdict_fn fn, void *fnarg);

/* A whole-object load with a log buffer per program to be loaded. */
#define GS_LOAD_MAX_PROGS 48
struct gs_load_logs {
	struct {
		struct bpf_program *prog;
		char *buf;
	} p[GS_LOAD_MAX_PROGS];
	unsigned n;
};
/* Before bpf_object__load: every program to be loaded logs at level 4 into its
 * own buffer.  0 or -ENOMEM. */
int gs_load_logs_set(struct gs_load_logs *l, struct bpf_object *o);
/* After a failed bpf_object__load (returned `err`): the program the kernel
 * refused (libbpf loads in order and stops at the first refused: the last
 * with a log), its verdict in v.  NULL when the failure was not a program's. */
struct bpf_program *gs_load_logs_refused(const struct gs_load_logs *l, int err, struct gs_prog_verdict *v);
void gs_load_logs_free(struct gs_load_logs *l);

/* libbpf's warnings collected from here on (its print hook switched; the
 * one returned is the previous, for libbpf_set_print after the load), and
 * what was collected. */
#ifdef GS_HAVE_EBPF
#include <bpf/libbpf.h>
libbpf_print_fn_t gs_load_warnings_begin(void);
#endif
const char *gs_load_warnings(void);
/* The first of them that says why a load failed ("" if none). */
void gs_load_first_warning(char *out, size_t len);

/* Fills v->insns (prog info, else the log's "processed N insns") and reason
 * from a load's result and its log. */
void gs_load_verdict(struct gs_prog_verdict *v, const struct bpf_program *prog, int err, const char *log);

/* Loads `name` alone again at log level 1 with a large buffer and writes the
 * whole verifier log to $TMPDIR (or /tmp)/giopscope-verifier-NAME-PID.log.
 * True with the file's path in `path`. */
bool gs_load_save_log(gs_load_open_fn open, const void *arg, const char *name, char *path, size_t len);

/* A line on stderr if a load takes more than a second (the verifier is slow
 * on some hosts: attach is not hung); a thread waits for it. */
struct gs_load_notice {
	const char *text;
	bool running;
	bool done;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};
void gs_load_notice_start(struct gs_load_notice *n, const char *text);
void gs_load_notice_stop(struct gs_load_notice *n);

/* The one-line error of a failed load: `what` (a prefix: "--sched: "), the
 * program the kernel refused and why in words (v; NULL when the failure was
 * not a program's: libbpf's first warning then), the kernel (uname -r), the
 * file the whole verifier log was saved to (the program loaded alone again
 * through open/arg), then `works` (what still works).  Returns 2. */
int gs_load_refusal(const struct gs_prog_verdict *v, int r, gs_load_open_fn open, const void *arg, const char *what,
		    const char *works, char *err, size_t errlen);

/* A skeleton's load (`load(skel)`: its NAME__load) with a verifier log per
 * program of `obj`, libbpf's warnings kept for the message: 0, or 2 with a
 * refusal said as gs_load_refusal says it (what, works, open/arg as there). */
int gs_load_said(struct bpf_object *obj, int (*load)(void *skel), void *skel, gs_load_open_fn open,
		 const void *arg, const char *what, const char *works, char *err, size_t errlen);


#endif
