#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/live_rate.sh -- the highest call rate each tap (`live`, `attach`, `dpdk` on af_packet)
# follows on a veth with no call lost, in one run, one table.
#
# omniORB bench_server in one network namespace, bench_client processes in another, joined by a
# veth (tests/lib/netns.sh). The taps, each in turn at every load level (the order rotates from
# level to level, so that no tap always runs first):
#   live    giopscope live -i <server veth> --pairs -o FILE --summary $LIVE_ARGS   (server's ns)
#   attach  giopscope attach --pid <server> --pairs -o FILE --summary $ATTACH_ARGS
#   dpdk    giopscope dpdk --vdev net_af_packet0,iface=<server veth>,framecnt=16384 --no-huge
#           --no-pci --pairs -o FILE --summary $DPDK_ARGS                           (server's ns)
# Each load level runs CLIENTS client processes of THREADS threads each (closed loop,
# echoString(32), every thread on its own connection) for about DURATION seconds: the calls per
# thread come from a 1-second calibration run at the same level with no tap, the same count for
# every tap of the level. Then the tap is stopped (SIGINT) and
#   client calls   what the clients' latency CSVs logged
#   tap calls      the tap's rows answered NO_EXCEPTION (omniORB's OBJECT_HERE LocateRequests aside)
#   lost           client calls - tap calls (plus the tap's NO_REPLY rows)
#   kdrop ifdrop other   what the tap itself counted as lost before its decoder, from its
#                  "packets lost before the decoder: kernel K, interface I, <other> O" line:
#                  live: pcap_stats ps_drop (kdrop: the capture ring was full) and ps_ifdrop
#                  (ifdrop); dpdk: imissed + ierrors (ifdrop), rx_nombuf (other; net_af_packet
#                  does not count its own ring overflowing: those show only as lost calls);
#                  attach: ring-buffer records lost (kdrop), message heads not shipped or flow
#                  map full (other)
#   gaps           capture gaps the TCP reassembly saw
#   cpu            the tap's user+system CPU time / wall time (of one vCPU; dpdk's poller spins)
#   p99 us         the tap's own p99 of total_us
#   load           the 1-minute load average at the end of the run (anything else running
#                  on the machine takes CPU from the tap and shows up as drops)
#   run            "level" (a level's first run), "level-again" (its run repeated because the
#                  first lost something: a level is lossy only when both runs lost calls or
#                  counted drops), "bisect1", "bisect2"... (a bisection step), "bisect1-again"
# Bisection: per tap, with its levels sorted by calls/s, the bracket is the fastest loss-free
# level below its first lossy one (lo) and that lossy one (hi). Then up to BISECT steps, each
# DURATION s at the rate half way: the lossy level's clients and threads calling slow(US)
# (the servant sleeps US us: the rate falls as US grows), US from the calibration of the lossy
# level and refined once by a 1-second calibration at the new US; the rate measured in the run
# becomes the new lo (no loss) or hi (lossy, after the repeat). It stops when hi - lo is within
# 5% of hi (at least 100 calls/s), or when a run falls outside [lo, hi] (the machine's load
# moved: said so in the answer).
# The answer, per tap: the highest rate it followed for about DURATION s with no call lost
# and no drop counted (lo), and the lowest rate at which it lost (hi).
# Not a test: run it by hand, as root, on an otherwise idle machine.
#
# usage: bench/live_rate.sh [LEVEL...]   LEVEL = CLIENTSxTHREADS, echoString(32) as fast as they go,
#   or CLIENTSxTHREADS/US: slow(US), the servant sleeps US microseconds (a lower, steadier rate)
#   (default: 1x1/200 1x1/50 1x1 2x2 2x4 4x8)
# environment: TAPS ("live attach dpdk"; dpdk left out when giopscope has no DPDK), DURATION
#   (default 10), BISECT (bisection steps per tap, default 3; 0: none), LIVE_ARGS (extra
#   options for live, e.g. "--batch-ms 0": immediate mode, the default before 2026-12-01),
#   ATTACH_ARGS (e.g. "--ring-size 8m", likewise), DPDK_ARGS,
#   AFP_OPTS (net_af_packet's options after iface=, default framecnt=16384), GIOPSCOPE
#   ($BENCH_BIN or $BUILD/giopscope), BUILD (build), PORT (2809), KEEP_DIR (keep each level's
#   files), BENCH_DOC (docs/benchmarks.md; "none": do not write it; a copy elsewhere, e.g.
#   /tmp/b.md, for a trial run): the part between <!-- bench-tap-rate:begin/end --> is
#   replaced, the rest left alone.
# Time: about 40 s per level (calibration, then 3 taps x DURATION plus their start and stop),
#   up to twice that for a level that lost calls (the repeat), then per tap up to BISECT steps
#   of 12-25 s: 6-12 minutes with the defaults.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
CMDLINE="$0${*:+ $*}"

