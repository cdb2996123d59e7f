// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An empty fentry program: tests/lib/hook_paths.sh loads it with bpftool to learn, without
 * giopscope, whether this kernel takes fentry programs (some refuse them though they have
 * the trampolines' configuration). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("fentry/tcp_sendmsg_locked")
int BPF_PROG(gs_fentry_probe)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
