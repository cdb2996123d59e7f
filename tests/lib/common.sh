# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/lib/common.sh -- what the integration scripts share, sourced first:
#
#     skip "REASON"              # print SKIP and exit 77 (the automake/meson "skipped" status)
#     WORK=$(mktemp -d /tmp/gs-NAME.XXXXXX) || exit 2
#     WORK_PID_VARS="ATT_PID HOG_PIDS"   # variables holding the ids of processes to kill
#     NS_CLEANUP_HOOK=work_cleanup       # (tests/lib/netns.sh) or: trap work_cleanup EXIT
#
# work_cleanup kills, by id, every process named in the variables of WORK_PID_VARS (the signal
# WORK_KILL_SIG, KILL unless set, then waits for it: they are the script's own children), then
# removes WORK. Nothing is killed by name.

: "${WORK_PID_VARS:=}"
: "${WORK_KILL_SIG:=KILL}"

skip() { echo "SKIP: $*"; exit 77; }

work_cleanup() {
    local v p
    for v in $WORK_PID_VARS; do
        for p in ${!v}; do
            kill -s "$WORK_KILL_SIG" "$p" 2>/dev/null
            wait "$p" 2>/dev/null
        done
    done
    [ -n "${WORK:-}" ] && rm -rf "$WORK"
    return 0
}

# attach_require TOOL...: skip unless root, the tools, the kernel's BTF and an eBPF build of
# $GIOPSCOPE are there; builds the ORB apps when $SERVER or $CLIENT is missing
attach_require() {
    local tool
    [ "$(id -u)" = 0 ] || skip "not root (eBPF and namespaces need it)"
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (scripts/install-deps.sh check)"
    done
    [ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
    [ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built"
    # the stub of a build without eBPF carries this text; the real loader does not
    if grep -q "this build has no eBPF support" "$GIOPSCOPE"; then
        skip "$GIOPSCOPE was built without eBPF"
    fi
}
