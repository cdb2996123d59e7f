#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/read_vs_tshark.sh -- `giopscope read` against Wireshark's GIOP dissector, on
# captures of real ORBs made while the test runs.
#
# Every scenario: start bench_server (omniORB) in a server network namespace, tcpdump on the
# server's side of a veth pair, run bench_client (omniORB) / combat_client.tcl (Combat) in a
# client namespace, stop the capture (tcpdump exits: everything is flushed), then
#     giopscope read CAP --pairs --format csv > ours.csv
#     python3 tests/oracle/tshark_pairs.py CAP -o exp.csv
#     python3 tests/oracle/compare_pairs.py exp.csv ours.csv
# and check the number of rows per operation (and per outcome) of both CSVs against the calls
# the clients logged in their latency CSVs, and the server's count of oneways.
#
# usage: tests/integration/read_vs_tshark.sh [--oracle-only] [--list] [SCENARIO...]
#   SCENARIO   run only these (default: all; --list prints them)
#   --oracle-only   do not run giopscope: validate the rig (captures, oracle, call counts) only
# environment:
#   GIOPSCOPE  the binary (default build/giopscope)    BUILD  build folder (default build)
#   ORACLE / COMPARE   the oracle scripts (default tests/oracle/tshark_pairs.py, compare_pairs.py)
#   KEEP_DIR   if set, every scenario's capture(s), oracle CSV, our CSV and logs are kept there
#   FAIL_DIR   failing scenarios' files are kept there (default /tmp/gs-failing)
#   PORT       server port (default 2809)          NS_VERBOSE=1  namespace chatter on stderr
#   CB_PORT    the callback clients' own ports: CB_PORT, CB_PORT+1 (default 2810; callback, bidir)
# Prints "PASS name" or "FAIL name: reason" (indented detail lines follow a FAIL), then
# "N passed, N failed" and the time taken; exit 0, 1 if anything failed, 77 if skipped.

# shellcheck disable=SC2317  # scenario bodies and hooks are called indirectly
set -u
export LC_ALL=C

cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
ORACLE=${ORACLE:-tests/oracle/tshark_pairs.py}
COMPARE=${COMPARE:-tests/oracle/compare_pairs.py}
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
KEEP_DIR=${KEEP_DIR:-}
PORT=${PORT:-2809}
CB_PORT=${CB_PORT:-2810}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
COMBAT=tests/orb/combat_client.tcl
CLIENT_TIMEOUT=${CLIENT_TIMEOUT:-120}

ALL_SCENARIOS="giop10 giop11 giop12 frag11 frag12 multiplexed oneway exceptions ipv6 any_sll2 pcapng combat callback bidir"

ORACLE_ONLY=0
WANT=""
for a in "$@"; do
    case "$a" in
        --oracle-only) ORACLE_ONLY=1 ;;
        --list) echo "$ALL_SCENARIOS" | tr ' ' '\n'; exit 0 ;;
        -h|--help) sed -n '3,26p' "$0"; exit 0 ;;
        -*) echo "read_vs_tshark: unknown option $a" >&2; exit 2 ;;
        *) case " $ALL_SCENARIOS " in
               *" $a "*) WANT="$WANT $a" ;;
               *) echo "read_vs_tshark: unknown scenario $a (--list)" >&2; exit 2 ;;
           esac ;;
    esac
done
[ -n "$WANT" ] || WANT=$ALL_SCENARIOS

. tests/lib/common.sh
. tests/lib/netns.sh
. tests/lib/keep_capture.sh

