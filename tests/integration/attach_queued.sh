#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_queued.sh -- the wait of a request in the server's socket receive
# queue under `giopscope attach` (issue 32): server_queued_us, from the request's last byte
# reaching the server's host to the server's recv returning it, against the server's own recv
# calls (LD_PRELOAD tests/truth/recorder.c, read by tests/truth/truth.py) less the instant
# tcpdump saw that byte on the server's veth (tshark's oracle): never giopscope's own figures.
# tests/integration/attach_nested_check.py queued does the comparison.
#
# Scenarios:
#   pool1   bench_server with a pool of one thread (-ORBthreadPerConnectionPolicy 0
#           -ORBmaxServerThreadPoolSize 1), 4 client threads calling slow(SLOW_US) N times each,
#           attach --sched: each call's server_queued_us within its recv's window (TOL_US); the
#           calls that waited 1 ms or more, most of their server time, read `queued ... in the
#           receive queue (for the ORB's threads` in the tail, not server or on-cpu; at least one
#           (4 concurrent calls on one thread: the other three wait, whatever the timing)
#   hog     the default server (thread per connection) pinned to one vCPU with a busy loop
#           pinned beside it, one client calling slow(1000) N times, attach --sched: every
#           call's server_queued_us within its recv's window; a call that waited 1 ms or more
#           (when the scheduler made one wait: not required) reads `queued` in the tail
#   hog_nice  the same with the server at nice 19 (the hog at 0): its woken thread waits for the
#           hog's slices, so calls wait for a CPU: each within its recv's window, and those that
#           waited 1 ms or more, most of their server time, read `queued ... (for a CPU: run
#           queue ...)`; at least one
#
# usage: tests/integration/attach_queued.sh [--list] [SCENARIO...]
# environment: GIOPSCOPE, BUILD, KEEP_DIR, FAIL_DIR (default /tmp/gs-failing), N (10), SLOW_US
#   (5000), TOL_US (1000: tcpdump's and attach's stamps of one packet), NS_TAG (atq)
# Prints PASS/FAIL per scenario, "N passed, N failed" and the time; exit 0, 1 on a failure, 77
# when a prerequisite is missing (not root, no eBPF build or BTF, no namespaces, no tshark).

# shellcheck disable=SC2317  # scenario bodies and hooks are called indirectly
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
CHECK=tests/integration/attach_nested_check.py
ORACLE=tests/oracle/tshark_pairs.py
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
TRUTH_SO=$BUILD/orb/libgs_truth.so
PORT=2809
N=${N:-10}
SLOW_US=${SLOW_US:-5000}
TOL_US=${TOL_US:-1000}
for v in N SLOW_US TOL_US; do
    case "${!v}" in ''|*[!0-9]*) echo "attach_queued: $v must be a number, not '${!v}'" >&2; exit 2 ;; esac
done

. tests/lib/common.sh
. tests/lib/scenario.sh
sc_want attach_queued "pool1 hog hog_nice" "$@"

NS_TAG=${NS_TAG:-atq}
. tests/lib/netns.sh

