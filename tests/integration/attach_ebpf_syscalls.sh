#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_ebpf_syscalls.sh -- attach_ebpf.sh's scenarios that depend on where
# the send/recv instants come from, on attach's fallback path (`attach --syscall-hooks`:
# raw_syscalls sys_enter/sys_exit), so that both paths stay tested: netns (the server's
# instants against tcpdump + read), loopback (all four instants, in order), cleanup (nothing
# left attached), pid_exit. attach_ebpf.sh itself runs every scenario on the default path.
#
# usage: tests/integration/attach_ebpf_syscalls.sh [SCENARIO...]   (default: those four)
# environment: as attach_ebpf.sh. Exit status as attach_ebpf.sh (77: cannot run here).
cd "$(dirname "$0")/../.." || exit 2
[ $# -gt 0 ] || set -- netns loopback cleanup pid_exit
HOOKS=syscalls exec tests/integration/attach_ebpf.sh "$@"
