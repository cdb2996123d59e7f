#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Tail reasons on real omniORB/Combat traffic where the cause is known:
#   server          slow(20 ms) calls: the servant held them
#   queued          fast calls sharing one connection with slow ones on a server that answers a
#                   connection's calls in order: they wait behind them (joined with the
#                   client's own log: the tagged call is short, its culprit long, the wait
#                   right)
#   network         a reply crossing a veth slowed with tc tbf
#   nagle           a client without TCP_NODELAY (tests/orb/raw_giop_client.py: header and
#                   body in two writes) whose request body waits for the server's delayed ACK
#                   (the stall near Linux's 40 ms delayed-ACK timer, the client saw it too)
#   retransmission  frames repeated in a copy of a capture
#   capture-loss    frames deleted from a copy of a capture (editcap)
# Each: `giopscope read --tail N --format jsonl` and the tags of the slowest calls.
# zero-window is proven by a crafted stream in tests/unit/test_tail_reasons.c.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/netns.sh
. tests/lib/keep_capture.sh
ns_require
GS=${GIOPSCOPE:-build/giopscope}
BUILD=${BUILD:-build}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || make -s orb-apps BUILD="$BUILD" >/dev/null || ns_skip "cannot build the ORB apps"
PORT=2809
WORK=$(mktemp -d /tmp/gs-tails.XXXXXX)
cleanup_work() { [ -n "${KEEP_DIR:-}" ] && cp -r "$WORK" "$KEEP_DIR"; rm -rf "$WORK"; }
NS_CLEANUP_HOOK=cleanup_work
ns_setup
pass=0 fail=0
start=$(date +%s)