BUILD=${BUILD:-build}
# under bench/run.sh: the one binary every part of the run measures ($BENCH_BIN/giopscope)
GIOPSCOPE=${GIOPSCOPE:-${BENCH_BIN:-$BUILD}/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
DURATION=${DURATION:-10}
BISECT=${BISECT:-3}
LIVE_ARGS=${LIVE_ARGS:-}
ATTACH_ARGS=${ATTACH_ARGS:-}
DPDK_ARGS=${DPDK_ARGS:-}
TAPS=${TAPS:-live attach dpdk}
PORT=${PORT:-2809}
KEEP_DIR=${KEEP_DIR:-}
AFP_OPTS=${AFP_OPTS:-framecnt=16384}
DOC=${BENCH_DOC:-docs/benchmarks.md}
LEVELS=${*:-1x1/200 1x1/50 1x1 2x2 2x4 4x8}

[ -x "$GIOPSCOPE" ] || { echo "live_rate: $GIOPSCOPE not built (make)" >&2; exit 2; }
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then echo "live_rate: make orb-apps first" >&2; exit 2; fi
if [[ " $TAPS " == *" dpdk "* ]] && ! "$GIOPSCOPE" dpdk --help >/dev/null 2>&1; then
    echo "live_rate: $GIOPSCOPE was built without DPDK: no dpdk tap" >&2
    TAPS=$(echo " $TAPS " | sed 's/ dpdk / /; s/^ *//; s/ *$//')
fi
. tests/lib/netns.sh
ns_require

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date -u '+%Y-%m-%d %H:%M UTC')
WORK=$(mktemp -d /tmp/gs-live-rate.XXXXXX) || exit 2
work_cleanup() { rm -rf "$WORK"; }
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "live_rate: cannot create the namespaces" >&2; exit 2; }
# a private copy: a rebuild during the run must not swap the binary under a tap
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope

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

# start_tap TAP DIR: the tap in the background, pairs to DIR/tap.csv, stderr to DIR/tap.err;
# TAP_PID set; returns 1 if it did not say it was capturing
start_tap() {
    local tap=$1 dir=$2 ready
    # shellcheck disable=SC2086  # *_ARGS are words
    case "$tap" in
        live)
            ip netns exec "$NS_SRV" "$GIOPSCOPE" live -i "$NS_VETH_SRV" --pairs -o "$dir/tap.csv" --summary \
                $LIVE_ARGS >"$dir/tap.out" 2>"$dir/tap.err" </dev/null &
            TAP_PID=$! ready="listening on" ;;
        attach)
            "$GIOPSCOPE" attach --pid "$SRV_PID" --pairs -o "$dir/tap.csv" --summary \
                $ATTACH_ARGS >"$dir/tap.out" 2>"$dir/tap.err" </dev/null &
            TAP_PID=$! ready="^giopscope attach: following" ;;
        dpdk)
            # the ring holds framecnt frames while the poller is away (docs/dpdk.md); on a shared 2-CPU
            # machine it is away for up to ~300 ms: 16384 frames of 2 KB (32 MiB) cover ~50k frames/s
            ip netns exec "$NS_SRV" "$GIOPSCOPE" dpdk --vdev "net_af_packet0,iface=$NS_VETH_SRV,$AFP_OPTS" \
                --no-huge --no-pci --pairs -o "$dir/tap.csv" --summary \
                $DPDK_ARGS >"$dir/tap.out" 2>"$dir/tap.err" </dev/null &
            TAP_PID=$! ready="polling on lcore" ;;
    esac
    NS_PIDS="$NS_PIDS $TAP_PID"
    ns_wait_grep "$dir/tap.err" "$ready" 30 || return 1
    # settle: the tap is in place before the first SYN
    sleep 0.3
}

