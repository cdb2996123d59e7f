#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/syscall_floor.sh -- what the kernel's syscall hooks cost a round trip before any probe
# does any work: the floor under `giopscope attach`'s syscall probes on this machine.
#
# `attach` must trace the send and recv families (issue 4); the round-trip cost of its syscall
# probes (bench/attach_toggle.sh: attach against attach --packets-only) is several times the
# CPU time its programs spend (bench/attach_bpfcost.sh). This measures the part that is not
# the programs': two processes pinned to CPUs 0 and 1 bounce 32 bytes over a Unix socket
# (bench/floor/pingpong.c: four send/recv syscalls and two wake-ups per round trip) with
#   none  nothing attached
#   tp    empty programs on the eight syscall tracepoints attach uses (perf-event tracepoints:
#         syscalls:sys_enter_sendto/sendmsg/write/writev, sys_exit_recvfrom/recvmsg/read/readv)
#   rt    empty programs on the raw tracepoints raw_syscalls sys_enter/sys_exit (every syscall)
#   attach  giopscope attach following an idle process: its real programs, each of the
#         ping-pong's syscalls rejected by the pid filter
# in rounds, the arms' order rotating; per round the difference to that round's none. Also the
# cost of a getppid() (a syscall no program looks at) in each arm.
#
# usage: bench/syscall_floor.sh        (root; part of make bench, never of make check)
# environment: ROUNDS (10; QUICK=1: 3), N (100000 round trips per run), GIOPSCOPE
#   ($BENCH_BIN or $BUILD/giopscope; the attach arm), BENCH_DOC (set by bench/run.sh: the
#   section is written there between its markers; else printed), LOCK (/tmp/gs-bench.lock,
#   "none": not taken)
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-${BENCH_BIN:-$BUILD}/giopscope}
ROUNDS=${ROUNDS:-10}
[ "${QUICK:-0}" = 1 ] && ROUNDS=3
N=${N:-100000}
LOCK=${LOCK:-/tmp/gs-bench.lock}
[ "$(id -u)" = 0 ] || { echo "syscall_floor: needs root (BPF)" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "syscall_floor: needs 2 CPUs" >&2; exit 2; }

T=$(mktemp -d /tmp/gs-syscall-floor.XXXXXX) || exit 2
HOLD=""
IDLE=""
cleanup() {
    [ -n "$HOLD" ] && kill -TERM "$HOLD" 2>/dev/null && wait "$HOLD" 2>/dev/null
    [ -n "$IDLE" ] && kill -KILL "$IDLE" 2>/dev/null && wait "$IDLE" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

clang -O2 -g -target bpf -I"/usr/include/$(gcc -print-multiarch)" -c bench/floor/noop_sys.bpf.c -o "$T/noop.bpf.o" &&
    cc -O2 -Wall -Wextra -Werror -o "$T/noop_load" bench/floor/noop_load.c -lbpf &&
    cc -O2 -Wall -Wextra -Werror -o "$T/pingpong" bench/floor/pingpong.c ||
    { echo "syscall_floor: cannot build bench/floor/" >&2; exit 2; }
cp "$GIOPSCOPE" "$T/giopscope" || exit 2
sleep 100000 & IDLE=$!

if [ "$LOCK" != none ]; then
    exec {LOCK_FD}>"$LOCK"
    flock -n "$LOCK_FD" || { echo "syscall_floor: waiting for $LOCK (another benchmark is measuring)" >&2; flock "$LOCK_FD"; }
fi

# hold ARM: start what the arm attaches and wait until it is in place (HOLD: its pid)
hold() {
    local log=$T/hold.log i
    : >"$log"
    case $1 in
        none) return 0 ;;
        tp) "$T/noop_load" "$T/noop.bpf.o" tracepoint/ >"$log" 2>&1 & HOLD=$! ;;
        rt) "$T/noop_load" "$T/noop.bpf.o" raw_tp/ >"$log" 2>&1 & HOLD=$! ;;
        attach) "$T/giopscope" attach --pid "$IDLE" -q --pairs -o /dev/null >"$log" 2>&1 & HOLD=$! ;;
    esac
    for i in $(seq 1 300); do
        grep -q "^attached\|^giopscope attach: following" "$log" && return 0
        kill -0 "$HOLD" 2>/dev/null || break
        sleep 0.1
    done
    echo "syscall_floor: arm $1 did not attach: $(head -c 300 "$log")" >&2
    return 1
}
release() {
    [ -n "$HOLD" ] || return 0
    kill -INT "$HOLD" 2>/dev/null
    wait "$HOLD" 2>/dev/null
    HOLD=""
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date -u '+%Y-%m-%d %H:%M UTC')
ARMS=(none tp rt attach)
: >"$T/runs"
for r in $(seq 1 "$ROUNDS"); do
    for k in 0 1 2 3; do
        a=${ARMS[$(( (k + r) % 4 ))]}
        hold "$a" || exit 1
        sleep 0.3
        echo "$r $a $("$T/pingpong" "$N")" >>"$T/runs" || exit 1
        release
    done
    echo "syscall_floor: round $r of $ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T1=$(date -u '+%H:%M UTC')

