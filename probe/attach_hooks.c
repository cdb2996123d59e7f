/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_hooks.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct gs_hook_path send_paths[GS_HOOK_PATHS] = {
	{ GS_HK_TP_BTF, { "tcp_send_btf", NULL }, { "tp_btf/tcp_sendmsg_locked", NULL }, "tcp_sendmsg_locked" },
	{ GS_HK_RAW_TP, { "tcp_send_raw", NULL }, { "raw_tp/tcp_sendmsg_locked", NULL }, "tcp_sendmsg_locked" },
	{ GS_HK_FENTRY, { "tcp_send_fentry", NULL }, { "fentry/tcp_sendmsg_locked", NULL }, "tcp_sendmsg_locked" },
	{ GS_HK_KPROBE, { "tcp_send_kprobe", NULL }, { "kprobe/tcp_sendmsg_locked", NULL }, "tcp_sendmsg_locked" },
	{ GS_HK_SYSCALLS, { "sys_enter", NULL }, { "raw_tp/sys_enter", NULL }, "sys_enter" },
};

static const struct gs_hook_path recv_paths[GS_HOOK_PATHS] = {
	{ GS_HK_TP_BTF, { "sock_recv_btf", NULL }, { "tp_btf/sock_recv_length", NULL }, "sock_recv_length" },
	{ GS_HK_RAW_TP, { "sock_recv_raw", NULL }, { "raw_tp/sock_recv_length", NULL }, "sock_recv_length" },
	{ GS_HK_FENTRY, { "tcp_recv_fexit", NULL }, { "fexit/tcp_recvmsg", NULL }, "tcp_recvmsg" },
	{ GS_HK_KPROBE, { "tcp_recv_kprobe", "tcp_recv_kretprobe" }, { "kprobe/tcp_recvmsg", "kretprobe/tcp_recvmsg" },
	  "tcp_recvmsg" },
	{ GS_HK_SYSCALLS, { "sys_exit", NULL }, { "raw_tp/sys_exit", NULL }, "sys_exit" },
};

static const char *const mode_names[] = {
	[GS_HOOKS_AUTO] = "auto",
	[GS_HOOKS_TRACEPOINT] = "tracepoint",
	[GS_HOOKS_FENTRY] = "fentry",
	[GS_HOOKS_KPROBE] = "kprobe",
	[GS_HOOKS_SYSCALLS] = "syscalls",
};

const struct gs_hook_path *gs_hook_paths(enum gs_hook_side side)
{
	return side == GS_SIDE_SEND ? send_paths : recv_paths;
}

int gs_hooks_mode_parse(const char *s, enum gs_hooks_mode *m)
{
	for (unsigned i = 0; i < sizeof mode_names / sizeof *mode_names; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*m = (enum gs_hooks_mode)i;
			return 0;
		}
	return -1;
}

const char *gs_hooks_mode_name(enum gs_hooks_mode m)
{
	return mode_names[m];
}

bool gs_hooks_mode_takes(enum gs_hooks_mode m, enum gs_hook_kind k)
{
	switch (m) {
	case GS_HOOKS_AUTO: return true;
	case GS_HOOKS_TRACEPOINT: return k == GS_HK_TP_BTF || k == GS_HK_RAW_TP;
	case GS_HOOKS_FENTRY: return k == GS_HK_FENTRY;
	case GS_HOOKS_KPROBE: return k == GS_HK_KPROBE;
	case GS_HOOKS_SYSCALLS: return k == GS_HK_SYSCALLS;
	}
	return false;
}

const char *gs_hook_kind_name(enum gs_hook_kind k)
{
	switch (k) {
	case GS_HK_TP_BTF: return "tp_btf";
	case GS_HK_RAW_TP: return "raw_tp";
	case GS_HK_FENTRY: return "fentry";
	case GS_HK_KPROBE: return "kprobe";
	case GS_HK_SYSCALLS: return "syscalls";
	}
	return "?";
}

#ifndef GS_HAVE_EBPF

void gs_hook_env_open(struct gs_hook_env *e)
{
	e->vmlinux = NULL;
	e->kprobes = false;
}

void gs_hook_env_close(struct gs_hook_env *e)
{
	(void)e;
}

bool gs_hook_probe(const struct gs_hook_env *e, const struct gs_hook_path *p, char *why, size_t len)
{
	(void)e;
	(void)p;
	snprintf(why, len, "this build has no eBPF support");
	return false;
}

#else

#include <bpf/btf.h>

void gs_hook_env_open(struct gs_hook_env *e)
{
	e->vmlinux = btf__load_vmlinux_btf();
	/* the kprobe PMU: what libbpf attaches kprobes through (a kernel
	 * without CONFIG_KPROBES has neither it nor the legacy kprobe_events) */
	e->kprobes = access("/sys/bus/event_source/devices/kprobe/type", R_OK) == 0;
}

void gs_hook_env_close(struct gs_hook_env *e)
{
	btf__free(e->vmlinux);
	e->vmlinux = NULL;
}

bool gs_hook_probe(const struct gs_hook_env *e, const struct gs_hook_path *p, char *why, size_t len)
{
	char name[96];
	if (!e->vmlinux) {
		snprintf(why, len, "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
		return false;
	}
	switch (p->kind) {
	case GS_HK_TP_BTF:
	case GS_HK_RAW_TP:
	case GS_HK_SYSCALLS:
		/* every tracepoint of a kernel with BTF has its typedef: what tp_btf attaches by */
		snprintf(name, sizeof name, "btf_trace_%s", p->target);
		if (btf__find_by_name_kind(e->vmlinux, name, BTF_KIND_TYPEDEF) > 0)
			return true;
		snprintf(why, len, "the kernel has no tracepoint %s", p->target);
		return false;
	case GS_HK_KPROBE:
		if (!e->kprobes) {
			snprintf(why, len, "the kernel has no kprobes (CONFIG_KPROBES is off: no "
				 "/sys/bus/event_source/devices/kprobe)");
			return false;
		}
		/* a function kept out of line has its BTF FUNC */
		__attribute__((fallthrough));
	case GS_HK_FENTRY:
		if (btf__find_by_name_kind(e->vmlinux, p->target, BTF_KIND_FUNC) > 0)
			return true;
		snprintf(why, len, "the kernel has no function %s in its BTF (inlined or renamed)", p->target);
		return false;
	}
	return false;
}

#endif
