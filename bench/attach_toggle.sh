#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/attach_toggle.sh -- what a tap adds to an omniORB echo round trip, measured by one
# client in one run while the tap is switched on and off around it.
#
# bench/attach_overhead.sh compares separate client runs (one per round and arm); on a shared
# 2-vCPU VM the p50 of *none* itself moves by 25 µs from run to run, so it cannot resolve a
# 2 µs effect. Here nothing but the tap changes between the windows compared:
#
#   - one omniORB bench_server (server namespace) and, per size, one bench_client (client
#     namespace, a veth between: tests/lib/netns.sh) that stay up the whole time; one
#     connection; echoString(SIZE) back to back; the client logs every call's start and round
#     trip (its latency CSV: CLOCK_REALTIME right before and after the stub call) and is
#     stopped with SIGUSR1 at the end. Server and client pinned to different CPUs (PIN=1), the
#     SCHED_IDLE spinner on every CPU in every window (SPIN=1): the idle state and the
#     placement are the same with the tap on and off.
#   - meanwhile the tap is started and stopped in alternating windows: off OFF_S seconds, then
#     the arm's tap is started; once it says it is in place (attach: "giopscope attach:
#     following", live: "listening on") and SETTLE_S more, the on-window runs ON_S seconds; DRAIN_S
#     later it gets SIGINT; SETTLE_S after it exited the next off-window begins. Start-up and
#     shutdown are in no window. Arms rotate (none attach live, then attach live none, ...),
#     each on-window between two off-windows. The window bounds are taken with $EPOCHREALTIME
#     (gettimeofday: CLOCK_REALTIME, the client's clock).
#       none    `sleep` started and stopped like a tap (the control: must give ~0)
#       attach  giopscope attach --pid <server> --pairs -o /dev/null --summary [$ATTACH_OPTS]
#       live    giopscope live -i <server veth> --pairs -o /dev/null --summary (server's namespace)
#       attach_ref  attach run by GIOPSCOPE_REF (another build) [$ATTACH_OPTS]
#       attach_sys  attach --syscall-hooks: the same build on its fallback path (send/recv
#               instants from raw_syscalls sys_enter/sys_exit) [$ATTACH_OPTS]
#       attach_idle  attach --idle-reader: the reader runs as SCHED_IDLE once attached (only CPU
#               time nothing else wants; the ORB's threads never wait for it) [$ATTACH_OPTS]
#        the same, run by GIOPSCOPE_REF
#       attach_frozen  attach (this build, default path, --ring-size 256m) whose process is
#               stopped (SIGSTOP) from its ready line to the end of the on-window and let go
#               (SIGCONT) DRAIN_S before its SIGINT: the kernel side alone (its programs and
#               records), without the reader's work during the window; attach minus
#               attach_frozen is what the reader costs the round trip
#       attach_sched  attach --sched (the scheduler probes and the split) [$ATTACH_OPTS]
#       attach_orb  attach --sched --orb omniorb (and the upcall uprobes) [$ATTACH_OPTS]
#       dpdk    as in attach_overhead.sh (its poller spins a CPU: not comparable when pinned)
#       tc_empty, tc_headers, tc_ring, tc_clsact  bench/tc_floor on the server veth's ingress and
#               egress (issue 16: what the hooks cost before the tap's work): an empty program
#               as TCX links like attach's packet tap; + the header reads (bpf_skb_load_bytes of
#               IP and TCP) and a watch-table lookup; + a ring record of a segment's size per
#               packet (no reader: as attach_frozen); tc_store: the same record written into one
#               per-CPU slot instead of the ring; tc_ringr, tc_ringr4: tc_ring with a reader
#               emptying a 64 MiB (attach's default) or 4 MiB ring every 50 ms; tc_ring2: tc_ring
#               with a ring per direction (each written by one CPU when pinned); tc_batch: the
#               records staged per CPU, a CPU's staged records written as one ring record when
#               its 4 KiB area is full, its oldest record 1 ms old, or by its BPF timer;
#               tc_batchr: tc_batch with tc_ringr's reader; tc_batch8: an area of 8
#               records; tc_stagew, tc_stagew8: batch's writes into an area of 48 or 8
#               records in turn, never flushed (the area's lines alone); tc_coldw: each
#               record 80 bytes on in a 1 MiB area per CPU, no ring (cold lines alone); the empty
#               program through a clsact qdisc
#               (cls_bpf, direct action) instead of TCX. No summary: not checked for calls seen
#   - calls are put into windows by their start time; per window p50, p90, p99 of the round
#     trips; per on-window the difference to the mean of its two neighbouring off-windows;
#     the figure per arm is the median over its on-windows of that difference, with the
#     interquartile range, min/max, a 95% confidence interval of the median (order statistics)
#     and the number of windows.
#   - CPU per call (SPIN=1): per window, the CPU time all CPUs spent on anything but the
#     SCHED_IDLE spinners (nproc x the window's length minus the spinners' run time, from
#     /proc/PID/schedstat, ns), divided by the calls in the window; per on-window minus its two
#     neighbours' mean, median over the arm's windows. Far less noisy than a p50: it is the
#     work the tap adds to a call on any CPU (programs, the path around them, the reader).
#   - an on-window counts only if the tap exited 0 and its summary saw the calls: at least
#     MIN_SEEN (0.995) of the calls the client made between the tap's "ready" line and its
#     SIGINT, and no more than it made between the tap's start and exit. Others are listed as
#     rejected, never used.
#
# usage: bench/attach_toggle.sh          (as root; not part of make check)
#   QUICK=1 bench/attach_toggle.sh       a try: 3 pairs of 1.5 s windows per arm, ~1 min
# environment: SIZES ("32"; "32 256 4096"), ARMS ("none attach live"), PAIRS (20: on-windows per
#   arm and size), OFF_S (3), ON_S (3), SETTLE_S (0.5), DRAIN_S (0.3), WARMUP_S (2: after the
#   client's connection is up), SPIN (1), PIN (1: SERVER_CPU 0, CLIENT_CPU 1), PROBE_CPU (unset:
#   the tap unpinned), ATTACH_OPTS (more attach options, e.g. "--ring-size 64k"), MIN_SEEN
#   (0.995), GIOPSCOPE ($BENCH_BIN or $BUILD/giopscope), GIOPSCOPE_REF, BUILD (build), PORT
#   (2809), AFP_OPTS (framecnt=16384), BENCH_DOC (set by bench/run.sh: the section is also
#   written into that file between its markers, unless OUT is set), OUT (write the markdown section there instead of
#   stdout), KEEP_DIR (keep the latency CSVs, per-window figures and tap logs), LOCK
#   (/tmp/gs-bench.lock: held while measuring, waited for with a message; "none": not taken;
#   not taken again when an ancestor process holds it, e.g. `flock /tmp/gs-bench.lock
#   bench/attach_toggle.sh`), TLS (1: IIOP over TLS -- server and client load omniORB's
#   libomnisslTP4 with LD_PRELOAD, certificates made here with openssl; attach then also puts
#   its uprobes on the server's libssl: what they add, docs/benchmarks.md).
# Time: per size, PAIRS x arms cycles of OFF_S + ON_S + tap start/stop + 2 x SETTLE_S (8-9 s
# with the defaults: about 9 min for 3 arms x 20 pairs), then the analysis (~20 s for ~15M
# calls). The client keeps 32 bytes per call in memory and writes ~70 bytes per call.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
CMDLINE="$0${*:+ $*}"

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-${BENCH_BIN:-$BUILD}/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
TLS=${TLS:-0}
if [ "${QUICK:-0}" = 1 ]; then
    PAIRS=${PAIRS:-3} OFF_S=${OFF_S:-1.5} ON_S=${ON_S:-1.5} WARMUP_S=${WARMUP_S:-1}
