#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_nested.sh -- `giopscope attach` on the middle tier of a real
# three-tier omniORB chain (issue 32): bench_client -> bench_relay -> bench_server, each in its
# own network namespace, the relay on two networks; attach follows the relay (--pid) and must
# name every back-end call's parent by thread (parent_basis `thread`), however many client
# calls the relay serves at once. The truth is the workload's: the relay forwards each call with
# its argument (bench_client -distinct: one call each), read from the Requests' own bytes in a
# tcpdump capture at the relay (tests/integration/attach_nested_check.py, using
# nested_expect.py's decoder), never from giopscope.
#
# Scenarios:
#   tpc        thread-per-connection relay (omniORB's default), 4 client threads at once, each
#              with its own connection: 4 x 20 slow(1000 + 1000*thread + seq) us, then 20
#              echoOctets one at a time: every back-end call named, basis thread, none wrong,
#              no client call given a parent
#   pool       the relay with a thread pool (-ORBthreadPerConnectionPolicy 0, 4 threads; the
#              pool's workers read the requests they serve): the same
#   pool_orb   the same with --orb omniorb (the upcall running on the sending thread decides)
#
# usage: tests/integration/attach_nested.sh [--list] [SCENARIO...]
# environment: GIOPSCOPE, BUILD, KEEP_DIR, FAIL_DIR (default /tmp/gs-failing), N (20: calls per
#   client thread), NS_TAG (atn)
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
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
RELAY=$BUILD/orb/bench_relay
PORT=2809
N=${N:-20}
case "$N" in ''|*[!0-9]*) echo "attach_nested: N must be a number, not '$N'" >&2; exit 2 ;; esac

. tests/lib/common.sh
. tests/lib/scenario.sh
sc_want attach_nested "tpc pool pool_orb" "$@"

NS_TAG=${NS_TAG:-atn}
. tests/lib/netns.sh