CMD="ROUNDS=$ROUNDS N=$N bench/syscall_floor.sh" M_CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') \
M_SRSO=$(cat /sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow 2>/dev/null || echo '?') \
M_V2=$(cat /sys/devices/system/cpu/vulnerabilities/spectre_v2 2>/dev/null | cut -d';' -f1 || echo '?') \
python3 - "$T/runs" "$T0" "$T1" "$LOAD0" "$LOAD1" "$(nproc)" "$(uname -r)" "${BENCH_DOC:-}" <<'PY'
import os, statistics, sys
runs, t0, t1, load0, load1, nproc, kernel, doc = sys.argv[1:]
rt, gp = {}, {}
for line in open(runs):
    r, a, v, g = line.split()
    rt[(int(r), a)] = float(v)
    gp[(int(r), a)] = float(g)
rounds = sorted({r for r, _ in rt})
arms = ["none", "tp", "rt", "attach"]
name = {"none": "nothing attached", "tp": "empty programs, 8 syscall tracepoints (attach's hooks)",
        "rt": "empty programs, raw_syscalls sys_enter/sys_exit", "attach": "giopscope attach following an idle process"}
med = lambda v: statistics.median(v)
out = ["<!-- bench-syscall-floor:begin -->",
       "### The syscall hooks' own cost: a ping-pong of two processes (%s - %s)" % (t0, t1), "",
       "- command: `sudo %s` (bench/floor/: pingpong.c, noop_sys.bpf.c, noop_load.c)" % os.environ["CMD"],
       "- machine: %s, `nproc` %s, Linux %s; spec_rstack_overflow: %s; spectre_v2: %s; load average %s at the start, %s at the end"
       % (os.environ["M_CPU"], nproc, kernel, os.environ["M_SRSO"], os.environ["M_V2"], load0, load1),
       "- %d rounds, arms in rotating order; per run %s round trips of 32 bytes over a Unix socket between two processes pinned to CPUs 0 and 1 (4 send/recv syscalls, 2 wake-ups each), then as many getppid() calls; medians over rounds; *- none*: median of the per-round differences" % (len(rounds), os.environ["CMD"].split()[1][2:]),
       "", "| arm | round trip ns | - none | per round (- none) | getppid ns | - none |", "|---|---:|---:|---|---:|---:|"]
for a in arms:
    v = [rt[(r, a)] for r in rounds if (r, a) in rt]
    d = [rt[(r, a)] - rt[(r, "none")] for r in rounds if (r, a) in rt and (r, "none") in rt]
    g = [gp[(r, a)] for r in rounds if (r, a) in gp]
    dg = [gp[(r, a)] - gp[(r, "none")] for r in rounds if (r, a) in gp and (r, "none") in gp]
    out.append("| %s | %.0f | %+.0f | %s | %.0f | %+.0f |" % (name[a], med(v), med(d), " ".join("%+.0f" % x for x in d), med(g), med(dg)))
dtp = med([rt[(r, "tp")] - rt[(r, "none")] for r in rounds])
drt = med([rt[(r, "rt")] - rt[(r, "none")] for r in rounds])
dat = med([rt[(r, "attach")] - rt[(r, "none")] for r in rounds])
out += ["", "What it says:", "",
        "- Empty programs on attach's eight syscall tracepoints add %+.2f µs to this round trip (raw tracepoints on every syscall: %+.2f µs); attach's own programs, rejecting every one of these syscalls, %+.2f µs. "
        "An ORB echo round trip makes the same four send/recv syscalls and two wake-ups, so on this machine the syscall hooks alone cost about %.1f µs of the 2 µs budget before `attach` does any work (docs/benchmarks.md, bench-attach)." % (dtp / 1000, drt / 1000, dat / 1000, dtp / 1000),
        "<!-- bench-syscall-floor:end -->"]
body = "\n".join(out)
print(body)
if doc:
    sys.path.insert(0, "bench")
    from doc_section import write_section
    write_section(doc, "bench-syscall-floor", body, "syscall_floor")
PY
