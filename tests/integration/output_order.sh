#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The summary alone is computed from calls written as soon as they settle, not in
# t_request_first order (probe/cmd_read.c: the histograms and counters do not depend on the
# order; the queue stays short). This checks that claim: for the reference captures, copies
# of them with loss, reordering and duplicates (pcap_variants.py), and generated captures
# with retransmissions, interleaved fragments and calls left open, `giopscope read --format
# jsonl` (summary only) gives the same groups and counters unordered and with the order
# forced (GIOPSCOPE_ORDERED=1), rows_out_of_order aside (only an ordered output counts it).
# And --order-window: rows wait for an earlier call still open only up to the window; with a
# small window the same rows are written (as a set), some of them out of order and counted,
# and with less memory than with an unbounded window.
# Exit 0 pass, 1 fail, 77 skipped (no giopgen).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
GEN=$BUILD/bench/giopgen
[ -x "$GEN" ] || { echo "SKIP: $GEN missing (make bench-tools)"; exit 77; }
WORK=$(mktemp -d /tmp/gs-order.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# the reference captures shipped in the repo (tests/data/omniorb_demo.pcap is v13 again)
n_corpus=0
for f in tests/data/corpus/*.pcap; do
	[ -f "$f" ] || continue
	n_corpus=$((n_corpus + 1))
	b=$(basename "$f" .pcap)
	cp "$f" "$WORK/$b.pcap"
	for k in drop reorder dup mix; do
		python3 tests/integration/pcap_variants.py "$k" "$f" "$WORK/$b-$k.pcap" 5
	done
done
[ "$n_corpus" -gt 0 ] || { echo "FAIL: no capture in tests/data/corpus"; exit 1; }
"$GEN" --calls 20000 --seed 2 -o "$WORK/gen-default.pcap" 2>/dev/null
"$GEN" --calls 10000 --connections 40 --seed 4 --open-all --retransmit 0.02 -o "$WORK/gen-openall-rtx.pcap" 2>/dev/null
"$GEN" --calls 10000 --seed 8 --no-replies --no-close -o "$WORK/gen-noreplies.pcap" 2>/dev/null

pass=0 fail=0
strip() { sed 's/"rows_out_of_order":[0-9]*,\{0,1\}//'; }
for f in "$WORK"/*.pcap; do
	a=$("$GS" read "$f" --format jsonl 2>&1 | strip)
	b=$(GIOPSCOPE_ORDERED=1 "$GS" read "$f" --format jsonl 2>&1 | strip)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $(basename "$f"): the summary depends on the output order"
		diff <(echo "$a") <(echo "$b") | head -6 | sed 's/^/    /'
	fi
done
# --order-window: 50k calls of the default mix (0.1% never answered, on connections that stay
# open a while): a window of 64 against one larger than the file
"$GEN" --calls 50000 --seed 3 -o "$WORK/window.pcap" 2>/dev/null
rss() { /usr/bin/time -f %M -o "$WORK/rss" "$@" && cat "$WORK/rss"; }
small_rss=$(rss "$GS" read "$WORK/window.pcap" --pairs --format csv --order-window 64 -o "$WORK/small.csv" --summary --format csv 2>"$WORK/small.err")
big_rss=$(rss "$GS" read "$WORK/window.pcap" --pairs --format csv --order-window 1000000 -o "$WORK/big.csv" 2>/dev/null)
ooo=$(grep -o 'rows_out_of_order [0-9]*' "$WORK/small.err" | awk '{print $2}')
if ! cmp -s <(sort "$WORK/small.csv") <(sort "$WORK/big.csv"); then
	fail=$((fail + 1)); echo "FAIL order-window: the rows differ with a window of 64"
elif cmp -s "$WORK/small.csv" "$WORK/big.csv" || [ "${ooo:-0}" -eq 0 ]; then
	fail=$((fail + 1)); echo "FAIL order-window: a window of 64 changed no row's place (rows_out_of_order ${ooo:-none})"
elif [ "$small_rss" -ge "$big_rss" ]; then
	fail=$((fail + 1)); echo "FAIL order-window: peak RSS $small_rss KB with a window of 64, $big_rss KB without"
else
	pass=$((pass + 1))
	echo "PASS order-window: same rows, $ooo out of order, peak RSS $small_rss KB (window 64) vs $big_rss KB"
fi
echo "output order: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
