#!/bin/bash
# bench/live_rate.sh -- the highest call rate `giopscope live` follows on a veth with no call lost.
#
# omniORB bench_server in one network namespace, bench_client processes in another, joined by a
# veth (tests/lib/netns.sh); `giopscope live --pairs` on the server's end of the veth. Each load
# level runs CLIENTS client processes of THREADS threads each (closed loop, echoString(32),
# every thread on its own connection) for DURATION seconds (the calls per thread come from a
# 1-second calibration run at the same level), then live is stopped and
#   client calls   what the clients' latency CSVs logged
#   live calls     live's rows answered NO_EXCEPTION (omniORB's OBJECT_HERE LocateRequests aside)
#   lost           client calls - live calls (plus live's NO_REPLY rows)
#   kernel, iface  pcap_stats ps_drop / ps_ifdrop at the end (live's "packets lost" line)
#   gaps           capture gaps the TCP reassembly saw
#   live cpu       live's user+system CPU time / wall time (of one vCPU)
# The answer: with the levels sorted by calls/s, the rate up to which no level lost a call or
# had a kernel drop (and the rate of the first that did).
#   load           the 1-minute load average at the end of the level (anything else running
#                  on the machine takes CPU from live and shows up as drops)
# Not a test: run it by hand, as root, on an otherwise idle machine.
#
# usage: bench/live_rate.sh [LEVEL...]   LEVEL = CLIENTSxTHREADS, echoString(32) as fast as they go,
#   or CLIENTSxTHREADS/US: slow(US), the servant sleeps US microseconds (a lower, steadier rate)
#   (default: 1x1/200 1x1/50 1x1 2x2 2x4 4x8)
# environment: DURATION (default 10), LIVE_ARGS (extra options for live, e.g. "--snaplen 2048"),
#   GIOPSCOPE (build/giopscope), BUILD (build), PORT (2809), KEEP_DIR (keep each level's files)
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
DURATION=${DURATION:-10}
LIVE_ARGS=${LIVE_ARGS:-}
PORT=${PORT:-2809}
KEEP_DIR=${KEEP_DIR:-}
LEVELS=${*:-1x1/200 1x1/50 1x1 2x2 2x4 4x8}

[ -x "$GIOPSCOPE" ] || { echo "live_rate: $GIOPSCOPE not built (make)" >&2; exit 2; }
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then echo "live_rate: make orb-apps first" >&2; exit 2; fi
. tests/lib/netns.sh
ns_require

WORK=$(mktemp -d /tmp/gs-live-rate.XXXXXX) || exit 2
work_cleanup() { rm -rf "$WORK"; }
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "live_rate: cannot create the namespaces" >&2; exit 2; }

ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" \
    -o "$WORK/echo.ior" -q
SRV_PID=$NS_LAST_PID
if ! ns_wait_file "$WORK/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
    echo "live_rate: the server did not start" >&2
    exit 2
fi

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# run_clients DIR C T N: C clients of T threads, N calls per thread, all at once; prints the
# wall time in ns
run_clients() {
    local dir=$1 c=$2 t=$3 n=$4 pids="" i t0 op=(-op echoString -size 32)
    [ -n "$US" ] && op=(-op slow -size "$US")
    t0=$(date +%s%N)
    for i in $(seq 1 "$c"); do
        timeout -k 5 $((DURATION * 6 + 60)) ip netns exec "$NS_CLI" "$CLIENT" -i "$WORK/echo.ior" \
            "${op[@]}" -n "$n" -threads "$t" -q -lat "$dir/c$i.lat.csv" \
            >"$dir/c$i.log" 2>&1 </dev/null &
        pids="$pids $!"
        NS_PIDS="$NS_PIDS $!"
    done
    for i in $pids; do
        wait "$i"
        NS_PIDS=$(echo "$NS_PIDS" | tr ' ' '\n' | grep -vx "$i" | tr '\n' ' ')
    done
    echo $(($(date +%s%N) - t0))
}