# calibrate DIR C T CALLS: CALLS per thread at the level (US set), no tap; sets CAL_RATE (calls/s)
# and CAL_N (calls per thread for about DURATION s, at least 100)
calibrate() {
    local ns
    mkdir -p "$1"
    ns=$(run_clients "$1" "$2" "$3" "$4")
    CAL_RATE=$(awk -v ns="$ns" -v c="$2" -v t="$3" -v k="$4" 'BEGIN { printf "%d", c * t * k * 1e9 / ns }')
    CAL_N=$(awk -v ns="$ns" -v k="$4" -v d="$DURATION" 'BEGIN { n = int(k * d * 1e9 / ns); print (n < 100 ? 100 : n) }')
    rm -f "$1"/c*.lat.csv
}

# measure TAP LEVEL RUN DIR C T N: one run of TAP while C clients of T threads make N calls each
# (US set); prints the table row and adds it to TABLE; sets M_RATE (calls/s the clients made)
# and M_OK (1: no call lost, no drop); returns 1 if the tap did not start
measure() {
    local tap=$1 lv=$2 run=$3 dir=$4 c=$5 t=$6 n=$7 cpu0 cpu1 ns line
    mkdir -p "$dir"
    M_OK=0 M_RATE=0
    if ! start_tap "$tap" "$dir"; then
        echo "$tap did not start: $(tail -2 "$dir/tap.err")"
        ns_stop "$TAP_PID" INT 30
        line=$(printf '%-8s %-13s %-6s did not start' "$lv" "$run" "$tap")
        TABLE="$TABLE$line"$'\n'
        return 1
    fi
    cpu0=$(cpu_ticks "$TAP_PID")
    ns=$(run_clients "$dir" "$c" "$t" "$n")
    cpu1=$(cpu_ticks "$TAP_PID")
    sleep 0.5   # the last replies and FINs reach the tap
    ns_stop "$TAP_PID" INT 30 || echo "$tap exit status $?: $(tail -2 "$dir/tap.err")"
    line=$(python3 - "$dir" "$ns" "$(((cpu1 - cpu0) * 1000000000 / $(getconf CLK_TCK)))" <<'PY'
import csv, glob, os, re, sys
d, wall_ns, cpu_ns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
client = sum(sum(1 for _ in open(f)) - 1 for f in glob.glob(d + "/c*.lat.csv"))
seen = noreply = 0
if os.path.exists(d + "/tap.csv"):
    for r in csv.DictReader(open(d + "/tap.csv", newline="")):
        if r["kind"] == "Request" and r["status"] == "NO_EXCEPTION":
            seen += 1
        elif r["status"] == "NO_REPLY":
            noreply += 1
err = open(d + "/tap.err").read()
# the tap's own count of what it lost before its decoder, by where (printed only when not 0):
# kernel, interface, and a third (attach: heads not shipped / flow map full)
m = re.search(r"packets lost before the decoder: kernel (\d+), interface (\d+), [^\d]* (\d+)", err)
kd, ifd, od = (int(x) for x in m.groups()) if m else (0, 0, 0)
g = re.search(r"capture gaps (\d+)", err)
p = re.search(r"^(?:echoString|slow) +\d+ +\d+ \|(?: +[\d.]+){2} +([\d.]+)", err, re.M)
lost = client - seen + noreply
rate = client / (wall_ns / 1e9)
print("%9.0f %10d %10d %6d %7d %6d %6d %5s %4.0f%% %9s %d" % (rate, client, seen, lost, kd, ifd, od,
      g.group(1) if g else "?", 100.0 * cpu_ns / wall_ns, p.group(1) if p else "?",
      1 if lost == 0 and kd + ifd + od == 0 else 0))
PY
)
    M_OK=${line##* }
    M_RATE=$(echo "$line" | awk '{ print int($1) }')
    # the 1-minute load average at the end: other work on the machine shows up here
    line=$(printf '%-8s %-13s %-6s %s %6s' "$lv" "$run" "$tap" "${line% *}" "$(cut -d' ' -f1 /proc/loadavg)")
    echo "$line"
    TABLE="$TABLE$line"$'\n'
}

# measure_level TAP LEVEL RUN DIR C T N: measure, and once more if that lost anything (a
# level is lossy only when both runs were); M_OK of the repeat, M_RATE its rate if it lost
# nothing, else the lower rate of the two (the lowest rate seen losing)
measure_level() {
    local tap=$1 lv=$2 run=$3 dir=$4 r1
    shift 4
    measure "$tap" "$lv" "$run" "$dir" "$@" || return 1
    [ "$M_OK" = 1 ] && return 0
    r1=$M_RATE
    measure "$tap" "$lv" "$run-again" "$dir-again" "$@" || return 1
    [ "$M_OK" = 0 ] && [ "$r1" -lt "$M_RATE" ] && M_RATE=$r1
    return 0
}

echo "giopscope taps on a veth: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPU $(lscpu | sed -n 's/^Model name: *//p' | head -1), kernel $(uname -r), load average $LOAD0"
echo "taps: $TAPS; live ${LIVE_ARGS:-(defaults)}, attach ${ATTACH_ARGS:-(defaults)}, dpdk net_af_packet $AFP_OPTS ${DPDK_ARGS}; ~${DURATION} s per level and tap (CxT: C clients of T threads; /US: slow(US) instead of echoString(32)); up to $BISECT bisection steps per tap"
HDR=$(printf '%-8s %-13s %-6s %9s %10s %10s %6s %7s %6s %6s %5s %5s %9s %6s' level run tap "calls/s" "client" "tap" \
    lost kdrop ifdrop other gaps cpu "p99 us" load)
echo "$HDR"
TABLE=""
RESULTS=""     # per run of a level (its last run): TAP RATE ok|fail LEVEL CAL_RATE
read -r -a taps <<<"$TAPS"
li=0
for lv in $LEVELS; do
    US=""
    case "$lv" in */*) US=${lv#*/} ;; esac
    c=${lv%%x*} t=${lv#*x}
    t=${t%/*}
    ldir=$WORK/${lv//\//_}
    # calibration: 1 s worth of calls at this level, no tap; the same count for every tap
    calibrate "$ldir/cal" "$c" "$t" 2000
    li=$((li + 1))
    for k in $(seq 0 $((${#taps[@]} - 1))); do
        tap=${taps[$(((k + li) % ${#taps[@]}))]}
        if ! measure_level "$tap" "$lv" level "$ldir/$tap" "$c" "$t" "$CAL_N"; then
            RESULTS="$RESULTS$tap 0 fail $lv $CAL_RATE"$'\n'
            continue
        fi
        RESULTS="$RESULTS$tap $M_RATE $([ "$M_OK" = 1 ] && echo ok || echo fail) $lv $CAL_RATE"$'\n'
    done
    if [ -n "$KEEP_DIR" ]; then mkdir -p "$KEEP_DIR" && cp -a "$ldir" "$KEEP_DIR/"; fi
done

# bracket TAP: from RESULTS, "LO HI FASTEST_OK HI_LEVEL HI_CAL_RATE" (its levels by rate, those
# where it did not start left out: the fastest loss-free level below the first lossy one, that
# lossy one (0 if none), the fastest loss-free level of all)
bracket() {
    printf '%s' "$RESULTS" | awk -v t="$1" '$1 == t && $2 > 0' | sort -k2,2n | awk '
        $3 == "ok" && $2 > top { top = $2 }
        !failed { if ($3 == "ok") best = $2; else { failed = 1; first = $2; flv = $4; fcal = $5 } }
        END { printf "%d %d %d %s %d\n", best, first, top, failed ? flv : "-", fcal }'
}

# per tap: bisect between its last loss-free rate and its first lossy one
ANSWER=""
BESTS=""       # for the document: TAP LO HI FASTEST_OK STEPS NOTE
for tap in "${taps[@]}"; do
    read -r lo hi top flv fcal <<<"$(bracket "$tap")"
    steps=0 note=""
    if [ "$hi" -gt 0 ] && [ "$BISECT" -gt 0 ] && [ "$fcal" -gt 0 ]; then
        c=${flv%%x*} t=${flv#*x}
        t=${t%/*}
        fus=0
        case "$flv" in */*) fus=${flv#*/} ;; esac
        # per-thread time of a call at the lossy level, less its servant sleep: the rest of a
        # call (ORB, network, scheduling), which slow(US) adds US to
        base_us=$(awk -v c="$c" -v t="$t" -v r="$fcal" -v us="$fus" 'BEGIN { printf "%.1f", c * t * 1e6 / r - us }')
        while [ "$steps" -lt "$BISECT" ]; do
            # close enough: within 5% of hi (at least 100 calls/s)
            awk -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(hi - lo <= (hi * 0.05 > 100 ? hi * 0.05 : 100)) }' && break
            steps=$((steps + 1))
            target=$(((lo + hi) / 2))
            US=$(awk -v c="$c" -v t="$t" -v r="$target" -v b="$base_us" 'BEGIN { u = c * t * 1e6 / r - b; printf "%d", u < 0 ? 0 : u }')
            bdir=$WORK/bisect-$tap-$steps
            calibrate "$bdir/cal" "$c" "$t" "$(awk -v r="$target" -v c="$c" -v t="$t" 'BEGIN { n = int(r / (c * t)); print n < 50 ? 50 : n }')"
            # once: the sleep is longer than asked (timer slack) and the ORB's time moves with
            # the rate: correct US by what the calibration gave
            if awk -v a="$CAL_RATE" -v b="$target" 'BEGIN { exit !(a > b * 1.05 || a < b * 0.95) }'; then
                base_us=$(awk -v c="$c" -v t="$t" -v r="$CAL_RATE" -v us="$US" 'BEGIN { printf "%.1f", c * t * 1e6 / r - us }')
                US=$(awk -v c="$c" -v t="$t" -v r="$target" -v b="$base_us" 'BEGIN { u = c * t * 1e6 / r - b; printf "%d", u < 0 ? 0 : u }')
                calibrate "$bdir/cal2" "$c" "$t" "$(awk -v r="$target" -v c="$c" -v t="$t" 'BEGIN { n = int(r / (c * t)); print n < 50 ? 50 : n }')"
            fi
            blv="${c}x$t/$US"
            if ! measure_level "$tap" "$blv" "bisect$steps" "$bdir/$tap" "$c" "$t" "$CAL_N"; then
                note="the tap did not start in bisection step $steps"
                break
            fi
            if [ "$M_OK" = 1 ]; then
                if [ "$M_RATE" -ge "$hi" ]; then
                    note="bisection step $steps: no loss at $M_RATE calls/s, above the first loss at $hi (the load moved)"
                    lo=$M_RATE
                    break
                fi
                [ "$M_RATE" -gt "$lo" ] && lo=$M_RATE
            else
                if [ "$M_RATE" -le "$lo" ]; then
                    note="bisection step $steps: loss at $M_RATE calls/s, below the loss-free $lo (the load moved)"
                    break
                fi
                hi=$M_RATE
            fi
        done
        US=""
        if [ -n "$KEEP_DIR" ]; then mkdir -p "$KEEP_DIR" && cp -a "$WORK"/bisect-"$tap"-* "$KEEP_DIR/" 2>/dev/null; fi
    fi
    if [ "$hi" -gt 0 ]; then
        a=$(printf '%-6s no call lost and no drop for ~%s s at %d calls/s; first loss at %d calls/s (%d bisection steps)' \
            "$tap" "$DURATION" "$lo" "$hi" "$steps")
        [ "$top" -gt "$lo" ] && a="$a; yet a level at $top calls/s lost nothing (the load moved)"
    else
        a=$(printf '%-6s no call lost and no drop at any level, up to %d calls/s' "$tap" "$lo")
    fi
    [ -n "$note" ] && a="$a; $note"
    echo "$a"
    ANSWER="$ANSWER$a"$'\n'
    BESTS="$BESTS$tap $lo $hi $top $steps"$'\n'
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T1=$(date -u '+%H:%M UTC')
ns_stop "$SRV_PID" TERM 20

[ "$DOC" = none ] && exit 0
# our section of the shared document, replaced in one step (the rest of the file is left alone)
M_CMD="AFP_OPTS=$AFP_OPTS TAPS=\"$TAPS\" DURATION=$DURATION${LIVE_ARGS:+ LIVE_ARGS=\"$LIVE_ARGS\"}${ATTACH_ARGS:+ ATTACH_ARGS=\"$ATTACH_ARGS\"}${DPDK_ARGS:+ DPDK_ARGS=\"$DPDK_ARGS\"} $CMDLINE" \
M_T0=$T0 M_T1=$T1 M_NPROC=$(nproc) M_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) \
M_KERNEL=$(uname -r) M_LOAD0=$LOAD0 M_LOAD1=$LOAD1 M_HDR=$HDR M_TABLE=$TABLE M_ANSWER=$ANSWER M_BESTS=$BESTS M_DUR=$DURATION \
python3 - "$DOC" <<'PY'
import os, re, sys
doc = sys.argv[1]
m = {k[2:].lower(): v for k, v in os.environ.items() if k.startswith("M_")}
out = ["### Highest loss-free call rate of each tap (%s - %s)" % (m["t0"], m["t1"]), "",
       "- command: `%s`" % m["cmd"],
       "- machine: %s, `nproc` %s, Linux %s; 1-minute/5/15 load average %s at the start, %s at the end"
       % (m["cpu"], m["nproc"], m["kernel"], m["load0"], m["load1"]),
       "- about %s s per level and tap, every tap at the same calls per thread; a run that lost "
       "anything repeated once; bisection between each tap's last loss-free and first lossy rate"
       % m["dur"], "",
       "    " + m["hdr"]]