fi
SIZES=${SIZES:-32}
ARMS=${ARMS:-none attach live}
PAIRS=${PAIRS:-20}
OFF_S=${OFF_S:-3}
ON_S=${ON_S:-3}
SETTLE_S=${SETTLE_S:-0.5}
DRAIN_S=${DRAIN_S:-0.3}
WARMUP_S=${WARMUP_S:-2}
SPIN=${SPIN:-1}
PIN=${PIN:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PROBE_CPU=${PROBE_CPU:-}
MIN_SEEN=${MIN_SEEN:-0.995}
PORT=${PORT:-2809}
AFP_OPTS=${AFP_OPTS:-framecnt=16384}
KEEP_DIR=${KEEP_DIR:-}
OUT=${OUT:-}
LOCK=${LOCK:-/tmp/gs-bench.lock}
TAP_ATTACH_OPTS=${ATTACH_OPTS:-}
# the windows are timed here; start_probe/stop_probe add nothing of their own
TAP_SETTLE=0 TAP_DRAIN=0

. tests/lib/netns.sh
. bench/tap_helpers.sh
ns_require
[ -x "$GIOPSCOPE" ] || { echo "attach_toggle: build giopscope first (make)" >&2; exit 2; }
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || make -s BUILD="$BUILD" orb-apps >&2 || exit 2
for a in $ARMS; do
    case "$a" in
        none|attach|attach_sys|attach_frozen|attach_idle|attach_sched|attach_orb|live|dpdk) ;;
        tc_empty|tc_headers|tc_ring|tc_ring2|tc_store|tc_batch|tc_clsact|tc_ringr|tc_ringr4|tc_batchr|tc_batch8|tc_stagew|tc_stagew8|tc_coldw)
            TC_FLOOR=${TC_FLOOR:-$BUILD/bench/tc_floor}
            [ -x "$TC_FLOOR" ] || make -s BUILD="$BUILD" "$TC_FLOOR" >&2 ||
                { echo "attach_toggle: the $a arm wants $TC_FLOOR (make $BUILD/bench/tc_floor; eBPF built)" >&2; exit 2; } ;;
        attach_ref) [ -x "${GIOPSCOPE_REF:-}" ] || { echo "attach_toggle: the attach_ref arm wants GIOPSCOPE_REF (a giopscope)" >&2; exit 2; } ;;
        *) echo "attach_toggle: unknown arm '$a' (none attach attach_sys attach_frozen attach_idle attach_sched attach_orb live attach_ref dpdk tc_empty tc_headers tc_ring tc_ring2 tc_store tc_batch tc_clsact tc_ringr tc_ringr4 tc_batchr tc_batch8 tc_stagew tc_stagew8 tc_coldw)" >&2; exit 2 ;;
    esac
