#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/tc_floor_perf.sh -- issue 16: where the CPU time a tap adds to an omniORB echo call goes,
# from system-wide samples rather than round-trip times (far less noisy on a shared VM).
#
# One bench_server (server namespace, CPU 0) and one bench_client (client namespace, CPU 1, a
# veth between: tests/lib/netns.sh), one connection, echoString(32) back to back for the whole
# run. Windows of WIN_S seconds, in rounds: an "off" window, then one per arm with the arm's tap
# in place (bench/tap_helpers.sh start_probe; attach_frozen: attach's process stopped for the
# window, as in bench/attach_toggle.sh; tc_*: bench/tc_floor). Over each window:
#   - `perf record -a -g -F FREQ` (cpu-clock: hardware counters are not there in this VM);
#   - /proc/stat (user, system, softirq, irq, idle, steal jiffies of all CPUs) and /proc/interrupts
#     (LOC timer, IWI irq_work, RES rescheduling IPIs, CAL function-call IPIs);
#   - the client's calls whose start lies in the window (its latency CSV, written at the end).
# Printed per arm (sums over its windows, per 1000 calls): samples, not-idle samples, jiffies,
# interrupts, and the kernel/user functions whose samples per 1000 calls changed most against
# the off-windows (self samples, `perf report --no-children --sort sym`).
#
# usage: bench/tc_floor_perf.sh     (as root; not part of make check)
# environment: ARMS ("attach_frozen tc_empty tc_ring"), ATTACH_OPTS (e.g. "--packets-only"),
#   ROUNDS (3), WIN_S (4), FREQ (2999), SPIN (0: no SCHED_IDLE spinners, so idle is seen as
#   idle), TOP (25 functions), BUILD (build), GIOPSCOPE, KEEP_DIR (keep perf.data and the CSV),
#   NS_TAG (namespace name prefix), BPF_STATS (0; 1: kernel.bpf_stats_enabled=1 for the run and
#   per arm the tc programs' run time per run and per call from their run_time_ns/run_cnt;
#   the stats add ~0.1 us a run, to every arm alike).
# shellcheck disable=SC2034  # TAP_*, SRV_PID, NS_CLEANUP_HOOK: read by bench/tap_helpers.sh, tests/lib/netns.sh
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
CMDLINE="$0${*:+ $*}"
BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
ARMS=${ARMS:-attach_frozen tc_empty tc_ring}
ROUNDS=${ROUNDS:-3}
WIN_S=${WIN_S:-4}
FREQ=${FREQ:-2999}
SPIN=${SPIN:-0}
TOP=${TOP:-25}
# the samples counted: the echo's processes and whatever runs for them (softirq in their context,
# ksoftirqd, the idle task); the machine's other work (other engineers' builds) is left out
COMMS=${COMMS:-bench_server,bench_client,swapper,ksoftirqd/0,ksoftirqd/1}
PORT=${PORT:-2809}
KEEP_DIR=${KEEP_DIR:-}
TAP_ATTACH_OPTS=${ATTACH_OPTS:-}
BPF_STATS=${BPF_STATS:-0}
TAP_SETTLE=0.5 TAP_DRAIN=0.3
. tests/lib/netns.sh
. bench/tap_helpers.sh
ns_require
command -v perf >/dev/null || { echo "tc_floor_perf: perf wanted" >&2; exit 2; }
[ -x "$GIOPSCOPE" ] || { echo "tc_floor_perf: build giopscope first (make)" >&2; exit 2; }
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || make -s BUILD="$BUILD" orb-apps >&2 || exit 2
case " $ARMS " in *" tc_"*) [ -x "$BUILD/bench/tc_floor" ] || make -s BUILD="$BUILD" "$BUILD/bench/tc_floor" >&2 || exit 2 ;; esac
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date -u '+%Y-%m-%d %H:%M UTC')
tap_bench_setup gs-tc-perf || exit 1
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
[ "$BPF_STATS" = 1 ] && sysctl -qw kernel.bpf_stats_enabled=1
perf_cleanup() { sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"; tap_bench_cleanup; }
NS_CLEANUP_HOOK=perf_cleanup
tap_veth_mtu_frames tc_floor_perf || exit 1
[ "$SPIN" = 1 ] && tap_spinners_start
ns_start "$NS_SRV" "$WORK/server.log" taskset -c 0 "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$WORK/echo.ior" -q
SRV_PID=$NS_LAST_PID
ns_wait_file "$WORK/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 || { echo "server did not start" >&2; exit 1; }
ns_start "$NS_CLI" "$WORK/client.log" taskset -c 1 "$CLIENT" -i "$WORK/echo.ior" -op echoString -size 32 -n 100000000 \
    -lat "$WORK/lat.csv" -q
CLI_PID=$NS_LAST_PID
sleep 2
now() { echo "${EPOCHREALTIME/./}"; }
# bstat: run_time_ns and run_cnt summed over the tc programs loaded now (the tap's or tc_floor's)
bstat() {
    bpftool prog show -j 2>/dev/null | python3 -c 'import json, sys
t = c = 0
for p in json.load(sys.stdin):
    if p.get("name", "").startswith(("giop_tap_", "tc_floor_")):
        t += p.get("run_time_ns", 0); c += p.get("run_cnt", 0)
print(t, c)'
}
# snap: jiffies (user nice system idle iowait irq softirq steal) and interrupts (LOC IWI RES CAL)
snap() {
    { head -1 /proc/stat | awk '{ printf "%s %s %s %s %s %s %s %s", $2, $3, $4, $5, $6, $7, $8, $9 }'
      awk '$1 ~ /^(LOC|IWI|RES|CAL):$/ { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; printf " %s", s }' /proc/interrupts
      echo; }
}
for r in $(seq 1 "$ROUNDS"); do
    for arm in off $ARMS; do
        if [ "$arm" != off ]; then
            start_probe "$arm" "$WORK/tap.$arm.$r.log" || { echo "tc_floor_perf: $arm did not start: $(tail -1 "$WORK/tap.$arm.$r.log")" >&2; exit 1; }
            [ "$arm" = attach_frozen ] && kill -STOP "$PROBE_PID"
        else
            sleep 0.8
        fi
        b0="0 0"; b1="0 0"
        [ "$BPF_STATS" = 1 ] && b0=$(bstat)
        s0=$(snap); t0=$(now)
        perf record -a -g -F "$FREQ" -o "$WORK/$arm.$r.data" -- sleep "$WIN_S" >/dev/null 2>&1
        t1=$(now); s1=$(snap)
        [ "$BPF_STATS" = 1 ] && b1=$(bstat)
        echo "$arm $r $t0 $t1 $s0 $s1 $b0 $b1" >>"$WORK/windows"
        if [ "$arm" != off ]; then
            [ "$arm" = attach_frozen ] && kill -CONT "$PROBE_PID"
            stop_probe || echo "tc_floor_perf: $arm exit not 0: $(tail -1 "$WORK/tap.$arm.$r.log")" >&2
        fi
        ns_alive "$CLI_PID" || { echo "tc_floor_perf: the client exited early" >&2; exit 1; }
    done
    echo "tc_floor_perf: round $r of $ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
ns_stop "$CLI_PID" USR1 300 || { echo "tc_floor_perf: client failed" >&2; exit 1; }
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T1=$(date -u '+%H:%M UTC')
for f in "$WORK"/*.data; do
    perf report -i "$f" --no-children --comms "$COMMS" --sort comm,sym --stdio -n -g none --percent-limit 0 -q 2>/dev/null |
        awk -v f="$(basename "$f" .data)" 'NF >= 5 && $2 ~ /^[0-9]+$/ { s = $5; for (i = 6; i <= NF; i++) s = s " " $i; print f "\t" $2 "\t" $3 "\t" $4 "\t" s }'
done >"$WORK/syms.tsv"
M_CMD="ARMS=\"$ARMS\" ROUNDS=$ROUNDS WIN_S=$WIN_S FREQ=$FREQ SPIN=$SPIN${ATTACH_OPTS:+ ATTACH_OPTS=\"$ATTACH_OPTS\"} $CMDLINE" \
M_COMMS=$COMMS M_FREQ=$FREQ M_T0=$T0 M_T1=$T1 M_LOAD0=$LOAD0 M_LOAD1=$LOAD1 M_TOP=$TOP \
python3 - "$WORK" "$ARMS" <<'PY'
import bisect, collections, csv, os, sys
work, arms = sys.argv[1], ["off"] + sys.argv[2].split()
t0s = []
with open(os.path.join(work, "lat.csv")) as f:
    r = csv.reader(f); next(r)
    t0s = [int(row[4]) for row in r if row[7] == "NO_EXCEPTION"]
t0s.sort()
bst = collections.defaultdict(lambda: [0, 0])
calls = collections.Counter(); jif = collections.defaultdict(lambda: [0] * 8); ints = collections.defaultdict(lambda: [0] * 4)
for line in open(os.path.join(work, "windows")):
    f = line.split()
    arm, a, b = f[0], int(f[2]) * 1000, int(f[3]) * 1000
    v0, v1 = [int(x) for x in f[4:16]], [int(x) for x in f[16:28]]
    calls[arm] += bisect.bisect_left(t0s, b) - bisect.bisect_left(t0s, a)
    for i in range(8): jif[arm][i] += v1[i] - v0[i]
    for i in range(4): ints[arm][i] += v1[8 + i] - v0[8 + i]
    if len(f) >= 32:
        bst[arm][0] += int(f[30]) - int(f[28]); bst[arm][1] += int(f[31]) - int(f[29])
samples = collections.defaultdict(collections.Counter)
bycomm = collections.defaultdict(collections.Counter)
for line in open(os.path.join(work, "syms.tsv")):
    fn, n, comm, kind, sym = line.rstrip("\n").split("\t")
    arm = fn.rsplit(".", 1)[0]
    samples[arm][sym] += int(n)
    bycomm[arm][comm.split("/")[0]] += int(n)
IDLE = ("pv_native_safe_halt", "default_idle", "native_safe_halt", "cpuidle", "acpi_idle", "poll_idle", "do_idle", "halt")
def per_k(x, arm): return 1000.0 * x / calls[arm] if calls[arm] else 0.0
e = os.environ
us = 1e6 / float(e["M_FREQ"])  # a sample: this much CPU time (cpu-clock)
def us_call(x, arm): return us * x / calls[arm] if calls[arm] else 0.0
print("### Samples per call, taps on and off (%s - %s)" % (e["M_T0"], e["M_T1"]))
print()
print("- command: `%s`" % e["M_CMD"])
print("- load average %s at the start, %s at the end" % (e["M_LOAD0"], e["M_LOAD1"]))
print("- samples of %s only (the machine's other work left out); a sample is %.0f us of CPU: *us/call* = samples x that / calls" % (e["M_COMMS"], us))
print("- jiffies and interrupts: the whole machine's (other work included)")
print()
print("| arm | calls | not idle us/call | server | client | ksoftirqd | not idle samples /1k calls | user+sys+irq+softirq jiffies /1k | idle jiffies /1k | steal /1k | LOC /1k | IWI /1k | RES /1k | CAL /1k |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for arm in arms:
    tot = sum(samples[arm].values())
    busy = sum(n for s, n in samples[arm].items() if not any(k in s for k in IDLE))
    j = jif[arm]
    print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.1f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f |" % (
        arm, calls[arm], us_call(busy, arm), us_call(bycomm[arm]["bench_server"], arm), us_call(bycomm[arm]["bench_client"], arm),
        us_call(bycomm[arm]["ksoftirqd"], arm), per_k(busy, arm), per_k(j[0] + j[1] + j[2] + j[5] + j[6], arm),
        per_k(j[3] + j[4], arm), per_k(j[7], arm), *(per_k(x, arm) for x in ints[arm])))
print()
if any(bst[a][1] for a in arms):
    print("bpf_stats (kernel.bpf_stats_enabled=1): the tc programs' run time over the windows")
    print()
    print("| arm | runs per call | ns per run | ns per call |")
    print("|---|---|---|---|")
    for arm in arms[1:]:
        t, c = bst[arm]
        if c and calls[arm]:
            print("| %s | %.2f | %.0f | %.0f |" % (arm, c / calls[arm], t / c, t / calls[arm]))
    print()
top = int(e["M_TOP"])
for arm in arms[1:]:
    d = {s: per_k(samples[arm][s], arm) - per_k(samples["off"][s], "off") for s in set(samples[arm]) | set(samples["off"])}
    print("%s against off: functions by change in self samples per 1000 calls (off -> on):" % arm)
    print()
    for s in sorted(d, key=lambda x: -abs(d[x]))[:top]:
        print("    %+8.1f  %8.1f -> %8.1f  (%+.3f us/call)  %s" % (d[s], per_k(samples["off"][s], "off"), per_k(samples[arm][s], arm), d[s] * us / 1000.0, s))
    print()
PY
