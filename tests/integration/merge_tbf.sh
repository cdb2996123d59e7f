#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/merge_tbf.sh -- `giopscope merge` on real omniORB traffic captured on both hosts.
#
# Topology: client namespace -- router namespace -- server namespace, one veth pair per hop.
# The router's egress towards the client has a tc tbf qdisc: the replies are slowed *between*
# the two capture points. (A qdisc on the client's or the server's own veth would not do: a
# capture sees outgoing packets after the qdisc, so the delay would look like the host's own.)
#
#   tcpdump in the client namespace (its veth)  = CLIENT.pcap   (client's host)
#   tcpdump in the server namespace (its veth)  = SERVER.pcap   (server's host)
#
# Traffic, in order:
#   1. two omniORB clients at once, 40 slow(5000) each: identical call sequences on two
#      connections at the same time (request ids 2, 4, ...), only timing tells them apart;
#      small messages, so tbf lets them through at once (its bucket refills between calls)
#   2. one client, 20 echoOctets(12000) back to back: each ~12 kB reply drains the bucket and
#      crosses the shaped hop at the tbf rate
#
# Checks (bounds stated with each):
#   matched      every client-side call has its server-side twin, and nothing is left over
#   twins        each matched pair has the same client endpoint (merge never looks at addresses:
#                this is the ground truth that it told the two concurrent connections apart)
#   server_us    slow(5000) calls: every server_side_server_us >= 5000 us (the sleep is a floor)
#                and the median <= 6000 us (nanosleep + omniORB dispatch); the upper tail is
#                printed, not bounded: on a loaded machine the server really holds some calls
#                longer, and merge reports just that
#   network_slow slow calls: network_us >= 0, median <= 500 us, 90th percentile <= 1000 us (two
#                veth hops and a forward)
#   network_tbf  echoOctets: the reply's frames (W bytes as tbf counts them: the GIOP reply plus
#                66 bytes of headers per 1448-byte segment) leave the router at RATE once the
#                BURST bytes of tokens are spent, so its last byte is late by (W - BURST)/RATE ..
#                W/RATE; median network_us must lie in [(W - BURST)/RATE - 500 us,
#                W/RATE + 1500 us] and every call whose reply left the server at once (its
#                server-side span <= 1 ms; at least half of them) above (W - BURST)/RATE -
#                1000 us (a server TCP slowed by a drop in the shaper sends part of the reply
#                late: that part of the delay is on the server's side of its capture)
#   offset       both captures use the same clock (true offset 0): the summary's range (the
#                intersection of every call's causal interval) holds 0, the estimate lies in the
#                range and |estimate| <= its width; the text summary says the same
#   offset_calls every matched call's own range (clock_offset_lo_us..hi_us) holds 0 and its
#                clock_offset_us, |clock_offset_us| <= the width of that range, the echoOctets
#                calls (replies slowed 10+ ms between the taps) included
#   hints        the same capture twice, and the captures given server first, each get their
#                one-line hint on stderr; the right order gets none
#   nat_shift    the server capture rewritten as if behind NAT (client address and ports
#                changed) and its clock 12.345678 s ahead: the same calls match, network_us is
#                unchanged to the nanosecond, the offset range holds +12.345678 s and the
#                estimate is within its width of it
#   outputs      jsonl parses; --report is self-contained HTML with its plots; --trace parses
#
# Prints PASS/FAIL per check, then "N passed, N failed"; exit 0, 1 on failure, 77 when skipped
# (not root, no namespaces, missing tools). Bounded: every wait and run has a timeout.
# environment: GIOPSCOPE (default build/giopscope), BUILD (build), PORT (2809), KEEP_DIR
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
PORT=${PORT:-2809}
KEEP_DIR=${KEEP_DIR:-}
RATE_BPS=1000000        # tbf rate: 8 Mbit/s = 1 byte per microsecond
BURST=2000              # tbf bucket, bytes
SLEEP_US=5000
SIZE=12000

. tests/lib/netns.sh
. tests/lib/keep_capture.sh