done
if [ "$PIN" = 1 ] && [ "$(nproc)" -lt 2 ]; then
    echo "attach_toggle: PIN=1 wants 2 CPUs at least" >&2
    exit 2
fi
[ -z "${EPOCHREALTIME:-}" ] && { echo "attach_toggle: bash 5 wanted (\$EPOCHREALTIME)" >&2; exit 2; }

# the lock other benchmarks of this machine take: one measurement at a time
LOCK_FD=""
lock_held_by_ancestor() {
    local ino holders p=$$
    ino=$(stat -c %i "$LOCK" 2>/dev/null) || return 1
    holders=" $(awk -v i="$ino" '$2 == "FLOCK" { n = split($6, a, ":"); if (a[n] == i) print $5 }' /proc/locks | tr '\n' ' ') "
    while [ -n "$p" ] && [ "$p" -gt 1 ]; do
        [[ "$holders" == *" $p "* ]] && return 0
        p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
    done
    return 1
}
if [ "$LOCK" != none ]; then
    if lock_held_by_ancestor; then
        echo "attach_toggle: $LOCK is held by a parent process: measuring under it" >&2
    else
        exec {LOCK_FD}>>"$LOCK" || exit 2
        if ! flock -n "$LOCK_FD"; then
            echo "attach_toggle: waiting for $LOCK (another benchmark is measuring; holder pid(s): $(awk -v i="$(stat -c %i "$LOCK")" '$2 == "FLOCK" { n = split($6, a, ":"); if (a[n] == i) print $5 }' /proc/locks | paste -sd, -))" >&2
            flock "$LOCK_FD" || exit 2
            echo "attach_toggle: got $LOCK" >&2
        fi
    fi
fi

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date -u '+%Y-%m-%d %H:%M UTC')
CLI_PID=""
tap_bench_setup gs-attach-toggle || exit 1
tap_veth_mtu_frames attach_toggle || exit 1
[ "$SPIN" = 1 ] && tap_spinners_start

pin() {   # pin CPU: the taskset prefix of a command (nothing when PIN=0)
    [ "$PIN" = 1 ] && echo "taskset -c $1"
}
# TLS=1: omniORB's TLS transport preloaded in both programs, a certificate of our own
ORB_PRE=() ORB_TLS=() EP=tcp
if [ "$TLS" = 1 ]; then
    SSLTP=$(ldconfig -p | sed -n 's/.*libomnisslTP4\.so\.2 .*=> //p' | head -n 1)
    [ -n "$SSLTP" ] || { echo "attach_toggle: TLS=1 wants libomnisslTP4.so.2 (libomniorb4-2)" >&2; exit 2; }
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/tls.key" -out "$WORK/tls.crt" -days 2 \
        -subj "/CN=giopscope bench" >/dev/null 2>&1 || { echo "attach_toggle: openssl failed" >&2; exit 2; }
    cat "$WORK/tls.crt" "$WORK/tls.key" >"$WORK/tls.pem"
    ORB_PRE=(env LD_PRELOAD="$SSLTP")
    # omniORB 4.2.5 loads the key file only with a password set (tests/orb/README.md)
    ORB_TLS=(-ORBsslCAFile "$WORK/tls.crt" -ORBsslKeyFile "$WORK/tls.pem" -ORBsslKeyPassword unused
             -ORBsslVerifyMode none)
    EP=ssl
