#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/soak/soak.sh -- `giopscope live` for hours on mixed omniORB load with a reply-less
# server that is killed and restarted now and then (`make soak`; never part of make check).
#
#   sudo SOAK_SECONDS=7200 BUILD=build tests/soak/soak.sh
#
# Two network namespaces joined by a veth (tests/lib/netns.sh). In the server namespace:
# the omniORB bench_server on PORT (2809) and tests/soak/noreply_server.py on NR_PORT
# (2810), which accepts connections and never answers; it is killed (SIGKILL) and a new one
# started every SOAK_RESTART seconds. In the client namespace, bounded loops of omniORB
# bench_client runs until the deadline: echoString(32), the mix of every operation (oneways,
# user and system exceptions, dead objects, slow calls), 20 KB octets (several segments), 4
# threads multiplexed on one connection with servant sleeps (replies out of order), and a
# client of the reply-less server whose every call times out (-ORBclientCallTimeOutPeriod).
# On the server's veth end, at the same time: `giopscope live --pairs` and tcpdump -w (the
# reference). Every SOAK_SAMPLE seconds live's VmRSS, RssAnon and RssFile go into rss.csv.
#
# At the end (clients stopped, the reply-less server killed, 2 s of quiet, then SIGINT to
# live and tcpdump), the checks:
#   - live exited 0 and was never restarted (one pid for the whole run);
#   - no call lost that the kernel delivered: live's calls = `giopscope read` of tcpdump's
#     file, as a multiset of (client, server, request_id, giop, kind, operation, oneway,
#     status, request_bytes, reply_bytes) -- time stamps left out: two packet sockets stamp
#     received packets at different instants (see live_vs_tcpdump.sh); when there are at
#     most SOAK_COMPARE_MAX rows, also tests/oracle/compare_pairs.py with the send-path stamps
#     within TOL_NS, as live_vs_tcpdump.sh does;
#   - kernel drops: live's "packets lost before the decoder" and tcpdump's "dropped by
#     kernel" must be 0; otherwise they are printed and the run fails (then the two lists
#     of calls may differ because a socket missed packets, which says nothing of giopscope);
#   - NO_REPLY rows exist (the reply-less server was called) and the server was restarted;
#   - RSS flat, two criteria on the samples, split into a first and a second half (same
#     load in both; the first also holds the start):
#     (a) VmRSS: max over the second half <= max over the first half x 1.05 + 1 MiB;
#     (b) RssAnon (VmRSS less the capture ring, a fixed mapping of 64 MiB, 128 MiB in
#         immediate mode, resident from the start, and the program's files): its growth
#         over the second half <= 0.75 x
#         its growth over the first half + 1 MiB.
#     Why (b): giopscope allocates every table once from its limits and the kernel makes
#     a page resident when it is first touched. The hash indexes (open calls: 8 MiB, flows:
#     512 KiB with the default limits) are touched at random places, so RssAnon rises
#     for a while, ever slower, and stops at their size: growth that slows down. A leak
#     under a constant load grows the same in both halves (ratio ~1) and fails (b) once it
#     is over 4 MiB per half: ~40 bytes per call at ~300 calls/s in 10 minutes, ~4 in two
#     hours. (a) alone would let 7 MiB pass unseen next to the ring. The least-squares
#     slope of RssAnon over the second half (KiB per hour) is printed too.
# Prints a summary (duration, calls, restarts, RSS samples, result); exit 0 pass, 1 fail,
# 77 skipped (not root, no namespaces, no omniORB or tcpdump).
#
# environment: SOAK_SECONDS (7200), SOAK_RESTART (60), SOAK_SAMPLE (10), SOAK_OUT (where
#   rss.csv, summary.txt and the logs are kept: $BUILD/soak), SOAK_COMPARE_MAX (500000),
#   TOL_NS (100000), SOAK_LIVE_ARGS (more options for live, e.g. --max-open-calls 65536),
#   GIOPSCOPE, BUILD, PORT, NR_PORT, NS_VERBOSE=1.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SECONDS_TOTAL=${SOAK_SECONDS:-7200}
RESTART=${SOAK_RESTART:-60}
SAMPLE=${SOAK_SAMPLE:-10}
OUT=${SOAK_OUT:-$BUILD/soak}
COMPARE_MAX=${SOAK_COMPARE_MAX:-500000}
TOL_NS=${TOL_NS:-100000}
PORT=${PORT:-2809}
NR_PORT=${NR_PORT:-2810}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client