for tool in tcpdump tc python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || ns_skip "$tool not installed (scripts/install-deps.sh check)"
done
[ -x "$GIOPSCOPE" ] || ns_skip "$GIOPSCOPE not built"
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s orb-apps BUILD="$BUILD" >/dev/null 2>&1 || ns_skip "cannot build the ORB apps (omniORB missing?)"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-merge-tbf.XXXXXX) || exit 2
NS_RTR=""
merge_cleanup() {
    [ -n "$KEEP_DIR" ] && mkdir -p "$KEEP_DIR" && cp -a "$WORK"/. "$KEEP_DIR"/ 2>/dev/null
    [ -n "$NS_RTR" ] && ip netns del "$NS_RTR" 2>/dev/null
    rm -rf "$WORK"
}
NS_CLEANUP_HOOK=merge_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }

PASSED=0
FAILED=0
pass() { echo "PASS $1${2:+: $2}"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1: $2"; FAILED=$((FAILED + 1)); }
finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ] && exit 0
    exit 1
}

# ---------------------------------------------------------------- the routed path
NS_RTR="gs-rtr-$$"
x=$((($$ / 250) % 250 + 1)) y=$(($$ % 250 + 1))
NET_C="172.31.$y"          # client <-> router: .1 client, .2 router
NET_S="172.30.$y"          # router <-> server: .1 router, .2 server
V_C="gsm$$c" V_RC="gsm$$r" V_RS="gsm$$s" V_S="gsm$$v"
CLI_IP=$NET_C.1 SRV_IP=$NET_S.2
setup_path() {
    ip netns add "$NS_RTR" || return 1
    ip link add "$V_C" netns "$NS_CLI" type veth peer name "$V_RC" netns "$NS_RTR" || return 1
    ip link add "$V_RS" netns "$NS_RTR" type veth peer name "$V_S" netns "$NS_SRV" || return 1
    ip -n "$NS_RTR" link set lo up
    ip -n "$NS_CLI" addr add "$CLI_IP/24" dev "$V_C" || return 1
    ip -n "$NS_RTR" addr add "$NET_C.2/24" dev "$V_RC" || return 1
    ip -n "$NS_RTR" addr add "$NET_S.1/24" dev "$V_RS" || return 1
    ip -n "$NS_SRV" addr add "$SRV_IP/24" dev "$V_S" || return 1
    for l in "$NS_CLI:$V_C" "$NS_RTR:$V_RC" "$NS_RTR:$V_RS" "$NS_SRV:$V_S"; do
        ip -n "${l%%:*}" link set "${l#*:}" up || return 1
    done
    ip -n "$NS_CLI" route add "$NET_S.0/24" via "$NET_C.2" || return 1
    ip -n "$NS_SRV" route add "$NET_C.0/24" via "$NET_S.1" || return 1
    ip netns exec "$NS_RTR" sysctl -qw net.ipv4.ip_forward=1 || return 1
    # replies (router -> client) slowed; requests (router -> server) not
    ip netns exec "$NS_RTR" tc qdisc add dev "$V_RC" root tbf rate $((RATE_BPS * 8))bit \
        burst "$BURST" latency 500ms || return 1
}
setup_path || { echo "FAIL setup: cannot build the routed path (router namespace, veths, tbf)"; finish; }
echo "# path: $CLI_IP ($NS_CLI) -> $NS_RTR [tbf $((RATE_BPS * 8)) bit/s burst $BURST towards the client] -> $SRV_IP ($NS_SRV)"

# ---------------------------------------------------------------- traffic and captures
ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$SRV_IP:$PORT" -o "$WORK/echo.ior"
SRV_PID=$NS_LAST_PID
if ! ns_wait_file "$WORK/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
    fail setup "server did not start: $(tail -2 "$WORK/server.log")"
    finish
