// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Empty programs on the syscall hooks `giopscope attach` uses (syscalls:sys_enter_* /
 * sys_exit_* of the send and recv families, as perf-event tracepoints) and on the raw
 * tracepoints an alternative would use (raw_syscalls sys_enter / sys_exit): what enabling
 * the hook costs before any program does any work.  bench/syscall_floor.sh. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define ENTER(n) SEC("tracepoint/syscalls/sys_enter_" #n) int tp_enter_##n(void *ctx) { return 0; }
#define EXIT(n) SEC("tracepoint/syscalls/sys_exit_" #n) int tp_exit_##n(void *ctx) { return 0; }
ENTER(sendto) ENTER(sendmsg) ENTER(write) ENTER(writev)
EXIT(recvfrom) EXIT(recvmsg) EXIT(read) EXIT(readv)

SEC("raw_tp/sys_enter") int rt_enter(void *ctx) { return 0; }
SEC("raw_tp/sys_exit") int rt_exit(void *ctx) { return 0; }

char LICENSE[] SEC("license") = "GPL";