attach_require python3 timeout tcpdump tshark
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ] || [ ! -x "$RELAY" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
ns_require

T_START=$(date +%s.%N)
WORK=$(mktemp -d /tmp/gs-attach-nested.XXXXXX) || exit 2
ATT_PID=""
# shellcheck disable=SC2034  # read by work_cleanup (tests/lib/common.sh)
WORK_PID_VARS="ATT_PID"
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
# NS_CLI: the clients; NS_SRV: the relay; NS_BACK: the back end, on a second network of the relay's
NS_RELAY=$NS_SRV RELAY_A=$NS_SRV_IP4
ns_setup_back || exit 1

SC_FAIL_PREFIX=attach_nested_
BACK_PID="" RELAY_PID="" CAP_PID=""
sc_reset() { BACK_PID="" RELAY_PID="" CAP_PID=""; }
sc_stop() {
    [ -n "$ATT_PID" ] && { kill -INT "$ATT_PID" 2>/dev/null; ns_wait_exit "$ATT_PID" 20; }
    [ -n "$CAP_PID" ] && ns_stop "$CAP_PID" INT 10
    local p
    for p in $RELAY_PID $BACK_PID; do ns_stop "$p" TERM 20; done
    ATT_PID="" CAP_PID="" RELAY_PID="" BACK_PID=""
}
note() { echo "$*" >>"$SC_DIR/commands.log"; }

# start_chain RELAY_OPTS...: the back end, then the relay in front of it (every call it makes
# a forwarded one: -ORBverifyObjectExistsAndType 0), then tcpdump at the relay
start_chain() {
    ns_start "$NS_BACK" "$SC_DIR/back.log" "$SERVER" -ORBendPoint "giop:tcp:$BACK_IP:$PORT" \
        -o "$SC_DIR/back.ior" -q
    BACK_PID=$NS_LAST_PID
    ns_wait_file "$SC_DIR/back.ior" 15 || { err "back end did not start" "$(tail -3 "$SC_DIR/back.log")"; return 1; }
    ns_start "$NS_RELAY" "$SC_DIR/relay.log" "$RELAY" -ORBendPoint "giop:tcp:$RELAY_A:$PORT" \
        -ORBverifyObjectExistsAndType 0 "$@" -b "$SC_DIR/back.ior" -o "$SC_DIR/echo.ior" \
        -relay-log "$SC_DIR/relay.spans" -q
    RELAY_PID=$NS_LAST_PID
    note "# relay (pid $RELAY_PID): bench_relay -ORBendPoint giop:tcp:$RELAY_A:$PORT -ORBverifyObjectExistsAndType 0 $*"
    ns_wait_file "$SC_DIR/echo.ior" 15 || { err "relay did not start" "$(tail -3 "$SC_DIR/relay.log")"; return 1; }
    ns_start "$NS_RELAY" "$SC_DIR/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
        --time-stamp-precision=nano -U -i any -w "$SC_DIR/relay.pcap" "tcp port $PORT"
    CAP_PID=$NS_LAST_PID
    ns_wait_grep "$SC_DIR/tcpdump.log" "listening on" 15 ||
        { err "tcpdump did not start" "$(tail -3 "$SC_DIR/tcpdump.log")"; return 1; }
}

# start_attach ARGS...: attach on the relay in the background; bounded wait until it follows it
start_attach() {
    note "# attach:$(printf ' %q' giopscope attach --pid "$RELAY_PID" "$@")"
    "$GIOPSCOPE" attach --pid "$RELAY_PID" "$@" 2>"$SC_DIR/attach.log" &
    ATT_PID=$!
    ns_wait_attached "$SC_DIR/attach.log" "$ATT_PID" && return 0
    err "attach did not start" "$(tail -5 "$SC_DIR/attach.log")"
    return 1
}

stop_all() {
    sleep 0.5   # the last replies' ACKs and the client's recvs reach attach
    kill -INT "$ATT_PID" 2>/dev/null
    ns_wait_exit "$ATT_PID" 30 || err "attach did not exit within 30 s of SIGINT"
    [ "$WAIT_RC" = 0 ] || err "attach: exit status $WAIT_RC after SIGINT" "$(tail -3 "$SC_DIR/attach.log")"
    ATT_PID=""
    ns_stop "$CAP_PID" INT 10
    CAP_PID=""
    ns_stop "$RELAY_PID" TERM 20 || err "relay exit status $? after SIGTERM" "$(tail -3 "$SC_DIR/relay.log")"
    ns_stop "$BACK_PID" TERM 20 || err "back end exit status $? after SIGTERM" "$(tail -3 "$SC_DIR/back.log")"
    RELAY_PID="" BACK_PID=""
}

client() {
    local log=$SC_DIR/clients.log
    note "# client: bench_client -i echo.ior -q $*"
    ns_run "$NS_CLI" 180 "$CLIENT" -i "$SC_DIR/echo.ior" -q "$@" >>"$log" 2>&1 ||
        err "client ($*) exit status $?" "$(tail -3 "$log")"
}

# chain NAME RELAY_OPTS... -- ATTACH_OPTS...
chain() {
    local -a ropts=() aopts=()
    sc_begin "$1"
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do ropts+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    aopts=("$@")
    if start_chain "${ropts[@]}" && start_attach --pairs --format csv -o "$SC_DIR/pairs.csv" "${aopts[@]}"; then
        client -op slow -size 1000 -distinct -threads 4 -n "$N"
        client -op echoOctets -size 100 -distinct -n 20
        stop_all
        local out
        if ! out=$(python3 "$CHECK" parents --cap "$SC_DIR/relay.pcap" --ours "$SC_DIR/pairs.csv" \
                --relay "$RELAY_A,$RELAY_B" --min-nested $((4 * N + 20)) 2>&1); then
            err "parents by thread" "$out"
        fi
        SC_NOTE="$(echo "$out" | grep -m1 '^parents:' | sed 's/^parents: //'); $(grep -o 'parents by thread: .*' "$SC_DIR/attach.log" | cut -c1-160)"
        # the check itself: two back-end calls' parents swapped must fail it
        python3 - "$SC_DIR/pairs.csv" "$SC_DIR/swapped.csv" "$RELAY_B" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
nested = [r for r in rows if r["client"].startswith(sys.argv[3] + ":") and r["parent_request_id"]]
cols = ("parent_client", "parent_server", "parent_request_id")
if len(nested) >= 2:
    a, b = nested[0], nested[-1]
    for c in cols:
        a[c], b[c] = b[c], a[c]
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
PY
        if python3 "$CHECK" parents --cap "$SC_DIR/relay.pcap" --ours "$SC_DIR/swapped.csv" \
                --relay "$RELAY_A,$RELAY_B" >"$SC_DIR/selfcheck.txt" 2>&1; then
            err "the check passed a CSV with two parents swapped" "$(head -3 "$SC_DIR/selfcheck.txt")"
        elif ! grep -q "WRONG parent" "$SC_DIR/selfcheck.txt"; then
            err "the check failed the swapped parents for another reason" "$(head -3 "$SC_DIR/selfcheck.txt")"
        fi
    fi
    sc_end
}

scenario_tpc() { chain tpc; }
scenario_pool() {
    chain pool -ORBthreadPerConnectionPolicy 0 -ORBmaxServerThreadPoolSize 4
}
scenario_pool_orb() {
    chain pool_orb -ORBthreadPerConnectionPolicy 0 -ORBmaxServerThreadPoolSize 4 -- --orb omniorb
}

sc_run_all
rc=$?
echo "time: $(awk -v a="$T_START" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }')"
exit $rc