fi
capture() { # capture NS DEV FILE: tcpdump, started and listening
    ns_start "$1" "$3.log" tcpdump -Z root -B 65536 --immediate-mode --time-stamp-precision=nano -U \
        -i "$2" -w "$3" "tcp port $PORT"
    ns_wait_grep "$3.log" "listening on" 15
}
capture "$NS_CLI" "$V_C" "$WORK/client.pcap" || { fail setup "client-side tcpdump did not start"; finish; }
TD_C=$NS_LAST_PID
capture "$NS_SRV" "$V_S" "$WORK/server.pcap" || { fail setup "server-side tcpdump did not start"; finish; }
TD_S=$NS_LAST_PID

# 1. two clients at once, identical sequences
ns_start "$NS_CLI" "$WORK/c1.log" timeout 60 "$CLIENT" -i "$WORK/echo.ior" -op slow -size $SLEEP_US -n 40 \
    -lat "$WORK/c1.lat.csv"
C1=$NS_LAST_PID
ns_start "$NS_CLI" "$WORK/c2.log" timeout 60 "$CLIENT" -i "$WORK/echo.ior" -op slow -size $SLEEP_US -n 40 \
    -lat "$WORK/c2.lat.csv"
C2=$NS_LAST_PID
# both end by themselves (each under timeout 60)
wait "$C1"
rc1=$?
wait "$C2"
rc2=$?
sleep 0.2   # the bucket refills
# 2. shaped replies
ns_run "$NS_CLI" 60 "$CLIENT" -i "$WORK/echo.ior" -op echoOctets -size $SIZE -n 20 \
    -lat "$WORK/c3.lat.csv" >"$WORK/c3.log" 2>&1
rc3=$?
sleep 0.5
ns_stop "$TD_C" INT 15
ns_stop "$TD_S" INT 15
ns_stop "$SRV_PID" TERM 20
if [ "$rc1" != 0 ] || [ "$rc2" != 0 ] || [ "$rc3" != 0 ]; then
    fail clients "exit statuses $rc1 $rc2 $rc3: $(tail -1 "$WORK/c1.log") $(tail -1 "$WORK/c3.log")"
    finish
fi
for f in client server; do
    grep -q "^0 packets dropped by kernel" "$WORK/$f.pcap.log" ||
        fail capture "$f tcpdump dropped packets: $(grep dropped "$WORK/$f.pcap.log")"
    # both vantage points are also replayed through giopscope dpdk afterwards
    keep_capture "$WORK/$f.pcap" "merge_tbf-$f"
done

# ---------------------------------------------------------------- merge
"$GIOPSCOPE" merge "$WORK/client.pcap" "$WORK/server.pcap" --pairs -o "$WORK/merged.csv" \
    --report "$WORK/report.html" --trace "$WORK/trace.json" 2>"$WORK/merge.err"
rc=$?
"$GIOPSCOPE" merge "$WORK/client.pcap" "$WORK/server.pcap" --format jsonl -o "$WORK/summary.jsonl" 2>>"$WORK/merge.err"
rc_s=$?
"$GIOPSCOPE" merge "$WORK/client.pcap" "$WORK/server.pcap" >"$WORK/summary.txt" 2>>"$WORK/merge.err"
if [ "$rc" != 0 ] || [ "$rc_s" != 0 ]; then
    fail merge "exit $rc/$rc_s: $(head -3 "$WORK/merge.err")"
    finish
fi
sed 's/^/    /' "$WORK/summary.txt" | head -20

# the server's own view of each reply: how long its TCP took to hand the reply's bytes out
"$GIOPSCOPE" read "$WORK/server.pcap" --pairs -o "$WORK/server.pairs.csv" 2>/dev/null
python3 - "$WORK/merged.csv" "$RATE_BPS" "$BURST" "$SLEEP_US" "$WORK/server.pairs.csv" >"$WORK/checks.txt" 2>&1 <<'PY'
import csv, math, statistics, sys
path, rate, burst, sleep_us = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# echoOctets reply spans at the server's veth (last byte - first byte), by request id
span_us = {}
for r in csv.DictReader(open(sys.argv[5], newline="")):
    if r["operation"] == "echoOctets" and r["t_reply_first"] and r["t_reply_last"]:
        span_us[r["request_id"]] = (float(r["t_reply_last"]) - float(r["t_reply_first"])) * 1e6