# ---------------------------------------------------------------- preconditions
for tool in tcpdump tshark editcap capinfos python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (scripts/install-deps.sh check)"
done
[ -f "$ORACLE" ] || skip "oracle $ORACLE not found"
if [ "$ORACLE_ONLY" = 0 ]; then
    [ -f "$COMPARE" ] || skip "compare script $COMPARE not found"
    [ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built (make; or set GIOPSCOPE)"
fi
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    if ! command -v omniidl >/dev/null 2>&1 || ! pkg-config --exists omniORB4 2>/dev/null; then
        skip "omniORB (omniidl, libomniorb4-dev) not installed"
    fi
    echo "read_vs_tshark: building the ORB apps" >&2
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || { echo "FAIL setup: cannot build the ORB apps"; exit 1; }
fi
HAVE_COMBAT=0
if command -v tclsh >/dev/null 2>&1 && echo 'package require combat' | tclsh >/dev/null 2>&1; then
    HAVE_COMBAT=1
fi
ns_require

T_START=$(date +%s.%N)
WORK=$(mktemp -d /tmp/gs-read-vs-tshark.XXXXXX) || exit 2
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
[ -n "$KEEP_DIR" ] && mkdir -p "$KEEP_DIR"

. tests/lib/scenario.sh
SC_RM_DIR=1
SKIPPED=0

# ---------------------------------------------------------------- per-scenario state and helpers
SRV_PID="" TD_PID="" DC_PID=""
LATS=()        # latency CSVs of this scenario's clients
SRV_ADDR=""
CAP_FILTER=""  # tcpdump filter of this scenario's capture

# the scenario bookkeeping (err, sc_begin, sc_end) is tests/lib/scenario.sh's; this script's own
# per-scenario state is reset and stopped here
sc_reset() {
    SRV_PID="" TD_PID="" DC_PID="" CLIENT_N=0
    LATS=()
    CAP_FILTER="tcp port $PORT"
}

# start_server [ADDR [ARGS...]]: bench_server in the server namespace on ADDR:PORT (default,
# or ADDR empty: IPv4), with ARGS (more bench_server / -ORB options)
start_server() {
    SRV_ADDR=${1:-$NS_SRV_IP4}
    [ $# -gt 0 ] && shift
    local ep="giop:tcp:$SRV_ADDR:$PORT"
    case "$SRV_ADDR" in *:*) ep="giop:tcp:[$SRV_ADDR]:$PORT" ;; esac
    rm -f "$SC_DIR/echo.ior" "$SC_DIR/dead.ior"
    ns_start "$NS_SRV" "$SC_DIR/server.log" "$SERVER" -ORBendPoint "$ep" \
        -o "$SC_DIR/echo.ior" -d "$SC_DIR/dead.ior" "$@"
    SRV_PID=$NS_LAST_PID
    echo "# server: bench_server -ORBendPoint $ep$([ $# -gt 0 ] && printf ' %q' "$@")" >>"$SC_DIR/commands.log"
    if ! ns_wait_file "$SC_DIR/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
        err "server did not start" "$(tail -3 "$SC_DIR/server.log")"
        return 1
    fi
}

# start_capture [IFACE] [FILE]: tcpdump in the server namespace (default: its veth end), filter
# CAP_FILTER (default "tcp port $PORT")
start_capture() {
    local ifc=${1:-$NS_VETH_SRV} file=${2:-$SC_DIR/cap.pcap}
    ns_start "$NS_SRV" "$SC_DIR/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
        --time-stamp-precision=nano -U -i "$ifc" -w "$file" "$CAP_FILTER"
    TD_PID=$NS_LAST_PID
    echo "# capture: tcpdump --time-stamp-precision=nano -U -i $ifc -w $(basename "$file") $CAP_FILTER" >>"$SC_DIR/commands.log"
    ns_wait_grep "$SC_DIR/tcpdump.log" "listening on" 15 ||
        { err "tcpdump did not start" "$(tail -3 "$SC_DIR/tcpdump.log")"; return 1; }
}

# stop_capture: let the last segments (FIN/ACK) arrive, then stop tcpdump and wait for it to exit
stop_capture() {
    sleep 0.3
    ns_stop "$TD_PID" INT 15
    TD_PID=""
    if ! grep -q "^0 packets dropped by kernel" "$SC_DIR/tcpdump.log"; then
        err "tcpdump dropped packets" "$(grep dropped "$SC_DIR/tcpdump.log")"
    fi
}

# stop_server: SIGTERM; the server must exit 0 and print its oneway count
stop_server() {
    ns_stop "$SRV_PID" TERM 20
    local rc=$?
    SRV_PID=""
    [ "$rc" = 0 ] || err "server exit status $rc after SIGTERM" "$(tail -3 "$SC_DIR/server.log")"
    grep -q "^server: fired=" "$SC_DIR/server.log" || err "server printed no summary"
}

# client [omni|combat] ARGS...: run a client in the client namespace, logging its calls to
# cN.lat.csv; the client must exit 0 and log as many rows as it reports calls, and its Callback
# servant must have served as many pings as its callMeBack calls asked for.
client() {
    local kind=omni
    case "${1:-}" in omni|combat) kind=$1; shift ;; esac
    CLIENT_N=$((CLIENT_N + 1))
    local lat=$SC_DIR/c$CLIENT_N.lat.csv log=$SC_DIR/c$CLIENT_N.log rc
    local -a cmd
    if [ "$kind" = combat ]; then
        cmd=(tclsh "$COMBAT" -idl tests/orb/bench.idl)
    else
        cmd=("$CLIENT")
    fi
    cmd+=(-i "$SC_DIR/echo.ior" -d "$SC_DIR/dead.ior" -lat "$lat" "$@")
    echo "# client c$CLIENT_N:$(printf ' %q' "${cmd[@]}")" >>"$SC_DIR/commands.log"
    ns_run "$NS_CLI" "$CLIENT_TIMEOUT" "${cmd[@]}" >"$log" 2>&1
    rc=$?
    LATS+=("$lat")
    if [ "$rc" != 0 ]; then
        err "client c$CLIENT_N ($kind ${*}) exit status $rc" "$(tail -3 "$log")"
        return 1
    fi
    local calls rows
    calls=$(sed -n 's/^client: calls=\([0-9]*\) .*/\1/p' "$log")
    rows=$(($(wc -l <"$lat") - 1))
    [ "$calls" = "$rows" ] || err "client c$CLIENT_N logged $rows rows for $calls calls"
    local pings want
    pings=$(sed -n 's/^client: calls=.* pings=\([0-9]*\).*/\1/p' "$log")
    want=$(awk -F, 'NR > 1 && $3 == "callMeBack" { n += $4 } END { print n + 0 }' "$lat")
    [ "${pings:-0}" = "$want" ] || err "client c$CLIENT_N served ${pings:-0} pings, its callMeBack calls asked for $want"
}