out += ["    " + l for l in m["table"].rstrip("\n").split("\n")]
out += ["", "    " + "\n    ".join(m["answer"].rstrip("\n").split("\n")), "",
        "Columns: *kdrop* / *ifdrop* the packets the tap counted as dropped by the kernel (live: "
        "pcap_stats ps_drop, the capture ring full; attach: ring-buffer records lost) and by the "
        "interface (live: ps_ifdrop; dpdk: imissed + ierrors), *other* the tap's third count (dpdk: "
        "rx_nombuf; attach: message heads not shipped, flow map full); *run* `level` is a level's "
        "first run, `level-again` its repeat after a loss (a level is lossy only if both runs lost), "
        "`bisectN` the N-th bisection step (`bisectN-again` its repeat) (the lossy level's clients calling slow(US), US chosen "
        "for the rate half way between the tap's last loss-free and first lossy rate).",
        "", "What it says:", ""]
rows = [l.split() for l in m["table"].strip().split("\n")]
top = max((float(r[3]) for r in rows if len(r) > 4 and re.match(r"[\d.]+$", r[3])), default=0)
for l in m["bests"].strip().split("\n"):
    if not l:
        continue
    t, lo, hi, fastest, steps = l.split()
    lo, hi, fastest, steps = int(lo), int(hi), int(fastest), int(steps)
    if hi:
        out.append("- %s: no call lost and no drop for about %s s at %d calls/s, losses at %d calls/s "
                   "(after %d bisection steps between its last loss-free and first lossy level)%s."
                   % (t, m["dur"], lo, hi, steps,
                      "" if fastest <= lo else "; yet a level at %d calls/s lost nothing: the load "
                      "moved between runs" % fastest))
    else:
        out.append("- %s: no loss at any level, up to %d calls/s (the rig's top here: about %.0f calls/s)."
                   % (t, lo, top))
loads = [float(r[-1]) for r in rows if len(r) > 4 and re.match(r"[\d.]+$", r[-1])]
if loads:
    out.append("- load average during the runs: %.1f to %.1f on %s CPUs: with the CPUs shared, a "
               "tap that does not run in time drops, so these rates are this machine's at that load."
               % (min(loads), max(loads), m["nproc"]))
body = "\n".join(out)
sys.path.insert(0, "bench")
from doc_section import write_section
write_section(doc, "bench-tap-rate", body, "live_rate")
PY