rows = list(csv.DictReader(open(path, newline="")))
def f(r, k):
    return float(r[k]) if r[k] != "" else None
out = []
def check(name, ok, detail):
    out.append(("PASS" if ok else "FAIL", name, detail))
answered = [r for r in rows if r["total_us"] != ""]
matched = [r for r in answered if r["network_us"] != ""]
check("matched", len(rows) > 0 and len(matched) == len(answered),
      "%d of %d answered client-side calls matched (%d rows)" % (len(matched), len(answered), len(rows)))
slow = [r for r in matched if r["operation"] == "slow"]
octs = [r for r in matched if r["operation"] == "echoOctets"]
ports = {r["client"] for r in slow}
check("two_connections", len(slow) == 80 and len(ports) == 2, "%d slow calls on %d connections" % (len(slow), len(ports)))
def p90(v):
    return v[min(len(v) - 1, int(math.ceil(0.9 * len(v))) - 1)]
srv = sorted(f(r, "server_side_server_us") for r in slow)
if srv:
    med = statistics.median(srv)
    check("server_us", srv[0] >= sleep_us and med <= sleep_us + 1000,
          "slow(%d): server_side_server_us min %.1f median %.1f p90 %.1f max %.1f us (bound: all >= %d, "
          "median <= %d)" % (sleep_us, srv[0], med, p90(srv), srv[-1], sleep_us, sleep_us + 1000))
else:
    check("server_us", False, "no slow call matched")
net = sorted(f(r, "network_us") for r in slow)
if net:
    check("network_slow", net[0] >= 0 and statistics.median(net) <= 500 and p90(net) <= 1000,
          "slow calls: network_us min %.1f median %.1f p90 %.1f max %.1f us (bound: all >= 0, median <= 500, p90 <= 1000)"
          % (net[0], statistics.median(net), p90(net), net[-1]))
# the reply as tbf counts it: GIOP bytes plus 66 bytes of Ethernet, IP and TCP (timestamps)
# headers per 1448-byte segment
rb = int(octs[0]["reply_bytes"]) if octs else 0
wire = rb + int(math.ceil(rb / 1448.0)) * 66
lo_us = (wire - burst) * 1e6 / rate
hi_us = wire * 1e6 / rate
net = sorted(f(r, "network_us") for r in octs)
if net and wire > 0:
    med = statistics.median(net)
    # The floor holds for a reply the server's TCP sent out at once: its whole shaping
    # delay is then past the server's capture point. After the shaped queue dropped a
    # segment (a loaded machine), the server's congestion window is small for a while and
    # its TCP sends the rest of the reply as ACKs come back through the shaper: part of the
    # delay is then before the server's last byte, in server_side_total_us, and the call's
    # network_us is lower by as much. Those calls (server-side reply span > 1 ms) are left
    # out of the floor, not of the median; at least half must remain.
    burst_net = sorted(f(r, "network_us") for r in octs if span_us.get(r["request_id"], 1e9) <= 1000)
    floor_ok = len(burst_net) >= len(net) // 2 and (not burst_net or burst_net[0] >= lo_us - 1000)
    check("network_tbf", len(net) == 20 and lo_us - 500 <= med <= hi_us + 1500 and floor_ok,
          "echoOctets: reply of %d bytes, %d on the wire, expected %.0f..%.0f us late; network_us min %.1f median %.1f "
          "max %.1f (bound: median in [%.0f, %.0f]; the %d calls whose reply left the server at once "
          "(span <= 1 ms): min %.1f, all >= %.0f)"
          % (rb, wire, lo_us, hi_us, net[0], med, net[-1], lo_us - 500, hi_us + 1500, len(burst_net),
             burst_net[0] if burst_net else float("nan"), lo_us - 1000))
    tot = sorted(f(r, "total_us") - f(r, "server_side_total_us") for r in octs)
    check("network_is_difference", all(abs(f(r, "total_us") - f(r, "server_side_total_us") - f(r, "network_us")) < 0.002 for r in octs),
          "network_us = total_us - server_side_total_us for every call")
