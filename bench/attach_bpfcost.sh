#!/bin/bash
# bench/attach_bpfcost.sh -- the CPU time `giopscope attach`'s eBPF programs spend per call, from
# the kernel's own accounting (sysctl kernel.bpf_stats_enabled=1: run_time_ns and run_cnt of each
# program), which a busy machine disturbs far less than round-trip times.
#
# omniORB bench_server in one network namespace, bench_client in another, joined by a veth;
# `giopscope attach --pid SERVER` (packet tap on the server's veth and lo, syscall probes of the
# server); the client makes CALLS echoString(32) calls. Printed per program: runs per call and
# ns per run; then the sum per call. The syscall tracepoints fire for every process on the
# machine: their runs include other processes' syscalls, each rejected by the pid filter (the
# "rejected" line: a second run with attach following an idle process instead, nothing
# accepted, gives what one rejection costs).
#
# usage: bench/attach_bpfcost.sh          (as root; not part of make check)
# environment: CALLS (20000), GIOPSCOPE (build/giopscope), BUILD (build), PORT (2809), ATTACH_OPTS
#   (more options for attach, e.g. "--ring-size 1m"; "--sched": the scheduler programs run at
#   every context switch of the machine, those of other processes rejected; "--orb omniorb"
#   wants IDLE=0, the idle process maps no ORB), IDLE (1; 0: no second run for the cost of a
#   rejected syscall)
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
sysctl -qw kernel.bpf_stats_enabled=1

ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$WORK/echo.ior"
SRV_PID=$NS_LAST_PID
ns_start "$NS_SRV" "$WORK/idle.log" sleep 3600
IDLE_PID=$NS_LAST_PID
ns_wait_file "$WORK/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 || { echo "server did not start" >&2; exit 1; }

# run PID LABEL: attach following PID while the client runs; prints "prog runs ns" lines
run() {
    "$GIOPSCOPE" attach --pid "$1" ${ATTACH_OPTS:-} --pairs -o /dev/null -q 2>"$WORK/$2.log" &
    ATT=$!
    ns_wait_grep "$WORK/$2.log" "^giopscope attach: following" 30 || { echo "attach did not start" >&2; exit 1; }
    bpftool -j prog show >"$WORK/$2.before.json"
    ns_run "$NS_CLI" 300 "$CLIENT" -i "$WORK/echo.ior" -op echoString -size 32 -n "$CALLS" -q >/dev/null 2>&1
    bpftool -j prog show >"$WORK/$2.after.json"
    kill -INT "$ATT"
    wait "$ATT" 2>/dev/null
    ATT=""
}
run "$SRV_PID" server
if [ "${IDLE:-1}" = 1 ]; then
    run "$IDLE_PID" idle
else
    echo '[]' >"$WORK/idle.before.json"
    echo '[]' >"$WORK/idle.after.json"
fi

python3 - "$WORK" "$CALLS" <<'PY'
import json, os, sys
work, calls = sys.argv[1], int(sys.argv[2])
names = ("giop_tap_ingress", "giop_tap_egress", "sys_enter_sendto", "sys_enter_sendmsg", "sys_enter_write",
         "sys_enter_writev", "sys_enter_recvfrom", "sys_enter_recvmsg", "sys_enter_read", "sys_enter_readv",
         "sys_exit_recvfrom", "sys_exit_recvmsg", "sys_exit_read", "sys_exit_readv",
         # attach --sched, --orb (ATTACH_OPTS)
         "gs_sched_switch", "gs_sched_wakeup", "gs_sched_wnew", "gs_orb_entry", "gs_orb_return")
def delta(label):
    b = {p["id"]: p for p in json.load(open(os.path.join(work, label + ".before.json")))}
    out = {}
    for p in json.load(open(os.path.join(work, label + ".after.json"))):
        if p.get("name") not in names or p["id"] not in b:
            continue
        n = p.get("run_cnt", 0) - b[p["id"]].get("run_cnt", 0)
        t = p.get("run_time_ns", 0) - b[p["id"]].get("run_time_ns", 0)
        r = out.setdefault(p["name"], [0, 0])
        r[0] += n
        r[1] += t
    return out
srv, idle = delta("server"), delta("idle")
rej_n = sum(v[0] for k, v in idle.items() if k.startswith("sys_"))
rej_t = sum(v[1] for k, v in idle.items() if k.startswith("sys_"))
print("%-20s %10s %10s %12s" % ("program", "runs/call", "ns/run", "ns/call"))
total = 0
for k in names:
    if k not in srv or not srv[k][0]:
        continue
    n, t = srv[k]
    total += t
    print("%-20s %10.2f %10.0f %12.0f" % (k, n / calls, t / n, t / calls))
print("%-20s %10s %10s %12.0f" % ("all, per call", "", "", total / calls))
if rej_n:
    print("rejected syscall (attach following an idle process): %.0f ns/run, %.2f runs/call"
          % (rej_t / rej_n, rej_n / calls))
PY
