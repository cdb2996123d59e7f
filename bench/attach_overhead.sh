#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/attach_overhead.sh -- what each tap (`live`, `attach`, `dpdk`) costs the ORB it watches.
#
# omniORB bench_server in one network namespace, bench_client in another, joined by a veth
# (tests/lib/netns.sh). The client measures every echoString(SIZE) round trip itself (its
# latency CSV: CLOCK_REALTIME right before and after the stub call), one connection. Arms,
# interleaved round by round in a rotating order so that drift hits them alike:
#   none    no probe
#   live    giopscope live -i <server veth> --pairs -o /dev/null --summary   (server's namespace)
#   attach  giopscope attach --pid <server> --pairs -o /dev/null --summary   (packet tap + syscalls)
#   dpdk    giopscope dpdk --vdev net_af_packet0,iface=<server veth>,framecnt=16384 --no-huge
#           --no-pci --pairs -o /dev/null --summary   (server's namespace; its poller spins a CPU)
# Per round, size and arm: the probe is started and given time to attach, the client runs
# WARMUP + CALLS calls (the first WARMUP are dropped: connection set-up, first-call costs), the
# probe is stopped. Its summary (stderr) must count every call the client made, answered
# (echoString calls - errors = WARMUP + CALLS), else that round of the arm is FAILED: left out
# of the figures and reported, never silently included (a tap that misses calls does less work).
# Per round, size and arm: p50, p90, p99 of the round trips; the report gives the median over
# rounds of each, and the median over rounds of the per-round difference to `none` (one run,
# one machine state: the difference is what the probe adds).
#
# CPU idle states: a vCPU woken from idle for every packet (a probe that wakes per packet keeps
# the vCPUs out of idle) changes the round trip more than the probe's own work
# (../shared/benchmarking.md). SPIN=1 (default) runs one SCHED_IDLE busy loop per CPU in every
# arm, so that no vCPU ever idles whatever the probe does; SPIN=0 lets them idle (then the arms
# differ in idle behaviour too: both are worth knowing). attach's records do not wake its reader
# (it polls every 50 ms), live wakes per block (--batch-ms, 10 ms by default;
# per packet with --batch-ms 0), dpdk's poller never sleeps.
#
# Segmentation offload is off on both veth ends in every arm (gso_max_segs 1): frames as a NIC
# carries them, and net_af_packet cuts frames larger than its ring slots (a 4096-byte string
# would otherwise cross the veth as one 4 KB GSO frame). Nothing is pinned: on 2 CPUs the dpdk
# poller takes one CPU from the ORBs, which is what it costs on such a machine.
#
# usage: bench/attach_overhead.sh            (as root; not part of make check)
# environment: ROUNDS (11), CALLS (50000), WARMUP (2000), SIZES ("32 256 4096"), SPIN (1),
#   ARMS ("none live attach dpdk"; dpdk left out when giopscope has no DPDK; attach_ref: attach
#   run by GIOPSCOPE_REF, another build, e.g. before a change, interleaved with the rest;
#   live_imm: live --batch-ms 0, immediate mode), QUICK=1 (a try:
#   ROUNDS 2, CALLS 5000, WARMUP 500 unless given), AFP_OPTS (net_af_packet's options after
#   iface=, default framecnt=16384), GIOPSCOPE ($BENCH_BIN or $BUILD/giopscope), BUILD (build),
#   PORT (2809), KEEP_DIR (keep latency CSVs and probe logs), BENCH_DOC (docs/benchmarks.md;
#   "none": do not write it): the part between <!-- bench-attach-overhead:begin/end --> is
#   replaced, the rest of the file left alone.
# Time: the default run (11 rounds x 3 sizes x 4 arms x 52 000 calls) took 15 min 45 s on the
# 2-vCPU VM at load average 14-18 (86 s a round: the round trips, ~30-130 us each, plus ~1-3 s
# to start and stop each probe); ROUNDS scales it. QUICK=1: about a minute.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
CMDLINE="$0${*:+ $*}"

