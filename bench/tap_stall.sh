#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/tap_stall.sh -- how long `live` and `attach` (their defaults, or LIVE_ARGS/ATTACH_ARGS)
# ride out their reader being kept from the CPU, under a steady call rate, losing nothing: what
# the ring sizes of docs/live.md and docs/attach.md buy, measured rather than computed.
#
# omniORB bench_server in one network namespace, bench_client processes in another, joined by a
# veth (tests/lib/netns.sh, as bench/live_rate.sh). Per tap and per STALL: the tap starts
# (live on the server's veth in the server's namespace; attach --pid <server>), CLIENTSxTHREADS
# threads call echoString(32) in a closed loop (CALLS per thread); 2 s after they began the tap
# is stopped (SIGSTOP: a reader that gets no CPU at all, the worst case) for STALL seconds and
# continued (SIGCONT); when the clients are done the tap is stopped (SIGINT) and
#   client calls   what the clients' latency CSVs logged
#   in stall       the calls the clients ended while the tap was stopped
#   rate           calls/s of the clients over the stall
#   tap calls      the tap's rows answered NO_EXCEPTION (echoString)
#   lost           client calls - tap calls
#   kdrop other    the tap's own count of what it lost before its decoder (as bench/live_rate.sh)
# A stall a tap rides out: lost 0 and kdrop 0.
# Not a test: run it by hand, as root; it loads both CPUs of a 2-vCPU machine.
#
# usage: bench/tap_stall.sh [STALL_S...]   (default: 1 2.5 4)
# environment: TAPS ("live attach"), LEVEL (CLIENTSxTHREADS, default 2x2), CALLS (per thread,
#   default 40000: enough for the stall plus a few seconds), LIVE_ARGS, ATTACH_ARGS, BUILD
#   (build), GIOPSCOPE ($BUILD/giopscope), PORT (2809), NS_TAG (namespace prefix, default gs)
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
TAPS=${TAPS:-live attach}
LEVEL=${LEVEL:-2x2}
CALLS=${CALLS:-40000}
LIVE_ARGS=${LIVE_ARGS:-}
ATTACH_ARGS=${ATTACH_ARGS:-}
PORT=${PORT:-2809}
STALLS=${*:-1 2.5 4}
C=${LEVEL%%x*} T=${LEVEL#*x}

[ -x "$GIOPSCOPE" ] || { echo "tap_stall: $GIOPSCOPE not built (make)" >&2; exit 2; }
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then echo "tap_stall: make orb-apps first" >&2; exit 2; fi
. tests/lib/netns.sh
ns_require

WORK=$(mktemp -d /tmp/gs-tap-stall.XXXXXX) || exit 2
TAP_PID=""
work_cleanup() {
    # a stopped tap cannot take the TERM of ns_cleanup
    [ -n "$TAP_PID" ] && kill -CONT "$TAP_PID" 2>/dev/null
    rm -rf "$WORK"
}
# shellcheck disable=SC2034  # read by tests/lib/netns.sh
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "tap_stall: cannot create the namespaces" >&2; exit 2; }
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope

ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" \
    -o "$WORK/echo.ior" -q
SRV_PID=$NS_LAST_PID
if ! ns_wait_file "$WORK/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
    echo "tap_stall: the server did not start" >&2
    exit 2
fi

echo "giopscope taps stopped under load: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPU, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "level $LEVEL (echoString(32), closed loop), $CALLS calls per thread; live ${LIVE_ARGS:-(defaults)}, attach ${ATTACH_ARGS:-(defaults)}"
printf '%-6s %7s %9s %9s %8s %9s %6s %7s %6s %5s\n' tap "stall s" client "in stall" "rate" tap lost kdrop other load
for stall in $STALLS; do
    for tap in $TAPS; do
        d=$WORK/$tap-$stall
        mkdir -p "$d"
        # shellcheck disable=SC2086  # *_ARGS are words
        case "$tap" in
            live)
                ip netns exec "$NS_SRV" "$GIOPSCOPE" live -i "$NS_VETH_SRV" --pairs -o "$d/tap.csv" --summary \
                    $LIVE_ARGS >"$d/tap.out" 2>"$d/tap.err" </dev/null &
                TAP_PID=$! ready="listening on" ;;
            attach)
                "$GIOPSCOPE" attach --pid "$SRV_PID" --pairs -o "$d/tap.csv" --summary \
                    $ATTACH_ARGS >"$d/tap.out" 2>"$d/tap.err" </dev/null &
                TAP_PID=$! ready="^giopscope attach: following" ;;
            *) echo "tap_stall: unknown tap '$tap'" >&2; exit 2 ;;
        esac
        NS_PIDS="$NS_PIDS $TAP_PID"
        if ! ns_wait_grep "$d/tap.err" "$ready" 30; then
            echo "$tap did not start: $(tail -2 "$d/tap.err")"
            ns_stop "$TAP_PID" INT 30
            TAP_PID=""
            continue
        fi
        sleep 0.3
        pids=""
        for i in $(seq 1 "$C"); do
            timeout -k 5 300 ip netns exec "$NS_CLI" "$CLIENT" -i "$WORK/echo.ior" -op echoString -size 32 \
                -n "$CALLS" -threads "$T" -q -lat "$d/c$i.lat.csv" >"$d/c$i.log" 2>&1 </dev/null &
            pids="$pids $!"
            NS_PIDS="$NS_PIDS $!"
        done
        sleep 2
        t0=$(date +%s%N)
        kill -STOP "$TAP_PID"
        sleep "$stall"
        t1=$(date +%s%N)
        kill -CONT "$TAP_PID"
        for i in $pids; do
            wait "$i"
            NS_PIDS=$(echo "$NS_PIDS" | tr ' ' '\n' | grep -vx "$i" | tr '\n' ' ')
        done
        sleep 0.5
        ns_stop "$TAP_PID" INT 30 || echo "$tap exit status $?: $(tail -2 "$d/tap.err")"
        TAP_PID=""
        python3 - "$d" "$tap" "$stall" "$t0" "$t1" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import csv, glob, os, re, sys
d, tap, stall, t0, t1, load = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
client = in_stall = 0
for f in glob.glob(d + "/c*.lat.csv"):
    for r in csv.DictReader(open(f, newline="")):
        client += 1
        # the client's clock is CLOCK_REALTIME, as date +%s%N
        if t0 <= int(r["t_end_ns"]) < t1:
            in_stall += 1
seen = 0
if os.path.exists(d + "/tap.csv"):
    for r in csv.DictReader(open(d + "/tap.csv", newline="")):
        if r["kind"] == "Request" and r["status"] == "NO_EXCEPTION":
            seen += 1
err = open(d + "/tap.err").read()
m = re.search(r"packets lost before the decoder: kernel (\d+), interface (\d+), [^\d]* (\d+)", err)
kd, ifd, od = (int(x) for x in m.groups()) if m else (0, 0, 0)
print("%-6s %7s %9d %9d %8.0f %9d %6d %7d %6d %5s" % (tap, stall, client, in_stall,
      in_stall / ((t1 - t0) / 1e9), seen, client - seen, kd + ifd, od, load))
PY
    done
done
ns_stop "$SRV_PID" TERM 20
