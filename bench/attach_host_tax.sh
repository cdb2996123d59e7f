#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/attach_host_tax.sh -- what `giopscope attach` costs the processes of the host it does
# NOT follow (issue 16): a probe that slows every process of a production host will not be
# allowed to run there.
#
# One omniORB bench_server in a server namespace (tests/lib/netns.sh), idle, is followed by
# `giopscope attach --pid SERVER --pairs -o /dev/null` in three arms:
#   none     nothing attached
#   socket   attach's default path: send/recv instants from tcp:tcp_sendmsg_locked and
#            sock:sock_recv_length (no program on a syscall tracepoint)
#   syscalls attach --syscall-hooks: the fallback, raw_syscalls:sys_enter/sys_exit (every
#            syscall of the host takes the traced path)
# and in each window two unrelated processes are measured (bench/floor/pingpong.c): a
# ping-pong of 32 bytes over a Unix socket between two processes pinned to CPUs 0 and 1 (N
# round trips: 4 send/recv syscalls and 2 wake-ups each), then a getppid() loop pinned to CPU
# 1 (M calls), REPS times; the window's figure for each is the lowest of its REPS means (the
# least disturbed: other jobs of a shared machine only add). Rounds of one window per arm, the
# arms' order rotating (interleaved windows);
# per round the difference arm - none; per arm the median of those differences and its 95%
# confidence interval (order statistics, as bench/attach_toggle.sh). The target: an interval
# that cannot be told from zero for the default path. A window counts only if attach said it
# was on the expected path (its first line) and no other process held a program on a syscall
# tracepoint at its start and its end (`bpftool perf`: other probes of a shared machine slow
# every task down, whatever the arm); each attach is started afresh per window.
#
# usage: bench/attach_host_tax.sh     (root; part of make bench, never of make check)
# environment: ROUNDS (10; QUICK=1: 6), N (20000 round trips), M (1000000 getppid calls), REPS
#   (3 runs of both per window; the window's figure is the least disturbed: the lowest mean),
#   RT (1: the measured processes under `chrt -f 10`, SCHED_FIFO, so that other jobs of the
#   machine do not preempt them; 0: normal priority),
#   GIOPSCOPE ($BENCH_BIN or $BUILD/giopscope), BUILD (build), PORT (2809), BENCH_DOC (set by
#   bench/run.sh: the section is written there between its markers; else printed), LOCK
#   (/tmp/gs-bench.lock, "none": not taken), NS_TAG (namespace name prefix, tests/lib/netns.sh)
# Time: ROUNDS x (2 attach start-ups, 3-10 s each on a busy 2-vCPU VM, + 3 windows of REPS x
# (N round trips + M getppid)): about 4 min with the defaults on a quiet machine.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-${BENCH_BIN:-$BUILD}/giopscope}
SERVER=$BUILD/orb/bench_server
ROUNDS=${ROUNDS:-10}
[ "${QUICK:-0}" = 1 ] && ROUNDS=6
N=${N:-20000}
M=${M:-1000000}
REPS=${REPS:-3}
RT=${RT:-1}
# the measured processes at a real-time priority: the other jobs of a shared machine
# (CFS tasks) do not preempt them; the kernel's RT throttling leaves them 5% of each CPU
RT_CMD=""
[ "$RT" = 1 ] && RT_CMD="chrt -f 10"
PORT=${PORT:-2809}
LOCK=${LOCK:-/tmp/gs-bench.lock}
[ "$(id -u)" = 0 ] || { echo "attach_host_tax: needs root (BPF, namespaces)" >&2; exit 2; }
[ "$(nproc)" -ge 2 ] || { echo "attach_host_tax: needs 2 CPUs" >&2; exit 2; }
for v in ROUNDS N M REPS; do
    case "${!v}" in ''|*[!0-9]*) echo "attach_host_tax: $v wants a number" >&2; exit 2 ;; esac
done
[ "$REPS" -ge 1 ] || { echo "attach_host_tax: REPS at least 1" >&2; exit 2; }
[ "$ROUNDS" -ge 6 ] || { echo "attach_host_tax: ROUNDS at least 6 (a 95% interval of the median)" >&2; exit 2; }
[ -x "$GIOPSCOPE" ] || { echo "attach_host_tax: build giopscope first (make)" >&2; exit 2; }
[ -x "$SERVER" ] || make -s BUILD="$BUILD" orb-apps >&2 || exit 2

. tests/lib/netns.sh
ns_require

T=$(mktemp -d /tmp/gs-host-tax.XXXXXX) || exit 2
HOLD=""
host_tax_cleanup() {
    [ -n "$HOLD" ] && kill -KILL "$HOLD" 2>/dev/null && wait "$HOLD" 2>/dev/null
    rm -rf "$T"
}
NS_CLEANUP_HOOK=host_tax_cleanup
cc -O2 -Wall -Wextra -Werror -o "$T/pingpong" bench/floor/pingpong.c ||
    { echo "attach_host_tax: cannot build bench/floor/pingpong.c" >&2; exit 2; }
