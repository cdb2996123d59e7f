#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/dpdk_counters.sh -- `giopscope dpdk`: the port counters are read, printed and
# counted as loss when DPDK really loses packets, and --metrics serves the same calls as the pairs
# output of the same run.
#
# Loss is forced through two DPDK paths, each against a control that differs in one thing only:
#
#   nombuf-*   rx_nombuf, a pool too small (net_pcap replay). net_pcap allocates an mbuf for each
#              frame it reads inside rte_eth_rx_burst, and chains more for a frame larger than one
#              mbuf; when the head allocation fails it counts rx_nombuf and the frame it already
#              read from the file is gone. giopscope frees every burst before the next poll and
#              refuses --mbufs under 1024 (--burst is at most 512), so only frames of many mbufs
#              can drain the pool: a synthetic capture (tests/bad/make_bad.py's GIOP/TCP
#              encoder: 200 echoOctets calls of 12.8 KB each way) whose every frame is padded
#              (an Ethernet trailer, ignored by decoders) to 15872 bytes = 16 mbufs of
#              --mbuf-size 1024 (896 bytes after the 128-byte headroom, then 1024 per chained
#              mbuf; 16 for any headroom up to 512). --mbufs 1024 holds 64 such frames, so each
#              --burst 512 gives 64 frames and loses the 65th at its head allocation: exactly
#              FRAMES / 65 lost, all as rx_nombuf (none as ierrors, a failed chain).
#     nombuf-tiny-pool   rx_nombuf = FRAMES/65, ipackets + rx_nombuf = FRAMES, imissed = ierrors
#                        = 0; "packets lost before the decoder: ... rx_nombuf N" on stderr, the
#                        text summary's "kernel drops N"; the decoder saw the holes (capture gaps)
#                        and the calls differ from `giopscope read` of the file
#     nombuf-jsonl       the same run with --format jsonl: the counters record's kernel_drops = N
#     nombuf-normal-pool the same file and --burst 512 with the default pool: every counter 0 but
#                        ipackets = FRAMES, no loss line, calls equal to `read`'s (times within 1 us)
#   imissed-*  imissed, a ring that overflows while the poller is away (net_pcap on a live
#              interface, rx_iface=: libpcap's ring, whose drops net_pcap reports as imissed via
#              pcap_stats). A veth pair in a private network namespace (IPv6 off: no frame but
#              ours); giopscope dpdk on one end is stopped (SIGSTOP: the poller is away), the
#              frames of v05_multiplexed.pcap are sent into the other end with an AF_PACKET
#              socket, then it is continued (SIGCONT) and interrupted (SIGINT).
#     imissed-overflow   40 copies (43760 frames) sent: imissed > 0 and ipackets + imissed = frames
#                        sent, rx_nombuf = 0; the loss line says "interface N", the summary
#                        "kernel drops N", and /metrics (scraped before SIGINT)
#                        giopscope_dropped_packets_total{where="interface"} = N
#     imissed-fits       the first 300 frames (fewer than the ring held in the overflow run, which
#                        is checked): imissed = 0, ipackets = 300, no loss line, the same calls as
#                        `read` of those 300 frames (time columns ignored: kernel stamps)
#   Not forced: imissed/rx_nombuf of net_af_packet and net_af_xdp (22.11 counts neither: the
#   kernel's ring drops are invisible, see docs/dpdk.md), net_null (allocates a whole burst with
#   rte_pktmbuf_alloc_bulk and returns 0 on failure, counting nothing) and net_ring (hands over
#   mbufs someone else enqueued: no allocation on receive, and nothing here enqueues).
#
# Metrics (issue 5's --metrics for dpdk):
#   metrics-replay   a net_pcap replay of v13_oneway_exceptions.pcap with --metrics and
#                    --duration (a replay with both serves its final figures until --duration
#                    instead of ending with the file) scraped with curl once the file is done
#                    (giopscope_packets_total = its frames, no open call): tests/lib/prom_check.py
#                    (Prometheus text format, cumulative buckets, per-operation calls, answered
#                    and errors equal to the pairs CSV at the scrape); the pairs equal `read`'s;
#                    the run ends by itself at --duration, exit 0, "then --duration reached".
#
# Every DPDK run: --no-huge --no-pci and its own --file-prefix (gs-dc-PID-N), bounded by timeout
# (or a bounded wait and SIGKILL for the ones in the background); everything started here is
# stopped by its pid at exit, the namespace deleted.
#
# usage: tests/integration/dpdk_counters.sh
# environment: GIOPSCOPE (default $BUILD/giopscope), BUILD (build), NS_VERBOSE=1
# Prints PASS/FAIL lines and "N passed, N failed"; exit 0, 1 on a failure, 77 (a SKIP line) when
# not root or giopscope was built without DPDK.