. tests/lib/common.sh
. tests/lib/netns.sh

for tool in tcpdump python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (scripts/install-deps.sh check)"
done
[ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built (make; or set GIOPSCOPE)"
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    command -v omniidl >/dev/null 2>&1 || skip "omniORB (omniidl, libomniorb4-dev) not installed"
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || { echo "FAIL setup: cannot build the ORB apps"; exit 1; }
fi
case $SECONDS_TOTAL in '' | *[!0-9]*) echo "soak: SOAK_SECONDS must be a number of seconds" >&2; exit 2 ;; esac
[ "$SECONDS_TOTAL" -ge 60 ] || { echo "soak: SOAK_SECONDS must be at least 60" >&2; exit 2; }
ns_require

W=$(mktemp -d /tmp/gs-soak.XXXXXX) || exit 2
chmod 755 "$W"
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
LOOP_PIDS=""
soak_cleanup() {
    local p c
    touch "$W/stop" 2>/dev/null
    # the client loops: each one's current client first, then the loop itself (by pid)
    for p in $LOOP_PIDS; do
        c=$(cat "$W/loop.$p.child" 2>/dev/null)
        [ -n "$c" ] && kill -s TERM "$c" 2>/dev/null
        kill -s TERM "$p" 2>/dev/null
    done
    for p in $LOOP_PIDS; do wait "$p" 2>/dev/null; done
    LOOP_PIDS=""
    rm -rf "$W"
}
# shellcheck disable=SC2034  # read by tests/lib/netns.sh
NS_CLEANUP_HOOK=soak_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }

FAIL=()
fail() { FAIL+=("$*"); echo "soak: FAIL: $*"; }
log() { echo "soak: $(date -u +%H:%M:%S) $*"; }

# ---------------------------------------------------------------- servers
ns_start "$NS_SRV" "$W/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" \
    -o "$W/echo.ior" -d "$W/dead.ior"
SRV_PID=$NS_LAST_PID
ns_wait_file "$W/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 ||
    { echo "FAIL setup: bench_server did not start: $(tail -2 "$W/server.log")"; exit 1; }

NR_PID="" NR_STARTS=0
start_noreply() {
    rm -f "$W/noreply.ior"
    ns_start "$NS_SRV" "$W/noreply.$NR_STARTS.log" python3 tests/soak/noreply_server.py \
        "$NS_SRV_IP4" "$NR_PORT" "$W/noreply.ior"
    NR_PID=$NS_LAST_PID
    NR_STARTS=$((NR_STARTS + 1))
    ns_wait_file "$W/noreply.ior" 15 || { fail "the reply-less server did not start"; return 1; }
}
stop_noreply() {   # SIGKILL: the kernel closes its connections, their calls stay unanswered
    [ -n "$NR_PID" ] || return 0
    ns_stop "$NR_PID" KILL 5 2>/dev/null   # (the shell's "Killed" notice)
    NR_PID=""
}
start_noreply || exit 1

# ---------------------------------------------------------------- captures
ns_start "$NS_SRV" "$W/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode --time-stamp-precision=nano \
    -U -i "$NS_VETH_SRV" -w "$W/td.pcap" "tcp port $PORT or tcp port $NR_PORT"
TD_PID=$NS_LAST_PID
ns_wait_grep "$W/tcpdump.log" "listening on" 15 || { echo "FAIL setup: tcpdump did not start"; exit 1; }
# shellcheck disable=SC2086  # SOAK_LIVE_ARGS: more options for live, split on blanks
ip netns exec "$NS_SRV" "$GIOPSCOPE" live -i "$NS_VETH_SRV" --ports "$PORT,$NR_PORT" --pairs --summary ${SOAK_LIVE_ARGS:-} \
    -o "$W/live.csv" >"$W/live.out" 2>"$W/live.err" </dev/null &
