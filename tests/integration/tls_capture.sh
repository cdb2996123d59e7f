#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/tls_capture.sh -- IIOP over TLS (omniORB's SSLIOP transport) seen by the
# packet taps: `read`, `live` and `dpdk` recognise the TLS connections, count them in the
# summary ("N TLS connections: encrypted, use attach") and make no call of them.
#
# The rig: certificates made here with openssl (a CA, a server certificate); bench_server in a
# server namespace with two endpoints, giop:ssl:SRV:PORT and giop:tcp:SRV:PORT+1, loaded with
# omniORB's TLS transport (LD_PRELOAD of libomnisslTP4.so.2: the program is not linked with
# it); in the client namespace two TLS clients (the transport preloaded: they take the ssl
# endpoint) and one plain client (no transport: it takes the tcp endpoint). tcpdump and
# `giopscope live` on the server's veth at the same time.
#
# Checks:
#   - the calls work over TLS: every client exits 0 and logged every call with its expected
#     outcome; the servant counted the TLS clients' calls;
#   - the TLS port carried TLS: each of its connections opens with a TLS handshake record
#     (tshark decoding the port as TLS sees one ClientHello per SYN) and no GIOP magic is in
#     the clear on it;
#   - `read` of tcpdump's capture: "N TLS connections: encrypted, use attach" with N the SYNs
#     to the TLS port, `tls_connections` N in the JSON counters, the plain client's calls and
#     nothing else (--pairs: every row on the tcp port, as many rows as the plain client
#     logged calls, per operation), no malformed GIOP, no resync bytes;
#   - `read --ports TLS,PLAIN` (framing forced on those ports): the same;
#   - `live` on the veth: the same summary counts;
#   - `dpdk --vdev net_pcap0,rx_pcap=CAPTURE` (when built with DPDK): the same.
#
# usage: tests/integration/tls_capture.sh      environment: GIOPSCOPE, BUILD, PORT (2809),
#   KEEP_DIR (keep the files there), FAIL_DIR (default /tmp/gs-failing)
# Prints PASS/FAIL lines and "N passed, N failed"; exit 0, 1 on a failure, 77 when it cannot
# run here (not root, no namespaces, no omniORB TLS transport, no openssl).
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
KEEP_DIR=${KEEP_DIR:-}
PORT=${PORT:-2809}
PLAIN_PORT=$((PORT + 1))
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
NS_TAG=tls

. tests/lib/common.sh
. tests/lib/netns.sh
. tests/lib/keep_capture.sh
. tests/lib/tls_rig.sh

[ "$(id -u)" = 0 ] || skip "not root (namespaces need it)"
for tool in tcpdump tshark openssl python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (scripts/install-deps.sh check)"
done
tls_transport
[ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built"
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-tls.XXXXXX) || exit 2
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope

PASSED=0 FAILED=0
# check NAME CONDITION-OUTPUT: PASS when the function given printed nothing, else FAIL with it
result() {
    local name=$1 why=$2
    if [ -z "$why" ]; then
        echo "PASS $name"
        PASSED=$((PASSED + 1))
    else
        echo "FAIL $name: $(printf '%s\n' "$why" | head -n 1)"
        printf '%s\n' "$why" | tail -n +2 | head -20 | sed 's/^/    /'
        FAILED=$((FAILED + 1))
    fi
}

D=$WORK/run
mkdir -p "$D"

# --- certificates and the ORB options (tests/lib/tls_rig.sh)
tls_certs "$D"

# --- the run
ns_start "$NS_SRV" "$D/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
    --time-stamp-precision=nano -U -i "$NS_VETH_SRV" -w "$D/cap.pcap" \
    "tcp port $PORT or tcp port $PLAIN_PORT"
TD_PID=$NS_LAST_PID
ns_wait_grep "$D/tcpdump.log" "listening on" 15 || { echo "FAIL setup: tcpdump did not start"; exit 1; }
ip netns exec "$NS_SRV" "$GIOPSCOPE" live -i "$NS_VETH_SRV" --format jsonl >"$D/live.jsonl" 2>"$D/live.err" &
LIVE_PID=$!
NS_PIDS="$NS_PIDS $LIVE_PID"
ns_wait_grep "$D/live.err" "listening on" 15 || { echo "FAIL setup: live did not start: $(tail -n 2 "$D/live.err")"; exit 1; }

ns_start "$NS_SRV" "$D/server.log" env LD_PRELOAD="$SSLTP" "$SERVER" \
    -ORBendPoint "giop:ssl:$NS_SRV_IP4:$PORT" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PLAIN_PORT" \
    "${SSLOPTS[@]}" -o "$D/echo.ior" -d "$D/dead.ior"
SRV_PID=$NS_LAST_PID
if ! ns_wait_file "$D/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
    echo "FAIL setup: server did not start: $(tail -n 3 "$D/server.log")"
    exit 1
