#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The parent columns on captures taken at a middle tier (client -> relay -> back end, the
# relay with an address on each network), built by tests/integration/nest_captures.py with
# a plan of which call was made while serving which: every parent the capture decides is
# named, none wrong, no top-level or undecided call given one. The relay's two addresses
# are one host when the capture says so (Linux cooked SLL and SLL2 packet types, pcapng EPB
# flags; --threads N's engines read them too) or --host-addrs names them; a plain Ethernet
# capture without it names only the parents of calls made from the address the parent was
# served on (the callbacks).
# Also: the JSON lines carry the same parents; a bad --host-addrs is one line, exit 2.
# Exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/common.sh
. tests/lib/common.sh
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
PY=tests/integration/nest_captures.py
WORK=$(mktemp -d /tmp/gs-nest.XXXXXX) || exit 2
trap work_cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

python3 "$PY" write "$WORK" || { echo "FAIL nest_captures.py write"; exit 1; }

# case LABEL MODE FILE OPTIONS...: read --pairs, its parents against the plan
case_() {
	local label=$1 mode=$2 file=$3 out
	shift 3
	out="$WORK/$label.csv"
	if ! "$GS" read -q --pairs "$@" "$WORK/$file" > "$out" 2> "$WORK/$label.err"; then
		bad "$label: read failed: $(head -1 "$WORK/$label.err")"
		return
	fi
	# the rows' own shape, the five columns' included (tests/oracle/compare_pairs.py)
	if ! python3 tests/oracle/compare_pairs.py "$out" "$out" > "$WORK/$label.form"; then
		bad "$label: malformed rows"; cat "$WORK/$label.form"
		return
	fi
	if python3 "$PY" check "$WORK/truth.csv" "$out" "$mode" > "$WORK/$label.check"; then
		ok "$label: $(tail -1 "$WORK/$label.check")"
	else
		bad "$label:"; cat "$WORK/$label.check"
	fi
}
case_ eth-one-address addr eth.pcap
case_ eth-host-addrs host eth.pcap --host-addrs 10.2.0.10,10.1.0.10
case_ sll-packet-type host sll.pcap
case_ sll2-packet-type host sll2.pcap
case_ sll2-threads host sll2.pcap --threads 2 --host-addrs 10.1.0.10,10.2.0.10
# --threads: its reader reads the packet types as one engine does
case_ sll-threads-packet-type host sll.pcap --threads 2
case_ sll2-threads-packet-type host sll2.pcap --threads 2
case_ pcapng-epb-flags host epb.pcapng
case_ pcapng-threads-epb-flags host epb.pcapng --threads 2
# on stdin libpcap reads the pcapng file: it does not hand over the EPB flags
"$GS" read -q --pairs - < "$WORK/epb.pcapng" > "$WORK/stdin.csv" 2>/dev/null
if python3 "$PY" check "$WORK/truth.csv" "$WORK/stdin.csv" addr > "$WORK/stdin.check"; then
	ok "pcapng on stdin (libpcap: no direction): $(tail -1 "$WORK/stdin.check")"
else
	bad "pcapng on stdin:"; cat "$WORK/stdin.check"
fi

# merge: the client side's rows (the first capture) through the same stage
"$GS" merge -q --pairs "$WORK/eth.pcap" "$WORK/sll2.pcap" > "$WORK/merge.csv" 2>/dev/null
if python3 "$PY" check "$WORK/truth.csv" "$WORK/merge.csv" addr > "$WORK/merge.check"; then
	ok "merge (the client capture, one address one host): $(tail -1 "$WORK/merge.check")"
else
	bad "merge:"; cat "$WORK/merge.check"
fi

# the JSON lines: the same parents and downstream, null where the CSV is empty
"$GS" read -q --pairs --format jsonl "$WORK/sll2.pcap" > "$WORK/sll2.jsonl" 2>/dev/null
if python3 - "$WORK/sll2.jsonl" "$WORK/sll2-packet-type.csv" <<'PYEOF'; then
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[2])))
js = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == len(js), (len(rows), len(js))
for r, j in zip(rows, js):
    for k in ("parent_client", "parent_server", "parent_basis"):
        assert (j[k] or "") == r[k], (k, j[k], r[k])
    assert ("" if j["parent_request_id"] is None else str(j["parent_request_id"])) == r["parent_request_id"]
    assert ("" if j["downstream_us"] is None else "%.3f" % j["downstream_us"]) == r["downstream_us"]
PYEOF
	ok "jsonl: the same parents and downstream_us as the CSV"
else
	bad "jsonl differs from the CSV"
fi

# a bad --host-addrs: one line naming the option, exit 2, nothing on stdout
for arg in "10.0.0.300" "10.0.0.1," "" "a,b"; do
	"$GS" read --pairs --host-addrs "$arg" "$WORK/eth.pcap" > "$WORK/bad.out" 2> "$WORK/bad.err"
	rc=$?
	if [ "$rc" = 2 ] && [ ! -s "$WORK/bad.out" ] && [ "$(wc -l < "$WORK/bad.err")" = 1 ] &&
		grep -q -- "--host-addrs" "$WORK/bad.err"; then
		ok "--host-addrs '$arg': exit 2, $(cat "$WORK/bad.err")"
	else
		bad "--host-addrs '$arg': exit $rc, stdout $(wc -c < "$WORK/bad.out") bytes, stderr: $(cat "$WORK/bad.err")"
	fi
done
echo "nest captures: $pass passed, $fail failed"
[ "$fail" = 0 ]