fi
# shellcheck disable=SC2046
ns_start "$NS_SRV" "$WORK/server.log" $(pin "$SERVER_CPU") "${ORB_PRE[@]}" "$SERVER" -ORBendPoint "giop:$EP:$NS_SRV_IP4:$PORT" "${ORB_TLS[@]}" -o "$WORK/echo.ior" -q
SRV_PID=$NS_LAST_PID
ns_wait_file "$WORK/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 || { echo "server did not start" >&2; exit 1; }

now() { echo "${EPOCHREALTIME/./}"; }   # CLOCK_REALTIME, µs (the client's clock)
# spin_ns: the spinners' run time so far, ns (their /proc/PID/schedstat; read with builtins, no
# fork, right beside now()); "-" without spinners
spin_ns() {
    local p a t=0
    [ -n "$SPINNERS" ] || { echo -; return; }
    for p in $SPINNERS; do
        read -r a _ <"/proc/$p/schedstat" || { echo -; return; }
        t=$((t + a))
    done
    echo "$t"
}

# on_window ARM SIZE K: start the arm's tap, time its on-window, stop it; one line of
# $WORK/windows: on ARM SIZE K t_launch t_ready t_on0 t_on1 t_sigint t_exit status seen
on_window() {
    local arm=$1 size=$2 k=$3 log=$WORK/tap.$2.$3.$1.log t_launch t_ready t_on0 t_on1 t_sig t_exit status=ok s=- rc sp0 sp1
    t_launch=$(now)
    if [ "$arm" = none ]; then
        # the control: a process started and stopped like a tap, doing nothing
        sleep 100000 &
        PROBE_PID=$!
        echo "sleep $PROBE_PID" >"$log"
        rc=0
    elif [ -n "$PROBE_CPU" ]; then
        # a tap pinned too: taskset on this shell's children for the start
        taskset -cp "$PROBE_CPU" $$ >/dev/null
        start_probe "$arm" "$log"
        rc=$?
        taskset -cp "0-$(($(nproc) - 1))" $$ >/dev/null
    else
        start_probe "$arm" "$log"
        rc=$?
    fi
    # attach_frozen: the reader stopped, the kernel programs at work (records pile up in the ring)
    [ "$arm" = attach_frozen ] && [ -n "$PROBE_PID" ] && kill -STOP "$PROBE_PID"
    t_ready=$(now)
    [ $rc = 0 ] || status="did not start: $(tail -1 "$log" 2>/dev/null)"
    sleep "$SETTLE_S"
    sp0=$(spin_ns)
    t_on0=$(now)
    sleep "$ON_S"
    t_on1=$(now)
    sp1=$(spin_ns)
    [ "$arm" = attach_frozen ] && [ -n "$PROBE_PID" ] && kill -CONT "$PROBE_PID"
    sleep "$DRAIN_S"
    t_sig=$(now)
    if [ "$arm" = none ]; then
        kill -TERM "$PROBE_PID" 2>/dev/null   # (a background job of a script ignores SIGINT)
        wait "$PROBE_PID" 2>/dev/null
        PROBE_PID=""
    elif ! stop_probe && [ "$status" = ok ]; then
        status="tap exit not 0: $(tail -1 "$log")"
    fi
    t_exit=$(now)
    [ "$arm" != none ] && [ "${arm#tc_}" = "$arm" ] && s=$(seen "$log")
    [ "$status" = ok ] || echo "attach_toggle: size $size window $k $arm: $status" >&2
    printf 'on %s %s %s %s %s %s %s %s %s %s %s %s %s\n' "$arm" "$size" "$k" "$t_launch" "$t_ready" "$t_on0" "$t_on1" \
        "$t_sig" "$t_exit" "${status// /_}" "$s" "$sp0" "$sp1" >>"$WORK/windows"
}