fi

client_rc=""
ns_run "$NS_CLI" 120 env LD_PRELOAD="$SSLTP" "$CLIENT" "${SSLOPTS[@]}" -i "$D/echo.ior" \
    -d "$D/dead.ior" -op mix -size 500 -n 27 -lat "$D/tls_mix.csv" -q >"$D/tls_mix.log" 2>&1
client_rc="$client_rc $?"
ns_run "$NS_CLI" 120 env LD_PRELOAD="$SSLTP" "$CLIENT" "${SSLOPTS[@]}" -i "$D/echo.ior" \
    -op slow -threads 2 -n 15 -usecs 200,2000 -lat "$D/tls_slow.csv" -q >"$D/tls_slow.log" 2>&1
client_rc="$client_rc $?"
ns_run "$NS_CLI" 120 "$CLIENT" -i "$D/echo.ior" -d "$D/dead.ior" -op mix -size 100 -n 18 \
    -lat "$D/plain.csv" -q >"$D/plain.log" 2>&1
client_rc="$client_rc $?"
sleep 0.3
ns_stop "$SRV_PID" TERM 20
kill -INT "$LIVE_PID" 2>/dev/null
for _ in $(seq 1 100); do ns_alive "$LIVE_PID" || break; sleep 0.1; done
ns_stop "$LIVE_PID" KILL 5 >/dev/null 2>&1
ns_stop "$TD_PID" INT 15
keep_capture "$D/cap.pcap" tls_capture

# --- the calls worked, over TLS
why=""
[ "$client_rc" = " 0 0 0" ] || why="clients exited$client_rc"$'\n'"$(tail -n 2 "$D"/*.log)"
tls_calls=$(( $(tail -n +2 "$D/tls_mix.csv" | wc -l) + $(tail -n +2 "$D/tls_slow.csv" | wc -l) ))
[ "$tls_calls" = 57 ] || why="${why:-the TLS clients logged $tls_calls calls, not 57}"
plain_calls=$(tail -n +2 "$D/plain.csv" | wc -l)
[ "$plain_calls" = 18 ] || why="${why:-the plain client logged $plain_calls calls, not 18}"
grep -q "calls=" "$D/server.log" || why="${why:-the server did not report its calls}"
result tls_calls_work "$why"

# --- the TLS port carried TLS, nothing in the clear
syns=$(tshark -r "$D/cap.pcap" -Y "tcp.flags.syn==1 && tcp.flags.ack==0 && tcp.dstport==$PORT" 2>/dev/null | wc -l)
hellos=$(tshark -r "$D/cap.pcap" -d "tcp.port==$PORT,tls" -Y "tls.handshake.type==1" 2>/dev/null | wc -l)
# segments that begin with an application-data record (TLS 1.2/1.3 record header 17 03 03)
appdata=$(tshark -r "$D/cap.pcap" -Y "tcp.port==$PORT && tcp.len>0 && tcp.payload[0:3] == 17:03:03" 2>/dev/null | wc -l)
clear_giop=$(tshark -r "$D/cap.pcap" -Y "tcp.port==$PORT && tcp.payload contains \"GIOP\"" 2>/dev/null | wc -l)
plain_syns=$(tshark -r "$D/cap.pcap" -Y "tcp.flags.syn==1 && tcp.flags.ack==0 && tcp.dstport==$PLAIN_PORT" 2>/dev/null | wc -l)
why=""
[ "$syns" -ge 2 ] || why="$syns connections to the TLS port (the two TLS clients make at least 2)"
[ "$hellos" = "$syns" ] || why="${why:-$hellos ClientHellos for $syns connections}"
[ "$appdata" -ge "$tls_calls" ] || why="${why:-$appdata segments of application data for $tls_calls calls}"
[ "$clear_giop" = 0 ] || why="${why:-$clear_giop segments on the TLS port hold GIOP in the clear}"
[ "$plain_syns" -ge 1 ] || why="${why:-no connection to the plain port}"
result tls_on_the_wire "$why"

# counters_check JSONL: the counters object says $syns TLS connections and $want_calls calls
# (the calls of read's --pairs, which are checked against the plain client's log)
counters_check() {
    python3 - "$1" "$syns" "$want_calls" <<'EOF'
import json, sys
path, tls, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c = None
for line in open(path):
    line = line.strip()
    if line.startswith("{"):
        o = json.loads(line)
        if o.get("type") == "counters":
            c = o
if c is None:
    print("no counters object in " + path)
    sys.exit(0)
bad = []
if c["tls_connections"] != tls:
    bad.append("tls_connections %d, expected %d" % (c["tls_connections"], tls))
if c["calls"] != calls:
    bad.append("calls %d, expected %d (read's calls of the plain client)" % (c["calls"], calls))
for k in ("malformed", "resync_bytes", "orphan_replies", "non_giop_connections"):
    if c[k] != 0:
        bad.append("%s %d" % (k, c[k]))
if bad:
    print("; ".join(bad))
EOF
}

