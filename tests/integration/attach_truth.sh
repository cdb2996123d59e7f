#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_truth.sh -- `giopscope attach`'s syscall instants set against ground
# truth that giopscope did not produce: what the unmodified omniORB processes did, recorded
# from inside them.
#
# bench_server in a server namespace, bench_client in a client namespace (veth), both run with
# LD_PRELOAD=libgs_truth.so (tests/truth/recorder.c: every send/recv-family call on a TCP
# socket, CLOCK_REALTIME just before and just after, bytes, the GIOP header it began with) and
# the server with -servant-log (the servant's own entry and exit instants). Two
# `giopscope attach --pairs`: one --pid SERVER (it enters the server's namespace), one --pid
# on the clients (started stopped, so that attach follows them from their first syscall; it
# ends by itself when they have exited). Workloads, one client process each: echoString(32)
# x N_SMALL ("echo small"), echoOctets(100000) x N_LARGE ("echo large": a 1024-byte send, the
# rest, an empty Fragment), slow(SLOW_US) x N_SLOW. tests/truth/truth.py then frames each
# connection's byte stream from the recorded headers and, for every call of both CSVs (read by
# column name; joined by connection 4-tuple and request id):
#   t_client_send, t_server_send  within [before, after] of the send that carried the
#                                  message's first byte
#   t_server_recv, t_client_recv  within the window of the recv that returned its last byte
#                                  (the last Fragment's)
#   server_process_us >= the servant's own exit - entry (the span on the thread that sent
#                        the reply, between the request's recv and the reply's send)
#   no call lost: every call the recorder saw is in both CSVs, every instant of a followed
#                 process is there; the servant ran each operation as often as the clients
#                 called it; the recvs that start a message show the header the send had
#                 (both sides' byte offsets agree)
#   the checks can fail: errors planted one at a time in the CSVs (each instant 1 ns outside
#                 its window, server_process_us 1 ns under the servant's time, a row dropped)
#                 are each caught as the one violation (truth.py --prove)
# and prints the distances (instant - window start, window end - instant) p50/p99/max/min, the
# ORB's part (server_process_us - servant time) per operation, and how far CLOCK_REALTIME -
# CLOCK_MONOTONIC moved while the processes ran (eBPF stamps monotonic time, giopscope adds
# that offset: the instants are compared with tolerance TOL_NS, default 0).
#
# Scenarios: quiet (nothing else of ours running), hog (the same with a CPU hog on each vCPU:
# `taskset -c N sh -c 'while :; do :; done'`, bounded by timeout, at the ORB's nice level),
# loopback (server and clients in one namespace over 127.0.0.1, one attach --pid on all of
# them: one CSV with all four instants).
#
# usage: tests/integration/attach_truth.sh [SCENARIO...]     (default: all; --list)
# environment: GIOPSCOPE, BUILD, PORT (2809), TOL_NS (0), N_SMALL (300), N_LARGE (40),
#   N_SLOW (60), SLOW_US (2000), KEEP_DIR (keep every scenario's files), FAIL_DIR
#   (default /tmp/gs-failing), JSON_DIR (write each scenario's figures as NAME.json there)
# Prints "PASS name (figures)" / "FAIL name: reason", then "N passed, N failed"; exit 0, 1 on a
# failure, 77 when it cannot run here (not root, no eBPF in the build, no BTF, no namespaces).

# shellcheck disable=SC2317  # scenario bodies and hooks are called indirectly
set -u
export LC_ALL=C

cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
TRUTH_PY=tests/truth/truth.py
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
KEEP_DIR=${KEEP_DIR:-}
JSON_DIR=${JSON_DIR:-}
PORT=${PORT:-2809}
TOL_NS=${TOL_NS:-0}
N_SMALL=${N_SMALL:-300}
N_LARGE=${N_LARGE:-40}
N_SLOW=${N_SLOW:-60}
SLOW_US=${SLOW_US:-2000}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
TRUTH_SO=$BUILD/orb/libgs_truth.so
ALL="quiet hog loopback"

. tests/lib/common.sh
. tests/lib/scenario.sh
sc_want attach_truth "$ALL" "$@"
for v in PORT TOL_NS N_SMALL N_LARGE N_SLOW SLOW_US; do
    case "${!v}" in
        ''|*[!0-9]*) echo "attach_truth: $v must be a number, not '${!v}'" >&2; exit 2 ;;
    esac
done

NS_TAG=tru
. tests/lib/netns.sh

attach_require python3 timeout taskset nproc
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ] || [ ! -f "$TRUTH_SO" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-truth.XXXXXX) || exit 2
ATT_PIDS=""
HOG_PIDS=""
# shellcheck disable=SC2034  # read by work_cleanup (tests/lib/common.sh)
WORK_PID_VARS="ATT_PIDS HOG_PIDS"
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
# private copies: a rebuild while the test runs must not swap a binary under it
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
cp "$TRUTH_SO" "$WORK/libgs_truth.so" && TRUTH_SO=$WORK/libgs_truth.so
[ -n "$KEEP_DIR" ] && mkdir -p "$KEEP_DIR"
[ -n "$JSON_DIR" ] && mkdir -p "$JSON_DIR"