# count_check CSV WHAT: the rows per operation and outcome of a pairs CSV against the calls the
# clients logged (see check_counts.py below); WHAT names the CSV in messages.
count_check() {
    local out
    if ! out=$(python3 - "$1" "$SC_DIR/server.log" "$SRV_ADDR" "${LATS[@]}" <<'PY' 2>&1
import csv, sys, re
from collections import Counter
pairs, srvlog, srvaddr, lats = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = list(csv.DictReader(open(pairs, newline="")))
calls = Counter()
pings = 0            # ping calls the server makes back: N per callMeBack(cb, N)
for lat in lats:
    for r in csv.DictReader(open(lat, newline="")):
        calls[r["op"]] += 1
        if r["op"] == "callMeBack" and r["outcome"] == "NO_EXCEPTION":
            pings += int(r["size"])
calls["ping"] = pings

def host(ep):        # "10.1.2.3:2809" / "[fd00::2]:2809" -> address
    return ep.rsplit(":", 1)[0].strip("[]")
req = Counter()      # (operation, status) of Requests
loc = Counter()      # status of LocateRequests
bad = []
for r in rows:
    if r["kind"] == "Request":
        req[(r["operation"], r["status"])] += 1
    elif r["kind"] == "LocateRequest":
        loc[r["status"]] += 1
    else:
        bad.append("unknown kind %r" % r["kind"])
    if r["status"] in ("NO_REPLY", "CANCELLED"):
        bad.append("request %s %s %s: %s" % (r["client"], r["request_id"], r["operation"], r["status"]))
    if (r["operation"] == "fire") != (r["oneway"] == "1"):
        bad.append("request %s %s %s: oneway=%s" % (r["client"], r["request_id"], r["operation"], r["oneway"]))
    # who sent it: pings (and the LocateRequests verifying the callback object) come from the
    # server, everything else goes to it
    if srvaddr and r["kind"] == "Request" and r["operation"] == "ping" and host(r["client"]) != srvaddr:
        bad.append("ping %s %s -> %s: not sent by the server" % (r["request_id"], r["client"], r["server"]))
    if srvaddr and host(r["client"]) != srvaddr and host(r["server"]) != srvaddr:
        bad.append("request %s %s -> %s: the server is neither end" % (r["request_id"], r["client"], r["server"]))
    if srvaddr and r["operation"] not in ("", "ping") and host(r["server"]) != srvaddr:
        bad.append("request %s %s %s: not sent to the server" % (r["client"], r["request_id"], r["operation"]))

def n(op, st):
    return req.pop((op, st), 0)

want = {  # operation on the wire -> (lat op, status)
    "echoOctets": ("echoOctets", "NO_EXCEPTION"), "echoRecs": ("echoRecs", "NO_EXCEPTION"),
    "slow": ("slow", "NO_EXCEPTION"), "fire": ("fire", "ONEWAY"),
    "fail": ("fail", "USER_EXCEPTION"), "_non_existent": ("nonexist", "NO_EXCEPTION"),
    "echoString": ("echoString", "NO_EXCEPTION"), "callMeBack": ("callMeBack", "NO_EXCEPTION"),
    "ping": ("ping", "NO_EXCEPTION"),
}
for wop, (lop, st) in want.items():
    got = n(wop, st)
    if got != calls[lop]:
        bad.append("%s %s: %d rows, the clients made %d %s calls" % (wop, st, got, calls[lop], lop))
# dead: echoString on the deactivated object, a Request answered SYSTEM_EXCEPTION, or (omniORB
# verifying the object first) a LocateRequest answered UNKNOWN_OBJECT
dead = n("echoString", "SYSTEM_EXCEPTION") + loc.pop("UNKNOWN_OBJECT", 0)
if dead != calls["dead"]:
    bad.append("dead calls: %d rows (SYSTEM_EXCEPTION Requests + UNKNOWN_OBJECT LocateRequests), "
               "the clients made %d" % (dead, calls["dead"]))
here = loc.pop("OBJECT_HERE", 0)   # omniORB's first-use verification, one per connection/thread
                                   # (and the server's, one per callMeBack: a new Callback objref)
for k, v in sorted(req.items()):
    bad.append("unexpected Requests: %d x %s %s" % (v, k[0], k[1]))
for k, v in sorted(loc.items()):
    bad.append("unexpected LocateRequests: %d x %s" % (v, k))
m = re.search(r"server: fired=(\d+)", open(srvlog).read())
if m and int(m.group(1)) != calls["fire"]:
    bad.append("server counted %s oneways, clients sent %d" % (m.group(1), calls["fire"]))
print("%d rows (%d calls logged, %d pings, %d OBJECT_HERE LocateRequests)" % (
    len(rows), sum(calls.values()) - pings, pings, here))
for b in bad[:10]:
    print(b)
sys.exit(1 if bad else 0)
PY
    ); then
        err "$2: row counts differ from the clients' logs" "$(echo "$out" | sed '1d')"
        return 1
    fi
    echo "$out" | head -1 >>"$SC_DIR/counts.txt"
}

