#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_oneway.sh -- `giopscope attach` under a oneway flood (issue 19: the
# taps lose no call at saturation; event-channel-style floods are a common CORBA load).
#
#   flood     bench_server and bench_client -op fire -threads THREADS -n N in one namespace over
#             127.0.0.1; `attach --port PORT --pairs` and tcpdump on lo. omniORB coalesces the
#             small oneway Requests of its threads into one send, one (GSO) segment: far more
#             message starts in a segment than one record's GS_TAP_HEADS (16), and more than
#             the tap framed before session 11 (49: it then gave up the segment, counted
#             "framing resyncs", and lost every message after). Checks: the capture has at
#             least one segment starting more than MIN_PER_SEG Requests (tshark; else the
#             scenario proves nothing and fails); every Request tshark sees (connection, request
#             id) is a row of attach's CSV, an ONEWAY one; attach has as many ONEWAY rows as the
#             server ran fire() (its closing line: tshark misses the Requests of a segment
#             captured before the one ahead of it); attach's closing lines say every framing
#             resync was confirmed (a segment that reached tc before the one ahead of it: the late
#             one, framed, ended where framing had resynced; docs/attach.md) -- 0 in most runs --
#             and 0 message heads not shipped.
#
# usage: tests/integration/attach_oneway.sh [SCENARIO...]     (default: all; --list)
# environment: GIOPSCOPE, BUILD, PORT (2809), N (3000 per thread), THREADS (8), MIN_PER_SEG (49),
#   KEEP_DIR, FAIL_DIR (default /tmp/gs-failing)
# Prints "PASS name (figures)" / "FAIL name: reason", then "N passed, N failed"; exit 0, 1 on a
# failure, 77 when it cannot run here (not root, no eBPF in the build, no BTF, no namespaces).

# shellcheck disable=SC2317  # scenario bodies and hooks are called indirectly
set -u
export LC_ALL=C

cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
KEEP_DIR=${KEEP_DIR:-}
PORT=${PORT:-2809}
N=${N:-3000}
THREADS=${THREADS:-8}
MIN_PER_SEG=${MIN_PER_SEG:-49}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
ALL="flood"

. tests/lib/common.sh
. tests/lib/scenario.sh
sc_want attach_oneway "$ALL" "$@"

. tests/lib/netns.sh

attach_require tcpdump tshark python3 timeout
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-oneway.XXXXXX) || exit 2
ATT_PID="" DUMP_PID=""
# shellcheck disable=SC2034  # read by work_cleanup (tests/lib/common.sh)
WORK_PID_VARS="ATT_PID DUMP_PID"
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
# a private copy: a rebuild while the test runs must not swap the binary under it
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
[ -n "$KEEP_DIR" ] && mkdir -p "$KEEP_DIR"

SC_FAIL_PREFIX=oneway_ SC_CP_OPTS=""

