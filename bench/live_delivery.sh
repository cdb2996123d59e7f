#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/live_delivery.sh -- how late `giopscope live` writes a call after the call's last packet,
# for each --batch-ms (0: immediate mode; else TPACKET_V3 blocks handed over at most about MS ms
# after they were opened): the latency of output that the delivery in blocks costs.
#
# omniORB bench_server on 127.0.0.1:PORT, one bench_client thread calling slow(US) (the servant
# sleeps US us: a low, steady rate), `giopscope live -i lo --pairs` on the port, its rows read as
# they come by a Python reader that stamps each on arrival (CLOCK_REALTIME) and subtracts the
# row's t_reply_last (the kernel's time stamp of the call's last packet, the same clock).
# ROUNDS rounds, the --batch-ms values interleaved in each. Prints per value the rows seen and
# the median, p90, p99 and max of that delay over all rounds, in ms.
# Not a test: run it by hand, as root (a capture on lo).
#
# usage: bench/live_delivery.sh [MS...]   (default: 0 1 10)
# environment: ROUNDS (3), CALLS (per round and value, 400), US (servant sleep, 5000), PORT
#   (28919), BUILD (build), GIOPSCOPE ($BUILD/giopscope)
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
ROUNDS=${ROUNDS:-3}
CALLS=${CALLS:-400}
US=${US:-5000}
PORT=${PORT:-28919}
VALUES=${*:-0 1 10}

[ "$(id -u)" = 0 ] || { echo "live_delivery: needs root (a capture on lo)" >&2; exit 2; }
[ -x "$GIOPSCOPE" ] || { echo "live_delivery: $GIOPSCOPE not built (make)" >&2; exit 2; }
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then echo "live_delivery: make orb-apps first" >&2; exit 2; fi
WORK=$(mktemp -d /tmp/gs-live-delivery.XXXXXX) || exit 2
SRV=""
cleanup() {
    [ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

"$SERVER" -ORBendPoint "giop:tcp:127.0.0.1:$PORT" -o "$WORK/echo.ior" -q >"$WORK/server.log" 2>&1 &
SRV=$!
for _ in $(seq 1 100); do [ -s "$WORK/echo.ior" ] && break; sleep 0.1; done
[ -s "$WORK/echo.ior" ] || { echo "live_delivery: the server did not start" >&2; exit 2; }

# the reader: each row's arrival time minus its t_reply_last, in ms, one a line
cat >"$WORK/late.py" <<'PY'
import csv, sys, time
out = open(sys.argv[1], "a")
hdr = None
for line in sys.stdin:
    now = time.time_ns()
    row = next(csv.reader([line]))
    if hdr is None:
        hdr = row
        continue
    r = dict(zip(hdr, row))
    if r.get("status") == "NO_EXCEPTION" and r.get("t_reply_last"):
        s, _, f = r["t_reply_last"].partition(".")
        t = int(s) * 1000000000 + int((f + "000000000")[:9])
        out.write("%.3f\n" % ((now - t) / 1e6))
PY

echo "live delivery on lo: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPU, kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$ROUNDS rounds x $CALLS calls of slow($US) per --batch-ms value, one client thread"
for _ in $(seq 1 "$ROUNDS"); do
    for ms in $VALUES; do
        rm -f "$WORK/rows"
        mkfifo "$WORK/rows"
        python3 "$WORK/late.py" "$WORK/late-$ms.txt" <"$WORK/rows" &
        reader=$!
        "$GIOPSCOPE" live -i lo --batch-ms "$ms" --pairs -q port "$PORT" >"$WORK/rows" 2>"$WORK/live-$ms.err" &
        gs=$!
        # the capture is open once its socket is (no "listening" line with -q): a short wait
        sleep 1
        "$CLIENT" -i "$WORK/echo.ior" -op slow -size "$US" -n "$CALLS" -q >"$WORK/client.log" 2>&1
        sleep 0.3
        kill -INT "$gs"
        wait "$gs" || echo "live_delivery: live --batch-ms $ms: $(tail -1 "$WORK/live-$ms.err")" >&2
        wait "$reader"
    done
done
printf '%-10s %6s %8s %8s %8s %8s\n' batch-ms rows p50 p90 p99 max
for ms in $VALUES; do
    sort -n "$WORK/late-$ms.txt" | awk -v ms="$ms" '{ v[NR] = $1 } END {
        if (!NR) { printf "%-10s %6d\n", ms, 0; exit }
        i99 = int(NR * .99) + 1
        if (i99 > NR) i99 = NR
        printf "%-10s %6d %8.2f %8.2f %8.2f %8.2f\n", ms, NR, v[int(NR * .5) + 1], v[int(NR * .9) + 1],
               v[i99], v[NR] }'
done
