#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/workloads.sh -- the seeds' workloads measured from the wire on omniORB (issue 7, item 5):
# giopscope's per-call figures next to the client's own, showing how much of each call is ORB time.
#
# work_server and work_client (bench/workloads/, omniORB C++) run in two network namespaces
# joined by a veth (tests/lib/netns.sh); tcpdump captures on the client's end of the veth, one
# capture per run (a 24 kB workload is ~100 MB of capture: each is read and deleted before the
# next run), and `giopscope read --pairs --format csv` turns it into calls.
#   1. Workloads: for each payload (struct of primitives, records aligned, records unaligned, an
#      Any) and each argument size (144 and 24 016 bytes), two-way echo calls and oneway calls:
#      WARMUP + CALLS calls back to back, one thread, one connection, one client process per run.
#   2. Deferred: N work_server processes (each its own port; N in SERVERS), the client sends one
#      DII deferred `work(USEC)` request to each per round and collects them with
#      get_next_response; rounds per N = ROUND_CALLS / N, clamped to [20, 2000].
# bench/workloads/analyse.py matches each client call to its wire call (per connection, by time
# containment), prints the tables and writes the workloads section of $BENCH_DOC (between
# <!-- workloads:begin --> and <!-- workloads:end -->; the rest of the file is left alone).
#
# usage: bench/workloads.sh            (as root; part of `make bench`; `make bench-workloads`)
# environment: BUILD (build), GIOPSCOPE ($BENCH_BIN/giopscope, else $BUILD/giopscope),
#   BENCH_DOC (docs/benchmarks.md; NO_DOC=1: tables on stdout only), CALLS (3000), WARMUP (200),
#   SIZES ("144 24016"), KINDS ("prims recA recU any"), WAYS ("two one"),
#   SERVERS ("1 10 50 200"), ROUND_CALLS (4000), DEF_WARMUP (3 rounds), USEC (1000),
#   PORT (2809), DPORT_BASE (3100), KEEP_DIR (keep every file there).
# Exit 0; 1 when a run failed (the others still run and are reported); 2 setup; 77 skipped.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
BENCH_BIN=${BENCH_BIN:-$BUILD/bench}
if [ -z "${GIOPSCOPE:-}" ]; then
    GIOPSCOPE=$BUILD/giopscope
    [ -x "$BENCH_BIN/giopscope" ] && GIOPSCOPE=$BENCH_BIN/giopscope
fi
DOC=${BENCH_DOC:-docs/benchmarks.md}
CALLS=${CALLS:-3000}
WARMUP=${WARMUP:-200}
SIZES=${SIZES:-144 24016}
KINDS=${KINDS:-prims recA recU any}
WAYS=${WAYS:-two one}
SERVERS=${SERVERS:-1 10 50 200}
ROUND_CALLS=${ROUND_CALLS:-4000}
DEF_WARMUP=${DEF_WARMUP:-3}
USEC=${USEC:-1000}
PORT=${PORT:-2809}
DPORT_BASE=${DPORT_BASE:-3100}
KEEP_DIR=${KEEP_DIR:-}
WL_DIR=$BUILD/bench/workloads
SERVER=$WL_DIR/work_server
CLIENT=$WL_DIR/work_client
T0=$(date +%s)

# shellcheck source=tests/lib/netns.sh
. tests/lib/netns.sh
for tool in tcpdump python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || ns_skip "$tool not installed"
done
ns_require
[ -x "$GIOPSCOPE" ] || { echo "workloads: $GIOPSCOPE missing: build giopscope first (make)" >&2; exit 2; }
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    if ! command -v omniidl >/dev/null 2>&1 || ! pkg-config --exists omniDynamic4 2>/dev/null; then
        ns_skip "omniORB (omniidl, libomniorb4-dev) not installed"
    fi
    make -s -f bench/workloads/workloads.mk workloads-apps BUILD="$BUILD" >&2 || exit 2
fi