# fragments_seen CAP: how many GIOP Fragment messages tshark sees in CAP
fragments_seen() {
    tshark -r "$1" -n -o giop.reassemble:FALSE -Y "giop.type == 7" -T fields -e giop.type 2>/dev/null |
        tr ',' '\n' | grep -c '^7$'
}

# check_capture CAP NAME: the oracle's pairs must match the clients' logs; then giopscope's
# pairs must match the oracle's and the clients' logs. NAME labels the files kept.
check_capture() {
    local cap=$1 name=$2
    local exp=$SC_DIR/$name.expected.csv ours=$SC_DIR/$name.ours.csv
    # every capture checked here is also replayed through giopscope dpdk afterwards
    keep_capture "$cap" "read_vs_tshark-$SC-$name"
    if ! python3 "$ORACLE" "$cap" -o "$exp" >"$SC_DIR/$name.oracle.log" 2>&1; then
        err "oracle failed on $name" "$(tail -3 "$SC_DIR/$name.oracle.log")"
        return 1
    fi
    count_check "$exp" "oracle ($name)" || return 1
    [ "$ORACLE_ONLY" = 1 ] && return 0
    local rc
    "$GIOPSCOPE" read "$cap" --pairs --format csv >"$ours" 2>"$SC_DIR/$name.giopscope.err"
    rc=$?
    if [ "$rc" != 0 ]; then
        err "giopscope read $name: exit status $rc" "$(head -3 "$SC_DIR/$name.giopscope.err")"
    fi
    if ! python3 "$COMPARE" "$exp" "$ours" >"$SC_DIR/$name.compare.txt" 2>&1; then
        err "$name: $(grep -m1 '^score:' "$SC_DIR/$name.compare.txt" || tail -1 "$SC_DIR/$name.compare.txt")" \
            "$(grep -v '^score:' "$SC_DIR/$name.compare.txt" | head -12)"
    fi
    count_check "$ours" "giopscope ($name)"
}

sc_stop() {    # whatever a failed step left running
    [ -n "$TD_PID" ] && ns_stop "$TD_PID" INT 10
    [ -n "$DC_PID" ] && ns_stop "$DC_PID" INT 10
    [ -n "$SRV_PID" ] && ns_stop "$SRV_PID" TERM 10
    TD_PID="" DC_PID="" SRV_PID=""
}

# simple_scenario NAME BODY: server, capture on the server's veth, BODY (a function running the
# clients), stop capture and server, check the capture
simple_scenario() {
    local name=$1 body=$2
    sc_begin "$name"
    if start_server && start_capture; then
        "$body"
        stop_capture
        stop_server
        check_capture "$SC_DIR/cap.pcap" cap
    fi
    sc_end
}

# ---------------------------------------------------------------- scenarios
# GIOP 1.0 / 1.1 / 1.2: plain echoes on one connection, the mix (oneways, Busy, dead object,
# _non_existent) on a second with omniORB's object verification, and on a third without it.
body_giop() {
    local v=$1
    client -ORBmaxGIOPVersion "$v" -op echoString -size 40 -n 200
    client -ORBmaxGIOPVersion "$v" -op mix -size 24 -n 90
    client -ORBmaxGIOPVersion "$v" -ORBverifyObjectExistsAndType 0 -op mix -size 24 -n 45
}
body_giop10() { body_giop 1.0; }
body_giop11() { body_giop 1.1; }
body_giop12() { body_giop 1.2; }