off_window() {   # off_window SIZE K
    local t0 t1 sp0 sp1
    sleep "$SETTLE_S"
    sp0=$(spin_ns)
    t0=$(now)
    sleep "$OFF_S"
    t1=$(now)
    sp1=$(spin_ns)
    printf 'off - %s %s - - %s %s - - ok - %s %s\n' "$1" "$2" "$t0" "$t1" "$sp0" "$sp1" >>"$WORK/windows"
}

read -r -a arms <<<"$ARMS"
na=${#arms[@]}
echo "attach_toggle: sizes ($SIZES), arms ($ARMS), $PAIRS on-windows per arm of ${ON_S} s between off-windows of ${OFF_S} s; spinner $SPIN, pinned $PIN" >&2
for size in $SIZES; do
    # shellcheck disable=SC2046
    ns_start "$NS_CLI" "$WORK/client.$size.log" $(pin "$CLIENT_CPU") "${ORB_PRE[@]}" "$CLIENT" "${ORB_TLS[@]}" -i "$WORK/echo.ior" \
        -op echoString -size "$size" -n 100000000 -lat "$WORK/lat.$size.csv" -q
    CLI_PID=$NS_LAST_PID
    # calls run once the connection is up; then a warm-up no window covers
    up=0
    for _ in $(seq 1 200); do
        ip netns exec "$NS_CLI" ss -Htn state established "dport = :$PORT" 2>/dev/null | grep -q . && { up=1; break; }
        ns_alive "$CLI_PID" || break
        sleep 0.05
    done
    [ "$up" = 1 ] || { echo "attach_toggle: the client did not connect: $(tail -2 "$WORK/client.$size.log")" >&2; exit 1; }
    sleep "$WARMUP_S"
    k=0
    off_window "$size" "$k"
    for p in $(seq 1 "$PAIRS"); do
        for j in $(seq 0 $((na - 1))); do
            arm=${arms[$(((j + p - 1) % na))]}
            k=$((k + 1))
            on_window "$arm" "$size" "$k"
            off_window "$size" "$k"
            ns_alive "$CLI_PID" || { echo "attach_toggle: the client exited early: $(tail -2 "$WORK/client.$size.log")" >&2; exit 1; }
        done
        echo "attach_toggle: size $size: $p of $PAIRS pairs done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
    # SIGUSR1: the client finishes the call in progress, writes its CSV and exits
    ns_stop "$CLI_PID" USR1 300
    rc=$?
    CLI_PID=""
    [ "$rc" = 0 ] || { echo "attach_toggle: client exit $rc: $(tail -2 "$WORK/client.$size.log")" >&2; exit 1; }
    echo "attach_toggle: size $size: $(tail -1 "$WORK/client.$size.log")" >&2
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T1=$(date -u '+%H:%M UTC')
# the measuring is over: the server and the spinners go (they hold the lock's file open too),
# then the lock; the analysis needs neither
for p in $SPINNERS; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
SPINNERS=""
ns_stop "$SRV_PID"
[ -n "$LOCK_FD" ] && exec {LOCK_FD}>&-

tap_machine
M_CMD="SIZES=\"$SIZES\" ARMS=\"$ARMS\" PAIRS=$PAIRS OFF_S=$OFF_S ON_S=$ON_S SETTLE_S=$SETTLE_S DRAIN_S=$DRAIN_S SPIN=$SPIN PIN=$PIN TLS=$TLS${ATTACH_OPTS:+ ATTACH_OPTS=\"$ATTACH_OPTS\"} $CMDLINE" \
M_T0=$T0 M_T1=$T1 M_NPROC=$M_NPROC M_CPU=$M_CPU M_KERNEL=$M_KERNEL M_LOAD0=$LOAD0 M_LOAD1=$LOAD1 \
M_SPIN=$SPIN M_PIN=$PIN M_SERVER_CPU=$SERVER_CPU M_CLIENT_CPU=$CLIENT_CPU M_PROBE_CPU=$PROBE_CPU \
M_ON=$ON_S M_OFF=$OFF_S M_SETTLE=$SETTLE_S M_DRAIN=$DRAIN_S M_MIN_SEEN=$MIN_SEEN M_PAIRS=$PAIRS \
python3 - "$WORK" "$ARMS" "$SIZES" "$OUT" <<'PY'
import bisect, csv, math, os, statistics, sys
from array import array
work, arms, sizes, out_path = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4]
meta = {k[2:].lower(): v for k, v in os.environ.items() if k.startswith("M_")}
min_seen = float(meta["min_seen"])

def pct(v, p):
    return v[min(len(v) - 1, int(p * len(v)))]