BUILD=${BUILD:-build}
# under bench/run.sh: the one binary every part of the run measures ($BENCH_BIN/giopscope)
GIOPSCOPE=${GIOPSCOPE:-${BENCH_BIN:-$BUILD}/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
if [ "${QUICK:-0}" = 1 ]; then
    ROUNDS=${ROUNDS:-2} CALLS=${CALLS:-5000} WARMUP=${WARMUP:-500}
fi
ROUNDS=${ROUNDS:-11}
CALLS=${CALLS:-50000}
WARMUP=${WARMUP:-2000}
SIZES=${SIZES:-32 256 4096}
SPIN=${SPIN:-1}
ARMS=${ARMS:-none live attach dpdk}
PORT=${PORT:-2809}
KEEP_DIR=${KEEP_DIR:-}
AFP_OPTS=${AFP_OPTS:-framecnt=16384}
DOC=${BENCH_DOC:-docs/benchmarks.md}

. tests/lib/netns.sh
. bench/tap_helpers.sh   # start_probe, stop_probe, seen, why, the spinners, MTU-sized frames
ns_require
[ -x "$GIOPSCOPE" ] || { echo "attach_overhead: build giopscope first (make)" >&2; exit 2; }
if [[ " $ARMS " == *" attach_ref "* ]]; then
    [ -x "${GIOPSCOPE_REF:-}" ] || { echo "attach_overhead: the attach_ref arm wants GIOPSCOPE_REF (a giopscope)" >&2; exit 2; }
fi
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || make -s BUILD="$BUILD" orb-apps >&2 || exit 2
if [[ " $ARMS " == *" dpdk "* ]] && ! "$GIOPSCOPE" dpdk --help >/dev/null 2>&1; then
    echo "attach_overhead: $GIOPSCOPE was built without DPDK: no dpdk arm" >&2
    ARMS=$(echo " $ARMS " | sed 's/ dpdk / /; s/^ *//; s/ *$//')
fi

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date -u '+%Y-%m-%d %H:%M UTC')
SPINNERS=""
PROBE_PID=""
tap_bench_setup gs-attach-bench || exit 1
# MTU-sized frames in every arm (see above); the same for all arms, so no arm is favoured
tap_veth_mtu_frames attach_overhead || exit 1

[ "$SPIN" = 1 ] && tap_spinners_start

ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$WORK/echo.ior" -q
SRV_PID=$NS_LAST_PID
ns_wait_file "$WORK/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 || { echo "server did not start" >&2; exit 1; }