WORK=$(mktemp -d /tmp/gs-workloads.XXXXXX) || exit 2
chmod 755 "$WORK"
TD_PID=""
SRV_PIDS=""
# shellcheck disable=SC2317  # called by ns_cleanup (NS_CLEANUP_HOOK)
wl_cleanup() {
    # tcpdump and the servers are ns_start'ed: ns_cleanup kills them by pid after this hook
    if [ -n "$KEEP_DIR" ]; then mkdir -p "$KEEP_DIR" && cp -r "$WORK"/. "$KEEP_DIR"/; fi
    rm -rf "$WORK"
}
export NS_CLEANUP_HOOK=wl_cleanup  # read by ns_cleanup (tests/lib/netns.sh)
ns_setup || { echo "workloads: cannot create the network namespaces" >&2; exit 2; }
# a private copy: a rebuild during the run must not swap the binary under a run
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope

FAILED=""
fail() { echo "workloads: $*" >&2; FAILED="$FAILED $1"; }

# start_capture NAME FILTER: tcpdump on the client's end of the veth. Not --immediate-mode:
# packets come in ring blocks, which a busy 2-vCPU machine keeps up with at 24 kB per call;
# a block is handed over at the latest after the 1 s timeout, hence the wait in stop_capture.
start_capture() {
    rm -f "$WORK/cap.pcap"
    ns_start "$NS_CLI" "$WORK/$1.tcpdump.log" tcpdump -Z root -B 131072 -s 0 \
        --time-stamp-precision=nano -i "$NS_VETH_CLI" -w "$WORK/cap.pcap" "$2"
    TD_PID=$NS_LAST_PID
    ns_wait_grep "$WORK/$1.tcpdump.log" "listening on" 15
}

# stop_capture NAME: flush, stop, read the capture into NAME.pairs.csv, delete it; the number
# of packets tcpdump says the kernel dropped goes to DROPS
stop_capture() {
    sleep 2
    ns_stop "$TD_PID" INT 15
    TD_PID=""
    DROPS=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$WORK/$1.tcpdump.log")
    [ -n "$DROPS" ] || DROPS="?"
    timeout 600 "$GIOPSCOPE" read "$WORK/cap.pcap" --pairs --format csv -o "$WORK/$1.pairs.csv" \
        2>"$WORK/$1.read.err" || fail "$1" "giopscope read: $(head -2 "$WORK/$1.read.err")"
    rm -f "$WORK/cap.pcap"
}

{
    echo "command=make bench-workloads"
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "nproc=$(nproc)"
    echo "cpu=$(nproc) × $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "kernel=Linux $(uname -r)"
    echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "omniorb=$(pkg-config --modversion omniORB4 2>/dev/null || echo '?')"
    echo "calls=$CALLS"
    echo "warmup=$WARMUP"
    echo "usec=$USEC"
    echo "def_warmup=$DEF_WARMUP"
    echo "deferred_port_base=$DPORT_BASE"
    echo "server_ip=$NS_SRV_IP4"
} >"$WORK/meta.txt"
: >"$WORK/runs.tsv"

# ------------------------------------------------------------------ 1. the workloads
ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$WORK/work.ior"
SRV_PID=$NS_LAST_PID
if ! ns_wait_file "$WORK/work.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
    echo "workloads: work_server did not start: $(tail -2 "$WORK/server.log")" >&2
    exit 1
fi
for size in $SIZES; do
    for kind in $KINDS; do
        for way in $WAYS; do
            name=$kind-$way-$size
            if ! start_capture "$name" "tcp port $PORT"; then
                fail "$name" "tcpdump did not start"
                continue
            fi
            ns_run "$NS_CLI" 600 "$CLIENT" -i "$WORK/work.ior" -kind "$kind" -way "$way" -bytes "$size" \
                -n $((CALLS + WARMUP)) -lat "$WORK/$name.lat.csv" -q >"$WORK/$name.client.log" 2>&1 ||
                fail "$name" "client: $(tail -1 "$WORK/$name.client.log")"
            stop_capture "$name"
            argb=$(sed -n 's/.*arg_bytes=\([0-9]*\).*/\1/p' "$WORK/$name.client.log")
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$way" "$size" "${argb:-?}" "$WARMUP" "$DROPS" >>"$WORK/runs.tsv"
            echo "workloads: $name done ($(($(date +%s) - T0)) s, drops $DROPS)" >&2
        done
    done