# stop_pid PID: SIGINT (tcpdump, attach write what they have), bounded wait, then KILL
stop_pid() {
    local pid=$1
    kill -INT "$pid" 2>/dev/null
    for _ in $(seq 1 200); do
        ns_alive "$pid" || break
        sleep 0.05
    done
    ns_alive "$pid" && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

scenario_flood() {
    sc_begin flood
    local d=$SC_DIR out
    ns_start "$NS_SRV" "$d/server.log" "$SERVER" -ORBendPoint "giop:tcp:127.0.0.1:$PORT" \
        -o "$d/echo.ior" -d "$d/dead.ior"
    local srv=$NS_LAST_PID
    if ! ns_wait_file "$d/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
        err "server did not start" "$(tail -3 "$d/server.log")"
        ns_stop "$srv" TERM 10
        sc_end
        return
    fi
    ip netns exec "$NS_SRV" tcpdump -i lo -s 0 -w "$d/lo.pcap" -U "tcp port $PORT" 2>"$d/tcpdump.log" &
    DUMP_PID=$!
    ns_wait_grep "$d/tcpdump.log" "listening on" 10 || err "tcpdump did not start" "$(cat "$d/tcpdump.log")"
    ip netns exec "$NS_SRV" "$GIOPSCOPE" attach --port "$PORT" --pairs -o "$d/attach.csv" -q 2>"$d/attach.log" &
    ATT_PID=$!
    if ! ns_wait_attached "$d/attach.log" "$ATT_PID"; then
        err "attach did not start" "$(tail -5 "$d/attach.log")"
    else
        ns_run "$NS_SRV" 120 "$CLIENT" -i "$d/echo.ior" -d "$d/dead.ior" -q -op fire \
            -threads "$THREADS" -n "$N" >"$d/client.log" 2>&1 ||
            err "client failed" "$(tail -3 "$d/client.log")"
        sleep 1
    fi
    [ -n "$ATT_PID" ] && stop_pid "$ATT_PID"
    ATT_PID=""
    stop_pid "$DUMP_PID"
    DUMP_PID=""
    ns_stop "$srv" TERM 20
    if [ -z "$SC_ERR" ]; then
        # every GIOP Request of the capture: frame, client port, message types, request ids (a
        # segment starting several messages lists them all, in order: the LocateRequest
        # omniORB sends first shares a segment with Requests)
        tshark -r "$d/lo.pcap" -d "tcp.port==$PORT,giop" -Y "giop.type == 0" -T fields \
            -e frame.number -e tcp.srcport -e giop.type -e giop.request_id >"$d/requests.tsv" 2>"$d/tshark.log" ||
            err "tshark failed" "$(tail -3 "$d/tshark.log")"
    fi
    if [ -z "$SC_ERR" ]; then
        if out=$(python3 - "$d/requests.tsv" "$d/attach.csv" "$d/attach.log" "$MIN_PER_SEG" "$d/server.log" <<'PY' 2>&1
import csv, re, sys
tsv, csv_path, log_path, min_per_seg, server_log = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
want, most, unpaired = set(), 0, []
for line in open(tsv):
    f = line.rstrip("\n").split("\t")
    if len(f) < 4 or not f[3]:
        continue
    # CloseConnection (5) and MessageError (6) have no request id
    types, ids = [t for t in f[2].split(",") if t not in ("5", "6")], f[3].split(",")
    if len(types) != len(ids):
        unpaired.append(f[0])
        continue
    req = [i for t, i in zip(types, ids) if t == "0"]
    most = max(most, len(req))
    for i in req:
        want.add((int(f[1]), int(i)))
rows = {}
for r in csv.DictReader(open(csv_path, newline="")):
    port = int(r["client"].rsplit(":", 1)[1])
    rows[(port, int(r["request_id"]))] = r["status"]
missing = sorted(want - set(rows))
not_oneway = sorted(k for k in want if k in rows and rows[k] != "ONEWAY")
log = open(log_path).read()
def counter(name):
    m = re.search(r"(\d+) " + name, log)
    return int(m.group(1)) if m else None
resync, heads_lost = counter("framing resyncs"), counter("message heads not shipped")
confirmed = counter("of the resyncs confirmed") or 0
m = re.search(r"fired=(\d+)", open(server_log).read())
fired = int(m.group(1)) if m else None
oneway_rows = sum(1 for s in rows.values() if s == "ONEWAY")
bad = []
if unpaired:
    bad.append("tshark: message types and request ids do not pair up in frames %s" % unpaired[:5])
if most <= min_per_seg:
    bad.append("no segment started more than %d Requests (most: %d): the flood did not coalesce" % (min_per_seg, most))
if missing:
    bad.append("%d of %d Requests not in attach's CSV, e.g. %s" % (len(missing), len(want), missing[:5]))
if not_oneway:
    bad.append("%d Requests not ONEWAY rows, e.g. %s" % (len(not_oneway), not_oneway[:5]))
if resync is None or resync - confirmed:
    bad.append("framing resyncs: %s, %d of them confirmed (want all)" % (resync, confirmed))
if fired is None or oneway_rows != fired:
    bad.append("the server ran fire() %s times, attach has %d ONEWAY rows" % (fired, oneway_rows))
if heads_lost:
    bad.append("message heads not shipped: %d (want 0)" % heads_lost)
print("%d Requests (tshark), up to %d in one segment; %d in attach's CSV, %d missing; "
      "server fired %s, ONEWAY rows %d; framing resyncs %s (%d confirmed), heads not shipped %s" %
      (len(want), most, len(want) - len(missing), len(missing), fired, oneway_rows, resync, confirmed,
       heads_lost or 0))
for b in bad:
    print("BAD " + b)
sys.exit(1 if bad else 0)
PY
        ); then
            SC_NOTE=$out
        else
            err "oneway Requests lost" "$out" "$(grep -i 'kernel\|resync\|lost\|shipped' "$d/attach.log" | head -5)"
        fi
    fi
    sc_end
}

sc_run_all