N=$((WARMUP + CALLS))
read -r -a arms <<<"$ARMS"
echo "attach_overhead: $ROUNDS rounds x sizes ($SIZES) x arms ($ARMS), $N echoString calls each (first $WARMUP dropped), spinner $SPIN" >&2
for r in $(seq 1 "$ROUNDS"); do
    n=${#arms[@]}
    for size in $SIZES; do
        for k in $(seq 0 $((n - 1))); do
            arm=${arms[$(((k + r) % n))]}
            base=$WORK/$arm.$size.$r
            status=ok
            if ! start_probe "$arm" "$base.log"; then
                status="did not start: $(tail -1 "$base.log" 2>/dev/null)"
                stop_probe
            else
                ns_run "$NS_CLI" 600 "$CLIENT" -i "$WORK/echo.ior" -op echoString -size "$size" -n "$N" \
                    -lat "$base.lat.csv" -q >"$base.client.log" 2>&1 || status="client failed: $(tail -1 "$base.client.log")"
                made=$(($(wc -l <"$base.lat.csv" 2>/dev/null || echo 1) - 1))
                [ "$status" = ok ] && [ "$made" != "$N" ] && status="client logged $made of $N calls"
                if ! stop_probe && [ "$status" = ok ]; then
                    status="probe exit not 0: $(tail -1 "$base.log")"
                fi
                if [ "$status" = ok ] && [ "$arm" != none ]; then
                    s=$(seen "$base.log")
                    # why it missed them: its own loss counters (kernel ring, capture gaps)
                    [ "$s" = "$N" ] || status="probe saw $s of $N calls ($(why "$base.log"))"
                fi
            fi
            echo "$status" >"$base.status"
            echo "round $r size $size: $arm $status" >&2
        done
    done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T1=$(date -u '+%H:%M UTC')

CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
# what the report needs from here goes in the environment (a quoted here-document: no shell
# expansion inside the Python)
M_CMD="AFP_OPTS=$AFP_OPTS ROUNDS=$ROUNDS CALLS=$CALLS WARMUP=$WARMUP SIZES=\"$SIZES\" SPIN=$SPIN ARMS=\"$ARMS\" $CMDLINE" \
M_T0=$T0 M_T1=$T1 M_NPROC=$(nproc) M_CPU=$CPU M_KERNEL=$(uname -r) M_LOAD0=$LOAD0 M_LOAD1=$LOAD1 \
M_CALLS=$CALLS M_SPIN=$SPIN \
python3 - "$WORK" "$ROUNDS" "$WARMUP" "$ARMS" "$SIZES" "$DOC" <<'PY'
import csv, os, statistics, sys
work, rounds, warm, arms, sizes, doc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(), sys.argv[5].split(), sys.argv[6]
meta = {k[2:].lower(): v for k, v in os.environ.items() if k.startswith("M_")}
meta["calls"] = int(meta["calls"])
def pct(v, p):
    return v[min(len(v) - 1, int(p * len(v)))]
res, fails = {}, {}
for s in sizes:
    for a in arms:
        for r in range(1, rounds + 1):
            b = os.path.join(work, "%s.%s.%d" % (a, s, r))
            st = open(b + ".status").read().strip() if os.path.exists(b + ".status") else "not run"
            if st != "ok":
                # what the client saw in that round, for the record (not in the figures)
                try:
                    l = sorted([int(x["latency_ns"]) / 1000.0 for x in csv.DictReader(open(b + ".lat.csv"))][warm:])
                    if l:
                        st += "; its round trips p50 %.1f, p99 %.1f µs" % (pct(l, 0.5), pct(l, 0.99))
                except (OSError, ValueError, KeyError):
                    pass
                fails.setdefault((s, a), []).append("round %d: %s" % (r, st))
                continue
            lat = sorted([int(x["latency_ns"]) / 1000.0 for x in csv.DictReader(open(b + ".lat.csv"))][warm:])
            res[(s, a, r)] = (pct(lat, 0.50), pct(lat, 0.90), pct(lat, 0.99))
med = statistics.median
out = []
w = out.append
w("### Round trips with and without each tap (%s - %s)" % (meta["t0"], meta["t1"]))
w("")
w("- command: `%s`" % meta["cmd"])
w("- machine: %s, `nproc` %s, Linux %s; 1-minute/5/15 load average %s at the start, %s at the end"
  % (meta["cpu"], meta["nproc"], meta["kernel"], meta["load0"], meta["load1"]))
w("- %d rounds; per round, size and arm %d echoString calls measured after %d of warm-up, one connection; "
  "spinner %s; medians over rounds (µs); *− none*: median over rounds of the per-round difference to *none*"
  % (rounds, meta["calls"], warm, "on (SCHED_IDLE, every CPU)" if meta["spin"] == "1" else "off"))
w("")
w("| size | arm | p50 | p90 | p99 | p50 − none | p90 − none | p99 − none | rounds ok |")
w("|---|---|---|---|---|---|---|---|---|")
summ = {}
for s in sizes:
    for a in arms:
        ok = [r for r in range(1, rounds + 1) if (s, a, r) in res]
        if not ok:
            w("| %s | %s | FAILED | | | | | | 0/%d |" % (s, a, rounds))
            continue
        p = [med(res[(s, a, r)][i] for r in ok) for i in range(3)]
        common = [r for r in ok if (s, "none", r) in res]
        if a == "none":
            d = ["0"] * 3
        elif common:
            dv = [med(res[(s, a, r)][i] - res[(s, "none", r)][i] for r in common) for i in range(3)]
            summ[(s, a)] = dv
            d = ["%+.1f" % x for x in dv]
        else:
            d = ["-"] * 3
        flag = "" if len(ok) == rounds else " **FAILED %d**" % (rounds - len(ok))
        w("| %s | %s | %.1f | %.1f | %.1f | %s | %s | %s | %d/%d%s |" % (s, a, p[0], p[1], p[2], d[0], d[1], d[2], len(ok), rounds, flag))
w("")
if fails:
    w("Failed (left out of the figures):")
    w("")
    for (s, a), l in sorted(fails.items(), key=lambda x: (sizes.index(x[0][0]), arms.index(x[0][1]))):
        for x in l:
            w("- %s bytes, %s, %s" % (s, a, x))
    w("")
w("Per round p50 of *none* (µs), the noise floor the differences sit in: " + "; ".join(
    "%s bytes %s" % (s, "/".join("%.1f" % res[(s, "none", r)][0] for r in range(1, rounds + 1) if (s, "none", r) in res))
    for s in sizes))
w("")
w("What it says:")
w("")
if any(a == "attach" for a in arms):
    for s in sizes:
        if (s, "attach") in summ:
            d = summ[(s, "attach")][0]
            # the per-round differences show how far the median can be trusted on this machine
            per = sorted(res[(s, "attach", r)][0] - res[(s, "none", r)][0] for r in range(1, rounds + 1)
                         if (s, "attach", r) in res and (s, "none", r) in res)
            w("- attach at %s bytes: %+.1f µs at p50 (%+.1f at p99): the target (under 2 µs at p50) %s; "
              "the per-round p50 differences ranged %+.1f to %+.1f µs."
              % (s, d, summ[(s, "attach")][2], "**holds**" if d < 2.0 else "**does not hold**", per[0], per[-1]))
for a in arms:
    l = ["%s bytes %d of %d rounds" % (s, len(fails[(s, a)]), rounds) for s in sizes if (s, a) in fails]
    if l:
        w("- **%s failed** (missed calls, or did not start or stop cleanly) in %s: those rounds are "
          "left out, its figures above come from the others (FAILED where none was complete)." % (a, ", ".join(l)))
for a in ("live", "dpdk"):
    l = ["%s bytes %+.1f/%+.1f" % (s, summ[(s, a)][0], summ[(s, a)][2]) for s in sizes if (s, a) in summ]
    if l:
        w("- %s adds (p50/p99, µs): %s." % (a, ", ".join(l)))
r = [(s, a) for s in sizes for a in arms if a != "none" and (s, a) in summ]
if r:
    best = {s: min((summ[(s, a)][0], a) for (ss, a) in r if ss == s) for s in sizes if any(ss == s for ss, _ in r)}
    w("- least added at p50, per size: " + ", ".join("%s bytes %s" % (s, best[s][1]) for s in best) + ".")
w("")
body = "\n".join(out)
print(body)
if doc != "none":
    sys.path.insert(0, "bench")
    from doc_section import write_section
    write_section(doc, "bench-attach-overhead", body, "attach_overhead")
PY