else:
    check("network_tbf", False, "no echoOctets call matched (wire %d)" % wire)
for s, n, d in out:
    print("%s %s: %s" % (s, n, d))
PY
while IFS= read -r line; do
    case "$line" in
        PASS*) PASSED=$((PASSED + 1)); echo "$line" ;;
        FAIL*) FAILED=$((FAILED + 1)); echo "$line" ;;
        *) echo "    $line" ;;
    esac
done <"$WORK/checks.txt"

# twins: merge matched by content and time only; in this routed (not NATed) setup both captures
# show the same client endpoint, so a pair with two different ones was mismatched
python3 - "$WORK/client.pcap" "$WORK/server.pcap" "$WORK/summary.jsonl" >"$WORK/twins.txt" 2>&1 <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[3])]
m = [r for r in rows if r.get("type") == "merge"][0]
print("matched %d, unmatched client %d server %d, streams %d/%d/%d" % (m["matched"], m["unmatched_client"],
      m["unmatched_server"], m["streams_client"], m["streams_server"], m["streams_matched"]))
ok = m["unmatched_client"] == 0 and m["unmatched_server"] == 0 and m["streams_matched"] == m["streams_client"] == m["streams_server"]
lo, hi, est = m.get("clock_offset_lo_us"), m.get("clock_offset_hi_us"), m.get("clock_offset_us")
print("offset %s us in %s..%s us (%s, %s calls agree, %s violate)" % (est, lo, hi, m.get("clock_offset_method"),
      m.get("clock_offset_agree"), m.get("clock_offset_violating")))
sys.exit(0 if ok and lo is not None and m["clock_offset_method"] == "intersection" and lo <= 0 <= hi
         and lo <= est <= hi and abs(est) <= hi - lo and not m["looks_swapped"] and not m["same_capture"] else 1)
PY
if [ $? = 0 ]; then pass offset "$(tr '\n' ';' <"$WORK/twins.txt")"; else fail offset "$(tr '\n' ';' <"$WORK/twins.txt")"; fi

# the text summary: "... : E us, the middle of LO..HI us, the range every one of the N ... calls allows"
python3 - "$WORK/summary.txt" >"$WORK/offset_text.txt" 2>&1 <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"clock offset \(server capture clock - client capture clock\): (-?[0-9.]+) us, the middle of "
              r"(-?[0-9.]+)\.\.(-?[0-9.]+) us, the range every one of the ([0-9]+) answered matched calls allows", t)
if not m:
    print("no offset line: %s" % [l for l in t.splitlines() if "clock offset" in l])
    sys.exit(1)
e, lo, hi = float(m.group(1)), float(m.group(2)), float(m.group(3))
print("text: %s us in %s..%s us (%s calls)" % (e, lo, hi, m.group(4)))
sys.exit(0 if lo <= e <= hi and lo <= 0 <= hi and abs(e) <= hi - lo else 1)
PY
if [ $? = 0 ]; then pass offset_text "$(cat "$WORK/offset_text.txt")"; else fail offset_text "$(cat "$WORK/offset_text.txt")"; fi

# each call's own range and estimate (merged CSV, columns by name), the large calls included
python3 - "$WORK/merged.csv" >"$WORK/offset_calls.txt" 2>&1 <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["clock_offset_lo_us"] != ""]
bad, per = [], {}
for r in rows:
    lo, hi, e = float(r["clock_offset_lo_us"]), float(r["clock_offset_hi_us"]), float(r["clock_offset_us"])
    if not (lo <= 0 <= hi and lo <= e <= hi and abs(e) <= hi - lo):
        bad.append("%s rid %s: %s in %s..%s" % (r["operation"], r["request_id"], e, lo, hi))
    p = per.setdefault(r["operation"], [0, 0.0, 0.0])
    p[0] += 1
    p[1] = max(p[1], abs(e))
    p[2] = max(p[2], hi - lo)