# GIOP Fragments. omniORB 4.2 fragments a 1.1/1.2 message larger than its 8192-byte buffer:
# generic data as a chain of 8192-byte messages (first with the more-fragments flag, then
# Fragments); an octet sequence of 16384 bytes or more is sent "direct": one message with the
# more-fragments flag carrying all of it, then an empty Fragment. GIOP 1.0 cannot fragment.
body_frag() {
    local v=$1
    client -ORBmaxGIOPVersion "$v" -op echoRecs -size 2000 -n 20        # 32 KB: 4-message chains
    client -ORBmaxGIOPVersion "$v" -op echoOctets -size 12000 -n 20     # 8192 + one Fragment
    client -ORBmaxGIOPVersion "$v" -op echoOctets -size 100000 -n 20    # direct + empty Fragment
    client -ORBmaxGIOPVersion "$v" -op echoString -size 20000 -n 20     # string chains
    # several threads on one connection: fragmented messages of different requests in flight
    client -ORBmaxGIOPVersion "$v" -ORBoneCallPerConnection 0 -ORBmaxGIOPConnectionPerServer 1 \
        -op echoRecs -size 1000 -n 15 -threads 4
}
scenario_frag() {
    local name=$1 v=$2
    sc_begin "$name"
    if start_server && start_capture; then
        body_frag "$v"
        stop_capture
        stop_server
        local nf
        nf=$(fragments_seen "$SC_DIR/cap.pcap")
        echo "fragments: $nf" >>"$SC_DIR/counts.txt"
        [ "${nf:-0}" -gt 0 ] || err "no GIOP Fragment messages in the capture (tshark)"
        check_capture "$SC_DIR/cap.pcap" cap
    fi
    sc_end
}

# 8 threads on one connection, servant sleeps of different lengths: replies out of order
body_multiplexed() {
    client -ORBoneCallPerConnection 0 -ORBmaxGIOPConnectionPerServer 1 \
        -op slow -usecs 0,100,300,1000,2000,5000,700,50 -n 40 -threads 8
}

# oneways: GIOP 1.2 (response_flags 0) and 1.0 (response_expected false), small and large
body_oneway() {
    client -op fire -size 200 -n 150
    client -ORBmaxGIOPVersion 1.0 -op fire -size 20 -n 100
    client -ORBmaxGIOPVersion 1.1 -op fire -size 30000 -n 20           # fragmented oneways
    client -op mix -size 24 -n 45
}

# exceptions: USER_EXCEPTION (Busy), SYSTEM_EXCEPTION (OBJECT_NOT_EXIST on a Request), and
# LocateReply UNKNOWN_OBJECT (the same dead object, with omniORB's verification on)
body_exceptions() {
    client -op fail -n 60
    client -ORBverifyObjectExistsAndType 0 -op dead -size 10 -n 40
    client -op dead -size 10 -n 40
    client -ORBverifyObjectExistsAndType 0 -op mix -size 24 -n 90
    client -ORBmaxGIOPVersion 1.0 -op mix -size 24 -n 45
}

# IPv6: the server listens on [fd00::2]
scenario_ipv6() {
    sc_begin ipv6
    if start_server "$NS_SRV_IP6" && start_capture; then
        client -op echoString -size 32 -n 200
        client -op mix -size 24 -n 45
        client -ORBmaxGIOPVersion 1.1 -op echoRecs -size 1000 -n 10
        stop_capture
        stop_server
        if ! tshark -r "$SC_DIR/cap.pcap" -n -c 1 -Y "ipv6.src == $NS_CLI_IP6" 2>/dev/null | grep -q .; then
            err "no IPv6 traffic in the capture"
        fi
        check_capture "$SC_DIR/cap.pcap" cap
    fi
    sc_end
}

# tcpdump -i any: Linux cooked capture v2 (LINUX_SLL2)
scenario_any_sll2() {
    sc_begin any_sll2
    if start_server && start_capture any; then
        client -op echoString -size 32 -n 200
        client -op mix -size 24 -n 45
        client -ORBmaxGIOPVersion 1.1 -op echoOctets -size 20000 -n 10
        stop_capture
        stop_server
        local enc
        enc=$(capinfos -E "$SC_DIR/cap.pcap" 2>/dev/null | sed -n 's/^File encapsulation: *//p')
        echo "encapsulation: $enc" >>"$SC_DIR/counts.txt"
        case "$enc" in
            *"cooked-mode capture v2"*) ;;
            *) err "capture link type is '$enc', not Linux cooked v2 (LINUX_SLL2)" ;;
        esac
        tcpdump -r "$SC_DIR/cap.pcap" -c 1 2>&1 >/dev/null | grep -q "LINUX_SLL2" ||
            err "tcpdump -r does not report LINUX_SLL2"
        check_capture "$SC_DIR/cap.pcap" cap
    fi
    sc_end
}

