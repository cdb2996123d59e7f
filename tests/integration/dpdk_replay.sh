#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/dpdk_replay.sh -- `giopscope dpdk` replaying captures through DPDK's net_pcap
# driver (--vdev net_pcap0,rx_pcap=FILE, --no-huge when no huge pages are set up) must give the
# same calls as `giopscope read FILE`.
#
# For every capture of tests/data/corpus and tests/data/omniorb_demo.pcap:
#   same calls     compare_pairs.py READ.csv DPDK.csv: request ids, operations, statuses, sizes,
#                  retransmits equal; time stamps within 1 us (the comparer's default tolerance)
#   same times     net_pcap passes the file's time stamps, but cut to microseconds (it opens the
#                  file with pcap_open_offline): compared EXACTLY (--tolerance-ns 0) with `read`
#                  of the file cut to microseconds by `editcap -F pcap` (skipped without editcap)
#   says so        the summary names the time source "capture file (net_pcap, us)"
#   ends by itself the replay stops at the end of the file (exit 0, under a timeout)
# Then, on one capture: every link type and IPv6 (tests/integration/pcap_variants.py; net_pcap
# passes bytes whatever the link type, giopscope takes it from the file), capture loss,
# reordering and duplicates, time stamps past 2038, pcapng; two files as two RX queues of one port and as two ports;
# infinite_rx (the TSC time source, stopped by --duration); --count.
#
# usage: tests/integration/dpdk_replay.sh        environment: GIOPSCOPE (default build/giopscope)
# Prints PASS/FAIL lines and "N passed, N failed"; exit 0, 1 on a failure, 77 when skipped (not
# root, giopscope built without DPDK).
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2
# the replay and comparison functions (ok, bad, dpdk, same, replay, replay_capture) are shared
# with tests/integration/after/dpdk_replay_kept.sh
. tests/lib/dpdk_replay.sh
G=${GIOPSCOPE:-build/giopscope}
dr_require

tmp=$(mktemp -d /tmp/gs-dpdk-replay.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
dr_init "$tmp"
start=$(date +%s)

for cap in tests/data/corpus/*.pcap tests/data/omniorb_demo.pcap; do
	replay_capture "$(basename "$cap" .pcap)" "$cap"
done

# link types, IPv6, capture disorder, pcapng: net_pcap hands over the bytes, the file says what they are
cap=tests/data/corpus/v13_oneway_exceptions.pcap
for v in vlan qinq sll sll2 raw null loop ipv6 "drop 7" "reorder 9" "dup 3" "mix 5"; do
	# shellcheck disable=SC2086  # "kind [seed]"
	set -- $v
	python3 tests/integration/pcap_variants.py "$1" "$cap" "$tmp/v.pcap" ${2:+"$2"}
	replay "v13-$1${2:+-$2}" "$tmp/v.pcap"
done
# seconds past 2038 in a classic pcap: libpcap reads them signed, net_pcap multiplies them out
# unsigned; giopscope undoes that as `read` does
python3 - "$cap" "$tmp/y2097.pcap" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
o, first = 24, None
while o + 16 <= len(d):
    ts, _, cl, _ = struct.unpack("<IIII", d[o:o + 16])
    first = ts if first is None else first
    struct.pack_into("<I", d, o, 0xF0000000 + ts - first)
    o += 16 + cl
open(sys.argv[2], "wb").write(d)
PY
replay v13-year-2097 "$tmp/y2097.pcap"
if [ "$have_editcap" = 1 ] && editcap -F pcapng "$cap" "$tmp/v.pcapng" >/dev/null 2>&1; then
	replay v13-pcapng "$tmp/v.pcapng"
fi

# two files: two RX queues of one port, then two ports; the calls of both
A=tests/data/corpus/v01_giop12_echo2000.pcap
B=tests/data/corpus/v05_multiplexed.pcap
"$G" read "$A" --pairs >"$tmp/ab.csv"
"$G" read "$B" --pairs | tail -n +2 >>"$tmp/ab.csv"
if dpdk two-queues "$tmp/q.csv" --vdev "net_pcap0,rx_pcap=$A,rx_pcap=$B"; then
	if grep -q "2 RX queues" "$tmp/two-queues.err"; then
		same two-queues "$tmp/ab.csv" "$tmp/q.csv" --no-order
	else
		bad two-queues "not polled as 2 RX queues" "$(cat "$tmp/two-queues.err")"
	fi
else
	bad two-queues "exit $?" "$(cat "$tmp/two-queues.err")"
fi
if dpdk two-ports "$tmp/p.csv" --vdev "net_pcap0,rx_pcap=$A" --vdev "net_pcap1,rx_pcap=$B"; then
	if grep -q "capturing on net_pcap1" "$tmp/two-ports.err"; then
		same two-ports "$tmp/ab.csv" "$tmp/p.csv" --no-order
	else
		bad two-ports "net_pcap1 not captured" "$(cat "$tmp/two-ports.err")"
	fi
else
	bad two-ports "exit $?" "$(cat "$tmp/two-ports.err")"
fi

# infinite_rx: the driver loops over the file without its time stamps (TSC then), --duration stops it
t0=$(date +%s.%N)
dpdk infinite "$tmp/inf.csv" --vdev "net_pcap0,rx_pcap=$A,infinite_rx=1" --duration 1 --summary
rc=$?
t1=$(date +%s.%N)
rows=$(($(wc -l <"$tmp/inf.csv") - 1))
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
if [ "$rc" = 0 ] && [ "$rows" -gt 2001 ] && grep -q "time stamps: TSC at receive" "$tmp/infinite.err" &&
   grep -q "stopped: --duration reached" "$tmp/infinite.err" && awk -v s="$secs" 'BEGIN { exit !(s < 15) }'; then
	ok infinite_rx "$rows calls in ${secs} s, time stamps from the TSC"
else
	bad infinite_rx "exit $rc, $rows rows, ${secs} s" "$(cat "$tmp/infinite.err")"
fi

# --count: stops early (the calls still open at the stop are written too, as with live)
dpdk count "$tmp/count.csv" --vdev "net_pcap0,rx_pcap=$A,infinite_rx=1" --count 100
rc=$?
rows=$(($(wc -l <"$tmp/count.csv") - 1))
if [ "$rc" = 0 ] && [ "$rows" -ge 100 ] && [ "$rows" -lt 1000 ] && grep -q "stopped: --count reached" "$tmp/count.err"; then
	ok count "$rows rows for --count 100"
else
	bad count "exit $rc, $rows rows" "$(cat "$tmp/count.err")"
fi

echo "$pass passed, $fail failed ($(($(date +%s) - start)) s)"
[ "$fail" -eq 0 ]