print("; ".join("%s: %d calls, max |offset| %.3f us, widest range %.3f us" % (k, v[0], v[1], v[2])
                for k, v in sorted(per.items())) + ("; violations: %s" % bad[:3] if bad else ""))
sys.exit(0 if rows and not bad and per.get("echoOctets", [0])[0] == 20 else 1)
PY
if [ $? = 0 ]; then pass offset_calls "$(cat "$WORK/offset_calls.txt")"; else fail offset_calls "$(cat "$WORK/offset_calls.txt")"; fi

# the hints: the same capture twice, the server's capture first; none for the right order
"$GIOPSCOPE" merge -q "$WORK/client.pcap" "$WORK/client.pcap" >/dev/null 2>"$WORK/same.err"
rc_same=$?
"$GIOPSCOPE" merge -q "$WORK/server.pcap" "$WORK/client.pcap" >/dev/null 2>"$WORK/swapped.err"
rc_sw=$?
if grep -q "^giopscope merge: both files are the same capture" "$WORK/same.err" &&
    grep -q "^giopscope merge: the first file looks like the server side" "$WORK/swapped.err" &&
    ! grep -q "same capture\|swap them" "$WORK/merge.err"; then
    pass hints "same: exit $rc_same, $(grep -c . "$WORK/same.err") line(s); swapped: exit $rc_sw: $(grep swap "$WORK/swapped.err")"
else
    fail hints "same ($rc_same): $(head -2 "$WORK/same.err"); swapped ($rc_sw): $(head -2 "$WORK/swapped.err"); right order: $(grep -c . "$WORK/merge.err") line(s)"
fi

# twins: merge matches by content and time only; in this routed (not NATed) setup both hosts
# see the same endpoints, so a pair whose endpoints differ was matched to the wrong connection
"$GIOPSCOPE" merge "$WORK/client.pcap" "$WORK/server.pcap" --pairs --format jsonl -o "$WORK/merged.jsonl" 2>/dev/null
python3 - "$WORK/merged.jsonl" >"$WORK/twins2.txt" 2>&1 <<'PY'
import json, sys
from collections import Counter
rows = [json.loads(l) for l in open(sys.argv[1])]
m = [r for r in rows if r["matched"]]
wrong = [r for r in m if r["client"] != r["server_side_client"] or r["server"] != r["server_side_server"]]
c = Counter(r["client"] for r in m if r["operation"] == "slow")
print("%d matched pairs, %d with other endpoints on the server side; slow calls per connection %s"
      % (len(m), len(wrong), sorted(c.values())))
sys.exit(0 if m and not wrong and sorted(c.values()) == [40, 40] else 1)
PY
if [ $? = 0 ]; then pass twins "$(cat "$WORK/twins2.txt")"; else fail twins "$(cat "$WORK/twins2.txt")"; fi

# ---------------------------------------------------------------- NAT and a clock 12.345678 s ahead
python3 - "$WORK/server.pcap" "$WORK/nat.pcap" "$CLI_IP" <<'PY' || fail nat_shift "cannot rewrite the capture"
import socket, struct, sys
src, dst, cli = sys.argv[1], sys.argv[2], socket.inet_aton(sys.argv[3])
nat = socket.inet_aton("192.0.2.77")
shift_ns = 12345678000
data = open(src, "rb").read()
out = bytearray(data[:24])
nano = struct.unpack("<I", data[:4])[0] == 0xa1b23c4d
off = 24
while off + 16 <= len(data):
    sec, frac, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    pkt = bytearray(data[off + 16: off + 16 + incl])
    off += 16 + incl
    t = sec * 10**9 + (frac if nano else frac * 1000) + shift_ns
    sec, frac = divmod(t, 10**9)
    if not nano:
        frac //= 1000
    if len(pkt) >= 34 and pkt[12:14] == b"\x08\x00" and pkt[23] == 6:
        ihl = (pkt[14] & 15) * 4
        for ipo, po in ((26, 14 + ihl), (30, 14 + ihl + 2)):     # src ip/port, dst ip/port
            if pkt[ipo:ipo + 4] == cli:
                pkt[ipo:ipo + 4] = nat
                p = struct.unpack(">H", pkt[po:po + 2])[0]
                pkt[po:po + 2] = struct.pack(">H", (p + 1000) & 0xffff)
    out += struct.pack("<IIII", sec, frac, incl, orig) + pkt