# read: text summary line, JSON counters, pairs
"$GIOPSCOPE" read "$D/cap.pcap" >"$D/read.txt" 2>"$D/read.err"
"$GIOPSCOPE" read "$D/cap.pcap" --format jsonl >"$D/read.jsonl" 2>>"$D/read.err"
"$GIOPSCOPE" read "$D/cap.pcap" --pairs --format csv >"$D/read_pairs.csv" 2>>"$D/read.err"
want_calls=$(( $(wc -l <"$D/read_pairs.csv") - 1 ))
why=$(counters_check "$D/read.jsonl")
want_line="$syns TLS connections: encrypted, use attach"
grep -qx "$want_line" "$D/read.txt" || why="${why:-the summary lacks the line \"$want_line\"}"$'\n'"$(tail -n 8 "$D/read.txt")"
pairs_why=$(python3 - "$D/read_pairs.csv" "$D/plain.csv" "$PLAIN_PORT" <<'EOF'
import csv, sys
from collections import Counter
rows = list(csv.DictReader(open(sys.argv[1])))
logged = list(csv.DictReader(open(sys.argv[2])))
port = sys.argv[3]
off = [r for r in rows if not r["server"].endswith(":" + port)]
if off:
    print("%d calls not on the plain port, e.g. %s %s" % (len(off), off[0]["server"], off[0]["operation"]))
    sys.exit(0)
# omniORB verifies a new object reference with a LocateRequest (OBJECT_HERE, one per
# connection at most); a call on the dead object is a LocateRequest answered UNKNOWN_OBJECT;
# the client logs _non_existent as "nonexist"
names = {"nonexist": "_non_existent"}
got = Counter((r["operation"], r["status"]) for r in rows if r["kind"] == "Request")
got["dead"] = sum(1 for r in rows if r["kind"] == "LocateRequest" and r["status"] == "UNKNOWN_OBJECT")
status = {"NO_EXCEPTION": "NO_EXCEPTION", "ONEWAY": "ONEWAY", "USER_EXCEPTION:Busy": "USER_EXCEPTION",
          "NON_EXISTENT=0": "NO_EXCEPTION"}
want = Counter()
for l in logged:
    if l["op"] == "dead":
        want["dead"] += 1
    else:
        want[(names.get(l["op"], l["op"]), status.get(l["outcome"], l["outcome"]))] += 1
verify = [r for r in rows if r["kind"] == "LocateRequest" and r["status"] != "UNKNOWN_OBJECT"]
if got != want:
    print("calls per operation and status %s, the plain client logged %s" % (dict(got), dict(want)))
elif len(verify) > 1 or any(r["status"] != "OBJECT_HERE" for r in verify):
    print("LocateRequests other than one verification: %s" % [(r["status"]) for r in verify])
EOF
)
why=${why:-$pairs_why}
result read_counts_tls "$why"

"$GIOPSCOPE" read "$D/cap.pcap" --ports "$PORT,$PLAIN_PORT" --format jsonl >"$D/read_ports.jsonl" 2>"$D/read_ports.err"
result read_ports_forced "$(counters_check "$D/read_ports.jsonl")"

why=$(counters_check "$D/live.jsonl")
grep -q '"kernel_drops":0' "$D/live.jsonl" || why="${why:-live dropped packets (or wrote no counters)}"$'\n'"$(tail -n 3 "$D/live.err")"
result live_counts_tls "$why"

if "$GIOPSCOPE" dpdk --help >/dev/null 2>&1; then
    timeout -k 5 60 "$GIOPSCOPE" dpdk --vdev "net_pcap0,rx_pcap=$D/cap.pcap" --format jsonl \
        >"$D/dpdk.jsonl" 2>"$D/dpdk.err"
    rc=$?
    why=$(counters_check "$D/dpdk.jsonl")
    [ "$rc" = 0 ] || why="dpdk exit $rc"$'\n'"$(tail -n 3 "$D/dpdk.err")"
    result dpdk_counts_tls "$why"
else
    echo "SKIP dpdk_counts_tls: giopscope built without DPDK"
fi

if [ -n "$KEEP_DIR" ]; then
    mkdir -p "$KEEP_DIR" && cp -r "$D" "$KEEP_DIR/tls_capture"
fi
if [ "$FAILED" -gt 0 ]; then
    mkdir -p "$FAIL_DIR" && rm -rf "${FAIL_DIR:?}/tls_capture" && cp -r "$D" "$FAIL_DIR/tls_capture" &&
        echo "    files: $FAIL_DIR/tls_capture"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
