#!/bin/bash
# bench/attach_overhead.sh -- what `giopscope attach` (and `live`) cost the ORB it watches.
#
# omniORB bench_server in one network namespace, bench_client in another, joined by a veth
# (tests/lib/netns.sh). The client measures every echoString(32) round trip itself (its latency
# CSV: CLOCK_REALTIME right before and after the stub call). Arms, interleaved round by round in
# a rotating order so that drift hits them alike:
#   none    no probe
#   live    giopscope live -i <server veth> --pairs -o /dev/null   (in the server's namespace)
#   attach  giopscope attach --pid <server> --pairs -o /dev/null   (packet tap + syscall probes)
# Each arm's probe is started, given time to attach, the client runs CALLS calls (the first
# WARMUP of them are dropped: connection set-up, first-call costs), then the probe is stopped.
# Per round and arm: p50 and p99 of the round trips; the report gives the median over rounds of
# each, and the median over rounds of the per-round difference to `none` (one run, one machine
# state: the difference is what the probe adds).
#
# CPU idle states: a vCPU woken from idle for every packet (a probe that wakes per packet keeps
# the vCPUs out of idle) changes the round trip more than the probe's own work
# (../shared/benchmarking.md). SPIN=1 (default) runs one SCHED_IDLE busy loop per CPU in every
# arm, so that no vCPU ever idles whatever the probe does; SPIN=0 lets them idle (then the arms
# differ in idle behaviour too: both are worth knowing). attach's records do not wake its reader
# (it polls every 50 ms), live wakes per packet unless --batch-ms.
#
# usage: bench/attach_overhead.sh            (as root; not part of make check)
# environment: ROUNDS (7), CALLS (20000), WARMUP (1000), SPIN (1), ARMS ("none live attach"),
#   GIOPSCOPE (build/giopscope), BUILD (build), PORT (2809), KEEP_DIR (keep latency CSVs)
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
ROUNDS=${ROUNDS:-7}
CALLS=${CALLS:-20000}
WARMUP=${WARMUP:-1000}
SPIN=${SPIN:-1}
ARMS=${ARMS:-none live attach}
PORT=${PORT:-2809}
KEEP_DIR=${KEEP_DIR:-}

. tests/lib/netns.sh
ns_require
[ -x "$GIOPSCOPE" ] || { echo "attach_overhead: build giopscope first (make)" >&2; exit 2; }
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || make -s orb-apps >&2 || exit 2

WORK=$(mktemp -d /tmp/gs-attach-bench.XXXXXX) || exit 2
SPINNERS=""
PROBE_PID=""
bench_cleanup() {
    local p
    [ -n "$PROBE_PID" ] && kill -KILL "$PROBE_PID" 2>/dev/null
    for p in $SPINNERS; do kill -KILL "$p" 2>/dev/null; done
    for p in $SPINNERS $PROBE_PID; do wait "$p" 2>/dev/null; done
    if [ -n "$KEEP_DIR" ]; then mkdir -p "$KEEP_DIR" && cp -r "$WORK"/. "$KEEP_DIR"/; fi
    rm -rf "$WORK"
}
NS_CLEANUP_HOOK=bench_cleanup
ns_setup || exit 1
# a private copy: a rebuild during the run must not swap the binary under an arm
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope

if [ "$SPIN" = 1 ]; then
    for cpu in $(seq 0 $(($(nproc) - 1))); do
        # SCHED_IDLE: runs only when nothing else wants the CPU, yet the CPU never idles
        taskset -c "$cpu" chrt --idle 0 bash -c 'while :; do :; done' &
        SPINNERS="$SPINNERS $!"
    done
fi

ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$WORK/echo.ior"
SRV_PID=$NS_LAST_PID
ns_wait_file "$WORK/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 || { echo "server did not start" >&2; exit 1; }

start_probe() {
    local arm=$1 log=$2
    PROBE_PID=""
    case "$arm" in
        none) return 0 ;;
        live)
            ip netns exec "$NS_SRV" "$GIOPSCOPE" live -i "$NS_VETH_SRV" --pairs -o /dev/null 2>"$log" &
            PROBE_PID=$!
            ns_wait_grep "$log" "listening on" 15 || return 1 ;;
        attach)
            "$GIOPSCOPE" attach --pid "$SRV_PID" --pairs -o /dev/null -q 2>"$log" &
            PROBE_PID=$!
            ns_wait_grep "$log" "^giopscope attach: following" 30 || return 1 ;;
    esac
    sleep 0.5
}

stop_probe() {
    [ -n "$PROBE_PID" ] || return 0
    kill -INT "$PROBE_PID" 2>/dev/null
    for _ in $(seq 1 100); do ns_alive "$PROBE_PID" || break; sleep 0.1; done
    kill -KILL "$PROBE_PID" 2>/dev/null
    wait "$PROBE_PID" 2>/dev/null
    PROBE_PID=""
}

echo "attach_overhead: $ROUNDS rounds x ($ARMS), $CALLS echoString(32) calls each (first $WARMUP dropped), spinner $SPIN" >&2
read -r -a arms <<<"$ARMS"
for r in $(seq 1 "$ROUNDS"); do
    n=${#arms[@]}
    for k in $(seq 0 $((n - 1))); do
        arm=${arms[$(((k + r) % n))]}
        lat=$WORK/$arm.$r.lat.csv
        if ! start_probe "$arm" "$WORK/$arm.$r.log"; then
            echo "round $r: $arm did not start: $(tail -2 "$WORK/$arm.$r.log")" >&2
            stop_probe
            continue
        fi
        ns_run "$NS_CLI" 300 "$CLIENT" -i "$WORK/echo.ior" -op echoString -size 32 -n "$CALLS" \
            -lat "$lat" -q >"$WORK/$arm.$r.client.log" 2>&1 || echo "round $r: $arm client failed" >&2
        stop_probe
        echo "round $r: $arm done" >&2
    done
done

python3 - "$WORK" "$ROUNDS" "$WARMUP" "$ARMS" <<'PY'
import csv, os, statistics, sys
work, rounds, warm, arms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split()
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]
res = {a: {} for a in arms}
for a in arms:
    for r in range(1, rounds + 1):
        f = os.path.join(work, "%s.%d.lat.csv" % (a, r))
        if not os.path.exists(f):
            continue
        lat = [int(x["latency_ns"]) / 1000.0 for x in csv.DictReader(open(f))][warm:]
        if lat:
            res[a][r] = (pct(lat, 0.50), pct(lat, 0.99), len(lat))
print("%-8s %10s %10s %14s %14s %7s" % ("arm", "p50 us", "p99 us", "p50 - none", "p99 - none", "rounds"))
for a in arms:
    if not res[a]:
        print("%-8s (no data)" % a)
        continue
    p50 = statistics.median(v[0] for v in res[a].values())
    p99 = statistics.median(v[1] for v in res[a].values())
    common = [r for r in res[a] if r in res.get("none", {})]
    d50 = statistics.median(res[a][r][0] - res["none"][r][0] for r in common) if common else float("nan")
    d99 = statistics.median(res[a][r][1] - res["none"][r][1] for r in common) if common else float("nan")
    print("%-8s %10.1f %10.1f %14.1f %14.1f %7d" % (a, p50, p99, d50, d99, len(res[a])))
print("per round p50/p99 (us):")
for r in range(1, rounds + 1):
    print("  %d: " % r + "  ".join("%s %.1f/%.1f" % (a, res[a][r][0], res[a][r][1]) for a in arms if r in res[a]))
PY