# pcapng: tcpdump's nanosecond capture converted with editcap (if_tsresol 9), the same traffic
# captured by dumpcap, which writes pcapng natively (dumpcap 4.0: nanosecond if_tsresol too),
# and the capture cut to microseconds (editcap -F pcap), as classic pcap and as pcapng
# (if_tsresol 6)
scenario_pcapng() {
    sc_begin pcapng
    local have_dumpcap=0
    if start_server && start_capture; then
        if command -v dumpcap >/dev/null 2>&1; then
            ns_start "$NS_SRV" "$SC_DIR/dumpcap.log" dumpcap -q -n -i "$NS_VETH_SRV" -f "tcp port $PORT" \
                -w "$SC_DIR/dumpcap.pcapng"
            DC_PID=$NS_LAST_PID
            # "Capturing on" comes before the capture is open: its file's header is written
            # once it is (a loaded machine missed the first 160 calls without this wait)
            local w
            for ((w = 0; w < 150; w++)); do
                [ -s "$SC_DIR/dumpcap.pcapng" ] && break
                sleep 0.1
            done
            if ns_wait_grep "$SC_DIR/dumpcap.log" "Capturing on" 15 && [ -s "$SC_DIR/dumpcap.pcapng" ]; then
                sleep 0.3
                have_dumpcap=1
            else
                err "dumpcap did not start" "$(tail -3 "$SC_DIR/dumpcap.log")"
            fi
        fi
        client -op echoString -size 32 -n 200
        client -op mix -size 24 -n 45
        client -ORBmaxGIOPVersion 1.2 -op echoRecs -size 1000 -n 10
        stop_capture
        if [ -n "$DC_PID" ]; then
            ns_stop "$DC_PID" INT 15
            DC_PID=""
        fi
        stop_server
        if editcap -F pcapng "$SC_DIR/cap.pcap" "$SC_DIR/cap.pcapng" >"$SC_DIR/editcap.log" 2>&1; then
            capinfos -t "$SC_DIR/cap.pcapng" 2>/dev/null | grep -q "pcapng" ||
                err "editcap did not write pcapng"
            check_capture "$SC_DIR/cap.pcapng" cap_editcap
        else
            err "editcap -F pcapng failed" "$(tail -3 "$SC_DIR/editcap.log")"
        fi
        if [ "$have_dumpcap" = 1 ]; then
            check_capture "$SC_DIR/dumpcap.pcapng" dumpcap
        fi
        # microsecond timestamps: classic pcap (magic a1b2c3d4) and pcapng with if_tsresol 6
        if editcap -F pcap "$SC_DIR/cap.pcap" "$SC_DIR/cap_usec.pcap" >>"$SC_DIR/editcap.log" 2>&1 &&
           editcap -F pcapng "$SC_DIR/cap_usec.pcap" "$SC_DIR/cap_usec.pcapng" >>"$SC_DIR/editcap.log" 2>&1; then
            capinfos "$SC_DIR/cap_usec.pcapng" 2>/dev/null | grep -q "precision: *microseconds" ||
                err "cap_usec.pcapng does not have microsecond timestamps"
            check_capture "$SC_DIR/cap_usec.pcap" cap_usec_pcap
            check_capture "$SC_DIR/cap_usec.pcapng" cap_usec_pcapng
        else
            err "editcap (microsecond conversion) failed" "$(tail -3 "$SC_DIR/editcap.log")"
        fi
    fi
    sc_end
}

# Combat (Tcl): GIOP 1.2 from a second implementation, request ids 1, 2, 3..., no
# LocateRequest, oneways coalesced with the next request in one segment, 4 KB writes
scenario_combat() {
    if [ "$HAVE_COMBAT" = 0 ]; then
        echo "SKIP combat: tcl-combat not installed"
        SKIPPED=$((SKIPPED + 1))
        return 0
    fi
    sc_begin combat
    if start_server && start_capture; then
        client combat -op echoString -size 32 -n 150
        client combat -op mix -size 24 -n 90
        client combat -op echoOctets -size 30000 -n 10
        client -op echoString -size 32 -n 50       # an omniORB client alongside
        stop_capture
        stop_server
        check_capture "$SC_DIR/cap.pcap" cap
    fi
    sc_end
}

# Callbacks: callMeBack(cb, N) makes the server call cb->ping(i) N times on the client's own
# Callback servant. The server (a client now) first verifies each new callback reference with a
# LocateRequest.
#   callback  plain GIOP: the server opens a second connection, to the client's endpoint
#             (giop:tcp:CLIENT_IP:CB_PORT), and sends its LocateRequests and pings there. Each
#             callback client gets a port of its own (CB_PORT, CB_PORT+1): omniORB does not watch
#             its idle outgoing connections, so a second client on the same address would get
#             the first one's callback connection reused, closed (CloseConnection, FIN) as it is:
#             a LocateRequest answered by a RST (NO_REPLY), then the retry on a new connection.
#   bidir     bidirectional GIOP 1.2: the client offers it (-ORBofferBiDirectionalGIOP 1, bidir in
#             its clientTransportRule, the servant in a BiDirectional-policy POA; the first Request
#             carries a BI_DIR_IIOP service context listing CLIENT_IP:CB_PORT), the server accepts
#             it (-ORBacceptBiDirectionalGIOP 1, bidir in its serverTransportRule, its objects in
#             a BiDirectional-policy POA) and sends the LocateRequests and pings back over the
#             client's connection, with odd request ids; nothing connects to CB_PORT
BIDIR_RULE="* unix,ssl,tcp,bidir"