open(dst, "wb").write(out)
PY
"$GIOPSCOPE" merge "$WORK/client.pcap" "$WORK/nat.pcap" --pairs -o "$WORK/nat.csv" 2>/dev/null
rc_n=$?
"$GIOPSCOPE" merge "$WORK/client.pcap" "$WORK/nat.pcap" --format jsonl -o "$WORK/nat.jsonl" 2>/dev/null
"$GIOPSCOPE" merge "$WORK/client.pcap" "$WORK/nat.pcap" --pairs --format jsonl -o "$WORK/nat.pairs.jsonl" 2>/dev/null
python3 - "$WORK/merged.csv" "$WORK/nat.csv" "$WORK/nat.jsonl" "$WORK/nat.pairs.jsonl" >"$WORK/nat.txt" 2>&1 <<'PY'
import csv, json, sys
a = list(csv.DictReader(open(sys.argv[1], newline="")))
b = list(csv.DictReader(open(sys.argv[2], newline="")))
m = [json.loads(l) for l in open(sys.argv[3]) if '"type":"merge"' in l][0]
same = len(a) == len(b) and all(x["network_us"] == y["network_us"] and x["server_side_total_us"] == y["server_side_total_us"]
                                and x["server_side_server_us"] == y["server_side_server_us"] for x, y in zip(a, b))
lo, hi, est = m.get("clock_offset_lo_us"), m.get("clock_offset_hi_us"), m.get("clock_offset_us")
p = [json.loads(l) for l in open(sys.argv[4])]
natted = all(r["server_side_client"].startswith("192.0.2.77:") for r in p if r["matched"])
print("rows %d/%d, identical merged columns: %s, server side sees 192.0.2.77: %s; offset %s us in %s..%s us"
      % (len(a), len(b), same, natted, est, lo, hi))
sys.exit(0 if same and natted and lo is not None and lo <= 12345678.0 <= hi and lo <= est <= hi
         and abs(est - 12345678.0) <= hi - lo else 1)
PY
rc_p=$?
if [ "$rc_n" = 0 ] && [ "$rc_p" = 0 ]; then pass nat_shift "$(cat "$WORK/nat.txt")"; else fail nat_shift "exit $rc_n; $(cat "$WORK/nat.txt")"; fi

# ---------------------------------------------------------------- the other outputs
python3 - "$WORK/summary.jsonl" "$WORK/trace.json" "$WORK/report.html" >"$WORK/outputs.txt" 2>&1 <<'PY'
import json, sys
for l in open(sys.argv[1]):
    json.loads(l)
t = json.load(open(sys.argv[2]))
ev = t["traceEvents"]
x = [e for e in ev if e.get("ph") == "X"]
names = [e for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"]
h = open(sys.argv[3]).read()
ok = (len(x) >= 100 and len(names) >= 3 and "http://" not in h and "https://" not in h and "<script" not in h
      and h.count('class="seg seg-net"') >= 1 and h.count('<svg class="plot') >= 6)
print("trace: %d spans, %d tracks; report: %d bytes, %d plots, network segments %d" % (len(x), len(names), len(h),
      h.count('<svg class="plot'), h.count('class="seg seg-net"')))
sys.exit(0 if ok else 1)
PY
if [ $? = 0 ]; then pass outputs "$(cat "$WORK/outputs.txt")"; else fail outputs "$(cat "$WORK/outputs.txt")"; fi

finish