LIVE_PID=$!
NS_PIDS="$NS_PIDS $LIVE_PID"
ns_wait_grep "$W/live.err" "listening on" 15 || { echo "FAIL setup: live did not start: $(tail -2 "$W/live.err")"; exit 1; }

# ---------------------------------------------------------------- load
T0=$(date +%s)
DEADLINE=$((T0 + SECONDS_TOTAL))
# loop NAME PAUSE CLIENT-ARGS...: bench_client runs, one after the other, until the
# deadline; each bounded by timeout; "client: calls=N bad=N" lines into NAME.calls
loop() {
    local name=$1 pause=$2 c
    shift 2
    while [ "$(date +%s)" -lt "$DEADLINE" ] && [ ! -e "$W/stop" ]; do
        timeout -k 5 120 ip netns exec "$NS_CLI" "$CLIENT" "$@" >"$W/$name.last" 2>&1 </dev/null &
        c=$!
        echo "$c" >"$W/loop.$BASHPID.child"
        wait "$c"
        echo "rc=$? $(grep '^client: calls=' "$W/$name.last")" >>"$W/$name.calls"
        sleep "$pause"
    done
}
startloop() {
    loop "$@" &
    LOOP_PIDS="$LOOP_PIDS $!"
}
# ~300 calls a second, ~0.3 MB/s on the wire (tcpdump's file: ~1 GB an hour)
startloop echo 0.5 -i "$W/echo.ior" -op echoString -size 32 -n 200
startloop mix 1 -i "$W/echo.ior" -d "$W/dead.ior" -op mix -size 200 -n 27 -threads 2
startloop octets 2 -i "$W/echo.ior" -op echoOctets -size 20000 -n 10
startloop mux 1 -ORBoneCallPerConnection 0 -ORBmaxGIOPConnectionPerServer 1 -i "$W/echo.ior" \
    -op slow -usecs 0,100,300,1000,2000,50 -n 25 -threads 4
# every reply-less server writes the same IOR (same address and object key): one copy serves
cp "$W/noreply.ior" "$W/noreply.fixed.ior"
startloop noreply 1 -ORBclientCallTimeOutPeriod 1500 -i "$W/noreply.fixed.ior" -op echoString -size 48 -n 4

log "running ${SECONDS_TOTAL} s: live pid $LIVE_PID, tcpdump pid $TD_PID, bench_server pid $SRV_PID"
echo "t_s,vmrss_kb,rssanon_kb,rssfile_kb,live_rows" >"$W/rss.csv"
next_sample=$T0 next_restart=$((T0 + RESTART)) RESTARTS=0 LIVE_GONE=0
while :; do
    now=$(date +%s)
    [ "$now" -ge "$DEADLINE" ] && break
    if [ "$now" -ge "$next_sample" ]; then
        if [ -r "/proc/$LIVE_PID/status" ]; then
            read -r rss anon file < <(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 }
                /^RssFile:/ { f = $2 } END { print r, a, f }' "/proc/$LIVE_PID/status")
            rows=$(($(wc -l <"$W/live.csv") - 1))
            echo "$((now - T0)),$rss,$anon,$file,$rows" >>"$W/rss.csv"
            [ $(((now - T0) % 300)) -lt "$SAMPLE" ] && log "t=$((now - T0)) s: VmRSS $rss KB, $rows calls written"
        else
            LIVE_GONE=1
            fail "giopscope live (pid $LIVE_PID) is gone after $((now - T0)) s: $(tail -2 "$W/live.err")"
            break
        fi
        next_sample=$((next_sample + SAMPLE))
    fi
    if [ "$now" -ge "$next_restart" ]; then
        stop_noreply
        start_noreply
        RESTARTS=$((RESTARTS + 1))
        next_restart=$((now + RESTART))
    fi
    sleep 1
done