# a private copy: a rebuild during the run must not swap the binary under a window
cp "$GIOPSCOPE" "$T/giopscope" || exit 2

if [ "$LOCK" != none ]; then
    exec {LOCK_FD}>>"$LOCK" || exit 2
    flock -n "$LOCK_FD" || { echo "attach_host_tax: waiting for $LOCK (another benchmark is measuring)" >&2; flock "$LOCK_FD"; }
fi

ns_setup || { echo "attach_host_tax: cannot create the network namespaces" >&2; exit 2; }
ns_start "$NS_SRV" "$T/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$T/echo.ior" -q
SRV_PID=$NS_LAST_PID
if ! ns_wait_file "$T/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
    echo "attach_host_tax: the server did not start" >&2
    exit 1
fi

# hold ARM: attach in place on the arm's path (HOLD: its pid); 1 if it did not get there
hold() {
    local log=$T/hold.log want
    : >"$log"
    case $1 in
        none) return 0 ;;
        socket) want="send/recv instants: tcp_sendmsg_locked + sock_recv_length"
            "$T/giopscope" attach --pid "$SRV_PID" -q --pairs -o /dev/null 2>"$log" & HOLD=$! ;;
        syscalls) want="send/recv instants: syscalls (fallback)"
            "$T/giopscope" attach --syscall-hooks --pid "$SRV_PID" -q --pairs -o /dev/null 2>"$log" & HOLD=$! ;;
    esac
    for _ in $(seq 1 600); do
        if grep -q "^giopscope attach: following" "$log"; then
            grep -q "$want" "$log" && return 0
            echo "attach_host_tax: arm $1: attach is not on its path: $(grep following "$log")" >&2
            return 1
        fi
        kill -0 "$HOLD" 2>/dev/null || break
        sleep 0.1
    done
    echo "attach_host_tax: arm $1 did not attach: $(head -c 300 "$log")" >&2
    return 1
}
# foreign_hooks: the processes other than our attach that hold a program on a syscall
# tracepoint (raw_syscalls sys_enter/sys_exit, syscalls:*): any of them puts every task of the
# machine on the slow syscall path, our windows included (others' probes on a shared machine)
foreign_hooks() {
    bpftool -j perf 2>/dev/null | python3 -c '
import json, sys
ours = int(sys.argv[1] or 0)
pids = sorted({e["pid"] for e in (json.load(sys.stdin) or [])
               if e.get("pid") != ours and (e.get("tracepoint", "") in ("sys_enter", "sys_exit")
                                             or e.get("tracepoint", "").startswith("sys_"))})
print(",".join("pid %d" % p for p in pids))' "${HOLD:-0}"
}

release() {
    [ -n "$HOLD" ] || return 0
    kill -INT "$HOLD" 2>/dev/null
    wait "$HOLD" 2>/dev/null
    HOLD=""
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date -u '+%Y-%m-%d %H:%M UTC')
ARMS=(none socket syscalls)
: >"$T/runs"
: >"$T/foreign"
for r in $(seq 1 "$ROUNDS"); do
    for k in 0 1 2; do
        a=${ARMS[$(( (k + r) % 3 ))]}
        if hold "$a"; then
            sleep 0.3
            f0=$(foreign_hooks)
            # REPS runs per window, the least disturbed of each measure kept: on a shared
            # machine a window's other jobs add, they never subtract
            for _ in $(seq 1 "$REPS"); do
                $RT_CMD "$T/pingpong" "$N" "$M" || exit 1
            done | awk -v r="$r" -v a="$a" 'NR == 1 || $1 < rt { rt = $1 } NR == 1 || $2 < gp { gp = $2 }
                END { if (NR) print r, a, rt, gp }' >"$T/window"
            f1=$(foreign_hooks)
            if [ -z "$f0$f1" ]; then
                cat "$T/window" >>"$T/runs"
            else
                echo "$r $a ${f0:-$f1}" >>"$T/foreign"
                echo "attach_host_tax: round $r $a: not counted, syscall hooks of another process: ${f0:-$f1}" >&2
            fi
        fi
        release
    done
    echo "attach_host_tax: round $r of $ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T1=$(date -u '+%H:%M UTC')

CMD="ROUNDS=$ROUNDS N=$N M=$M REPS=$REPS RT=$RT bench/attach_host_tax.sh" M_CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') \
M_SRSO=$(cat /sys/devices/system/cpu/vulnerabilities/spec_rstack_overflow 2>/dev/null || echo '?') \
M_V2=$(cut -d';' -f1 /sys/devices/system/cpu/vulnerabilities/spectre_v2 2>/dev/null || echo '?') \
python3 - "$T/runs" "$T0" "$T1" "$LOAD0" "$LOAD1" "$(nproc)" "$(uname -r)" "${BENCH_DOC:-}" "$T/foreign" <<'PY'
import math, os, statistics, sys
runs, t0, t1, load0, load1, nproc, kernel, doc, foreign = sys.argv[1:]
foreign = [l.split()[:2] for l in open(foreign) if l.strip()]
rt, gp = {}, {}
for line in open(runs):
    r, a, v, g = line.split()
    rt[(int(r), a)] = float(v)
    gp[(int(r), a)] = float(g)
