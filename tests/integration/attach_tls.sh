#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_tls.sh -- `giopscope attach` on omniORB processes speaking IIOP over
# TLS (SSLIOP: omniORB's libomnisslTP4 preloaded, OpenSSL 3): the uprobes on libssl's
# SSL_write/SSL_read give every call as on plain IIOP.
#
# The rig: certificates made here with openssl; bench_server on giop:ssl in a server namespace,
# bench_client (TLS) in a client namespace, a veth between; tcpdump on the server's veth. One
# `attach --pid SERVER` for the run; one `attach --pid CLIENT` per client (a client waits on
# its IOR file, a FIFO, until its attach is ready: its libssl is mapped by then). Clients:
# slow(usec) with sleeps of 300 and 3000 us, then the mix (echo, oneway, user exception,
# dead object, _non_existent).
#
# Checks:
#   - the clients' calls all worked (exit 0) over TLS;
#   - client side: every call the client logged is one row of its attach (plus omniORB's one
#     LocateRequest that verifies a new reference), in order, with its operation and status;
#     the row's t_client_send and t_client_recv lie inside the client's own call (its log's
#     t_start_ns..t_end_ns); client_syscall_us >= total_us;
#   - server side: the same calls, found by (client endpoint, request id) -- the request ids
#     are the plaintext's, the same on both sides; for every answered call
#     client_syscall_us (client's attach) >= total_us >= server_process_us (server's attach);
#     server_process_us >= the servant's sleep for every slow call;
#   - `read` of tcpdump's capture of the same run: "N TLS connections" (N the connections to
#     the TLS port) and no call of them;
#   - plain IIOP unchanged: the server also has a giop:tcp endpoint (PORT+1) that a client
#     without the TLS transport uses while the server's attach has its TLS probes in place:
#     those calls in the server's attach equal `read`'s of the capture (compare_pairs.py, the
#     first 19 columns, time stamps within 1 ms as in attach_ebpf.sh).
#
# usage: tests/integration/attach_tls.sh       environment: GIOPSCOPE, BUILD, PORT (2809),
#   KEEP_DIR (keep the files there), FAIL_DIR (default /tmp/gs-failing)
# Prints PASS/FAIL lines and "N passed, N failed"; exit 0, 1 on a failure, 77 when it cannot
# run here (not root, no eBPF in the build, no BTF, no namespaces, no omniORB TLS transport).
# shellcheck disable=SC2317  # work_cleanup is called by tests/lib/netns.sh
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
KEEP_DIR=${KEEP_DIR:-}
PORT=${PORT:-2809}
PLAIN_PORT=$((PORT + 1))
COMPARE=${COMPARE:-tests/oracle/compare_pairs.py}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
NS_TAG=tla

. tests/lib/common.sh
. tests/lib/netns.sh
. tests/lib/keep_capture.sh
. tests/lib/tls_rig.sh

attach_require tcpdump openssl python3 timeout mkfifo
tls_transport
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-attach-tls.XXXXXX) || exit 2
ATT_PIDS=""
# shellcheck disable=SC2034  # read by work_cleanup (tests/lib/common.sh)
WORK_PID_VARS="ATT_PIDS"
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
D=$WORK/run
mkdir -p "$D"

PASSED=0 FAILED=0
result() {
    local name=$1 why=$2
    if [ -z "$why" ]; then
        echo "PASS $name"
        PASSED=$((PASSED + 1))
    else
        echo "FAIL $name: $(printf '%s\n' "$why" | head -n 1)"
        printf '%s\n' "$why" | tail -n +2 | head -25 | sed 's/^/    /'
        FAILED=$((FAILED + 1))
    fi
}
finish() {
    if [ -n "$KEEP_DIR" ]; then
        mkdir -p "$KEEP_DIR" && rm -rf "${KEEP_DIR:?}/attach_tls" && cp -r "$D" "$KEEP_DIR/attach_tls"
    fi
    if [ "$FAILED" -gt 0 ]; then
        mkdir -p "$FAIL_DIR" && rm -rf "${FAIL_DIR:?}/attach_tls" && cp -r "$D" "$FAIL_DIR/attach_tls" &&
            echo "    files: $FAIL_DIR/attach_tls"
    fi
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
    exit
}

