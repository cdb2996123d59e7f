#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/attach_bpfcost.sh -- the CPU time `giopscope attach`'s eBPF programs spend per call, from
# the kernel's own accounting (sysctl kernel.bpf_stats_enabled=1: run_time_ns and run_cnt of each
# program), which a busy machine disturbs far less than round-trip times.
#
# omniORB bench_server in one network namespace, bench_client in another, joined by a veth;
# `giopscope attach --pid SERVER` (packet tap on the server's veth and lo, send/recv hooks of the
# server: tcp_sendmsg_locked + sock_recv_length, or with ATTACH_OPTS=--syscall-hooks
# raw_syscalls sys_enter/sys_exit); the client makes CALLS echoString(32) calls. Printed per
# program: runs per call and ns per run; then the sum per call, and the CPU time attach's own
# process (the reader: ring, engine, output) took per call. The send/recv hooks fire for every
# process on the machine (every TCP send and receive; the fallback: every syscall): their runs
# include other processes', each rejected by the pid filter (the "rejected" line: a second run
# with attach following an idle process instead, nothing accepted, gives what one rejection
# costs). bpf_stats itself adds about 0.1 us to every run it times.
#
# usage: bench/attach_bpfcost.sh          (as root; not part of make check)
# environment: CALLS (20000), GIOPSCOPE (build/giopscope), BUILD (build), PORT (2809), ATTACH_OPTS
#   (more options for attach, e.g. "--ring-size 1m"; "--sched": the scheduler programs run at
#   every context switch of the machine, those of other processes rejected; "--orb omniorb"
#   wants IDLE=0, the idle process maps no ORB), IDLE (1; 0: no second run for the cost of a
#   rejected syscall), GIOPSCOPE_REF (another giopscope, e.g. the build before a change: then
#   ROUNDS (6) rounds of both builds, interleaved, the order alternating, each a fresh attach and
#   CALLS calls; printed per build the median over rounds of each program's ns per call, and the
#   median of the per-round differences of the totals; IDLE is then not run), TASK_CLOCK (1: also
#   `perf stat -e task-clock -p ATTACH` over the client's calls, attach's own CPU per call at the
#   resolution of the scheduler's clock, not of ticks), PERF_RECORD (a directory: `perf record
#   -F 15000 -g -p ATTACH` over the client's calls into DIR/LABEL.perf.data)
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
CALLS=${CALLS:-20000}
PORT=${PORT:-2809}

. tests/lib/netns.sh
ns_require
WORK=$(mktemp -d /tmp/gs-attach-cost.XXXXXX) || exit 2
ATT=""
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
cost_cleanup() {
    [ -n "$ATT" ] && kill -KILL "$ATT" 2>/dev/null && wait "$ATT" 2>/dev/null
    sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"
    rm -rf "$WORK"
}
NS_CLEANUP_HOOK=cost_cleanup
ns_setup || exit 1
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
if [ -n "${GIOPSCOPE_REF:-}" ]; then
    cp "$GIOPSCOPE_REF" "$WORK/giopscope.ref" && GIOPSCOPE_REF=$WORK/giopscope.ref
fi
sysctl -qw kernel.bpf_stats_enabled=1

ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$WORK/echo.ior"
SRV_PID=$NS_LAST_PID
ns_start "$NS_SRV" "$WORK/idle.log" sleep 3600
IDLE_PID=$NS_LAST_PID
ns_wait_file "$WORK/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 || { echo "server did not start" >&2; exit 1; }