rounds = sorted({r for r, _ in rt})
arms = ["none", "socket", "syscalls"]
name = {"none": "nothing attached",
        "socket": "attach, default path (tcp_sendmsg_locked + sock_recv_length)",
        "syscalls": "attach --syscall-hooks (raw_syscalls sys_enter/sys_exit, the old path)"}

def ci_median(v):
    # 95% interval of the median: order statistics (j, k), the narrowest symmetric pair
    # with P(j <= rank of the median <= k) >= 0.95 under Binomial(n, 1/2)
    n = len(v)
    if n < 6:
        return None
    best = None
    for j in range(1, n // 2 + 1):
        k = n + 1 - j
        if sum(math.comb(n, i) for i in range(j, k)) / 2.0 ** n >= 0.95:
            best = (j, k)
    v = sorted(v)
    return v[best[0] - 1], v[best[1] - 1]

def diffs(tab, a):
    return [tab[(r, a)] - tab[(r, "none")] for r in rounds if (r, a) in tab and (r, "none") in tab]

med = statistics.median
fmt_ci = lambda c, f: ("%s .. %s" % (f % c[0], f % c[1])) if c else "-"
out = ["### Unrelated processes under attach: getppid() and a Unix-socket ping-pong (%s - %s)" % (t0, t1), "",
       "- command: `sudo %s` (bench/floor/pingpong.c)" % os.environ["CMD"],
       "- machine: %s, `nproc` %s, Linux %s; spec_rstack_overflow: %s; spectre_v2: %s; load average %s at the start, %s at the end"
       % (os.environ["M_CPU"], nproc, kernel, os.environ["M_SRSO"], os.environ["M_V2"], load0, load1),
       "- an idle omniORB bench_server (its own network namespace) followed by `giopscope attach --pid`; %d rounds of one window per arm, the order rotating, attach started afresh per window; per window, %s times: %s round trips of 32 bytes over a Unix socket between two processes pinned to CPUs 0 and 1, then %s getppid() pinned to CPU 1 (%s), the window's figure the lowest of the %s means; *- none*: median over rounds of the window minus that round's *nothing attached*, with its 95%% interval (order statistics)"
       % (len(rounds), os.environ["CMD"].split()[3][5:], os.environ["CMD"].split()[1][2:], os.environ["CMD"].split()[2][2:], "SCHED_FIFO 10" if os.environ["CMD"].split()[4] == "RT=1" else "normal priority", os.environ["CMD"].split()[3][5:]),
       "- a window counts only if, at its start and its end, no other process held a program on a syscall tracepoint (`bpftool perf`: another probe on the machine puts every task on the slow syscall path, whatever the arm); not counted: %s"
       % (", ".join("round %s %s" % (r, a) for r, a in foreign) or "none"),
       "", "| arm | getppid ns | - none | 95% interval | ping-pong round trip ns | - none | 95% interval |",
       "|---|---:|---:|---|---:|---:|---|"]
res = {}
for a in arms:
    g = [gp[(r, a)] for r in rounds if (r, a) in gp]
    v = [rt[(r, a)] for r in rounds if (r, a) in rt]
    if a == "none":
        out.append("| %s | %.1f | | | %.0f | | |" % (name[a], med(g), med(v)))
        continue
    dg, dv = diffs(gp, a), diffs(rt, a)
    cg, cv = ci_median(dg), ci_median(dv)
    res[a] = (med(dg), cg, med(dv), cv, med(g), med(v))
    out.append("| %s | %.1f | %+.1f | %s | %.0f | %+.0f | %s |" % (name[a], med(g), med(dg), fmt_ci(cg, "%+.1f"), med(v), med(dv), fmt_ci(cv, "%+.0f")))
out += ["", "Per round (- none), in time order: " + "; ".join(
    "%s getppid %s, round trip %s" % (a, " ".join("%+.1f" % x for x in diffs(gp, a)), " ".join("%+.0f" % x for x in diffs(rt, a)))
    for a in arms[1:]), "", "What it says:", ""]
none_g = med([gp[(r, "none")] for r in rounds if (r, "none") in gp])
for a in arms[1:]:
    if a not in res:
        continue
    dg, cg, dv, cv, g, v = res[a]
    zero = lambda c: c is not None and c[0] <= 0 <= c[1]
    verdict = lambda c: "too few rounds for an interval" if c is None else "not told from zero" if zero(c) else "a difference"
    out.append("- %s: getppid %+.1f ns (%+.0f%%; interval %s: %s), ping-pong %+.2f µs (interval %s: %s)." % (
        name[a], dg, 100 * dg / none_g if none_g else 0, fmt_ci(cg, "%+.1f"),
        verdict(cg), dv / 1000, fmt_ci(cv and (cv[0] / 1000, cv[1] / 1000), "%+.2f"), verdict(cv)))
body = "\n".join(out)
print(body)
if doc:
    sys.path.insert(0, "bench")
    from doc_section import write_section
    write_section(doc, "bench-attach-host-tax", body, "attach_host_tax")
PY