echo "giopscope live on a veth: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPU $(lscpu | sed -n 's/^Model name: *//p' | head -1), kernel $(uname -r)"
echo "live options: -i VETH --pairs ${LIVE_ARGS:-(defaults)}; ${DURATION} s per level (CxT: C clients of T threads; /US: slow(US) instead of echoString(32))"
printf '%-7s %9s %11s %11s %6s %8s %6s %5s %9s %9s %6s\n' level "calls/s" "client" "live" lost kernel iface gaps "live cpu" "p99 us" load
RESULTS=""
for lv in $LEVELS; do
    US=""
    case "$lv" in */*) US=${lv#*/} ;; esac
    c=${lv%%x*} t=${lv#*x}
    t=${t%/*}
    dir=$WORK/${lv//\//_}
    mkdir -p "$dir/cal"
    # calibration: 1 s worth of calls at this level
    ns=$(run_clients "$dir/cal" "$c" "$t" 2000)
    n=$(awk -v ns="$ns" -v d="$DURATION" 'BEGIN { n = int(2000 * d * 1e9 / ns); print (n < 100 ? 100 : n) }')
    # shellcheck disable=SC2086  # LIVE_ARGS are words
    ip netns exec "$NS_SRV" "$GIOPSCOPE" live -i "$NS_VETH_SRV" --pairs -o "$dir/live.csv" --summary \
        $LIVE_ARGS >"$dir/live.out" 2>"$dir/live.err" </dev/null &
    LIVE=$!
    NS_PIDS="$NS_PIDS $LIVE"
    ns_wait_grep "$dir/live.err" "listening on" 15 || { echo "live did not start: $(tail -2 "$dir/live.err")"; break; }
    cpu0=$(cpu_ticks "$LIVE")
    ns=$(run_clients "$dir" "$c" "$t" "$n")
    cpu1=$(cpu_ticks "$LIVE")
    sleep 0.5
    ns_stop "$LIVE" INT 30 || echo "live exit status $?: $(tail -2 "$dir/live.err")"
    line=$(python3 - "$dir" "$ns" "$(((cpu1 - cpu0) * 1000000000 / $(getconf CLK_TCK)))" <<'PY'
import csv, glob, re, sys
d, wall_ns, cpu_ns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
client = sum(sum(1 for _ in open(f)) - 1 for f in glob.glob(d + "/c*.lat.csv"))
live = noreply = 0
for r in csv.DictReader(open(d + "/live.csv", newline="")):
    if r["kind"] == "Request" and r["status"] == "NO_EXCEPTION":
        live += 1
    elif r["status"] == "NO_REPLY":
        noreply += 1
err = open(d + "/live.err").read()
m = re.search(r"packets lost before the decoder: kernel (\d+), interface (\d+)", err)
kernel, iface = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
g = re.search(r"capture gaps (\d+)", err)
p = re.search(r"^(?:echoString|slow) +\d+ +\d+ \|(?: +[\d.]+){2} +([\d.]+)", err, re.M)
lost = client - live + noreply
rate = client / (wall_ns / 1e9)
print("%9.0f %11d %11d %6d %8d %6d %5s %8.0f%% %9s %d" % (rate, client, live, lost, kernel, iface,
      g.group(1) if g else "?", 100.0 * cpu_ns / wall_ns, p.group(1) if p else "?",
      1 if lost == 0 and kernel == 0 else 0))
PY
)
    ok=${line##* }
    # the 1-minute load average at the end: other work on the machine shows up here
    printf '%-7s %s %6s\n' "$lv" "${line% *}" "$(cut -d' ' -f1 /proc/loadavg)"
    RESULTS="$RESULTS$(echo "$line" | awk '{ print int($1) }') $ok"$'\n'
    if [ -n "$KEEP_DIR" ]; then mkdir -p "$KEEP_DIR" && cp -a "$dir" "$KEEP_DIR/"; fi
done
# levels by rate: no loss up to the first level that lost anything
printf '%s' "$RESULTS" | sort -n | awk '
    NF == 2 && !failed { if ($2 == 1) best = $1; else { failed = 1; first = $1 } }
    END {
        printf "no call lost and no kernel drop up to %d calls/s", best
        if (failed) printf " (first loss at %d calls/s)", first
        printf "\n"
    }'
ns_stop "$SRV_PID" TERM 20