# ---------------------------------------------------------------- stop
log "stopping the clients"
touch "$W/stop"
for p in $LOOP_PIDS; do
    # a client in progress finishes (bounded by its timeout)
    wait "$p" 2>/dev/null
done
LOOP_PIDS=""
stop_noreply
sleep 2
T_END=$(date +%s)
# where live's memory is, for the record
{ cat "/proc/$LIVE_PID/status"; echo; cat "/proc/$LIVE_PID/smaps_rollup"; echo
  awk '/^[0-9a-f]+-[0-9a-f]+ / { m = $0 } /^Rss:/ && $2 >= 1024 { print $2 " kB  " m }' "/proc/$LIVE_PID/smaps" | sort -rn
} >"$W/live.mem" 2>/dev/null
LIVE_CPU=$(awk '{ printf "%.1f", ($14 + $15) / 100 }' "/proc/$LIVE_PID/stat" 2>/dev/null || echo "?")
ns_stop "$LIVE_PID" INT 30
live_rc=$?
[ "$LIVE_GONE" = 1 ] || [ "$live_rc" = 0 ] || fail "giopscope live: exit status $live_rc after SIGINT"
ns_stop "$TD_PID" INT 30
ns_stop "$SRV_PID" TERM 20

# ---------------------------------------------------------------- checks
live_drop=$(sed -n 's/.*packets lost before the decoder: kernel \([0-9]*\), interface \([0-9]*\).*/\1+\2/p' "$W/live.err")
td_drop=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$W/tcpdump.log")
[ -z "$live_drop" ] || fail "live lost packets before the decoder (kernel+interface: $live_drop)"
[ "${td_drop:-x}" = 0 ] || fail "tcpdump dropped packets: ${td_drop:-no count}"

"$GIOPSCOPE" read -q "$W/td.pcap" --pairs --format csv -o "$W/td.csv" 2>"$W/td.err" ||
    fail "giopscope read of tcpdump's file: exit status $? $(head -2 "$W/td.err")"
td_bytes=$(stat -c %s "$W/td.pcap")
rm -f "$W/td.pcap"
live_rows=$(($(wc -l <"$W/live.csv") - 1))
td_rows=$(($(wc -l <"$W/td.csv") - 1))
# the multiset of calls without time stamps: columns 1-10 of the pairs CSV (docs/output.md)
keyed() { tail -n +2 "$1" | cut -d, -f1-10 | sort; }
keyed "$W/live.csv" >"$W/live.keys"
keyed "$W/td.csv" >"$W/td.keys"
only_live=$(comm -23 "$W/live.keys" "$W/td.keys" | wc -l)
only_td=$(comm -13 "$W/live.keys" "$W/td.keys" | wc -l)
if [ "$only_live" != 0 ] || [ "$only_td" != 0 ]; then
    fail "live and read(tcpdump) differ: $only_td calls only in tcpdump's, $only_live only in live's"
    { comm -13 "$W/live.keys" "$W/td.keys" | head -5 | sed 's/^/  only tcpdump: /'
      comm -23 "$W/live.keys" "$W/td.keys" | head -5 | sed 's/^/  only live:    /'; } >&2
fi
cmp_note="not run (more than $COMPARE_MAX rows)"
if [ "$td_rows" -le "$COMPARE_MAX" ]; then
    if python3 tests/oracle/compare_pairs.py --no-order --ignore \
        "retransmits,t_request_first,t_request_last,total_us,server_us" --tolerance-ns "$TOL_NS" \
        "$W/td.csv" "$W/live.csv" >"$W/compare.txt" 2>&1; then
        cmp_note=$(grep -m1 '^compare:' "$W/compare.txt")
    else
        cmp_note="FAILED: $(grep -m1 '^compare:' "$W/compare.txt" || tail -1 "$W/compare.txt")"
        fail "compare_pairs.py: $cmp_note"
    fi