attach_require python3 timeout tcpdump tshark taskset nproc
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ] || [ ! -f "$TRUTH_SO" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
ns_require

T_START=$(date +%s.%N)
WORK=$(mktemp -d /tmp/gs-attach-queued.XXXXXX) || exit 2
ATT_PID="" HOG_PID=""
# shellcheck disable=SC2034  # read by work_cleanup (tests/lib/common.sh)
WORK_PID_VARS="ATT_PID HOG_PID"
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
SRV_CPU=$(($(nproc) - 1))

SC_FAIL_PREFIX=attach_queued_
SRV_PID="" CAP_PID=""
sc_reset() { SRV_PID="" CAP_PID=""; }
sc_stop() {
    [ -n "$ATT_PID" ] && { kill -INT "$ATT_PID" 2>/dev/null; ns_wait_exit "$ATT_PID" 20; }
    [ -n "$HOG_PID" ] && { kill -TERM "$HOG_PID" 2>/dev/null; wait "$HOG_PID" 2>/dev/null; }
    [ -n "$CAP_PID" ] && ns_stop "$CAP_PID" INT 10
    [ -n "$SRV_PID" ] && ns_stop "$SRV_PID" TERM 20
    ATT_PID="" HOG_PID="" CAP_PID="" SRV_PID=""
}
note() { echo "$*" >>"$SC_DIR/commands.log"; }

# run NAME SERVER_OPTS... -- CLIENT_OPTS...: the server (recorded, pinned), tcpdump on its veth,
# attach --sched on it, the client, then the check
run() {
    local -a sopts=() copts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do sopts+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    copts=("$@")
    ns_start "$NS_SRV" "$SC_DIR/server.log" env LD_PRELOAD="$TRUTH_SO" GS_TRUTH_FILE="$SC_DIR/server.truth" \
        nice -n "${SRV_NICE:-0}" taskset -c "$SRV_CPU" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" "${sopts[@]}" \
        -o "$SC_DIR/echo.ior" -q
    SRV_PID=$NS_LAST_PID
    note "# server (pid $SRV_PID) on vCPU $SRV_CPU: LD_PRELOAD=libgs_truth.so bench_server ${sopts[*]}"
    if ! ns_wait_file "$SC_DIR/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
        err "server did not start" "$(tail -3 "$SC_DIR/server.log")"
        return 1
    fi
    ns_start "$NS_SRV" "$SC_DIR/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
        --time-stamp-precision=nano -U -i "$NS_VETH_SRV" -w "$SC_DIR/server.pcap" "tcp port $PORT"
    CAP_PID=$NS_LAST_PID
    ns_wait_grep "$SC_DIR/tcpdump.log" "listening on" 15 ||
        { err "tcpdump did not start" "$(tail -3 "$SC_DIR/tcpdump.log")"; return 1; }
    note "# attach: giopscope attach --pid $SRV_PID --sched --pairs -o pairs.csv --tail 100"
    "$GIOPSCOPE" attach --pid "$SRV_PID" --sched --pairs -o "$SC_DIR/pairs.csv" --tail 100 2>"$SC_DIR/attach.log" &
    ATT_PID=$!
    ns_wait_attached "$SC_DIR/attach.log" "$ATT_PID" || { err "attach did not start" "$(tail -5 "$SC_DIR/attach.log")"; return 1; }
    note "# client: bench_client -i echo.ior -q ${copts[*]}"
    ns_run "$NS_CLI" 180 "$CLIENT" -i "$SC_DIR/echo.ior" -q "${copts[@]}" >"$SC_DIR/client.log" 2>&1 ||
        err "client exit status $?" "$(tail -3 "$SC_DIR/client.log")"
    sleep 0.5   # the last ACKs
    kill -INT "$ATT_PID" 2>/dev/null
    ns_wait_exit "$ATT_PID" 30 || err "attach did not exit within 30 s of SIGINT"
    [ "$WAIT_RC" = 0 ] || err "attach: exit status $WAIT_RC after SIGINT" "$(tail -3 "$SC_DIR/attach.log")"
    ATT_PID=""
    ns_stop "$CAP_PID" INT 10
    CAP_PID=""
    ns_stop "$SRV_PID" TERM 20 || err "server exit status $? after SIGTERM" "$(tail -3 "$SC_DIR/server.log")"
    SRV_PID=""
    python3 "$ORACLE" "$SC_DIR/server.pcap" -o "$SC_DIR/expected.csv" >"$SC_DIR/oracle.log" 2>&1 ||
        { err "oracle failed" "$(tail -3 "$SC_DIR/oracle.log")"; return 1; }
}

check() {
    local out
    if ! out=$(python3 "$CHECK" queued --ours "$SC_DIR/pairs.csv" --truth "$SC_DIR/server.truth" \
            --oracle "$SC_DIR/expected.csv" --tail "$SC_DIR/attach.log" --server "$NS_SRV_IP4:$PORT" \
            --tol-us "$TOL_US" "$@" 2>&1); then
        err "server_queued_us" "$out"
    fi
    SC_NOTE=$(echo "$out" | grep -m1 '^queued:' | sed 's/^queued: //')
    # the check itself: one call's wait 5 ms beyond the tolerance off must fail it
    python3 - "$SC_DIR/pairs.csv" "$SC_DIR/off.csv" $((TOL_US + 5000)) <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for r in rows:
    if r["kind"] == "Request" and r["server_queued_us"]:
        r["server_queued_us"] = "%.3f" % (float(r["server_queued_us"]) + int(sys.argv[3]))
        break
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
PY
    if python3 "$CHECK" queued --ours "$SC_DIR/off.csv" --truth "$SC_DIR/server.truth" \
            --oracle "$SC_DIR/expected.csv" --tail "$SC_DIR/attach.log" --server "$NS_SRV_IP4:$PORT" \
            --tol-us "$TOL_US" >"$SC_DIR/selfcheck.txt" 2>&1; then
        err "the check passed a wait $((TOL_US + 5000)) us off" "$(head -3 "$SC_DIR/selfcheck.txt")"
    fi
}

scenario_pool1() {
    sc_begin pool1
    run -ORBthreadPerConnectionPolicy 0 -ORBmaxServerThreadPoolSize 1 -- \
        -op slow -size "$SLOW_US" -threads 4 -n "$N" &&
        check --need-named --want "for the ORB's threads"
    sc_end
}

scenario_hog() {
    sc_begin hog
    taskset -c "$SRV_CPU" timeout 300 sh -c 'while :; do :; done' &
    HOG_PID=$!
    note "# hog (pid $HOG_PID): taskset -c $SRV_CPU timeout 300 sh -c 'while :; do :; done'"
    run -- -op slow -size 1000 -n $((N * 3)) && check
    sc_end
}

# the server at nice 19 beside the hog at 0 on its vCPU: its woken thread waits for the hog's
# slices (a weight of 15 against 1024), so requests wait in the receive queue for a CPU
scenario_hog_nice() {
    sc_begin hog_nice
    taskset -c "$SRV_CPU" timeout 300 sh -c 'while :; do :; done' &
    HOG_PID=$!
    note "# hog (pid $HOG_PID): taskset -c $SRV_CPU timeout 300 sh -c 'while :; do :; done'; server at nice 19"
    SRV_NICE=19 run -- -op slow -size 1000 -n $((N * 3)) && check --need-named --want "for a CPU"
    sc_end
}

sc_run_all
rc=$?
echo "time: $(awk -v a="$T_START" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }')"
exit $rc
