#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The order window is a bound like any table: `read --pairs` writes its rows in start order
# (t_request_first) while fewer calls than --order-window wait behind an earlier one; past it
# rows come out of start order, and a reader of the rows alone must be told so. The count the
# tool prints on stderr is checked against the rows themselves: a row is out of start order
# when an earlier row started later (counted here from the CSV, not by giopscope), with one
# engine and with --threads 2 and 3; and with the default window on the same capture, no
# such line and no row out of order. Exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
GEN=$BUILD/bench/giopgen
WORK=$(mktemp -d /tmp/gs-ow.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

"$GEN" --calls 40000 --seed 1 -q -o "$WORK/d.pcap" || { echo "FAIL giopgen"; exit 1; }

# late CSV: the rows whose t_request_first is before that of a row written earlier
late() {
	python3 - "$1" <<'PY'
import csv, sys
from decimal import Decimal
latest, late = None, 0
for r in csv.DictReader(open(sys.argv[1])):
    t = Decimal(r["t_request_first"])
    if latest is not None and t < latest:
        late += 1
    if latest is None or t > latest:
        latest = t
print(late)
PY
}

# the tool's count from its stderr line ("" when there is none)
said() { sed -n 's/^giopscope read: \([0-9]*\) rows\{0,1\} out of start order.*/\1/p' "$1"; }

"$GS" read -q "$WORK/d.pcap" --pairs --format csv > "$WORK/all.csv" 2> "$WORK/all.err"
n=$(late "$WORK/all.csv")
if [ "$n" = 0 ] && [ -z "$(said "$WORK/all.err")" ]; then
	ok "default window: every row in start order, no line"
else
	bad "default window: $n rows out of start order, said: '$(said "$WORK/all.err")'"
fi
sort "$WORK/all.csv" > "$WORK/all.sorted"

for t in 1 2 3; do
	"$GS" read -q --threads "$t" --order-window 1000 "$WORK/d.pcap" --pairs --format csv \
		> "$WORK/w$t.csv" 2> "$WORK/w$t.err"
	rc=$?
	n=$(late "$WORK/w$t.csv")
	s=$(said "$WORK/w$t.err")
	if [ "$rc" -ne 0 ]; then
		bad "--threads $t --order-window 1000: exit $rc"
	elif [ "$n" -gt 0 ] && [ "$s" = "$n" ] && sort "$WORK/w$t.csv" | cmp -s - "$WORK/all.sorted"; then
		ok "--threads $t --order-window 1000: $n rows out of start order, said $s, the same rows"
	else
		bad "--threads $t --order-window 1000: $n rows out of start order in the CSV, said '$s'" \
			"($(head -c 300 "$WORK/w$t.err"))"
	fi
done

echo "read_order_window: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
