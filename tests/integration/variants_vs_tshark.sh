#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The shipped real captures, made harder: frames dropped (capture loss), reordered
# within their direction, repeated (retransmissions), cut by a snaplen, and carried
# over every link type and IPv6.  giopscope must agree with Wireshark's GIOP
# dissector (tests/oracle/tshark_pairs.py) call for call on each.
#
# Not combined here: holes *and* reordering in one direction, where tshark itself
# cannot place every message (its out-of-order reassembly waits for lost bytes
# forever; see tests/oracle/README.md).
set -u
cd "$(dirname "$0")/../.."
GS=${GIOPSCOPE:-build/giopscope}
command -v tshark >/dev/null || { echo "SKIP: tshark not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
start=$(date +%s)
run() { # name capture [exit codes wanted, a regex]
	local name=$1 cap=$2 want=${3:-0}
	"$GS" read "$cap" --pairs --format csv > "$tmp/ours.csv" 2> "$tmp/err"
	rc=$?
	python3 tests/oracle/tshark_pairs.py "$cap" -o "$tmp/exp.csv" 2> /dev/null
	if ! [[ "$rc" =~ ^($want)$ ]]; then
		echo "FAIL $name: exit $rc (want $want): $(head -c 200 "$tmp/err")"
		fail=$((fail + 1))
	elif python3 tests/oracle/compare_pairs.py "$tmp/exp.csv" "$tmp/ours.csv" > "$tmp/cmp" 2>&1; then
		echo "PASS $name: $(tail -n 1 "$tmp/cmp")"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		head -n 12 "$tmp/cmp" | sed 's/^/    /'
		fail=$((fail + 1))
		if [ -n "${FAIL_DIR:-}" ]; then mkdir -p "$FAIL_DIR"; cp "$cap" "$FAIL_DIR/$name.pcap"; fi
	fi
}
for cap in tests/data/corpus/*.pcap; do
	base=$(basename "$cap" .pcap)
	for v in "drop 1" "drop 7" "reorder 2" "reorder 9" "dup 3"; do
		set -- $v
		python3 tests/integration/pcap_variants.py "$1" "$cap" "$tmp/v.pcap" "$2"
		run "$base-$1-$2" "$tmp/v.pcap"
	done
	for sl in 120 200; do
		python3 tests/integration/pcap_variants.py snap "$cap" "$tmp/v.pcap" "$sl"
		# GIOP heads cut by the snaplen are reported (exit 1) with their reason
		run "$base-snap$sl" "$tmp/v.pcap" "0|1"
		if [ "$rc" = 1 ] && ! grep -q "snapshot length" "$tmp/err"; then
			echo "FAIL $base-snap$sl: exit 1 without the snaplen reason: $(cat "$tmp/err")"
			fail=$((fail + 1))
		fi
	done
done
cap=tests/data/corpus/v13_oneway_exceptions.pcap
for k in vlan qinq sll sll2 raw null loop ipv6; do
	python3 tests/integration/pcap_variants.py "$k" "$cap" "$tmp/v.pcap"
	run "v13-$k" "$tmp/v.pcap"
done
editcap -F pcapng "$cap" "$tmp/v.pcapng" 2>/dev/null && run "v13-pcapng" "$tmp/v.pcapng"
echo "variants: $pass passed, $fail failed in $(( $(date +%s) - start )) s"
[ "$fail" -eq 0 ]