def ci_median(n):
    # 95% confidence interval of a median from n values: order statistics (j, k), 1-based,
    # the widest symmetric pair with P(j <= rank of the median <= k) >= 0.95 under Binomial(n, 1/2)
    if n < 6:
        return None
    best = None
    for j in range(1, n // 2 + 1):
        k = n + 1 - j
        cover = sum(math.comb(n, i) for i in range(j, k)) / 2.0 ** n
        if cover >= 0.95:
            best = (j, k)
    return best

def quart(v):
    v = sorted(v)
    if len(v) < 2:
        return v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]

rows_out, results, rejected, calls_total, noise = [], {}, [], {}, {}
nproc = int(meta["nproc"])
cpu_res = {}  # (size, arm) -> [(on-window's CPU ns per call minus its neighbours' mean, on, off mean)]
for size in sizes:
    t0s, lats = array("q"), array("q")
    with open(os.path.join(work, "lat.%s.csv" % size)) as f:
        r = csv.reader(f)
        next(r)
        for row in r:
            if row[7] != "NO_EXCEPTION":
                continue
            t0s.append(int(row[4]))
            lats.append(int(row[6]))
    calls_total[size] = len(t0s)
    # the calls are in time order (one thread): a window is a slice
    def sl(a_ns, b_ns):  # calls that started in [a, b)
        return bisect.bisect_left(t0s, a_ns), bisect.bisect_left(t0s, b_ns)
    wins = []
    for line in open(os.path.join(work, "windows")):
        f = line.split()
        if f[2] != size:
            continue
        wins.append(f)
    stats = {}  # (kind, k) -> (p50, p90, p99, n)
    cpu = {}    # (kind, k) -> CPU ns per call on all CPUs but the spinners' (SPIN=1)
    for f in wins:
        kind, arm, k = f[0], f[1], int(f[3])
        a, b = int(f[6]) * 1000, int(f[7]) * 1000
        i, j = sl(a, b)
        v = sorted(lats[i:j])
        if len(v) < 100:
            stats[(kind, k)] = None
            continue
        stats[(kind, k)] = (pct(v, 0.5) / 1000.0, pct(v, 0.9) / 1000.0, pct(v, 0.99) / 1000.0, len(v))
        if len(f) >= 14 and f[12] != "-" and f[13] != "-":
            cpu[(kind, k)] = (nproc * (b - a) - (int(f[13]) - int(f[12]))) / len(v)
        rows_out.append("%s,%s,%s,%d,%d,%d,%d,%.2f,%.2f,%.2f\n" % (size, kind, arm, k, a, b, len(v), *stats[(kind, k)][:3]))
    noise[size] = [stats[("off", int(f[3]))][0] for f in wins if f[0] == "off" and stats.get(("off", int(f[3])))]
    for f in wins:
        if f[0] != "on":
            continue
        arm, k = f[1], int(f[3])
        t_launch, t_ready, t_sig, t_exit = (int(x) * 1000 for x in (f[4], f[5], f[8], f[9]))
        status, seen = f[10].replace("_", " "), f[11]
        why = None
        if status != "ok":
            why = status
        elif stats.get(("on", k)) is None:
            why = "fewer than 100 calls in the window"
        elif stats.get(("off", k - 1)) is None or stats.get(("off", k)) is None:
            why = "a neighbouring off-window has fewer than 100 calls"
        elif arm != "none" and not arm.startswith("tc_"):
            # the tap's count against the client's: between its ready line and its SIGINT it
            # must have seen (nearly) all; between its start and its exit no more than it made
            i, j = bisect.bisect_left(t0s, t_ready), bisect.bisect_left(t0s, t_sig)
            inner = j - i
            outer = bisect.bisect_left(t0s, t_exit) - bisect.bisect_left(t0s, t_launch)
            s = int(seen)
            if s < min_seen * inner or s > outer + 2:
                why = "the tap saw %d calls, the client made %d between its ready line and its SIGINT (%d from start to exit)" % (s, inner, outer)
            else:
                results.setdefault((size, arm, "seen"), []).append(s / inner)
        if why:
            rejected.append((size, arm, k, why))
            continue
        on, before, after = stats[("on", k)], stats[("off", k - 1)], stats[("off", k)]
        d = tuple(on[i] - (before[i] + after[i]) / 2.0 for i in range(3))
        results.setdefault((size, arm), []).append((d, on, before, after))
        if ("on", k) in cpu and ("off", k - 1) in cpu and ("off", k) in cpu:
            offm = (cpu[("off", k - 1)] + cpu[("off", k)]) / 2.0
            cpu_res.setdefault((size, arm), []).append((cpu[("on", k)] - offm, cpu[("on", k)], offm))