# utime + stime of a process, in clock ticks (/proc/PID/stat fields 14, 15; the comm has no
# blank: giopscope)
cpu_ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# run BIN PID LABEL: BIN attach following PID while the client runs; bpftool's view of the
# programs before and after, attach's CPU ticks before and after, in $WORK/LABEL.*
run() {
    "$1" attach --pid "$2" ${ATTACH_OPTS:-} --pairs -o /dev/null -q 2>"$WORK/$3.log" &
    ATT=$!
    ns_wait_grep "$WORK/$3.log" "^giopscope attach: following" 120 || { echo "attach did not start" >&2; exit 1; }
    # its own programs (other attach processes of the machine may run programs of the same names)
    grep -h '^prog_id:' /proc/"$ATT"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u >"$WORK/$3.ids"
    bpftool -j prog show >"$WORK/$3.before.json"
    cpu_ticks "$ATT" >"$WORK/$3.cpu"
    local perf_pid=""
    if [ "${TASK_CLOCK:-0}" = 1 ]; then
        perf stat -e task-clock -x, -p "$ATT" -o "$WORK/$3.tclk" &
        perf_pid=$!
    elif [ -n "${PERF_RECORD:-}" ]; then
        perf record -q -F 15000 -g -p "$ATT" -o "$PERF_RECORD/$3.perf.data" 2>/dev/null &
        perf_pid=$!
    fi
    [ -n "$perf_pid" ] && sleep 0.5
    ns_run "$NS_CLI" 300 "$CLIENT" -i "$WORK/echo.ior" -op echoString -size 32 -n "$CALLS" -q >/dev/null 2>&1
    bpftool -j prog show >"$WORK/$3.after.json"
    cpu_ticks "$ATT" >>"$WORK/$3.cpu"
    if [ -n "$perf_pid" ]; then
        kill -INT "$perf_pid"
        wait "$perf_pid" 2>/dev/null
    fi
    kill -INT "$ATT"
    wait "$ATT" 2>/dev/null
    ATT=""
}
LABELS=""
if [ -n "${GIOPSCOPE_REF:-}" ]; then
    ROUNDS=${ROUNDS:-6}
    for r in $(seq 1 "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then order="new ref"; else order="ref new"; fi
        for b in $order; do
            if [ "$b" = new ]; then run "$GIOPSCOPE" "$SRV_PID" "new.$r"; else run "$GIOPSCOPE_REF" "$SRV_PID" "ref.$r"; fi
            LABELS="$LABELS $b.$r"
        done
        echo "attach_bpfcost: round $r of $ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
    echo '[]' >"$WORK/idle.before.json"
    echo '[]' >"$WORK/idle.after.json"
else
    run "$GIOPSCOPE" "$SRV_PID" server
    LABELS=server
    if [ "${IDLE:-1}" = 1 ]; then
        run "$GIOPSCOPE" "$IDLE_PID" idle
    else
        echo '[]' >"$WORK/idle.before.json"
        echo '[]' >"$WORK/idle.after.json"
    fi
fi

# shellcheck disable=SC2086  # the labels are words
python3 - "$WORK" "$CALLS" "$(getconf CLK_TCK)" $LABELS <<'PY'
import json, os, statistics, sys
work, calls, tck, labels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
names = ("giop_tap_ingress", "giop_tap_egress",
         # send/recv instants, default path (tp_btf, or raw_tp where tp_btf is refused)
         "tcp_send_btf", "sock_recv_btf", "tcp_send_raw", "sock_recv_raw",
         # the fallback (--syscall-hooks): raw_syscalls sys_enter/sys_exit
         "sys_enter", "sys_exit",
         # attach --sched, --orb (ATTACH_OPTS)
         "gs_sched_switch", "gs_sched_wakeup", "gs_sched_wnew", "gs_orb_entry", "gs_orb_return")
# programs that run for other processes too, rejected by the pid filter (the idle run)
shared = ("sys_enter", "sys_exit", "tcp_send_btf", "sock_recv_btf", "tcp_send_raw", "sock_recv_raw")
def delta(label):
    b = {p["id"]: p for p in json.load(open(os.path.join(work, label + ".before.json")))}
    try:
        own = {int(x) for x in open(os.path.join(work, label + ".ids")).read().split()}
    except OSError:
        own = None
    out = {}
    for p in json.load(open(os.path.join(work, label + ".after.json"))):
        if p.get("name") not in names or p["id"] not in b or (own is not None and p["id"] not in own):
            continue
        n = p.get("run_cnt", 0) - b[p["id"]].get("run_cnt", 0)
        t = p.get("run_time_ns", 0) - b[p["id"]].get("run_time_ns", 0)
        r = out.setdefault(p["name"], [0, 0])
        r[0] += n
        r[1] += t
    return out
def tclk_ns(label):
    # perf stat -x, : "msec,,task-clock,..." (None: not measured)
    try:
        for line in open(os.path.join(work, label + ".tclk")):
            f = line.strip().split(",")
            if len(f) > 2 and f[2] == "task-clock":
                return float(f[0]) * 1e6 / calls
    except (OSError, ValueError):
        pass
    return None
def cpu_ns(label):
    c = [int(x) for x in open(os.path.join(work, label + ".cpu")).read().split()]
    return (c[1] - c[0]) * 1e9 / tck / calls, c[1] - c[0]
if labels == ["server"]:
    srv, idle = delta("server"), delta("idle")
    rej_n = sum(v[0] for k, v in idle.items() if k in shared)
    rej_t = sum(v[1] for k, v in idle.items() if k in shared)
    print("%-20s %10s %10s %12s" % ("program", "runs/call", "ns/run", "ns/call"))
    total = 0
    for k in names:
        if k not in srv or not srv[k][0]:
            continue
        n, t = srv[k]
        total += t
        print("%-20s %10.2f %10.0f %12.0f" % (k, n / calls, t / n, t / calls))
    print("%-20s %10s %10s %12.0f" % ("all, per call", "", "", total / calls))
    ns, ticks = cpu_ns("server")
    print("attach's own process (reader, engine, output): %.0f ns of CPU per call (user + system, %d ticks of 1/%d s)"
          % (ns, ticks, tck))
    if tclk_ns("server") is not None:
        print("attach's own process, perf task-clock: %.0f ns per call" % tclk_ns("server"))
    if rej_n:
        print("rejected send/recv hook run (attach following an idle process): %.0f ns/run, %.2f runs/call"
              % (rej_t / rej_n, rej_n / calls))
    sys.exit(0)
# rounds of two builds
per = {"new": {}, "ref": {}}
tot = {"new": {}, "ref": {}}
cpu = {"new": {}, "ref": {}}
tclk = {"new": {}, "ref": {}}
for lab in labels:
    b, r = lab.split(".")
    d = delta(lab)
    tot[b][r] = sum(t for n, t in d.values()) / calls
    cpu[b][r] = cpu_ns(lab)[0]
    if tclk_ns(lab) is not None:
        tclk[b][r] = tclk_ns(lab)
    for k, (n, t) in d.items():
        per[b].setdefault(k, {})[r] = (n / calls, t / n if n else 0, t / calls)
rounds = sorted(tot["new"], key=int)
med = statistics.median
print("%-20s %22s %22s" % ("program", "ref: runs/call ns/run", "new: runs/call ns/run"))
for k in names:
    if k not in per["new"] and k not in per["ref"]:
        continue
    cells = []
    for b in ("ref", "new"):
        v = per[b].get(k, {})
        if v:
            cells.append("%8.2f %8.0f (%5.0f/call)" % (med(x[0] for x in v.values()), med(x[1] for x in v.values()),
                                                       med(x[2] for x in v.values())))
        else:
            cells.append("%22s" % "-")
    print("%-20s %s %s" % (k, cells[0], cells[1]))
print("all programs, ns per call, per round (ref / new): " +
      " ".join("%.0f/%.0f" % (tot["ref"][r], tot["new"][r]) for r in rounds))
diff = [tot["new"][r] - tot["ref"][r] for r in rounds]
print("all programs, ns per call: ref median %.0f, new median %.0f; new - ref per round: median %+.0f (min %+.0f, max %+.0f)"
      % (med(tot["ref"].values()), med(tot["new"].values()), med(diff), min(diff), max(diff)))
print("attach's own process, ns of CPU per call (ticks of 1/%d s): ref median %.0f, new median %.0f"
      % (tck, med(cpu["ref"].values()), med(cpu["new"].values())))
if tclk["new"] and tclk["ref"]:
    td = [tclk["new"][r] - tclk["ref"][r] for r in rounds if r in tclk["new"] and r in tclk["ref"]]
    print("attach's own process, perf task-clock ns per call, per round (ref / new): " +
          " ".join("%.0f/%.0f" % (tclk["ref"][r], tclk["new"][r]) for r in rounds if r in tclk["new"] and r in tclk["ref"]))
    print("attach's own process, perf task-clock ns per call: ref median %.0f, new median %.0f; new - ref per round: "
          "median %+.0f (min %+.0f, max %+.0f)" % (med(tclk["ref"].values()), med(tclk["new"].values()), med(td), min(td), max(td)))
PY