fi
status_counts=$(tail -n +2 "$W/live.csv" | awk -F, '{ n[$8]++ } END { for (k in n) printf "%s %d, ", k, n[k] }' | sed 's/, $//')
no_reply=$(tail -n +2 "$W/live.csv" | awk -F, '$8 == "NO_REPLY"' | wc -l)
[ "$no_reply" -gt 0 ] || fail "no NO_REPLY row: the reply-less server was not called"
[ "$RESTARTS" -ge 1 ] || fail "the reply-less server was never restarted (SOAK_RESTART $RESTART s)"
client_calls=$(cat "$W"/*.calls 2>/dev/null | sed -n 's/.*client: calls=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
client_runs=$(cat "$W"/*.calls 2>/dev/null | wc -l)

# RSS: flat? (see the top for the two criteria)
rss_eval=$(awk -F, 'BEGIN { n = 0 }
NR > 1 { t[n] = $1; r[n] = $2; a[n] = $3; n++ }
END {
    if (n < 4) { print "FAIL 0 0 0 0 0 0 0 0 0"; exit }
    h = int(n / 2); m1 = 0; m2 = 0; min = r[0]
    for (i = 0; i < n; i++) { if (r[i] < min) min = r[i]; if (i < h) { if (r[i] > m1) m1 = r[i] } else if (r[i] > m2) m2 = r[i] }
    # least-squares slope of RssAnon over the second half, KiB per hour
    sx = sy = sxx = sxy = 0; k = n - h
    for (i = h; i < n; i++) { sx += t[i]; sy += a[i]; sxx += t[i] * t[i]; sxy += t[i] * a[i] }
    d = k * sxx - sx * sx; slope = d > 0 ? (k * sxy - sx * sy) / d * 3600 : 0
    g1 = a[h - 1] - a[0]; g2 = a[n - 1] - a[h]
    ok = (m2 <= m1 * 1.05 + 1024 && g2 <= 0.75 * g1 + 1024) ? "PASS" : "FAIL"
    printf "%s %d %d %d %d %d %.0f %d %d %d %d\n", ok, n, min, m1, m2, r[n - 1], slope, a[0], a[n - 1], g1, g2
}' "$W/rss.csv")
read -r rss_ok nsamp rss_min rss_m1 rss_m2 rss_last anon_slope anon_first anon_last anon_g1 anon_g2 <<<"$rss_eval"
[ "$rss_ok" = PASS ] || fail "RSS not flat: VmRSS max first half $rss_m1 KB, second half $rss_m2 KB (at most x 1.05 + 1 MiB); RssAnon growth first half $anon_g1 KB, second half $anon_g2 KB (at most 0.75 x + 1 MiB)"
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

cp "$W/rss.csv" "$W/live.err" "$W/live.mem" "$W/tcpdump.log" "$OUT/" 2>/dev/null
result=PASS
[ ${#FAIL[@]} -eq 0 ] || result=FAIL
{
    echo "soak: $(date -u +%Y-%m-%dT%H:%MZ), $((T_END - T0)) s of load (SOAK_SECONDS=$SECONDS_TOTAL), $(nproc) CPUs"
    echo "load: $client_runs bench_client runs, $client_calls calls made by the clients; the reply-less server started $NR_STARTS times (killed every $RESTART s)"
    echo "live: $live_rows calls written ($status_counts); CPU ${LIVE_CPU} s; exit $live_rc; drops: live ${live_drop:-none}, tcpdump ${td_drop:-?}"
    echo "reference: read(tcpdump) $td_rows calls from $((td_bytes / 1048576)) MiB; calls only in tcpdump's: $only_td, only in live's: $only_live; compare_pairs.py: $cmp_note"
    echo "RSS (live, every $SAMPLE s, $nsamp samples): VmRSS min $(mib "$rss_min") MiB, max first half $(mib "$rss_m1") MiB, max second half $(mib "$rss_m2") MiB, last $(mib "$rss_last") MiB; RssAnon $(mib "$anon_first") -> $(mib "$anon_last") MiB, growth first half $(mib "$anon_g1") MiB, second half $(mib "$anon_g2") MiB, slope over the second half $anon_slope KiB/h: $rss_ok"
    echo "result: $result${FAIL[*]:+ (${FAIL[*]})}"
} | tee "$OUT/summary.txt"
[ "$result" = PASS ]
