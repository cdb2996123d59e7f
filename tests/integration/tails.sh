#!/usr/bin/env bash
# Tail reasons on real omniORB/Combat traffic where the cause is known:
#   server          slow(20 ms) calls: the servant held them
#   queued          fast calls sharing one connection with slow ones: they wait behind them
#   network         a reply crossing a veth slowed with tc tbf
#   nagle           a client without TCP_NODELAY (tests/orb/raw_giop_client.py: header and
#                   body in two writes) whose request body waits for the server's delayed ACK
#   retransmission  frames repeated in a copy of a capture
#   capture-loss    frames deleted from a copy of a capture (editcap)
# Each: `giopscope read --tail N --format jsonl` and the tags of the slowest calls.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/netns.sh
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
capture() { # capture FILE [IFACE]
	ns_start "$NS_SRV" "$WORK/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
		--time-stamp-precision=nano -U -i "${2:-$NS_VETH_SRV}" -w "$1" "tcp port $PORT"
	TD_PID=$NS_LAST_PID
	ns_wait_grep "$WORK/tcpdump.log" "listening on" 15
}
stop_capture() { sleep 0.3; ns_stop "$TD_PID" INT 15; }

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

# --- server and queued: one connection, 2 threads, sleeps cycling 0 and 20000 us
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
if grep -q 'queued [0-9.]* us behind request [0-9]* (slow)' "$WORK/slow.tags"; then
	ok queued "$(grep 'queued' "$WORK/slow.tags" | head -1 | cut -f3)"
else
	ko queued "no call tagged queued behind a slow call: $(head -3 "$WORK/slow.tags")"
fi

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
capture "$WORK/nagle.pcap"
ns_run "$NS_CLI" 120 python3 tests/orb/raw_giop_client.py "$WORK/echo.ior" 40 64 >"$WORK/c3.log" 2>&1
stop_capture
tags "$WORK/nagle.pcap" 10 > "$WORK/nagle.tags"
# the body waits for the server's delayed ACK of the header: tens of milliseconds
if grep -q 'nagle [0-9.]* ms before the last request segment' "$WORK/nagle.tags"; then
	ok nagle "$(grep 'nagle' "$WORK/nagle.tags" | head -1 | cut -f3) ($(cat "$WORK/c3.log"))"
else
	ko nagle "no nagle stall found ($(cat "$WORK/c3.log")): $(head -3 "$WORK/nagle.tags")"
fi

# --- retransmission and capture-loss: copies of the slow capture
python3 tests/integration/pcap_variants.py dupdata "$WORK/slow.pcap" "$WORK/dup.pcap" 4
if "$GS" read "$WORK/dup.pcap" --tail 100 --format jsonl 2>/dev/null | grep -q '"retransmission"'; then
	ok retransmission "repeated frames tag their calls"
else
	ko retransmission "no call tagged retransmission"
fi
# frames inside the 200 kB replies: their calls lost bytes to the capture
editcap "$WORK/tbf.pcap" "$WORK/cut.pcap" 60 61 200 >/dev/null 2>&1
if "$GS" read "$WORK/cut.pcap" --tail 100 --format jsonl 2>/dev/null | grep -q '"capture-loss"'; then
	ok capture-loss "deleted frames tag their calls"
else
	ko capture-loss "no call tagged capture-loss"
fi

ns_stop "$SRV_PID" TERM 20
echo "tails: $pass passed, $fail failed in $(( $(date +%s) - start )) s"
[ "$fail" -eq 0 ]