done
ns_stop "$SRV_PID" TERM 20 || fail server "work_server exit status $?"

# ------------------------------------------------------------------ 2. N deferred servers
nmax=0
for n in $SERVERS; do [ "$n" -gt "$nmax" ] && nmax=$n; done
[ "$nmax" -le 1000 ] || { echo "workloads: at most 1000 servers" >&2; exit 2; }
if [ "$nmax" -gt 0 ]; then
    # every server its own process and port, all started at once; the start-up wait is bounded
    # (2 s per 10 servers, at least 30 s: 200 omniORB processes starting on 2 busy vCPUs)
    for i in $(seq 0 $((nmax - 1))); do
        ns_start "$NS_SRV" "$WORK/dsrv.$i.log" "$SERVER" -q \
            -ORBendPoint "giop:tcp:$NS_SRV_IP4:$((DPORT_BASE + i))" -o "$WORK/dsrv.$i.ior"
        SRV_PIDS="$SRV_PIDS $NS_LAST_PID"
    done
    deadline=$(($(date +%s) + 30 + nmax / 5))
    for i in $(seq 0 $((nmax - 1))); do
        while [ ! -s "$WORK/dsrv.$i.ior" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
    done
    ready=0
    for i in $(seq 0 $((nmax - 1))); do [ -s "$WORK/dsrv.$i.ior" ] && ready=$((ready + 1)); done
    echo "workloads: $ready of $nmax deferred servers ready ($(($(date +%s) - T0)) s)" >&2
    for n in $SERVERS; do
        name=deferred-$n
        [ "$n" -le "$ready" ] || { fail "$name" "only $ready servers started"; continue; }
        rounds=$((ROUND_CALLS / n))
        [ "$rounds" -ge 20 ] || rounds=20
        [ "$rounds" -le 2000 ] || rounds=2000
        : >"$WORK/$name.iors"
        for i in $(seq 0 $((n - 1))); do cat "$WORK/dsrv.$i.ior" >>"$WORK/$name.iors"; done
        if ! start_capture "$name" "tcp portrange $DPORT_BASE-$((DPORT_BASE + n - 1))"; then
            fail "$name" "tcpdump did not start"
            continue
        fi
        ns_run "$NS_CLI" 600 "$CLIENT" -deferred "$WORK/$name.iors" -rounds "$rounds" -usec "$USEC" \
            -lat "$WORK/$name.lat.csv" -q >"$WORK/$name.client.log" 2>&1 ||
            fail "$name" "client: $(tail -1 "$WORK/$name.client.log")"
        stop_capture "$name"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" deferred deferred "$n" "$USEC" "$DEF_WARMUP" "$DROPS" >>"$WORK/runs.tsv"
        echo "workloads: $name done, $rounds rounds ($(($(date +%s) - T0)) s, drops $DROPS)" >&2
    done
    # TERM to all first, then wait for each (ns_stop per server would wait one after another)
    for p in $SRV_PIDS; do kill -s TERM "$p" 2>/dev/null; done
    for p in $SRV_PIDS; do ns_stop "$p" TERM 20 >/dev/null 2>&1; done
    SRV_PIDS=""
fi

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$WORK/meta.txt"
if [ "${NO_DOC:-0}" = 1 ]; then
    python3 bench/workloads/analyse.py "$WORK" || fail analyse "analyse.py failed"
else
    python3 bench/workloads/analyse.py "$WORK" --doc "$DOC" || fail analyse "analyse.py failed"
fi
echo "workloads: done in $(($(date +%s) - T0)) s" >&2
[ -z "$FAILED" ] || { echo "workloads: failed:$FAILED" >&2; exit 1; }
exit 0
