#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/loss_tbf.sh -- the split stays true when segments are lost before the tap.
#
# Two namespaces joined by a veth pair, TSO/GSO/GRO off (one TCP segment a frame). A tc tbf
# with a small queue (`rate 1mbit burst 2000 limit 3000`) drops segments of large messages;
# TCP retransmits them (fast retransmit or an RTO of 200+ ms). The capture is on the far
# side of the drop, so it sees a hole filled late: the completing segment of a message is
# the late retransmission, not the one with the highest byte.
#
#   client_egress  tbf on the client's veth (requests lose segments), tcpdump and
#                  `giopscope live` on the server's veth
#   server_egress  tbf on the server's veth (replies lose segments), tcpdump and
#                  `giopscope live` on the client's veth
#
# Traffic: one omniORB client, echoOctets(12000) x N (12 kB each way, ~9 segments).
# Checks, per scenario:
#   oracle     `giopscope read` of tcpdump's capture equals tests/oracle/tshark_pairs.py
#              (Wireshark's dissector, byte-exact first-seen times) call for call, gap_fills
#              and capture_loss included
#   loss_seen  the tbf really dropped: some calls have gap_fills > 0 (else the scenario
#              proved nothing: it fails, it does not skip)
#   server_us  every call with gap_fills > 0 has server_us below SERVANT_BOUND_US (20 ms:
#              the echo servant copies 12 kB; the RTO that the old contract folded into
#              server_us is at least 200 ms); and the lost time is on the network side:
#              the gap-filled message's first..last span is longer than that bound for
#              some call
#   tail       `read --tail` names `loss` for gap-filled calls, counted as network time
#   live       `giopscope live` on the same interface wrote the same calls as `read` of
#              tcpdump's file (same instants within 1 us... the two taps stamp their own
#              copies: receive path within 100 us, gap_fills and status equal)
#   clients    every call the client logged is in the capture, and its total_us is inside
#              the client's own call (t_request_first >= its start, t_reply_last <= its end)
#
#   capture_loss  client_egress's capture with every 5th data frame removed (bytes the
#              capture never got, as under kernel drops): a call that lost none of its bytes
#              is the same row as in the whole capture; one that did says capture_loss 1,
#              and its instants are the bounds its own packets allow, checked against the
#              whole capture (the truth here): t_*_first no earlier, t_*_last no later,
#              durations never negative, no time taken from another call's packet (the
#              old code took the next call's); the variant is kept for the dpdk replay
#   kernel_drops  no shaper; `giopscope live -w` at nice 19 with a 1 MiB ring in immediate mode
#              (--batch-ms 0: 4 slots) while a CPU hog
#              runs on each vCPU and 4 client threads send echoOctets(12000): the kernel drops
#              packets before live sees them (counted, printed); `read` of live's own -w file
#              must give exactly the calls live wrote (same packets, same instants, drops
#              included: capture_loss, NO_REPLY and all)
#   client_egress_hogs   client_egress again with a CPU hog on each vCPU (a busy loop at
#              the ORB's nice level, bounded by timeout): no call lost, the same checks but the
#              servant bound (a starved ORB really holds a call for 100s of ms on a shared VM:
#              that is server time, and the oracle check proves it is measured right)
# Prints PASS/FAIL per check, then "N passed, N failed"; exit 0, 1 on failure, 77 when
# skipped (not root, no namespaces, missing tools).
# environment: GIOPSCOPE (default build/giopscope), BUILD (build), PORT (2809), CALLS (30),
#              KEEP_DIR (copy the work folder there)
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
PORT=${PORT:-2809}
CALLS=${CALLS:-30}
SIZE=12000
SERVANT_BOUND_US=20000
KEEP_DIR=${KEEP_DIR:-}

. tests/lib/netns.sh
. tests/lib/keep_capture.sh

for tool in tcpdump tc tshark ethtool python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || ns_skip "$tool not installed (scripts/install-deps.sh check)"
done
[ -x "$GIOPSCOPE" ] || ns_skip "$GIOPSCOPE not built"
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s orb-apps BUILD="$BUILD" >/dev/null 2>&1 || ns_skip "cannot build the ORB apps (omniORB missing?)"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-loss-tbf.XXXXXX) || exit 2
loss_cleanup() {
    [ -n "$KEEP_DIR" ] && mkdir -p "$KEEP_DIR" && cp -a "$WORK"/. "$KEEP_DIR"/ 2>/dev/null
    rm -rf "$WORK"
}
NS_CLEANUP_HOOK=loss_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }

PASSED=0
FAILED=0
pass() { echo "PASS $1${2:+: $2}"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1: $2"; FAILED=$((FAILED + 1)); }

for l in "$NS_SRV:$NS_VETH_SRV" "$NS_CLI:$NS_VETH_CLI"; do
    ip netns exec "${l%%:*}" ethtool -K "${l#*:}" tso off gso off gro off >/dev/null 2>&1 ||
        { echo "FAIL setup: ethtool -K ${l#*:} tso/gso/gro off"; exit 1; }
done

ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$WORK/echo.ior"
SRV_PID=$NS_LAST_PID
if ! ns_wait_file "$WORK/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
    echo "FAIL setup: server did not start: $(tail -2 "$WORK/server.log")"
    exit 1
fi

# scenario NAME SHAPED_NS SHAPED_DEV TAP_NS TAP_DEV [SERVANT_BOUND_US]
scenario() {
    local name=$1 sns=$2 sdev=$3 tns=$4 tdev=$5 d="$WORK/$1" bound=${6:-$SERVANT_BOUND_US}
    mkdir -p "$d"
    ip netns exec "$sns" tc qdisc replace dev "$sdev" root tbf rate 1mbit burst 2000 limit 3000 ||
        { fail "$name" "tc tbf on $sdev"; return; }
    ns_start "$tns" "$d/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode --time-stamp-precision=nano -U \
        -i "$tdev" -w "$d/cap.pcap" "tcp port $PORT"
    local td=$NS_LAST_PID
    ns_start "$tns" "$d/live.err" "$GIOPSCOPE" live -i "$tdev" --ports "$PORT" --pairs --format csv -o "$d/live.csv"
    local lv=$NS_LAST_PID
    if ! ns_wait_grep "$d/tcpdump.log" "listening on" 15 || ! ns_wait_grep "$d/live.err" "listening on" 15; then
        fail "$name" "tcpdump or live did not start"
        return
    fi
    ns_run "$NS_CLI" 300 "$CLIENT" -i "$WORK/echo.ior" -op echoOctets -size $SIZE -n "$CALLS" \
        -lat "$d/lat.csv" >"$d/client.log" 2>&1
    local rc=$?
    sleep 0.5
    ns_stop "$lv" INT 15
    ns_stop "$td" INT 15
    ip netns exec "$sns" tc qdisc del dev "$sdev" root 2>/dev/null
    if [ "$rc" != 0 ]; then
        fail "$name clients" "bench_client exit $rc: $(tail -2 "$d/client.log")"
        return
    fi
    grep -q "^0 packets dropped by kernel" "$d/tcpdump.log" ||
        fail "$name capture" "tcpdump dropped packets: $(grep dropped "$d/tcpdump.log")"
    keep_capture "$d/cap.pcap" "loss_tbf-$name"

    "$GIOPSCOPE" read "$d/cap.pcap" --pairs --format csv -o "$d/read.csv" 2>"$d/read.err" ||
        { fail "$name read" "exit $?: $(head -2 "$d/read.err")"; return; }
    "$GIOPSCOPE" read "$d/cap.pcap" --tail 1000 --format jsonl >"$d/tail.jsonl" 2>&1 ||
        { fail "$name tail" "exit $?"; return; }
    python3 tests/oracle/tshark_pairs.py "$d/cap.pcap" -o "$d/oracle.csv" 2>"$d/oracle.err"
    if python3 tests/oracle/compare_pairs.py "$d/oracle.csv" "$d/read.csv" >"$d/compare.txt" 2>&1; then
        pass "$name oracle" "$(tail -1 "$d/compare.txt")"
    else
        fail "$name oracle" "$(head -8 "$d/compare.txt" | tr '\n' '|')"
    fi
    # the summary grouped by operation against the oracle's calls: counts, percentiles,
    # and the calls with gap fills
    "$GIOPSCOPE" read "$d/cap.pcap" --by op --format csv -o "$d/summary.csv" 2>/dev/null
    if python3 tests/oracle/summary_oracle.py check "$d/oracle.csv" "$d/summary.csv" --by op \
        >"$d/summary_check.txt" 2>&1; then
        pass "$name summary" "$(tail -1 "$d/summary_check.txt"); gap_filled $(awk -F, 'NR>1 && $1=="echoOctets" {print $15}' "$d/summary.csv")"
    else
        fail "$name summary" "$(head -4 "$d/summary_check.txt" | tr '\n' '|')"
    fi
    # retransmits: live writes a call once the peer acknowledged its last bytes; a copy
    # sent after that (spurious, or lost after the tap) is counted by read and tshark only
    if python3 tests/oracle/compare_pairs.py "$d/read.csv" "$d/live.csv" --no-order \
        --ignore t_request_first,t_request_last,t_reply_first,t_reply_last,total_us,server_us,retransmits \
        >"$d/live_compare.txt" 2>&1; then
        pass "$name live" "live = read of tcpdump's file: $(tail -1 "$d/live_compare.txt")"
    else
        fail "$name live" "$(head -6 "$d/live_compare.txt" | tr '\n' '|')"
    fi
    python3 - "$d" "$name" "$bound" "$CALLS" <<'PY'
import csv, json, sys
d, name, bound_us, calls = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
rows = list(csv.DictReader(open(d + "/read.csv", newline="")))
def out(ok, check, detail):
    print("%s %s %s: %s" % ("PASS" if ok else "FAIL", name, check, detail))
def ns(s):
    a, _, b = s.partition(".")
    return int(a) * 10**9 + int((b + "000000000")[:9])
echo = [r for r in rows if r["operation"] == "echoOctets"]
filled = [r for r in echo if r["gap_fills"] not in ("", "0")]
out(len(filled) > 0, "loss_seen", "%d of %d calls with gap_fills > 0 (%d segments)"
    % (len(filled), len(echo), sum(int(r["gap_fills"]) for r in filled)))
# a segment lost after the tap (the far host's stack dropped it: a CPU-starved veth
# backlog) is resent and seen twice: one tap cannot tell that wait from the server's,
# so the bound holds for the gap-filled calls the tap saw no retransmission of
clean = [r for r in filled if r["retransmits"] == "0"]
if filled:
    out(len(clean) * 2 >= len(filled), "clean", "%d of %d gap-filled calls without a retransmission after the tap"
        % (len(clean), len(filled)))
if clean:
    srv = sorted(float(r["server_us"]) for r in clean)
    # bound 0: not checked (CPU hogs: the ORB itself may wait for a CPU that long)
    bad = [r for r in clean if bound_us and float(r["server_us"]) >= bound_us]
    out(not bad, "server_us", "gap-filled calls: server_us max %.1f us, median %.1f us (bound %.0f us)%s"
        % (srv[-1], srv[len(srv) // 2], bound_us,
           "; over: " + ", ".join("%s=%s" % (r["request_id"], r["server_us"]) for r in bad[:5]) if bad else ""))
    # the wait is network time: a gap-filled message spans the retransmission wait
    half = "request" if name.startswith("client_egress") else "reply"
    spans = [(ns(r["t_%s_last" % half]) - ns(r["t_%s_first" % half])) / 1e3 for r in filled]
    out(max(spans) > bound_us, "network_side", "gap-filled %ss span up to %.1f us (first..completed)"
        % (half, max(spans)))
tails = [json.loads(l) for l in open(d + "/tail.jsonl") if l.startswith('{"type":"tail"')]
tagged = {t["request_id"] for t in tails if "loss" in t["tags"]}
want = {int(r["request_id"]) for r in filled if r["capture_loss"] == "0"}
out(want <= tagged and len(tagged) >= len(want), "tail",
    "%d gap-filled calls, %d tagged loss in --tail" % (len(want), len(tagged)))
# the client's own view: every call it logged is on the wire, inside its client call
lat = list(csv.DictReader(open(d + "/lat.csv", newline="")))
ok_lat = [l for l in lat if l["outcome"] == "NO_EXCEPTION"]
wire = sorted((ns(r["t_request_first"]), ns(r["t_reply_last"])) for r in echo if r["t_reply_last"])
inside = 0
for l in ok_lat:
    s, e = int(l["t_start_ns"]), int(l["t_end_ns"])
    if any(s <= a and b <= e for a, b in wire):
        inside += 1
out(len(ok_lat) == calls and inside == calls and len(wire) == calls, "clients",
    "%d calls logged ok, %d on the wire, %d inside their client call" % (len(ok_lat), len(wire), inside))
PY
}

scenario client_egress "$NS_CLI" "$NS_VETH_CLI" "$NS_SRV" "$NS_VETH_SRV" > "$WORK/a.txt"
cat "$WORK/a.txt"
scenario server_egress "$NS_SRV" "$NS_VETH_SRV" "$NS_CLI" "$NS_VETH_CLI" > "$WORK/b.txt"
cat "$WORK/b.txt"
# ---------------------------------------------------------------- capture loss
d="$WORK/client_egress"
python3 - "$d/cap.pcap" "$d/holes.pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
hdr, o, out, n = data[:24], 24, [], 0
le = struct.unpack("<I", data[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d)
fmt = "<IIII" if le else ">IIII"
while o + 16 <= len(data):
    ts, tu, cl, ol = struct.unpack(fmt, data[o:o + 16])
    rec = data[o:o + 16 + cl]
    o += 16 + cl
    f = rec[16:]
    ihl = (f[14] & 15) * 4
    tcp = 14 + ihl
    payload = len(f) - tcp - (f[tcp + 12] >> 4) * 4
    if payload > 0:
        n += 1
        if n % 5 == 0:
            continue
    out.append(rec)
open(sys.argv[2], "wb").write(hdr + b"".join(out))
PY
"$GIOPSCOPE" read "$d/holes.pcap" --pairs --format csv -o "$d/holes.csv" 2>"$d/holes.err"
rc=$?
keep_capture "$d/holes.pcap" "loss_tbf-capture_loss"
python3 - "$d/read.csv" "$d/holes.csv" "$rc" <<'PY' > "$WORK/d.txt"
import csv, sys
full = {(r["client"], r["request_id"]): r for r in csv.DictReader(open(sys.argv[1], newline=""))}
holes = list(csv.DictReader(open(sys.argv[2], newline="")))
def ns(s):
    a, _, b = s.partition(".")
    return int(a) * 10**9 + int((b + "000000000")[:9])
bad, lossy, same, noreply = [], 0, 0, 0
for r in holes:
    f = full.get((r["client"], r["request_id"]))
    if f is None:
        bad.append("%s: not in the whole capture" % r["request_id"])
        continue
    for k in ("total_us", "server_us"):
        if r[k] and float(r[k]) < 0:
            bad.append("%s: %s %s negative" % (r["request_id"], k, r[k]))
    if r["capture_loss"] == "0" and r["status"] == "NO_REPLY" and f["status"] != "NO_REPLY":
        # the capture lost the reply whole: the call is the request alone (as in
        # tshark's view, pairs-csv.md: capture_loss is about the messages the call has)
        req = ("request_bytes", "t_request_first", "t_request_last")
        if any(r[k] != f[k] for k in req):
            bad.append("%s: reply lost, request columns differ" % r["request_id"])
        noreply += 1
        continue
    if r["capture_loss"] == "0":
        if r != f:
            bad.append("%s: capture_loss 0 but not the whole capture's row" % r["request_id"])
        same += 1
        continue
    lossy += 1
    if r["gap_fills"] != "":
        bad.append("%s: gap_fills %r with capture loss" % (r["request_id"], r["gap_fills"]))
    if f["retransmits"] != "0":
        continue   # a later copy of a byte may be all the variant kept
    for k, later in (("t_request_first", True), ("t_request_last", False),
                     ("t_reply_first", True), ("t_reply_last", False)):
        if r[k] and f[k] and (ns(r[k]) < ns(f[k]) if later else ns(r[k]) > ns(f[k])):
            bad.append("%s: %s %s %s the whole capture's %s" % (r["request_id"], k, r[k],
                       "before" if later else "after", f[k]))
ok = not bad and lossy > 0 and sys.argv[3] in ("0", "1")
print("%s capture_loss: %d rows: %d with capture_loss 1 (their instants within the whole capture's), "
      "%d equal to the whole capture's, %d whose reply the capture lost; read exit %s%s"
      % ("PASS" if ok else "FAIL", len(holes), lossy, same, noreply, sys.argv[3], "; " + "; ".join(bad[:6]) if bad else ""))
PY
cat "$WORK/d.txt"

HOGS=""
for cpu in $(seq 0 $(( $(nproc) - 1 ))); do
    taskset -c "$cpu" timeout 300 sh -c 'while :; do :; done' &
    HOGS="$HOGS $!"
done
# ---------------------------------------------------------------- kernel drops
d="$WORK/kernel_drops"
mkdir -p "$d"
# immediate mode (--batch-ms 0): a 1 MiB ring of 4 slots, which drops (the default blocks are
# made to ride out a reader kept from the CPU)
ns_start "$NS_SRV" "$d/live.err" nice -n 19 "$GIOPSCOPE" live -i "$NS_VETH_SRV" --ports "$PORT" \
    --buffer-size 1m --batch-ms 0 --pairs --summary --format csv -o "$d/live.csv" -w "$d/live.pcapng"
LV=$NS_LAST_PID
ns_wait_grep "$d/live.err" "listening on" 30 || echo "FAIL kernel_drops: live did not start" > "$WORK/e0.txt"
ns_run "$NS_CLI" 120 "$CLIENT" -i "$WORK/echo.ior" -op echoOctets -size $SIZE -n 300 -threads 4 \
    >"$d/client.log" 2>&1
crc=$?
sleep 0.5
ns_stop "$LV" INT 15
drops=$(grep -o 'kernel drops [0-9]*' "$d/live.err" | tail -1)
"$GIOPSCOPE" read "$d/live.pcapng" --pairs --format csv -o "$d/read.csv" 2>"$d/read.err"
rrc=$?
{
if [ "$crc" != 0 ]; then
    echo "FAIL kernel_drops: bench_client exit $crc: $(tail -1 "$d/client.log")"
elif [ "$rrc" != 0 ] && [ "$rrc" != 1 ]; then
    echo "FAIL kernel_drops: read of live's -w file: exit $rrc: $(head -1 "$d/read.err")"
elif [ "$(grep -c , "$d/live.csv")" -lt 11 ]; then
    echo "FAIL kernel_drops: live wrote fewer than 10 calls: $(grep 'packets' "$d/live.err" | head -1)"
# (retransmits aside, as in the scenarios above: live writes a call once the peer acked it)
elif python3 tests/oracle/compare_pairs.py "$d/read.csv" "$d/live.csv" --no-order --tolerance-ns 0 \
    --ignore retransmits >"$d/compare.txt" 2>&1 &&
    python3 - "$d/read.csv" "$d/live.csv" >>"$d/compare.txt" 2>&1 <<'PY'
import csv, sys
key = lambda r: (r["client"], r["request_id"], r["kind"])
read = {key(r): int(r["retransmits"]) for r in csv.DictReader(open(sys.argv[1], newline=""))}
more = [k for k, r in ((key(r), r) for r in csv.DictReader(open(sys.argv[2], newline="")))
        if int(r["retransmits"]) > read.get(k, 0)]
print("live counted more retransmits than read:", more[:5]) if more else None
sys.exit(1 if more else 0)
PY
then
    echo "PASS kernel_drops: live = read of its own -w file (live's retransmits <= read's): $(grep '^compare:' "$d/compare.txt"); ${drops:-no kernel drops line}; capture_loss rows: $(grep -c ',1$' "$d/live.csv")"
else
    echo "FAIL kernel_drops: live and read of its -w file differ (${drops:-?}): $(head -6 "$d/compare.txt" | tr '\n' '|')"
fi
} > "$WORK/e.txt"
cat "$WORK/e.txt"
scenario client_egress_hogs "$NS_CLI" "$NS_VETH_CLI" "$NS_SRV" "$NS_VETH_SRV" 0 > "$WORK/c.txt"
for p in $HOGS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
cat "$WORK/c.txt"
ns_stop "$SRV_PID" TERM 20
PASSED=$(cat "$WORK"/[abcde]*.txt | grep -c '^PASS')
FAILED=$(cat "$WORK"/[abcde]*.txt | grep -c '^FAIL')
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
