#!/bin/bash
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
#   drops          what the tap itself counted as lost before its decoder: live: pcap_stats
#                  ps_drop + ps_ifdrop; dpdk: imissed + ierrors + rx_nombuf (net_af_packet does
#                  not count its own ring overflowing: those show only as lost calls); attach:
#                  ring-buffer records lost + message heads not shipped; all from the tap's
#                  "packets lost before the decoder" line
#   gaps           capture gaps the TCP reassembly saw
#   cpu            the tap's user+system CPU time / wall time (of one vCPU; dpdk's poller spins)
#   p99 us         the tap's own p99 of total_us
#   load           the 1-minute load average at the end of the level (anything else running
#                  on the machine takes CPU from the tap and shows up as drops)
# The answer, per tap: with its levels sorted by calls/s, the rate up to which no level lost a
# call or had a drop (and the rate of the first that did).
# Not a test: run it by hand, as root, on an otherwise idle machine.
#
# usage: bench/live_rate.sh [LEVEL...]   LEVEL = CLIENTSxTHREADS, echoString(32) as fast as they go,
#   or CLIENTSxTHREADS/US: slow(US), the servant sleeps US microseconds (a lower, steadier rate)
#   (default: 1x1/200 1x1/50 1x1 2x2 2x4 4x8)
# environment: TAPS ("live attach dpdk"; dpdk left out when giopscope has no DPDK), DURATION
#   (default 10), LIVE_ARGS (extra options for live, e.g. "--snaplen 2048" or "--batch-ms 10"),
#   ATTACH_ARGS, DPDK_ARGS, AFP_OPTS (net_af_packet's options after iface=, default
#   framecnt=16384), GIOPSCOPE ($BENCH_BIN or $BUILD/giopscope), BUILD (build), PORT (2809),
#   KEEP_DIR (keep each level's files), BENCH_DOC (docs/benchmarks.md; "none": do not write
#   it): the part between <!-- bench-tap-rate:begin/end --> is replaced, the rest left alone.
# Time: about 40 s per level (calibration, then 3 taps x DURATION plus their start and stop):
#   4-5 minutes with the defaults.
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