if os.environ.get("KEEP_WINDOWS", "1") == "1":
    with open(os.path.join(work, "windows.csv"), "w") as f:
        f.write("size,kind,arm,k,start_ns,end_ns,calls,p50_us,p90_us,p99_us\n")
        f.writelines(rows_out)

med = statistics.median
out = []
w = out.append
w("<!-- bench-attach-toggle:begin -->")
w("### Added round trip, tap toggled under one client (%s - %s)" % (meta["t0"], meta["t1"]))
w("")
w("- command: `%s`" % meta["cmd"])
w("- machine: %s, `nproc` %s, Linux %s; 1-minute/5/15 load average %s at the start, %s at the end"
  % (meta["cpu"], meta["nproc"], meta["kernel"], meta["load0"], meta["load1"]))
pinning = ("server on CPU %s, client on CPU %s, tap %s" % (meta["server_cpu"], meta["client_cpu"],
           "on CPU " + meta["probe_cpu"] if meta.get("probe_cpu") else "unpinned")) if meta["pin"] == "1" else "nothing pinned"
w("- one bench_server and per size one bench_client, one connection, echoString back to back for the whole run "
  "(%s); %s; windows: off %s s, on %s s from %s s after the tap said it was ready to %s s before its SIGINT, "
  "off from %s s after it exited; calls by start time; %s on-windows per arm and size"
  % (", ".join("%s bytes %d calls" % (s, calls_total[s]) for s in sizes), pinning, meta["off"], meta["on"],
     meta["settle"], meta["drain"], meta["settle"], meta["pairs"]))
w("- spinner %s; *Δ*: on-window's percentile minus the mean of its two neighbouring off-windows' (µs); "
  "median over on-windows [interquartile range] (min .. max); CI: 95%% confidence interval of the median Δp50"
  % ("on (SCHED_IDLE, every CPU)" if meta["spin"] == "1" else "off"))
w("")
w("| size | arm | Δp50 | Δp90 | Δp99 | Δp50 95% CI | off p50 | on p50 | windows ok | tap saw |")
w("|---|---|---|---|---|---|---|---|---|---|")
summ = {}
for s in sizes:
    for a in arms:
        l = results.get((s, a), [])
        nrej = sum(1 for x in rejected if x[0] == s and x[1] == a)
        tot = len(l) + nrej
        if not l:
            w("| %s | %s | FAILED | | | | | | 0/%d | |" % (s, a, tot))
            continue
        cells = []
        for i in range(3):
            v = sorted(x[0][i] for x in l)
            q1, q3 = quart(v)
            cells.append("%+.1f [%+.1f, %+.1f] (%+.1f .. %+.1f)" % (med(v), q1, q3, v[0], v[-1]))
        v50 = sorted(x[0][0] for x in l)
        ci = ci_median(len(v50))
        cis = "%+.1f .. %+.1f" % (v50[ci[0] - 1], v50[ci[1] - 1]) if ci else "-"
        summ[(s, a)] = (med(v50), ci and (v50[ci[0] - 1], v50[ci[1] - 1]), [med(sorted(x[0][i] for x in l)) for i in range(3)], len(l), tot, v50)
        offp = med([(x[2][0] + x[3][0]) / 2 for x in l])
        onp = med([x[1][0] for x in l])
        sr = results.get((s, a, "seen"))
        seen_s = "%.4f-%.4f" % (min(sr), max(sr)) if sr else "-"
        flag = "" if len(l) == tot else " (%d rejected)" % (tot - len(l))
        w("| %s | %s | %s | %s | %s | %s | %.1f | %.1f | %d/%d%s | %s |" % (s, a, cells[0], cells[1], cells[2], cis, offp, onp, len(l), tot, flag, seen_s))