# --- certificates and the ORB options (tests/lib/tls_rig.sh)
tls_certs "$D"

# start_attach NAME PID: `giopscope attach --pid PID` (pairs CSV NAME.csv, stderr NAME.err);
# waits (bounded) until everything is attached
start_attach() {
    local name=$1 pid=$2
    "$GIOPSCOPE" attach --pid "$pid" --pairs --format csv -o "$D/$name.csv" -q 2>"$D/$name.err" &
    LAST_ATT=$!
    ATT_PIDS="$ATT_PIDS $LAST_ATT"
    ns_wait_attached "$D/$name.err" "$LAST_ATT"
}

# wait_gone PID SECONDS: bounded wait for a process to end; its exit status in GONE_RC
wait_gone() {
    local pid=$1 t=$2
    for _ in $(seq 1 $((t * 10))); do
        ns_alive "$pid" || break
        sleep 0.1
    done
    if ns_alive "$pid"; then
        kill -KILL "$pid" 2>/dev/null
        GONE_RC=137
    else
        GONE_RC=0
    fi
    wait "$pid" 2>/dev/null
    local rc=$?
    [ "$GONE_RC" = 0 ] && GONE_RC=$rc
    NS_PIDS=$(echo "$NS_PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
    ATT_PIDS=$(echo "$ATT_PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
}

# --- the run
ns_start "$NS_SRV" "$D/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
    --time-stamp-precision=nano -U -i "$NS_VETH_SRV" -w "$D/cap.pcap" "tcp port $PORT or tcp port $PLAIN_PORT"
TD_PID=$NS_LAST_PID
ns_wait_grep "$D/tcpdump.log" "listening on" 15 || { echo "FAIL setup: tcpdump did not start"; exit 1; }
ns_start "$NS_SRV" "$D/server.log" env LD_PRELOAD="$SSLTP" "$SERVER" \
    -ORBendPoint "giop:ssl:$NS_SRV_IP4:$PORT" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PLAIN_PORT" \
    "${SSLOPTS[@]}" -o "$D/echo.ior" -d "$D/dead.ior"
SRV_PID=$NS_LAST_PID
if ! ns_wait_file "$D/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
    echo "FAIL setup: server did not start: $(tail -n 3 "$D/server.log")"
    exit 1
fi
start_attach server "$SRV_PID" || { result setup "attach to the server did not start" "$(tail -n 5 "$D/server.err")"; finish; }
SRV_ATT=$LAST_ATT

# run_client NAME ARGS...: a TLS client that waits on a FIFO for its IOR; attached, then fed
setup_why=""
run_client() {
    local name=$1 cpid
    shift
    mkfifo "$D/$name.ior"
    ns_start "$NS_CLI" "$D/$name.log" env LD_PRELOAD="$SSLTP" "$CLIENT" "${SSLOPTS[@]}" \
        -i "$D/$name.ior" -lat "$D/$name.lat.csv" -q "$@"
    cpid=$NS_LAST_PID
    for _ in $(seq 1 100); do
        grep -q "libssl\.so\.3" "/proc/$cpid/maps" 2>/dev/null && break
        sleep 0.05
    done
    if ! start_attach "$name" "$cpid"; then
        setup_why="${setup_why:-attach to client $name did not start: $(tail -n 3 "$D/$name.err")}"
    fi
    local att=$LAST_ATT
    timeout 10 cp "$D/echo.ior" "$D/$name.ior"
    wait_gone "$cpid" 120
    echo "$GONE_RC" >"$D/$name.rc"
    # attach ends by itself once its --pid process is gone
    wait_gone "$att" 15
    echo "$GONE_RC" >"$D/$name.attach_rc"
}
run_client slow -op slow -n 20 -usecs 300,3000
run_client mix -d "$D/dead.ior" -op mix -size 200 -n 27
# plain IIOP to the same server (no TLS transport in the client: it takes the tcp endpoint)
ns_run "$NS_CLI" 120 "$CLIENT" -i "$D/echo.ior" -d "$D/dead.ior" -op mix -size 100 -n 36 \
    -lat "$D/plain.lat.csv" -q >"$D/plain.log" 2>&1
echo $? >"$D/plain.rc"
sleep 0.5
kill -INT "$SRV_ATT" 2>/dev/null
wait_gone "$SRV_ATT" 15
echo "$GONE_RC" >"$D/server.attach_rc"
ns_stop "$SRV_PID" TERM 20
ns_stop "$TD_PID" INT 15
keep_capture "$D/cap.pcap" attach_tls

why=$setup_why
for n in slow mix; do
    [ "$(cat "$D/$n.rc")" = 0 ] || why="${why:-client $n exit $(cat "$D/$n.rc")}"$'\n'"$(tail -n 3 "$D/$n.log")"
    [ "$(cat "$D/$n.attach_rc")" = 0 ] || why="${why:-attach of client $n exit $(cat "$D/$n.attach_rc")}"$'\n'"$(tail -n 3 "$D/$n.err")"
done
[ "$(cat "$D/plain.rc")" = 0 ] || why="${why:-the plain client exit $(cat "$D/plain.rc")}"$'\n'"$(tail -n 3 "$D/plain.log")"
[ "$(cat "$D/server.attach_rc")" = 0 ] || why="${why:-attach of the server exit $(cat "$D/server.attach_rc")}"$'\n'"$(tail -n 3 "$D/server.err")"
result run "$why"

why=$(python3 - "$D" "$PLAIN_PORT" <<'EOF'
import csv, sys
from decimal import Decimal
d = sys.argv[1]
bad = []
names = {"nonexist": "_non_existent"}
status = {"NO_EXCEPTION": "NO_EXCEPTION", "ONEWAY": "NO_EXCEPTION", "USER_EXCEPTION:Busy": "USER_EXCEPTION",
          "NON_EXISTENT=0": "NO_EXCEPTION"}
def rows(name):
    return list(csv.DictReader(open("%s/%s.csv" % (d, name), newline="")))
server = {}
for r in rows("server"):
    if r["server"].endswith(":%s" % sys.argv[2]):
        continue
    server.setdefault((r["client"], r["request_id"]), []).append(r)
total = 0
for name in ("slow", "mix"):
    log = list(csv.DictReader(open("%s/%s.lat.csv" % (d, name), newline="")))
    att = rows(name)
    calls = [r for r in att if not (r["kind"] == "LocateRequest" and r["status"] == "OBJECT_HERE")]
    verify = len(att) - len(calls)
    if verify > 1:
        bad.append("%s: %d verifying LocateRequests" % (name, verify))
    calls.sort(key=lambda r: Decimal(r["t_request_first"]))
    log.sort(key=lambda l: int(l["t_start_ns"]))
    if len(calls) != len(log):
        bad.append("%s: %d calls in attach, %d logged" % (name, len(calls), len(log)))
        continue
    for r, l in zip(calls, log):
        total += 1
        key = "%s #%s %s" % (name, r["request_id"], l["op"])
        if l["op"] == "dead":
            if r["kind"] != "LocateRequest" or r["status"] != "UNKNOWN_OBJECT":
                bad.append("%s: %s %s" % (key, r["kind"], r["status"]))
        else:
            if r["operation"] != names.get(l["op"], l["op"]):
                bad.append("%s: operation %s" % (key, r["operation"]))
            want = status.get(l["outcome"], l["outcome"])
            if (r["status"] or "") != want and not (l["outcome"] == "ONEWAY" and r["oneway"] == "1"):
                bad.append("%s: status %s, logged %s" % (key, r["status"], l["outcome"]))
        if not r["t_client_send"]:
            bad.append("%s: no t_client_send" % key)
            continue
        t0, t1 = Decimal(l["t_start_ns"]) / 10**9, Decimal(l["t_end_ns"]) / 10**9
        cs = Decimal(r["t_client_send"])
        if not t0 <= cs <= t1:
            bad.append("%s: t_client_send %s outside the call %s..%s" % (key, cs, t0, t1))
        if r["oneway"] == "1":
            continue
        if not r["t_client_recv"] or not r["total_us"]:
            bad.append("%s: no t_client_recv or total_us" % key)
            continue
        cr = Decimal(r["t_client_recv"])
        if not t0 <= cr <= t1:
            bad.append("%s: t_client_recv %s outside the call %s..%s" % (key, cr, t0, t1))
        csu = Decimal(r["client_syscall_us"])
        if csu < Decimal(r["total_us"]):
            bad.append("%s: client_syscall_us %s < total_us %s (client's attach)" % (key, csu, r["total_us"]))
        s = server.get((r["client"], r["request_id"]))
        if not s or len(s) != 1:
            bad.append("%s: %d rows in the server's attach" % (key, len(s or [])))
            continue
        s = s[0]
        if s["operation"] != r["operation"] or s["status"] != r["status"]:
            bad.append("%s: the server's attach says %s %s" % (key, s["operation"], s["status"]))
        if not s["server_process_us"] or not s["total_us"]:
            bad.append("%s: no server_process_us/total_us in the server's attach" % key)
            continue
        tot, sp = Decimal(s["total_us"]), Decimal(s["server_process_us"])
        if not csu >= tot >= sp:
            bad.append("%s: client_syscall_us %s, total_us %s, server_process_us %s" % (key, csu, tot, sp))
        if l["op"] == "slow" and sp < Decimal(l["size"]):
            bad.append("%s: server_process_us %s < the servant's sleep %s us" % (key, sp, l["size"]))
if total < 40:
    bad.append("only %d calls checked" % total)
if bad:
    print("%d problems in %d calls" % (len(bad), total))
    for b in bad[:25]:
        print(b)
EOF
)
result calls_on_both_sides "$why"

"$GIOPSCOPE" read "$D/cap.pcap" >"$D/read.txt" 2>"$D/read.err"
"$GIOPSCOPE" read "$D/cap.pcap" --pairs --format csv >"$D/read.csv" 2>>"$D/read.err"
conns=$(tcpdump -r "$D/cap.pcap" -nn "tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn and dst port $PORT" 2>/dev/null | wc -l)
why=""
[ "$conns" -ge 2 ] || why="only $conns connections in the capture"
grep -qx "$conns TLS connections: encrypted, use attach" "$D/read.txt" ||
    why="${why:-read does not report $conns TLS connections}"$'\n'"$(tail -n 8 "$D/read.txt")"
off_port=$(awk -F, -v p=":$PLAIN_PORT" 'NR > 1 && substr($2, length($2) - length(p) + 1) != p' "$D/read.csv" | wc -l)
[ "$off_port" = 0 ] || why="${why:-read made $off_port calls of the TLS traffic}"$'\n'"$(head -n 3 "$D/read.csv")"
result read_capture_tls "$why"

# plain IIOP beside the TLS probes: the server's attach gives read's calls
head -n 1 "$D/server.csv" | cut -d, -f1-19 >"$D/server_plain.csv"
awk -F, -v p=":$PLAIN_PORT" 'NR > 1 && substr($2, length($2) - length(p) + 1) == p' "$D/server.csv" |
    cut -d, -f1-19 >>"$D/server_plain.csv"
why=""
n_plain=$(( $(wc -l <"$D/read.csv") - 1 ))
[ "$n_plain" -ge 36 ] || why="read has $n_plain calls of the plain client (36 logged)"
if ! python3 "$COMPARE" "$D/read.csv" "$D/server_plain.csv" --no-order --tolerance-ns 1000000 >"$D/compare.txt" 2>&1; then
    why="${why:-the attach of the server differs from read on plain IIOP}"$'\n'"$(tail -n 12 "$D/compare.txt")"
fi
result plain_iiop_unchanged "$why"

finish
