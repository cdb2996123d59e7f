# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/hook_paths.sh -- which send/recv programs `giopscope attach` must take on this
# kernel, from the kernel's own facts rather than from giopscope: its BTF (the socket layer's
# tracepoints), whether it loads an fentry program (tests/lib/fentry_probe.bpf.c, by
# bpftool), whether it has kprobes; and which programs a running attach holds (its link file
# descriptors' prog_id in /proc/PID/fdinfo, named by bpftool). Source it, then:
#
#     hook_expect BUILD        # HOOK_SEND, HOOK_RECV: the programs attach's default choice
#                              # must hold (names as the kernel keeps them: 15 characters);
#                              # HOOK_WHY: the facts, for the log
#     hook_held PID            # the names of the programs PID holds links of, sorted

hook_expect() {
    local build=$1 tps t fentry=no kprobe=no
    tps=$(bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
          grep -oE "TYPEDEF 'btf_trace_(tcp_sendmsg_locked|sock_recv_length)'" | sort -u)
    t=$(mktemp -d /tmp/gs-fentry.XXXXXX)
    if clang -O2 -g -target bpf -I"$build/ebpf" -c tests/lib/fentry_probe.bpf.c -o "$t/p.o" 2>"$t/cc.log" &&
        bpftool prog load "$t/p.o" "/sys/fs/bpf/gs_fentry_probe_$$" >"$t/load.log" 2>&1; then
        fentry=yes
    fi
    rm -f "/sys/fs/bpf/gs_fentry_probe_$$"
    rm -rf "$t"
    [ -d /sys/bus/event_source/devices/kprobe ] && kprobe=yes
    if grep -q tcp_sendmsg_locked <<<"$tps"; then HOOK_SEND=tcp_send_btf
    elif [ $fentry = yes ]; then HOOK_SEND=tcp_send_fentry
    elif [ $kprobe = yes ]; then HOOK_SEND=tcp_send_kprobe
    else HOOK_SEND=sys_enter; fi
    if grep -q sock_recv_length <<<"$tps"; then HOOK_RECV=sock_recv_btf
    elif [ $fentry = yes ]; then HOOK_RECV=tcp_recv_fexit
    elif [ $kprobe = yes ]; then HOOK_RECV="tcp_recv_kprobe tcp_recv_kretpr"
    else HOOK_RECV=sys_exit; fi
    HOOK_WHY="$(uname -r): tracepoints [$(tr -d "'" <<<"$tps" | sed 's/TYPEDEF btf_trace_//' | tr '\n' ' ')] fentry $fentry kprobes $kprobe"
}

hook_held() {
    local f id
    for f in /proc/"$1"/fdinfo/*; do
        grep -q '^link_type:' "$f" 2>/dev/null || continue
        id=$(sed -n 's/^prog_id:[[:space:]]*//p' "$f")
        [ -n "$id" ] && bpftool -j prog show id "$id" 2>/dev/null |
            python3 -c 'import json, sys; print(json.load(sys.stdin)["name"])'
    done | sort -u | tr '\n' ' ' | sed 's/ $//'
}