w("")
if cpu_res:
    w("CPU per call (ns; SPIN=1: all %d CPUs' time but the SCHED_IDLE spinners' run time, over the window's calls); "
      "*Δ*: on-window minus the mean of its two neighbouring off-windows, median [interquartile range] (min .. max), "
      "95%% CI of the median:" % nproc)
    w("")
    w("| size | arm | off | on | Δ CPU per call | Δ 95% CI | windows |")
    w("|---|---|---|---|---|---|---|")
    for s in sizes:
        for a in arms:
            l = cpu_res.get((s, a))
            if not l:
                continue
            v = sorted(x[0] for x in l)
            q1, q3 = quart(v)
            ci = ci_median(len(v))
            w("| %s | %s | %.0f | %.0f | %+.0f [%+.0f, %+.0f] (%+.0f .. %+.0f) | %s | %d |" % (
                s, a, med([x[2] for x in l]), med([x[1] for x in l]), med(v), q1, q3, v[0], v[-1],
                "%+.0f .. %+.0f" % (v[ci[0] - 1], v[ci[1] - 1]) if ci else "-", len(v)))
    w("")
w("*tap saw*: the tap's count of calls over the client's between the tap's ready line and its SIGINT, lowest and highest over the windows (at least %s to count; more than 1 when it also saw calls of its start-up and its drain)." % meta["min_seen"])
w("")
if rejected:
    w("Rejected on-windows (not in the figures):")
    w("")
    for s, a, k, why in rejected:
        w("- %s bytes, %s, window %d: %s" % (s, a, k, why))
    w("")
w("Off-windows' p50 (µs), the drift the neighbours take out: " + "; ".join(
    "%s bytes %.1f .. %.1f (median %.1f, %d windows)" % (s, min(noise[s]), max(noise[s]), med(noise[s]), len(noise[s]))
    for s in sizes if noise.get(s)))
w("")
w("Δp50 per on-window, in time order (µs): " + "; ".join(
    "%s %s bytes %s" % (a, s, " ".join("%+.1f" % x[0][0] for x in results[(s, a)])) for s in sizes for a in arms if (s, a) in results))
w("")
w("What it says:")
w("")
for s in sizes:
    if (s, "attach") in summ:
        m, ci, d, n, tot, v = summ[(s, "attach")]
        if ci:
            verdict = ("**holds**" if ci[1] < 2.0 else "**does not hold**" if ci[0] >= 2.0 else
                       "**cannot be decided** from this run (the interval straddles 2 µs)")
        else:
            verdict = "is not decided (too few windows)"
        w("- attach at %s bytes adds %+.1f µs at p50 (95%% CI %s; p90 %+.1f, p99 %+.1f) over %d on-windows: the target (under 2 µs at p50) %s."
          % (s, m, "%+.1f .. %+.1f" % ci if ci else "-", d[1], d[2], n, verdict))
for a in arms:
    if a in ("attach", "none"):
        continue
    l = ["%s bytes %+.1f (CI %s) / %+.1f / %+.1f" % (s, summ[(s, a)][0], "%+.1f .. %+.1f" % summ[(s, a)][1] if summ[(s, a)][1] else "-",
                                                   summ[(s, a)][2][1], summ[(s, a)][2][2]) for s in sizes if (s, a) in summ]
    if l:
        w("- %s adds (Δp50 / Δp90 / Δp99, µs): %s." % (a, "; ".join(l)))
for s in sizes:
    if (s, "none") in summ:
        m, ci, d, n, tot, v = summ[(s, "none")]
        if not ci:
            say = "too few windows to tell."
        elif ci[0] <= 0.0 <= ci[1]:
            say = "the method reads ~0 where nothing changes (its CI holds 0)."
        else:
            say = ("**not ~0** (its CI leaves 0 out): this run's windows read about %+.1f µs where nothing changes "
                   "(the machine's drift, or an order effect); read the rows above against it (attach − control: %s)."
                   % (m, "%+.1f µs at p50" % (summ[(s, "attach")][0] - m) if (s, "attach") in summ else "-"))
        w("- control (`sleep` toggled like a tap) at %s bytes: %+.1f µs at p50 (CI %s; p90 %+.1f, p99 %+.1f): %s"
          % (s, m, "%+.1f .. %+.1f" % ci if ci else "-", d[1], d[2], say))
body = "\n".join(out) + "\n<!-- bench-attach-toggle:end -->\n"
if out_path:
    tmp = out_path + ".tmp.%d" % os.getpid()
    open(tmp, "w").write(body)
    os.replace(tmp, out_path)
    print("attach_toggle: wrote %s" % out_path, file=sys.stderr)
else:
    sys.stdout.write(body)
# run by bench/run.sh (make bench): its section of BENCH_DOC replaced in place
doc = os.environ.get("BENCH_DOC", "")
if doc and not out_path:
    sys.path.insert(0, "bench")
    from doc_section import write_section
    write_section(doc, "bench-attach-toggle", body, "attach_toggle")
PY
