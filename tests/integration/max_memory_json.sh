#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/max_memory_json.sh: `--max-memory` says which bound was hit in the JSON
# summary too (docs/output.md), end to end through the command line.
#
#   BUILD=build GIOPSCOPE=build/giopscope tests/integration/max_memory_json.sh
#
# A capture from the benchmark generator (bench/gen: giopgen --no-replies --open-all: 50 000
# requests open at once, never answered), read with --max-memory 16m --format jsonl:
#   - one {"type":"max_memory"} object, valid JSON, with the budget and the bounds it set equal
#     to the text summary's --max-memory line of the same run;
#   - its bounds_hit names open_calls (and only the bounds whose counters are not zero), with
#     the count of the counters object (open_calls_evicted) and of the text line;
#   - a capture under the bounds (100 requests): bounds_hit is {}; without --max-memory: no
#     such object.
# Exit 0 pass, 1 fail, 77 when giopgen cannot be built.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
GEN=${GIOPGEN:-$BUILD/bench/giopgen}
if [ ! -x "$GEN" ]; then
	make -s BUILD="$BUILD" "$GEN" >&2 || { echo "max_memory_json: SKIP: cannot build giopgen"; exit 77; }
fi
WORK=$(mktemp -d /tmp/gs-maxmem.XXXXXX) || exit 2
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

"$GEN" --calls 50000 --no-replies --open-all --mix echo --seed 7 -q -o "$WORK/open.pcap" || exit 2
"$GEN" --calls 100 --no-replies --mix echo --seed 7 -q -o "$WORK/small.pcap" || exit 2

"$GS" read "$WORK/open.pcap" --max-memory 16m --format jsonl >"$WORK/open.jsonl" 2>"$WORK/open.err"
rc1=$?
"$GS" read "$WORK/open.pcap" --max-memory 16m >"$WORK/open.txt" 2>>"$WORK/open.err"
rc2=$?
if [ "$rc1" != 0 ] || [ "$rc2" != 0 ]; then
	ko "read --max-memory 16m" "exit $rc1 (jsonl), $rc2 (text): $(head -2 "$WORK/open.err")"
else
	out=$(python3 - "$WORK/open.jsonl" "$WORK/open.txt" <<'PY'
import json, re, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mm = [o for o in objs if o.get("type") == "max_memory"]
cnt = [o for o in objs if o.get("type") == "counters"]
text = open(sys.argv[2]).read()
m = re.search(r"^--max-memory (\d+) MiB: (\d+) connections, (\d+) open calls, order window (\d+), "
              r"(\d+) KiB held out of order; bounds hit: (.*)$", text, re.M)
bad = []
if len(mm) != 1 or len(cnt) != 1:
    bad.append("%d max_memory and %d counters objects, not 1 and 1" % (len(mm), len(cnt)))
elif not m:
    bad.append("no --max-memory line in the text summary")
else:
    mm, cnt = mm[0], cnt[0]
    if mm["max_memory"] != 16 << 20 or mm["max_memory"] >> 20 != int(m.group(1)):
        bad.append("max_memory %s, text %s MiB" % (mm["max_memory"], m.group(1)))
    for k, g in (("connections", 2), ("open_calls", 3), ("order_window", 4)):
        if mm[k] != int(m.group(g)):
            bad.append("%s %s, text %s" % (k, mm[k], m.group(g)))
    if mm["ooo_bytes"] >> 10 != int(m.group(5)):
        bad.append("ooo_bytes %s, text %s KiB" % (mm["ooo_bytes"], m.group(5)))
    hit = mm["bounds_hit"]
    # the bound's counter in the counters object
    counter = {"connections": "connections_evicted", "open_calls": "open_calls_evicted",
               "order_window": "rows_out_of_order", "ooo_bytes": "ooo_dropped_bytes",
               "retransmitted_ranges": "retransmissions_not_charged",
               "message_logs": "retransmissions_charged_by_span", "head_pool": "head_pool_full",
               "strings": "strings_refused"}
    want = {k: cnt[c] for k, c in counter.items() if cnt[c]}
    if hit != want:
        bad.append("bounds_hit %s, the counters say %s" % (hit, want))
    if not hit.get("open_calls") or hit["open_calls"] != 50000 - mm["open_calls"]:
        bad.append("open_calls hit %s, expected 50000 - %s" % (hit.get("open_calls"), mm["open_calls"]))
    if "open calls (%d)" % hit.get("open_calls", -1) not in m.group(6):
        bad.append("text says '%s'" % m.group(6))
if bad:
    print("FAIL " + "; ".join(bad))
else:
    print("OK bounds_hit %s; bounds %d connections, %d open calls, window %d" % (
          json.dumps(hit), mm["connections"], mm["open_calls"], mm["order_window"]))
PY
)
	case "$out" in
	OK*) ok "open calls bound hit: ${out#OK }" ;;
	*) ko "open calls bound hit" "${out#FAIL }" ;;
	esac
fi

if ! "$GS" read "$WORK/small.pcap" --max-memory 16m --format jsonl >"$WORK/small.jsonl" 2>"$WORK/small.err"; then
	ko "under the bounds" "read exit $?: $(head -1 "$WORK/small.err")"
elif python3 -c 'import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
m = [x for x in o if x.get("type") == "max_memory"]
sys.exit(0 if len(m) == 1 and m[0]["bounds_hit"] == {} else 1)' "$WORK/small.jsonl"; then
	ok "under the bounds: bounds_hit {}"
else
	ko "under the bounds" "$(grep max_memory "$WORK/small.jsonl" || echo 'no max_memory object')"
fi

if "$GS" read "$WORK/small.pcap" --format jsonl 2>/dev/null | grep -q '"type":"max_memory"'; then
	ko "without --max-memory" "a max_memory object all the same"
else
	ok "without --max-memory: no max_memory object"
fi

echo "max_memory_json: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