SC_FAIL_PREFIX=attach_truth_ SC_CP_OPTS=--sparse=always

# start_attach LOG ARGS...: giopscope attach in the background (pid appended to ATT_PIDS, last
# in ATT_PID); waits (bounded) until it says what it follows
start_attach() {
    local log=$1
    shift
    echo "# attach:$(printf ' %q' "$GIOPSCOPE" attach "$@")" >>"$SC_DIR/commands.log"
    "$GIOPSCOPE" attach "$@" 2>"$log" &
    ATT_PID=$!
    ATT_PIDS="$ATT_PIDS $ATT_PID"
    ns_wait_attached "$log" "$ATT_PID" && return 0
    err "attach did not start" "$(tail -5 "$log")"
    return 1
}

# stop_attach PID: SIGINT, bounded wait, exit status 0 wanted
stop_attach() {
    kill -INT "$1" 2>/dev/null
    ns_wait_exit "$1" 10 || err "attach $1 did not exit within 10 s of SIGINT"
    [ "$WAIT_RC" = 0 ] || err "attach $1: exit status $WAIT_RC after SIGINT"
    ATT_PIDS=$(echo "$ATT_PIDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}

# hogs_start: one busy loop per vCPU, pinned, bounded by timeout, at our (the ORB's) nice level
hogs_start() {
    local cpu
    for cpu in $(seq 0 $(($(nproc) - 1))); do
        taskset -c "$cpu" timeout 600 sh -c 'while :; do :; done' &
        HOG_PIDS="$HOG_PIDS $!"
    done
    echo "# hogs: taskset -c N timeout 600 sh -c 'while :; do :; done' on cpus 0..$(($(nproc) - 1)), pids$HOG_PIDS" \
        >>"$SC_DIR/commands.log"
}

hogs_stop() {
    local p
    for p in $HOG_PIDS; do
        kill -TERM "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    HOG_PIDS=""
}

# one scenario: server + attach on it, three stopped clients + one attach on them, the clients
# run one after the other, then the check
run_round() {
    local hog=$1 loop=$2 cpids="" p i n_loc srv_ni hog_ni out att_srv="" att_cli
    local srv_addr=$NS_SRV_IP4 cli_ns=$NS_CLI
    local -a pairs=(--pairs "$SC_DIR/server.csv@server" --pairs "$SC_DIR/client.csv@client")
    if [ "$loop" = 1 ]; then
        srv_addr=127.0.0.1 cli_ns=$NS_SRV
        pairs=(--pairs "$SC_DIR/all.csv@both")
    fi
    local -a ops=("echoString -size 32 -n $N_SMALL" "echoOctets -size 100000 -n $N_LARGE"
                  "slow -size $SLOW_US -n $N_SLOW")
    [ "$hog" = 1 ] && hogs_start
    rm -f "$SC_DIR/echo.ior"
    ns_start "$NS_SRV" "$SC_DIR/server.log" env LD_PRELOAD="$TRUTH_SO" GS_TRUTH_FILE="$SC_DIR/server.truth" \
        "$SERVER" -ORBendPoint "giop:tcp:$srv_addr:$PORT" -o "$SC_DIR/echo.ior" \
        -servant-log "$SC_DIR/servant.csv" -q
    SRV_PID=$NS_LAST_PID
    echo "# server (pid $SRV_PID) in $NS_SRV: LD_PRELOAD=libgs_truth.so $SERVER -ORBendPoint giop:tcp:$srv_addr:$PORT -servant-log servant.csv" \
        >>"$SC_DIR/commands.log"
    if ! ns_wait_file "$SC_DIR/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
        err "server did not start" "$(tail -3 "$SC_DIR/server.log")"
        ns_stop "$SRV_PID" TERM 5
        hogs_stop
        return 1
    fi
    if [ "$loop" = 0 ]; then
        start_attach "$SC_DIR/attach_server.log" --pid "$SRV_PID" --pairs -o "$SC_DIR/server.csv" -q || {
            ns_stop "$SRV_PID" TERM 5; hogs_stop; return 1; }
        att_srv=$ATT_PID
    fi
    # the clients, each stopped before it execs (same pid, same start time after exec)
    for i in 0 1 2; do
        # shellcheck disable=SC2016,SC2086  # $$ and $@ are the inner shell's; ops split on purpose
        ns_start "$cli_ns" "$SC_DIR/client_$i.log" sh -c 'kill -STOP $$; exec "$@"' sh \
            env LD_PRELOAD="$TRUTH_SO" GS_TRUTH_FILE="$SC_DIR/client_$i.truth" \
            "$CLIENT" -i "$SC_DIR/echo.ior" -q -op ${ops[$i]}
        cpids="$cpids${cpids:+,}$NS_LAST_PID"
        echo "# client $i (pid $NS_LAST_PID) in $cli_ns: LD_PRELOAD=libgs_truth.so $CLIENT -q -op ${ops[$i]}" >>"$SC_DIR/commands.log"
    done
    for p in ${cpids//,/ }; do
        for _ in $(seq 1 100); do
            case "$(ps -o stat= -p "$p" 2>/dev/null)" in T*) break ;; esac
            sleep 0.05
        done
    done
    local started=0
    if [ "$loop" = 1 ]; then
        # one attach follows both ends over 127.0.0.1
        start_attach "$SC_DIR/attach_all.log" --pid "$SRV_PID,$cpids" --pairs -o "$SC_DIR/all.csv" -q &&
            att_srv=$ATT_PID started=1
    else
        start_attach "$SC_DIR/attach_client.log" --pid "$cpids" --pairs -o "$SC_DIR/client.csv" -q &&
            started=1
    fi
    if [ "$started" = 1 ]; then
        att_cli=$ATT_PID
        for p in ${cpids//,/ }; do
            kill -CONT "$p"
            ns_wait_exit "$p" 180 || err "client $p did not finish within 180 s"
            [ "$WAIT_RC" = 0 ] || err "client $p: exit status $WAIT_RC" "$(tail -3 "$SC_DIR"/client_*.log)"
            NS_PIDS=$(echo "$NS_PIDS" | tr ' ' '\n' | grep -vx "$p" | tr '\n' ' ')
        done
        if [ "$loop" = 0 ]; then
            # attach --pid ends by itself once every followed process has exited
            ns_wait_exit "$att_cli" 15 || err "attach on the clients still running 15 s after they exited"
            [ "$WAIT_RC" = 0 ] || err "attach on the clients: exit status $WAIT_RC" "$(tail -3 "$SC_DIR/attach_client.log")"
            ATT_PIDS=$(echo "$ATT_PIDS" | tr ' ' '\n' | grep -vx "$att_cli" | tr '\n' ' ')
        fi
    else
        for p in ${cpids//,/ }; do ns_stop "$p" KILL 5; done
    fi
    sleep 0.5
    [ -n "$att_srv" ] && stop_attach "$att_srv"
    srv_ni=$(ps -o ni= -p "$SRV_PID" 2>/dev/null | tr -d ' ')
    hog_ni=""
    for p in $HOG_PIDS; do hog_ni="$hog_ni $(ps -o ni= -p "$p" 2>/dev/null | tr -d ' ')"; done
    ns_stop "$SRV_PID" TERM 20 || err "server exit status $? after SIGTERM" "$(tail -3 "$SC_DIR/server.log")"
    if [ "$hog" = 1 ]; then
        # a hog that ended before the run did (timeout) would leave the vCPU idle
        for p in $HOG_PIDS; do ns_alive "$p" || err "hog $p ended before the run did"; done
        hogs_stop
        for p in $hog_ni; do
            [ "$p" = "$srv_ni" ] || err "hog nice level $p, the server's $srv_ni"
        done
        SC_NOTE="hogs on $(nproc) vCPUs at nice $srv_ni; "
    fi
    n_loc=3 # one LocateRequest per client connection (omniORB's first message)
    echo "# python3 $TRUTH_PY check --truth server.truth client_*.truth --servant servant.csv ${pairs[*]//$SC_DIR\//} --tol-ns $TOL_NS --prove" \
        >>"$SC_DIR/commands.log"
    if out=$(python3 "$TRUTH_PY" check --truth "$SC_DIR/server.truth" "$SC_DIR"/client_?.truth \
            --servant "$SC_DIR/servant.csv" "${pairs[@]}" --tol-ns "$TOL_NS" --label "$SC" \
            --expect "echoString=$N_SMALL" "echoOctets=$N_LARGE" "slow=$N_SLOW" \
            --json "$SC_DIR/result.json" --prove 2>&1); then
        printf "%s\n" "${out//$'\n'/$'\n'    }" | sed "1s/^/    /"
        local calls
        calls=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["calls"])' "$SC_DIR/result.json")
        [ "$calls" = $((N_SMALL + N_LARGE + N_SLOW + n_loc)) ] ||
            err "the recorder saw $calls calls, the clients made $((N_SMALL + N_LARGE + N_SLOW)) + $n_loc LocateRequests"
        SC_NOTE="$SC_NOTE$calls calls, every instant inside its syscall window"
        [ -n "$JSON_DIR" ] && cp "$SC_DIR/result.json" "$JSON_DIR/$SC.json"
    else
        err "ground truth checks failed" "$out"
    fi
}

scenario_quiet() {
    sc_begin quiet
    run_round 0 0
    sc_end
}

scenario_hog() {
    sc_begin hog
    run_round 1 0
    sc_end
}

scenario_loopback() {
    sc_begin loopback
    run_round 0 1
    sc_end
}

T0=$(date +%s)
for sc in $WANT; do
    "scenario_$sc"
done
echo "$PASSED passed, $FAILED failed"
echo "attach_truth: $(($(date +%s) - T0)) s"
[ "$FAILED" = 0 ]