# shellcheck disable=SC2317,SC2034  # hooks and netns.sh variables are used indirectly
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
G=${GIOPSCOPE:-$BUILD/giopscope}
COMPARE=tests/oracle/compare_pairs.py
TIMECOLS=t_request_first,t_request_last,t_reply_first,t_reply_last,total_us,server_us
TMO=60

# dr_require (skip unless root and giopscope has DPDK), ok and bad (PASS/FAIL lines)
. tests/lib/dpdk_replay.sh
dr_require

. tests/lib/netns.sh

pass=0 fail=0
finish() {
	echo "$pass passed, $fail failed ($(($(date +%s) - start)) s)"
	[ "$fail" -eq 0 ]
	exit $?
}
start=$(date +%s)
for tool in python3 timeout ip; do
	command -v "$tool" >/dev/null 2>&1 || { bad setup "$tool not installed"; finish; }
done

W=$(mktemp -d /tmp/gs-dpdk-counters.XXXXXX) || exit 2
PREFIX="gs-dc-$$"
RUN=0
# DPDK's run-time directories of our prefixes (a run killed before rte_eal_cleanup leaves one)
work_cleanup() {
	local pid
	for pid in $NS_PIDS; do kill -s CONT "$pid" 2>/dev/null; done   # a stopped one takes TERM
	rm -rf "$W" /var/run/dpdk/"$PREFIX"-*
}
NS_CLEANUP_HOOK=work_cleanup
NS_LIST=""
trap 'ns_cleanup' EXIT
trap 'ns_cleanup; trap - EXIT; exit 130' INT
trap 'ns_cleanup; trap - EXIT; exit 143' TERM

# eal: the EAL options of one run: no huge pages, no PCI, a prefix of its own
eal() {
	RUN=$((RUN + 1))
	EAL=(--no-huge --no-pci --file-prefix "$PREFIX-$RUN")
}

# port_counter LOG PORT NAME: NAME's value in "giopscope dpdk: PORT: ipackets N, imissed N, ..."
port_counter() {
	sed -n "s/^giopscope dpdk: $2: .*\b$3 \([0-9]*\).*/\1/p" "$1" | head -1
}
# summary_drops LOG: N of the text summary's "kernel drops N" (empty when none)
summary_drops() { sed -n 's/^problems: .*, kernel drops \([0-9]*\).*/\1/p' "$1" | head -1; }
# lost_line LOG: the "packets lost before the decoder" line
lost_line() { grep "packets lost before the decoder" "$1"; }