# callback_check CAP MODE: the connections the callbacks used, from tshark's packets (SYNs,
# BI_DIR_IIOP service contexts, the frames carrying ping Requests) and from the pairs CSVs of
# the oracle and of giopscope
callback_check() {
    local cap=$1 mode=$2 out
    local -a csvs=("$SC_DIR/cap.expected.csv")
    [ "$ORACLE_ONLY" = 0 ] && [ -s "$SC_DIR/cap.ours.csv" ] && csvs+=("$SC_DIR/cap.ours.csv")
    if ! tshark -r "$cap" -n -o tcp.try_heuristic_first:TRUE -T fields -E separator=/t \
            -e tcp.stream -e tcp.srcport -e tcp.dstport -e tcp.flags.syn -e tcp.flags.ack \
            -e giop.request_op -e giop.iiop.sc.scid -e giop.minor_version -e giop.type \
            >"$SC_DIR/cap.conns.txt" 2>"$SC_DIR/cap.conns.err"; then
        err "tshark failed on the capture" "$(tail -3 "$SC_DIR/cap.conns.err")"
        return 1
    fi
    if ! out=$(python3 - "$mode" "$PORT" "$CB_PORT,$((CB_PORT + 1))" "$SRV_ADDR" "$NS_CLI_IP4" "$SC_DIR/cap.conns.txt" "${csvs[@]}" <<'PY' 2>&1
import csv, sys
mode, port, srv, cli, conns = sys.argv[1], int(sys.argv[2]), sys.argv[4], sys.argv[5], sys.argv[6]
cbports = {int(p) for p in sys.argv[3].split(",")}   # the clients' own endpoints
csvs = sys.argv[7:]
bad = []
def split(v):
    return [x for x in v.split(",") if x] if v else []
# --- tshark, per packet
syn_to = {}                  # destination port -> connections opened
streams = set()
cmb_streams, ping_streams, bidir_streams = set(), set(), set()
ping_dirs = set()            # (srcport == PORT, dstport in cbports) of the frames with a ping Request
minors = set()
for line in open(conns):
    f = line.rstrip("\n").split("\t")
    if len(f) < 9 or not f[0]:
        continue
    st, sp, dp = int(f[0]), int(f[1]), int(f[2])
    streams.add(st)
    if f[3] in ("1", "True") and f[4] in ("0", "False"):
        syn_to[dp] = syn_to.get(dp, 0) + 1
    ops = split(f[5])
    if "callMeBack" in ops:
        cmb_streams.add(st)
    if "ping" in ops:
        ping_streams.add(st)
        ping_dirs.add((sp == port, dp in cbports))
    if 5 in {int(x, 0) for x in split(f[6])} and dp == port:    # BI_DIR_IIOP, client -> server
        bidir_streams.add(st)
    # GIOP versions of the messages but CloseConnection (omniORB closes an accepted connection
    # that has seen no Request with a GIOP 1.0 CloseConnection)
    minors.update(m for m, t in zip(split(f[7]), split(f[8])) if t != "5")
facts = "connections opened to %s, %d callMeBack / %d ping / %d BI_DIR_IIOP connections, GIOP 1.%s" % (
    ", ".join("%d: %d" % kv for kv in sorted(syn_to.items())), len(cmb_streams), len(ping_streams),
    len(bidir_streams), "/1.".join(sorted(minors)))
if not cmb_streams or not ping_streams:
    bad.append("tshark: no callMeBack or no ping Requests")
if mode == "bidir":
    if any(syn_to.get(p) for p in cbports):
        bad.append("tshark: connections to the clients' ports %s (bidir: expected none)" % sorted(cbports & set(syn_to)))
    if set(syn_to) - {port}:
        bad.append("tshark: connections opened to ports %s" % sorted(set(syn_to) - {port}))
    if not ping_streams <= cmb_streams:
        bad.append("tshark: pings on connections %s that carry no callMeBack" % sorted(ping_streams - cmb_streams))
    if ping_dirs != {(True, False)}:
        bad.append("tshark: ping Requests not (only) sent from the server's port %d: %s" % (port, sorted(ping_dirs)))
    if not cmb_streams <= bidir_streams:
        bad.append("tshark: callMeBack connections %s without a BI_DIR_IIOP service context" % sorted(cmb_streams - bidir_streams))
    if minors != {"2"}:
        bad.append("tshark: GIOP versions 1.%s (bidir: 1.2 only)" % "/1.".join(sorted(minors)))
else:
    if not any(syn_to.get(p) for p in cbports):
        bad.append("tshark: no connection to the clients' ports %s" % sorted(cbports))
    if ping_streams & cmb_streams:
        bad.append("tshark: pings on the callMeBack connections %s" % sorted(ping_streams & cmb_streams))
    if ping_dirs != {(False, True)}:
        bad.append("tshark: ping Requests not (only) sent to the clients' ports: %s" % sorted(ping_dirs))
    if bidir_streams:
        bad.append("tshark: BI_DIR_IIOP service contexts on %d connections" % len(bidir_streams))
# --- the pairs CSVs
def host(ep):
    return ep.rsplit(":", 1)[0].strip("[]")
def eport(ep):
    return int(ep.rsplit(":", 1)[1])
for path in csvs:
    name = "oracle" if path.endswith(".expected.csv") else "giopscope"
    rows = list(csv.DictReader(open(path, newline="")))
    conns_to_srv = {(r["client"], r["server"]) for r in rows if eport(r["server"]) == port}
    from_srv = [r for r in rows if host(r["client"]) == srv]   # the server's own requests
    if not any(r["operation"] == "ping" for r in from_srv):
        bad.append("%s: no ping Requests from the server" % name)
    for r in from_srv:
        what = "%s: %s %s %s -> %s" % (name, r["operation"] or r["kind"], r["request_id"], r["client"], r["server"])
        if mode == "bidir":
            if (r["server"], r["client"]) not in conns_to_srv:
                bad.append(what + ": not on a client's connection to the server")
            if int(r["request_id"]) % 2 != 1:
                bad.append(what + ": even request id on a bidirectional connection")
        else:
            if eport(r["client"]) == port or host(r["server"]) != cli or eport(r["server"]) not in cbports:
                bad.append(what + ": not on a connection to a client's endpoint")
            if int(r["request_id"]) % 2 != 0:
                bad.append(what + ": odd request id from the connection's initiator")
    for r in rows:
        if mode == "bidir" and r["giop"] != "1.2":
            bad.append("%s: %s %s: GIOP %s" % (name, r["client"], r["request_id"], r["giop"]))
        if host(r["client"]) != srv and int(r["request_id"]) % 2 != 0:
            bad.append("%s: %s %s: odd request id from a client" % (name, r["client"], r["request_id"]))
print(facts)
for b in bad[:10]:
    print(b)
sys.exit(1 if bad else 0)
PY
    ); then
        err "$mode: callbacks not on the expected connections" "$(echo "$out" | sed '1d')"
        return 1
    fi
    echo "$out" | head -1 >>"$SC_DIR/counts.txt"
}