ok() { echo "PASS $1: $2"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

start_server() {
	rm -f "$WORK/echo.ior"
	ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" \
		-o "$WORK/echo.ior" -d "$WORK/dead.ior"
	SRV_PID=$NS_LAST_PID
	ns_wait_file "$WORK/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10
}
capture() { # capture FILE [IFACE [PORT]]
	CAP_FILE=$1
	ns_start "$NS_SRV" "$WORK/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
		--time-stamp-precision=nano -U -i "${2:-$NS_VETH_SRV}" -w "$1" "tcp port ${3:-$PORT}"
	TD_PID=$NS_LAST_PID
	ns_wait_grep "$WORK/tcpdump.log" "listening on" 15
}
stop_capture() { sleep 0.3; ns_stop "$TD_PID" INT 15; keep_capture "$CAP_FILE" "tails-$(basename "$CAP_FILE" .pcap)"; }

# tags CAPTURE N: the slowest N calls as "operation tag,tag,..." lines
tags() {
	"$GS" read "$1" --tail "$2" --format jsonl 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    if o.get("type") == "tail":
        print(o["operation"] or "-", ",".join(o["tags"]), o["reasons"], sep="\t")'
}

start_server || { ko setup "server did not start"; exit 1; }

# --- server: one connection, 2 threads, sleeps cycling 0 and 20000 us
capture "$WORK/slow.pcap"
ns_run "$NS_CLI" 60 "$CLIENT" -i "$WORK/echo.ior" -op slow -threads 2 -usecs 0,20000 -n 10 \
	-ORBoneCallPerConnection 0 -ORBmaxGIOPConnectionPerServer 1 -lat "$WORK/slow.lat.csv" >"$WORK/c1.log" 2>&1
stop_capture
tags "$WORK/slow.pcap" 40 > "$WORK/slow.tags"
if awk -F'\t' 'NR<=5 && $2 ~ /server/ {n++} END {exit !(n == 5)}' "$WORK/slow.tags"; then
	ok server "the 5 slowest calls are tagged server: $(head -1 "$WORK/slow.tags" | cut -f3)"
else
	ko server "$(head -5 "$WORK/slow.tags")"
fi

# --- queued: the same two threads on one connection to a second server that serves a
# connection's calls one at a time (-ORBmaxServerThreadPerConnection 1), so a call sent while
# the other thread's call sleeps waits for it.  The default server above hands a connection's
# calls to several threads: its replies come out of request order, which giopscope takes as
# "served concurrently" and then tags no call queued (reply order proves no wait there).
# The threads start together and each alternates 20000 and 0 us in opposite phase, so the
# call in flight beside a short one is a long one.  The join (python below):
#   giopscope --pairs (request id -> its four time stamps) with the client's -lat log
#   (thread,seq -> the sleep it asked for: usecs[(thread + seq) % 2], and its own latency) by
#   time: a call's request and reply lie inside its client row [t_start, t_end] (one clock:
#   the namespaces share the host's) and the row asked for the sleep the request carries on
#   the wire (its last 4 bytes); the assignment with the least slack on the two sides wins.
# Then for every call tagged "queued W us behind request N":
#   - it asked for 0 us (a short call), and request N asked for 20000 us (the culprit is long),
#     or, for a wait under 5 ms, N is a short call itself (sent while the short call queued
#     behind a long one was served, it waits for that one's own service);
#   - W = N's last reply byte - this call's last request byte, to 1 us (the text rounds to
#     0.1 us; both come from the same capture), and no longer than N was open (W is not
#     bounded by N's 20 ms: N may itself have waited behind the call before it);
#   - the client's own latency for the call is at least W: the client saw the wait too.
# And at least 3 calls are tagged, and every short call the client saw take >= 10 ms (it can
# only have waited; each thread's first call left out) is tagged: the tag finds the queued
# calls, not just some.
SRV2_PORT=2810
rm -f "$WORK/fifo.ior"
ns_start "$NS_SRV" "$WORK/server2.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$SRV2_PORT" \
	-ORBmaxServerThreadPerConnection 1 -o "$WORK/fifo.ior"
SRV2_PID=$NS_LAST_PID
if ns_wait_file "$WORK/fifo.ior" 15 && ns_wait_port "$NS_SRV" "$SRV2_PORT" 10; then
	capture "$WORK/fifo.pcap" "" "$SRV2_PORT"
	ns_run "$NS_CLI" 60 "$CLIENT" -i "$WORK/fifo.ior" -op slow -threads 2 -usecs 20000,0 -n 20 \
		-ORBoneCallPerConnection 0 -ORBmaxGIOPConnectionPerServer 1 -lat "$WORK/fifo.lat.csv" \
		>"$WORK/c1b.log" 2>&1
	crc=$?
	stop_capture
	"$GS" read "$WORK/fifo.pcap" --pairs --format jsonl > "$WORK/fifo.pairs" 2>/dev/null
	"$GS" read "$WORK/fifo.pcap" --tail 100 --format jsonl > "$WORK/fifo.tail" 2>/dev/null
	if out=$(python3 - "$WORK/fifo.pairs" "$WORK/fifo.tail" "$WORK/fifo.lat.csv" "$WORK/fifo.pcap" "$crc" 2>&1 <<'EOF'
import csv, json, re, struct, sys
pairs_f, tail_f, lat_f, pcap_f, crc = sys.argv[1:6]
LONG, SHORT = 20000, 0
if crc != "0":
    sys.exit("client exit %s" % crc)
calls = {}
for line in open(pairs_f):
    o = json.loads(line)
    if o.get("operation") == "slow" and o.get("t_reply_last") is not None:
        calls[o["request_id"]] = {k: int(o[k].replace(".", "")) for k in
                                  ("t_request_first", "t_request_last", "t_reply_first", "t_reply_last")}
rows = [r for r in csv.DictReader(open(lat_f)) if r["op"] == "slow"]
for r in rows:
    r["t0"], r["t1"], r["lat"] = int(r["t_start_ns"]), int(r["t_end_ns"]), int(r["latency_ns"])
    r["usec"] = int(r["size"])
    if r["usec"] != [LONG, SHORT][(int(r["thread"]) + int(r["seq"])) % 2]:
        sys.exit("lat row %s/%s: size %s is not usecs[(thread+seq)%%2]" % (r["thread"], r["seq"], r["size"]))
if len(rows) != 40 or len(calls) != 40:
    sys.exit("want 40 slow calls: client log %d, capture %d" % (len(rows), len(calls)))
# the sleep argument on the wire (GIOP 1.2 Request: id at 12, ulong last), byte order bit 0
wire = {}
d = open(pcap_f, "rb").read()
o = 24
while o + 16 <= len(d):
    cl = struct.unpack_from("<I", d, o + 8)[0]
    fr = d[o + 16:o + 16 + cl]
    o += 16 + cl
    ihl = (fr[14] & 15) * 4
    tcp = 14 + ihl
    pl = fr[tcp + (fr[tcp + 12] >> 4) * 4:]
    if pl[:4] == b"GIOP" and pl[7] == 0 and len(pl) >= 16:
        e = "<" if pl[6] & 1 else ">"
        n = struct.unpack_from(e + "I", pl, 8)[0]
        if len(pl) >= 12 + n:
            wire[struct.unpack_from(e + "I", pl, 12)[0]] = struct.unpack_from(e + "I", pl, 12 + n - 4)[0]
# join by time: the assignment of rows to calls with the least total slack (Hungarian
# method); a row that does not contain a call, or asked for another sleep than the request
# carries, costs too much to be chosen (the first calls of the two threads start together
# and the short one waits: by time alone both rows contain both calls)
BIG = 10**15
ids = sorted(calls)
cost = [[(calls[rid]["t_request_first"] - r["t0"]) + (r["t1"] - calls[rid]["t_reply_last"])
         if r["t0"] <= calls[rid]["t_request_first"] and calls[rid]["t_reply_last"] <= r["t1"]
         and r["usec"] == wire.get(rid) else BIG
         for r in rows] for rid in ids]
n = len(ids)
u, v, p, way = [0] * (n + 1), [0] * (n + 1), [0] * (n + 1), [0] * (n + 1)
for i in range(1, n + 1):
    p[0], j0 = i, 0
    minv, used = [float("inf")] * (n + 1), [False] * (n + 1)
    while p[j0]:
        used[j0], i0, delta, j1 = True, p[j0], float("inf"), 0
        for j in range(1, n + 1):
            if not used[j]:
                cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                if cur < minv[j]:
                    minv[j], way[j] = cur, j0
                if minv[j] < delta:
                    delta, j1 = minv[j], j
        for j in range(n + 1):
            if used[j]:
                u[p[j]] += delta
                v[j] -= delta
            else:
                minv[j] -= delta
        j0 = j1
    while j0:
        j1 = way[j0]
        p[j0] = p[j1]
        j0 = j1
row_of = {ids[p[j] - 1]: rows[j - 1] for j in range(1, n + 1) if cost[p[j] - 1][j - 1] < BIG}
if len(row_of) != len(calls):
    sys.exit("joined %d of %d calls with the client log" % (len(row_of), len(calls)))
# (omniORB's LocateRequests, one per client thread before its first call, may queue behind
# each other: they are not in the client's log, and not checked beyond being LocateRequests)
tagged, locates = {}, 0
for line in open(tail_f):
    o = json.loads(line)
    if o.get("type") == "tail" and "queued" in o["tags"]:
        m = re.search(r"queued ([0-9.]+) us behind request ([0-9]+)", o["reasons"])
        if o["operation"] == "" and o["request_id"] not in calls:
            locates += 1
            continue
        tagged[o["request_id"]] = (float(m.group(1)), int(m.group(2)))
if len(tagged) < 3:
    sys.exit("only %d calls tagged queued" % len(tagged))
msg = []
for rid, (w, n) in sorted(tagged.items()):
    me, cu = row_of[rid], row_of.get(n)
    if cu is None:
        sys.exit("request %d: culprit %d is not a slow call of the capture" % (rid, n))
    want = (calls[n]["t_reply_last"] - calls[rid]["t_request_last"]) / 1e3
    if me["usec"] != SHORT:
        sys.exit("request %d (thread %s seq %s) slept %d us but is tagged queued" % (rid, me["thread"], me["seq"], me["usec"]))
    # a wait of 10 ms and more can only be behind a long call; a short call can hold the
    # next one for its own service (a millisecond or so: the one queued behind a long call
    # is served after it, and a call sent then waits for that), never for 5 ms
    if cu["usec"] != LONG and (w >= 5000 or cu["usec"] != SHORT):
        sys.exit("request %d: culprit %d slept %d us, waited %.1f us behind it" % (rid, n, cu["usec"], w))
    if abs(w - want) > 1.0 or w * 1e3 > calls[n]["t_reply_last"] - calls[n]["t_request_first"]:
        sys.exit("request %d: wait %.1f us, culprit's reply - this request = %.1f us" % (rid, w, want))
    if me["lat"] / 1e3 < w:
        sys.exit("request %d: the client saw %.1f us, less than the wait %.1f us" % (rid, me["lat"] / 1e3, w))
    msg.append("%d(t%s/s%s %dus, client %.0f us) behind %d(t%s/s%s %dus): %.1f us, expected %.1f"
               % (rid, me["thread"], me["seq"], me["usec"], me["lat"] / 1e3, n, cu["thread"], cu["seq"],
                  cu["usec"], w, want))
# (a thread's first call is left out: it also pays the server's first dispatch on the connection)
missed = [rid for rid, r in row_of.items()
          if r["usec"] == SHORT and r["seq"] != "0" and r["lat"] >= 10e6 and rid not in tagged]
if missed:
    sys.exit("short calls the client saw take >= 10 ms, not tagged queued: %s" % missed)
chain = sum(1 for w, n in tagged.values() if row_of[n]["usec"] == SHORT)
print("%d slow calls tagged (and %d LocateRequests), all short, %d behind a long culprit, %d behind a short one by < 5 ms; %s"
      % (len(tagged), locates, len(tagged) - chain, chain, "; ".join(msg[:3])))
EOF
	); then
		ok queued "$out"
	else
		ko queued "$out"
	fi
else
	ko queued "the second server did not start"
fi
ns_stop "$SRV2_PID" TERM 20

# --- network: replies of 200 kB through a 20 Mbit/s tbf on the server's veth
ip netns exec "$NS_SRV" tc qdisc add dev "$NS_VETH_SRV" root tbf rate 20mbit burst 16kb latency 200ms
capture "$WORK/tbf.pcap"
ns_run "$NS_CLI" 60 "$CLIENT" -i "$WORK/echo.ior" -op echoOctets -size 200000 -n 5 \
	-lat "$WORK/tbf.lat.csv" >"$WORK/c2.log" 2>&1
stop_capture
ip netns exec "$NS_SRV" tc qdisc del dev "$NS_VETH_SRV" root
tags "$WORK/tbf.pcap" 3 > "$WORK/tbf.tags"
# 200 kB each way at 20 Mbit/s is 80 ms: the reply's crossing dominates
if awk -F'\t' '$2 ~ /network/ {n++} END {exit !(n == 3)}' "$WORK/tbf.tags"; then
	ok network "$(head -1 "$WORK/tbf.tags" | cut -f3)"
else
	ko network "$(cat "$WORK/tbf.tags")"
fi

# --- nagle: a client without TCP_NODELAY writing header and body separately
# The body waits for the server's delayed ACK of the header.  Linux delays an ACK by its
# delayed-ACK timer, 40 ms at least (TCP_DELACK_MIN), armed in jiffies (4 ms at HZ=250) and
# fired from a timer wheel, so the stall measures 40-48 ms here; 30-80 ms accepts that and
# excludes what would be something else: a pause of the client itself (a few ms), the 200 ms
# of TCP_DELACK_MAX or of the minimum retransmission timeout.  Asserted: the client exited 0
# (every reply NO_EXCEPTION), it saw stalls itself (its own stalls>=30ms count, round trips of
# 30 ms and more on its monotonic clock), at least half as many calls are tagged nagle as it
# saw stalls, and every stated stall is in 30-80 ms.
capture "$WORK/nagle.pcap"
ns_run "$NS_CLI" 120 python3 tests/orb/raw_giop_client.py "$WORK/echo.ior" 40 64 >"$WORK/c3.log" 2>&1
nrc=$?
stop_capture
"$GS" read "$WORK/nagle.pcap" --tail 100 --format jsonl > "$WORK/nagle.tail" 2>/dev/null
if out=$(python3 - "$WORK/nagle.tail" "$WORK/c3.log" "$nrc" 2>&1 <<'EOF'
import json, re, statistics, sys
tail_f, log_f, rc = sys.argv[1:4]
log = open(log_f).read().strip()
m = re.search(r"raw: calls=(\d+) stalls>=30ms=(\d+) bad=(\d+)", log)
if rc != "0" or not m:
    sys.exit("client exit %s: %s" % (rc, log))
calls, stalls, bad = map(int, m.groups())
if calls != 40 or bad or stalls == 0:
    sys.exit("client: %s (want 40 calls, 0 bad, stalls > 0)" % log)
ms = []
for line in open(tail_f):
    o = json.loads(line)
    if o.get("type") == "tail" and "nagle" in o["tags"]:
        ms.append(float(re.search(r"nagle ([0-9.]+) ms before the last request segment", o["reasons"]).group(1)))
if len(ms) * 2 < stalls:
    sys.exit("%d calls tagged nagle, the client saw %d stalls" % (len(ms), stalls))
out = [x for x in ms if not 30 <= x <= 80]
if out:
    sys.exit("stalls outside 30-80 ms: %s" % out)
print("%d calls tagged nagle (client: %d of %d calls >= 30 ms), stall min %.1f median %.1f max %.1f ms"
      % (len(ms), stalls, calls, min(ms), statistics.median(ms), max(ms)))
EOF
); then
	ok nagle "$out"
else
	ko nagle "$out"
fi

# --- retransmission and capture-loss: copies of the slow capture
python3 tests/integration/pcap_variants.py dupdata "$WORK/slow.pcap" "$WORK/dup.pcap" 4
keep_capture "$WORK/dup.pcap" tails-dup
if "$GS" read "$WORK/dup.pcap" --tail 100 --format jsonl 2>/dev/null | grep -q '"retransmission"'; then
	ok retransmission "repeated frames tag their calls"
else
	ko retransmission "no call tagged retransmission"
fi
# frames inside the 200 kB replies: their calls lost bytes to the capture
editcap "$WORK/tbf.pcap" "$WORK/cut.pcap" 60 61 200 >/dev/null 2>&1
keep_capture "$WORK/cut.pcap" tails-cut
if "$GS" read "$WORK/cut.pcap" --tail 100 --format jsonl 2>/dev/null | grep -q '"capture-loss"'; then
	ok capture-loss "deleted frames tag their calls"
else
	ko capture-loss "no call tagged capture-loss"
fi

ns_stop "$SRV_PID" TERM 20
echo "tails: $pass passed, $fail failed in $(( $(date +%s) - start )) s"
[ "$fail" -eq 0 ]