# no_loss RC NAME PACKETS READ.csv [compare options]: the checks of a control run, into $why
# (empty: passed) and $counters: exit 0, the port counters PACKETS received and nothing lost,
# no loss line, no drops in the summary, and the calls of $W/NAME.csv those of READ.csv
# (the comparison kept in $W/NAME.cmp).
no_loss() {
	local rc=$1 name=$2 packets=$3 ref=$4
	shift 4
	counters=$(grep -o "net_pcap0: ipackets.*" "$W/$name.err")
	why=""
	[ "$rc" = 0 ] || why="exit $rc"
	[ -z "$why" ] && [ "$counters" != "net_pcap0: ipackets $packets, imissed 0, ierrors 0, rx_nombuf 0" ] &&
		why="counters '$counters', expected ipackets $packets and no loss"
	[ -z "$why" ] && lost_line "$W/$name.err" >/dev/null && why="a loss line: $(lost_line "$W/$name.err")"
	[ -z "$why" ] && [ -n "$(summary_drops "$W/$name.err")" ] && why="the summary reports drops"
	[ -z "$why" ] && ! python3 "$COMPARE" "$ref" "$W/$name.csv" "$@" >"$W/$name.cmp" 2>&1 &&
		why="calls differ from read: $(tail -1 "$W/$name.cmp")"
}
# frames FILE: the records of a classic pcap file
frames() {
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
e = "<" if struct.unpack("<I", d[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else ">"
o, n = 24, 0
while o + 16 <= len(d):
    o += 16 + struct.unpack(e + "IIII", d[o:o + 16])[2]
    n += 1
print(n)
PY
}
# stopped PID: the process is stopped (state T), waited for up to 5 s
stopped() {
	local st
	for _ in $(seq 1 50); do
		st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
		[ "$st" = T ] && return 0
		sleep 0.1
	done
	return 1
}

# ------------------------------------------------------------------ rx_nombuf: a pool too small

BIG=$W/big.pcap
python3 - "$BIG" <<'PY' >"$W/big.log" 2>&1 || { bad setup "cannot write the synthetic capture" "$(cat "$W/big.log")"; finish; }
import random, sys
sys.path.insert(0, "tests/bad")
import make_bad as mb   # the GIOP/TCP/pcap encoder of the bad-input tests
L = 15872               # 16 mbufs of --mbuf-size 1024 whatever the headroom (0..512)
cap = mb.Capture()
conn = mb.Conn(cap, mss=65000).handshake()
rng = random.Random(6)
rid = 1
for _ in range(200):
    data = mb.CDR(True).octets(bytes(rng.getrandbits(8) for _ in range(64)) * 200).b
    conn.call(mb.request12(rid, "echoOctets", body=data), mb.reply12(rid, 0, body=data))
    rid += 2
conn.close()
recs = []
for (s, f, c, w, d) in cap.records:
    assert len(d) <= L, len(d)
    d += b"\0" * (L - len(d))           # an Ethernet trailer after the IP packet
    recs.append((s, f - f % 1000, L, L, d))  # whole microseconds: net_pcap's precision
p = mb.Pcap()
p.records = recs
open(sys.argv[1], "wb").write(p.to_bytes())
PY
NBIG=$(frames "$BIG")
"$G" read "$BIG" --pairs >"$W/big.read.csv" 2>"$W/big.read.err" || { bad setup "read of the synthetic capture failed" "$(cat "$W/big.read.err")"; finish; }
# what the pool sizes predict: 1024 / 16 frames per burst, the 65th lost
PER_BURST=$((1024 / 16))
WANT_NOMBUF=$((NBIG / (PER_BURST + 1)))

# nombuf-tiny-pool
eal
timeout -k 5 "$TMO" "$G" dpdk "${EAL[@]}" --vdev "net_pcap0,rx_pcap=$BIG" --mbufs 1024 --mbuf-size 1024 \
	--burst 512 --pairs --summary -o "$W/tiny.csv" 2>"$W/tiny.err"
rc=$?
ip=$(port_counter "$W/tiny.err" net_pcap0 ipackets)
nb=$(port_counter "$W/tiny.err" net_pcap0 rx_nombuf)
im=$(port_counter "$W/tiny.err" net_pcap0 imissed)
ie=$(port_counter "$W/tiny.err" net_pcap0 ierrors)
sd=$(summary_drops "$W/tiny.err")
gaps=$(sed -n 's/^TCP: .*capture gaps \([0-9]*\).*/\1/p' "$W/tiny.err")
why=""
[ "$rc" = 0 ] || why="exit $rc"
[ -z "$why" ] && [ "${nb:-x}" != "$WANT_NOMBUF" ] && why="rx_nombuf ${nb:-?}, predicted $WANT_NOMBUF ($NBIG frames, $PER_BURST a burst)"
[ -z "$why" ] && [ $((ip + nb)) != "$NBIG" ] && why="ipackets $ip + rx_nombuf $nb != $NBIG frames in the file"
[ -z "$why" ] && { [ "$im" != 0 ] || [ "$ie" != 0 ]; } && why="loss in the wrong counter: imissed $im, ierrors $ie"
[ -z "$why" ] && ! lost_line "$W/tiny.err" | grep -q "kernel 0, interface 0, rx_nombuf $nb\$" &&
	why="no 'packets lost before the decoder: ... rx_nombuf $nb'"
[ -z "$why" ] && [ "${sd:-0}" != "$nb" ] && why="the summary says kernel drops ${sd:-none}, not $nb"
[ -z "$why" ] && [ "${gaps:-0}" -eq 0 ] && why="the decoder saw no capture gap"
[ -z "$why" ] && python3 "$COMPARE" "$W/big.read.csv" "$W/tiny.csv" >"$W/tiny.cmp" 2>&1 &&
	why="the calls are those of read despite the loss"
if [ -z "$why" ]; then
	ok nombuf-tiny-pool "$NBIG frames, ipackets $ip, rx_nombuf $nb (predicted $WANT_NOMBUF), imissed 0, ierrors 0; $(lost_line "$W/tiny.err" | sed 's/^giopscope dpdk: //'); capture gaps $gaps; $(($(wc -l <"$W/tiny.csv") - 1)) of $(($(wc -l <"$W/big.read.csv") - 1)) calls"
else
	bad nombuf-tiny-pool "$why" "$(grep -v '^ ' "$W/tiny.err" | tail -12)"
fi

# nombuf-jsonl: the same loss in the JSONL summary's counters record
eal
timeout -k 5 "$TMO" "$G" dpdk "${EAL[@]}" --vdev "net_pcap0,rx_pcap=$BIG" --mbufs 1024 --mbuf-size 1024 \
	--burst 512 --format jsonl -o "$W/tiny.jsonl" 2>"$W/tiny_jsonl.err"
rc=$?
nb=$(port_counter "$W/tiny_jsonl.err" net_pcap0 rx_nombuf)
kd=$(python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(",".join(str(r["kernel_drops"]) for r in recs if r.get("type") == "counters"))' "$W/tiny.jsonl" 2>&1)
if [ "$rc" = 0 ] && [ -n "$nb" ] && [ "$nb" -gt 0 ] && [ "$kd" = "$nb" ] && lost_line "$W/tiny_jsonl.err" | grep -q "rx_nombuf $nb\$"; then
	ok nombuf-jsonl "counters record kernel_drops $kd = rx_nombuf $nb"
else
	bad nombuf-jsonl "exit $rc, rx_nombuf ${nb:-?}, JSONL kernel_drops '${kd}'" "$(tail -5 "$W/tiny_jsonl.err")"
fi

# nombuf-normal-pool: the same replay, the same bursts, the default pool
eal
timeout -k 5 "$TMO" "$G" dpdk "${EAL[@]}" --vdev "net_pcap0,rx_pcap=$BIG" --burst 512 \
	--pairs --summary -o "$W/normal.csv" 2>"$W/normal.err"
no_loss $? normal "$NBIG" "$W/big.read.csv"
if [ -z "$why" ]; then
	ok nombuf-normal-pool "$counters; $(tail -1 "$W/normal.cmp")"
else
	bad nombuf-normal-pool "$why" "$(grep -v '^ ' "$W/normal.err" | tail -8)" "$(head -5 "$W/normal.cmp" 2>/dev/null)"
fi

# ------------------------------------------------------------------ a namespace of our own

NS="gs-dc-$$"
VA="gsdc$$a" VB="gsdc$$b"
if ! ip netns add "$NS"; then
	bad setup "cannot create the network namespace $NS"
	finish
fi
NS_LIST=$NS
if ! ip netns exec "$NS" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 ||
   ! ip -n "$NS" link set lo up || ! ip -n "$NS" link add "$VA" type veth peer name "$VB" ||
   ! ip -n "$NS" link set "$VA" up || ! ip -n "$NS" link set "$VB" up; then
	bad setup "cannot set up lo and the veth pair in $NS"
	finish
fi
MPORT=9464   # in our own namespace: no other test's port
have_curl=1
command -v curl >/dev/null 2>&1 || have_curl=0
scrape() { ip netns exec "$NS" curl -s -m 5 "http://127.0.0.1:$MPORT/metrics"; }
# metric SCRAPE LINE-START: the value of the first sample starting so
metric() { awk -v s="$2" 'index($0, s) == 1 { print $NF; exit }' "$1" 2>/dev/null; }

# inject PCAP PASSES [MAX_FRAMES]: PCAP's frames (the first MAX_FRAMES) sent PASSES times into VA;
# prints the number sent
INJECT=$W/inject.py
cat >"$INJECT" <<'PY'
import socket, struct, sys
cap, iface, passes = sys.argv[1], sys.argv[2], int(sys.argv[3])
limit = int(sys.argv[4]) if len(sys.argv) > 4 else None
d = open(cap, "rb").read()
assert struct.unpack("<I", d[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d), "a little-endian classic pcap"
assert struct.unpack("<I", d[20:24])[0] == 1, "Ethernet"
frames, o = [], 24
while o + 16 <= len(d):
    cl = struct.unpack("<IIII", d[o:o + 16])[2]
    frames.append(d[o + 16:o + 16 + cl])
    o += 16 + cl
frames = frames[:limit]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
n = 0
for _ in range(passes):
    for f in frames:
        s.send(f)
        n += 1
print(n)
PY
inject() { timeout -k 5 60 ip netns exec "$NS" python3 "$INJECT" "$1" "$VA" "$2" ${3:+"$3"}; }

# live_run NAME: giopscope dpdk on VB (net_pcap rx_iface=), in the background; GS_PID
live_run() {
	eal
	ns_start "$NS" "$W/$1.err" "$G" dpdk "${EAL[@]}" --vdev "net_pcap0,rx_iface=$VB" --pairs --summary \
		-o "$W/$1.csv" ${2:+--metrics "127.0.0.1:$MPORT"}
	GS_PID=$NS_LAST_PID
	ns_wait_grep "$W/$1.err" "polling on lcore" 30
}

# ------------------------------------------------------------------ imissed: a ring that overflows

V05=tests/data/corpus/v05_multiplexed.pcap
RING_HELD=""
if live_run overflow metrics; then
	kill -s STOP "$GS_PID"
	if stopped "$GS_PID"; then
		sent=$(inject "$V05" 40)
		kill -s CONT "$GS_PID"
		# drained and counted (the counters are read every 20 ms): bounded wait for the scrape
		# to account for every frame sent, else the last scrape is judged
		for _ in $(seq 1 50); do
			[ "$have_curl" = 1 ] || { sleep 1; break; }
			scrape >"$W/overflow.scrape" 2>/dev/null
			p=$(metric "$W/overflow.scrape" "giopscope_packets_total ")
			d=$(metric "$W/overflow.scrape" 'giopscope_dropped_packets_total{where="interface"}')
			[ -n "$p" ] && [ -n "$d" ] && [ $((p + d)) -ge "${sent:-0}" ] && break
			sleep 0.1
		done
		ns_stop "$GS_PID" INT 20
		rc=$?
		ip=$(port_counter "$W/overflow.err" net_pcap0 ipackets)
		im=$(port_counter "$W/overflow.err" net_pcap0 imissed)
		nb=$(port_counter "$W/overflow.err" net_pcap0 rx_nombuf)
		sd=$(summary_drops "$W/overflow.err")
		why=""
		[ "$rc" = 0 ] || why="exit $rc after SIGINT"
		[ -z "$why" ] && [ -z "$sent" ] && why="the frames were not sent"
		[ -z "$why" ] && [ "${im:-0}" -eq 0 ] && why="imissed ${im:-?}: no loss counted"
		[ -z "$why" ] && [ $((ip + im)) != "$sent" ] && why="ipackets $ip + imissed $im != $sent frames sent"
		[ -z "$why" ] && [ "$nb" != 0 ] && why="rx_nombuf $nb"
		[ -z "$why" ] && ! lost_line "$W/overflow.err" | grep -q "kernel 0, interface $im, rx_nombuf 0\$" &&
			why="no 'packets lost before the decoder: kernel 0, interface $im, ...'"
		[ -z "$why" ] && [ "${sd:-0}" != "$im" ] && why="the summary says kernel drops ${sd:-none}, not $im"
		if [ -z "$why" ] && [ "$have_curl" = 1 ]; then
			md=$(metric "$W/overflow.scrape" 'giopscope_dropped_packets_total{where="interface"}')
			[ "$md" = "$im" ] || why="/metrics says interface drops ${md:-none}, the port imissed $im"
		fi
		if [ -z "$why" ]; then
			RING_HELD=$ip
			ok imissed-overflow "$sent frames sent while stopped: ipackets $ip, imissed $im, rx_nombuf 0; $(lost_line "$W/overflow.err" | sed 's/^giopscope dpdk: //'); summary kernel drops $sd${md:+; /metrics interface drops $md}"
		else
			bad imissed-overflow "$why" "$(grep -v '^ ' "$W/overflow.err" | tail -10)"
		fi
	else
		ns_stop "$GS_PID" KILL 5
		bad imissed-overflow "giopscope dpdk did not stop on SIGSTOP"
	fi
else
	ns_stop "$GS_PID" INT 10
	bad imissed-overflow "giopscope dpdk did not start" "$(tail -5 "$W/overflow.err")"
fi

# imissed-fits: the first 300 frames, fewer than the ring held above
FIT=300
python3 - "$V05" "$W/fit.pcap" "$FIT" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
o, n = 24, int(sys.argv[3])
for _ in range(n):
    o += 16 + struct.unpack("<IIII", d[o:o + 16])[2]
open(sys.argv[2], "wb").write(d[:o])
PY
"$G" read "$W/fit.pcap" --pairs >"$W/fit.read.csv" 2>/dev/null
if [ -z "$RING_HELD" ]; then
	bad imissed-fits "no ring size known (imissed-overflow failed)"
elif [ "$RING_HELD" -le "$FIT" ]; then
	bad imissed-fits "the ring held only $RING_HELD frames: $FIT would not fit either"
elif live_run fits; then
	kill -s STOP "$GS_PID"
	if stopped "$GS_PID"; then
		sent=$(inject "$W/fit.pcap" 1)
		kill -s CONT "$GS_PID"
		for _ in $(seq 1 30); do sleep 0.1; done   # drained at once; the counters every 20 ms
		ns_stop "$GS_PID" INT 20
		no_loss $? fits "$FIT" "$W/fit.read.csv" --no-order --ignore "$TIMECOLS"
		[ -n "$why" ] && why="$why ($sent frames sent; after SIGINT)"
		if [ -z "$why" ]; then
			ok imissed-fits "$sent frames sent while stopped (the ring held $RING_HELD): $counters; $(tail -1 "$W/fits.cmp") (time columns ignored)"
		else
			bad imissed-fits "$why" "$(grep -v '^ ' "$W/fits.err" | tail -8)" "$(head -5 "$W/fits.cmp" 2>/dev/null)"
		fi
	else
		ns_stop "$GS_PID" KILL 5
		bad imissed-fits "giopscope dpdk did not stop on SIGSTOP"
	fi
else
	ns_stop "$GS_PID" INT 10
	bad imissed-fits "giopscope dpdk did not start" "$(tail -5 "$W/fits.err")"
fi

# ------------------------------------------------------------------ --metrics on a replay

V13=tests/data/corpus/v13_oneway_exceptions.pcap
N13=$(frames "$V13")
"$G" read "$V13" --pairs >"$W/v13.read.csv" 2>/dev/null
if [ "$have_curl" = 0 ]; then
	bad metrics-replay "curl not installed"
else
	eal
	ns_start "$NS" "$W/mreplay.err" "$G" dpdk "${EAL[@]}" --vdev "net_pcap0,rx_pcap=$V13" --pairs \
		-o "$W/mreplay.csv" --metrics "127.0.0.1:$MPORT" --duration 6
	GS_PID=$NS_LAST_PID
	done_=0
	t0=$(date +%s.%N)
	if ns_wait_grep "$W/mreplay.err" "polling on lcore" 30; then
		# the file is done once every frame was decoded and no call is open (bounded)
		for _ in $(seq 1 40); do
			scrape >"$W/mreplay.scrape" 2>/dev/null
			cp "$W/mreplay.csv" "$W/mreplay.at_scrape.csv" 2>/dev/null
			if [ "$(metric "$W/mreplay.scrape" "giopscope_packets_total ")" = "$N13" ] &&
			   [ "$(metric "$W/mreplay.scrape" "giopscope_open_calls ")" = 0 ]; then
				done_=1
				break
			fi
			sleep 0.1
		done
	fi
	t1=$(date +%s.%N)
	alive=0
	ns_alive "$GS_PID" && alive=1
	# ends by itself at --duration (bounded: ns_stop's wait, then KILL)
	for _ in $(seq 1 100); do ns_alive "$GS_PID" || break; sleep 0.1; done
	ns_stop "$GS_PID" INT 10
	rc=$?
	python3 tests/lib/prom_check.py "$W/mreplay.scrape" "$W/mreplay.at_scrape.csv" >"$W/mreplay.check" 2>&1
	why=""
	[ "$done_" = 1 ] || why="the scrape never showed the whole file ($N13 frames) with no open call"
	[ -z "$why" ] && [ "$alive" != 1 ] && why="giopscope had exited when the scrape was done"
	[ -z "$why" ] && [ "$rc" != 0 ] && why="exit $rc"
	[ -z "$why" ] && ! grep -q "stopped: end of the capture file, then --duration reached" "$W/mreplay.err" &&
		why="did not end at --duration after the file: $(grep -o 'stopped: .*' "$W/mreplay.err")"
	if [ -z "$why" ]; then
		for k in FORMAT BUCKETS COUNTS; do
			grep -q "^$k ok " "$W/mreplay.check" || why="${why:+$why; }$(grep "^$k " "$W/mreplay.check" || cat "$W/mreplay.check")"
		done
	fi
	[ -z "$why" ] && ! cmp -s "$W/mreplay.at_scrape.csv" "$W/mreplay.csv" && why="calls written after the scrape"
	[ -z "$why" ] && ! python3 "$COMPARE" "$W/v13.read.csv" "$W/mreplay.csv" >"$W/mreplay.cmp" 2>&1 &&
		why="calls differ from read: $(tail -1 "$W/mreplay.cmp")"
	if [ -z "$why" ]; then
		ok metrics-replay "scraped $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s after the start: $(tr '\n' ';' <"$W/mreplay.check" | sed 's/;$//; s/;/; /g'); $(tail -1 "$W/mreplay.cmp")"
	else
		bad metrics-replay "$why" "$(grep -v '^ ' "$W/mreplay.err" | tail -6)" "$(cat "$W/mreplay.check")"
	fi
fi

finish