# scenario_callback NAME MODE: 30 callMeBack(cb, 5) (150 pings), 50 echoString, and 3 threads
# x 20 callMeBack(cb, 3) sharing one connection (calls and pings of the threads interleaved)
scenario_callback() {
    local name=$1 mode=$2
    local -a srv_opts=() cli_opts=()
    if [ "$mode" = bidir ]; then
        srv_opts=(-bidir -ORBacceptBiDirectionalGIOP 1 -ORBserverTransportRule "$BIDIR_RULE")
        cli_opts=(-bidir -ORBofferBiDirectionalGIOP 1 -ORBclientTransportRule "$BIDIR_RULE")
    fi
    sc_begin "$name"
    CAP_FILTER="tcp port $PORT or tcp port $CB_PORT or tcp port $((CB_PORT + 1))"
    if start_server "" "${srv_opts[@]}" && start_capture; then
        client -ORBendPoint "giop:tcp:$NS_CLI_IP4:$CB_PORT" "${cli_opts[@]}" -op callback -size 5 -n 30
        client -op echoString -size 32 -n 50
        client -ORBendPoint "giop:tcp:$NS_CLI_IP4:$((CB_PORT + 1))" "${cli_opts[@]}" \
            -ORBoneCallPerConnection 0 -ORBmaxGIOPConnectionPerServer 1 \
            -op callback -size 3 -n 20 -threads 3
        stop_capture
        stop_server
        check_capture "$SC_DIR/cap.pcap" cap
        callback_check "$SC_DIR/cap.pcap" "$mode"
    fi
    sc_end
}

for sc in $WANT; do
    case "$sc" in
        giop10|giop11|giop12|multiplexed|oneway|exceptions) simple_scenario "$sc" "body_$sc" ;;
        frag11) scenario_frag frag11 1.1 ;;
        frag12) scenario_frag frag12 1.2 ;;
        ipv6) scenario_ipv6 ;;
        any_sll2) scenario_any_sll2 ;;
        pcapng) scenario_pcapng ;;
        combat) scenario_combat ;;
        callback) scenario_callback callback plain ;;
        bidir) scenario_callback bidir bidir ;;
    esac
done

T_END=$(date +%s.%N)
echo "$PASSED passed, $FAILED failed$([ "$SKIPPED" -gt 0 ] && echo ", $SKIPPED skipped")"
echo "time: $(awk -v a="$T_START" -v b="$T_END" 'BEGIN { printf "%.1f s", b - a }')"
[ "$FAILED" -gt 0 ] && exit 1
[ "$PASSED" -eq 0 ] && exit 77
exit 0
