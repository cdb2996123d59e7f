/* SPDX-License-Identifier: BSD-2-Clause */
/* Where attach takes the send and recv instants: the paths of each side,
 * best first, and what the kernel has of them (probed cheaply, from its BTF
 * and sysfs, before anything is loaded).  The send and the recv side are
 * chosen apart: a kernel may have sock:sock_recv_length and not
 * tcp:tcp_sendmsg_locked (6.12). */
#ifndef GS_ATTACH_HOOKS_H
#define GS_ATTACH_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

enum gs_hook_kind {
	GS_HK_TP_BTF,   /* BTF-typed tracepoint */
	GS_HK_RAW_TP,   /* the same tracepoint, raw (where tp_btf is refused) */
	GS_HK_FENTRY,   /* fentry/fexit on the TCP function */
	GS_HK_KPROBE,   /* kprobe/kretprobe on it */
	GS_HK_SYSCALLS, /* raw_syscalls:sys_enter/sys_exit: every syscall of the host */
};

/* --hooks: which kinds may be used */
enum gs_hooks_mode {
	GS_HOOKS_AUTO,
	GS_HOOKS_TRACEPOINT,
	GS_HOOKS_FENTRY,
	GS_HOOKS_KPROBE,
	GS_HOOKS_SYSCALLS,
};

enum gs_hook_side { GS_SIDE_SEND, GS_SIDE_RECV };

struct gs_hook_path {
	enum gs_hook_kind kind;
	const char *prog[2];      /* its programs in giop_tap's object (kprobe recv: entry, return) */
	const char *hook[2];      /* where each attaches: "tp_btf/tcp_sendmsg_locked" */
	const char *target;       /* the tracepoint or function the first line names */
};

#define GS_HOOK_PATHS 5
/* side's paths, best first */
const struct gs_hook_path *gs_hook_paths(enum gs_hook_side side);

/* "auto", "tracepoint", ...: 0, or -1 for a word that is none */
int gs_hooks_mode_parse(const char *s, enum gs_hooks_mode *m);
const char *gs_hooks_mode_name(enum gs_hooks_mode m);
bool gs_hooks_mode_takes(enum gs_hooks_mode m, enum gs_hook_kind k);
const char *gs_hook_kind_name(enum gs_hook_kind k);

/* What the kernel offers, looked up once. */
struct btf;
struct gs_hook_env {
	struct btf *vmlinux;      /* NULL: the kernel has no BTF */
	bool kprobes;             /* the kprobe PMU is there (CONFIG_KPROBES) */
};
void gs_hook_env_open(struct gs_hook_env *e);
void gs_hook_env_close(struct gs_hook_env *e);
/* The kernel has what `p` hooks; false with the reason in `why`. */
bool gs_hook_probe(const struct gs_hook_env *e, const struct gs_hook_path *p, char *why, size_t len);

#endif