echo "giopscope taps on a veth: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPU $(lscpu | sed -n 's/^Model name: *//p' | head -1), kernel $(uname -r), load average $LOAD0"
echo "taps: $TAPS; live ${LIVE_ARGS:-(defaults)}, attach ${ATTACH_ARGS:-(defaults)}, dpdk net_af_packet $AFP_OPTS ${DPDK_ARGS}; ~${DURATION} s per level and tap (CxT: C clients of T threads; /US: slow(US) instead of echoString(32))"
HDR=$(printf '%-7s %-6s %9s %10s %10s %6s %7s %5s %5s %9s %6s' level tap "calls/s" "client" "tap" lost drops gaps cpu "p99 us" load)
echo "$HDR"
TABLE=""
RESULTS=""
read -r -a taps <<<"$TAPS"
li=0
for lv in $LEVELS; do
    US=""
    case "$lv" in */*) US=${lv#*/} ;; esac
    c=${lv%%x*} t=${lv#*x}
    t=${t%/*}
    ldir=$WORK/${lv//\//_}
    mkdir -p "$ldir/cal"
    # calibration: 1 s worth of calls at this level, no tap; the same count for every tap
    ns=$(run_clients "$ldir/cal" "$c" "$t" 2000)
    n=$(awk -v ns="$ns" -v d="$DURATION" 'BEGIN { n = int(2000 * d * 1e9 / ns); print (n < 100 ? 100 : n) }')
    li=$((li + 1))
    for k in $(seq 0 $((${#taps[@]} - 1))); do
        tap=${taps[$(((k + li) % ${#taps[@]}))]}
        dir=$ldir/$tap
        mkdir -p "$dir"
        if ! start_tap "$tap" "$dir"; then
            echo "$tap did not start: $(tail -2 "$dir/tap.err")"
            ns_stop "$TAP_PID" INT 30
            line=$(printf '%-7s %-6s did not start' "$lv" "$tap")
            TABLE="$TABLE$line"$'\n'
            RESULTS="$RESULTS$tap 0 fail"$'\n'
            continue
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
# every tap's own count of what it lost before its decoder (attach: ring records lost as
# "kernel", heads not shipped as "other"); printed only when not 0
drops = 0
m = re.search(r"packets lost before the decoder: kernel (\d+), interface (\d+), [^\d]* (\d+)", err)
if m:
    drops += sum(int(x) for x in m.groups())
g = re.search(r"capture gaps (\d+)", err)
p = re.search(r"^(?:echoString|slow) +\d+ +\d+ \|(?: +[\d.]+){2} +([\d.]+)", err, re.M)
lost = client - seen + noreply
rate = client / (wall_ns / 1e9)
print("%9.0f %10d %10d %6d %7d %5s %4.0f%% %9s %d" % (rate, client, seen, lost, drops,
      g.group(1) if g else "?", 100.0 * cpu_ns / wall_ns, p.group(1) if p else "?",
      1 if lost == 0 and drops == 0 else 0))
PY
)
        ok=${line##* }
        # the 1-minute load average at the end: other work on the machine shows up here
        line=$(printf '%-7s %-6s %s %6s' "$lv" "$tap" "${line% *}" "$(cut -d' ' -f1 /proc/loadavg)")
        echo "$line"
        TABLE="$TABLE$line"$'\n'
        RESULTS="$RESULTS$tap $(echo "$line" | awk '{ print int($3) }') $([ "$ok" = 1 ] && echo ok || echo fail)"$'\n'
    done
    if [ -n "$KEEP_DIR" ]; then mkdir -p "$KEEP_DIR" && cp -a "$ldir" "$KEEP_DIR/"; fi
done
# per tap, its levels by rate: no loss up to the first level that lost anything
ANSWER=""
for tap in "${taps[@]}"; do
    a=$(printf '%s' "$RESULTS" | awk -v t="$tap" '$1 == t { print $2, $3 }' | sort -n | awk -v t="$tap" '
        $2 == "ok" && $1 > top { top = $1 }
        !failed { if ($2 == "ok") best = $1; else { failed = 1; first = $1 } }
        END {
            printf "%-6s no call lost and no drop up to %d calls/s", t, best
            # a slower level can lose while a faster one does not (the machine'"'"'s load moves):
            # the fastest loss-free level is said too
            if (failed) printf " (first loss at %d calls/s; fastest loss-free level %d calls/s)", first, top
            printf "\n"
        }')
    echo "$a"
    ANSWER="$ANSWER$a"$'\n'
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T1=$(date -u '+%H:%M UTC')
ns_stop "$SRV_PID" TERM 20

[ "$DOC" = none ] && exit 0
# our section of the shared document, replaced in one step (the rest of the file is left alone)
M_CMD="AFP_OPTS=$AFP_OPTS TAPS=\"$TAPS\" DURATION=$DURATION${LIVE_ARGS:+ LIVE_ARGS=\"$LIVE_ARGS\"}${ATTACH_ARGS:+ ATTACH_ARGS=\"$ATTACH_ARGS\"}${DPDK_ARGS:+ DPDK_ARGS=\"$DPDK_ARGS\"} $CMDLINE" \
M_T0=$T0 M_T1=$T1 M_NPROC=$(nproc) M_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) \
M_KERNEL=$(uname -r) M_LOAD0=$LOAD0 M_LOAD1=$LOAD1 M_HDR=$HDR M_TABLE=$TABLE M_ANSWER=$ANSWER M_DUR=$DURATION \
python3 - "$DOC" <<'PY'
import os, re, sys
doc = sys.argv[1]
m = {k[2:].lower(): v for k, v in os.environ.items() if k.startswith("M_")}
out = ["### Highest loss-free call rate of each tap (%s - %s)" % (m["t0"], m["t1"]), "",
       "- command: `%s`" % m["cmd"],
       "- machine: %s, `nproc` %s, Linux %s; 1-minute/5/15 load average %s at the start, %s at the end"
       % (m["cpu"], m["nproc"], m["kernel"], m["load0"], m["load1"]),
       "- about %s s per level and tap, every tap at the same calls per thread" % m["dur"], "",
       "    " + m["hdr"]]
out += ["    " + l for l in m["table"].rstrip("\n").split("\n")]
out += ["", "    " + "\n    ".join(m["answer"].rstrip("\n").split("\n")), "", "What it says:", ""]
best = {}
for l in m["answer"].strip().split("\n"):
    g = re.match(r"(\S+) +no call lost and no drop up to (\d+) calls/s(?: \(first loss at (\d+) calls/s; "
                 r"fastest loss-free level (\d+))?", l)
    if g:
        best[g.group(1)] = (int(g.group(2)), g.group(3), g.group(4))
rows = [l.split() for l in m["table"].strip().split("\n")]
top = max((float(r[2]) for r in rows if len(r) > 3 and re.match(r"[\d.]+$", r[2])), default=0)
for t, (b, f, hi) in best.items():
    if f:
        # the levels' rates are what the machine gave them: the limit is only bracketed
        out.append("- %s: no loss at any level up to %d calls/s; the slowest level that lost calls ran at "
                   "%s calls/s: its limit here lies between the two%s." % (t, b, f,
                   "" if int(hi) <= b else " (yet a faster level, %s calls/s, lost nothing: the load "
                   "moved between levels)" % hi))
    else:
        out.append("- %s: no loss at any level, up to %d calls/s (the rig's top here: about %.0f calls/s)."
                   % (t, b, top))
loads = [float(r[-1]) for r in rows if len(r) > 3 and re.match(r"[\d.]+$", r[-1])]
if loads:
    out.append("- load average during the levels: %.1f to %.1f on %s CPUs: with the CPUs shared, a "
               "tap that does not run in time drops, so these rates are this machine's at that load "
               "(units of *drops*: packets for live and dpdk, ring records for attach)."
               % (min(loads), max(loads), m["nproc"]))
body = "\n".join(out)
name = "bench-tap-rate"
begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
block = "%s\n%s\n%s" % (begin, body, end)
try:
    text = open(doc).read()
except FileNotFoundError:
    text = ""
if begin in text and end in text:
    i, j = text.index(begin), text.index(end) + len(end)
    text = text[:i] + block + text[j:]
else:
    text = text.rstrip("\n") + "\n\n" + block + "\n"
tmp = "%s.tmp.%d" % (doc, os.getpid())
open(tmp, "w").write(text)
os.replace(tmp, doc)
print("live_rate: wrote %s (%s)" % (doc, name), file=sys.stderr)
PY
