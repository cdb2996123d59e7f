#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/nest_outputs.sh -- what the outputs say about nested calls (issue 32), on a
# capture taken at the middle tier of a three-tier omniORB chain (tests/data/nested: client ->
# bench_relay -> bench_server, `tcpdump -i any` at the relay; 40 echoOctets, 10 echoString and
# 5 slow(20..60 ms) calls one at a time, the relay forwarding each to the back end).
# The expected parent of each back-end call comes from the programs' own logs, never from
# giopscope: relay.spans has, per upcall, when the relay got the request (t_in), forwarded it
# (t_forward), got the back end's answer (t_back) and answered (t_out); the client call whose
# server time holds [t_in, t_out] is the parent of the back-end call whose request starts in
# [t_forward, t_back].
#   trace     --trace: every expected parent -> child link is drawn (Chrome flow events bound
#             the way Perfetto binds them: tests/lib/trace_links.py), and no other
#   tail      --tail 10 --format jsonl: the 10 slowest are the relay's 5 slow calls and their 5
#             back-end calls; each relay call says `downstream`, its chain's first hop is its
#             expected back-end call, seen, whose own reason is `server` (no `downstream`: the
#             back end calls no one); the back-end calls say `server` alone; the text form says
#             "downstream ... -> [server" on 5 rows
#   report    --report: one waterfall per listed slow call that made a nested call, each with its
#             expected back-end call as a row; none for a back-end call
#   live      the capture replayed on a veth (tests/lib/replay_sll2.py) under `giopscope live`:
#             the nested calls then come before their parents (end order); the same tail,
#             trace and report checks (skipped when not root)
#   summary   --tail --format csv: the split columns; `slow` has 5 nested calls (the back end's)
#             and 5 with nested calls open (the relay's), and its downstream max is at least the
#             back end's longest servant time (back.spans: t_exit - t_entry)
# Exit 0, 1 on a failure (the live part is skipped, said in a SKIP line, when not root).
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
D=tests/data/nested
CAP=$D/three_tier.pcap
# the relay's addresses: the capture (-i any) was taken on its host
HOSTS=(--host-addrs 10.57.118.2,192.168.118.1)
[ -x "$GS" ] || { echo "nest_outputs: no $GS (make first)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/gs-nest-outputs.XXXXXX) || exit 2
cleanup_work() { rm -rf "$WORK"; }
trap cleanup_work EXIT
NS_CLEANUP_HOOK=cleanup_work
pass=0 fail=0
ok() { echo "PASS $1: $2"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

# the rows (for their times and keys) and the expected links from the logs
"$GS" read "$CAP" "${HOSTS[@]}" --pairs --format csv -o "$WORK/rows.csv" 2>"$WORK/rows.err" ||
	{ echo "FAIL setup: read: $(head -3 "$WORK/rows.err")"; exit 1; }
python3 - "$WORK/rows.csv" "$D/relay.spans" >"$WORK/expected.txt" <<'PY' || { echo "FAIL setup: $(cat "$WORK/expected.txt")"; exit 1; }
import csv, sys
from decimal import Decimal
ns = lambda s: int(Decimal(s) * 1000000000)
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "Request"]
spans = [l.strip().split(",") for l in open(sys.argv[2]) if l.strip()]
front = [r for r in rows if r["server"].startswith("10.57.118.2:")]
back = [r for r in rows if r["server"].startswith("192.168.118.2:")]
key = lambda r: "%s %s %s" % (r["client"], r["server"], r["request_id"])
out = []
for tid, op, size, t_in, t_fwd, t_back, t_out in spans:
    t_in, t_fwd, t_back, t_out = int(t_in), int(t_fwd), int(t_back), int(t_out)
    p = [r for r in front if r["operation"] == op and ns(r["t_request_last"]) <= t_in and ns(r["t_reply_first"]) >= t_out]
    c = [r for r in back if r["operation"] == op and t_fwd <= ns(r["t_request_first"]) <= t_back]
    if len(p) != 1 or len(c) != 1:
        print("span %s %s %s: %d client calls, %d back-end calls match" % (op, size, t_in, len(p), len(c)))
        sys.exit(1)
    out.append("%s => %s %s" % (key(p[0]), key(c[0]), op))
print("\n".join(out))
PY
n_exp=$(wc -l <"$WORK/expected.txt")

# --- trace: check_trace NAME TRACE.json
check_trace() {
	if python3 tests/lib/trace_links.py "$2" >"$WORK/links.txt"; then
		if diff <(sed 's/ [^ ]*$//' "$WORK/expected.txt" | sort) <(sort "$WORK/links.txt") >"$WORK/links.diff"; then
			ok "$1" "$n_exp parent -> child links, each expected one and no other"
		else
			ko "$1" "links differ from the logs': $(head -5 "$WORK/links.diff")"
		fi
	else
		ko "$1" "$(grep PROBLEM "$WORK/links.txt" | head -3)"
	fi
}
if "$GS" read "$CAP" "${HOSTS[@]}" --trace "$WORK/trace.json" >/dev/null 2>"$WORK/trace.err"; then
	check_trace trace "$WORK/trace.json"
else
	ko trace "$(head -3 "$WORK/trace.err")"
fi

# --- tail
# check_tail JSONL: prints what it found, exit 1 on a difference
check_tail() {
	python3 - "$1" "$WORK/expected.txt" <<'PY'
import json, sys
exp = {}
for l in open(sys.argv[2]):
    p, c = l.split(" => ")
    exp[p] = c.rsplit(" ", 1)[0]
backs = set(exp.values())
tails = [o for o in map(json.loads, open(sys.argv[1])) if o.get("type") == "tail"]
bad = []
n_relay = 0
for t in tails:
    k = "%s %s %s" % (t["client"], t["server"], t["request_id"])
    name = "%s (%s)" % (k, t["operation"])
    if t["operation"] == "slow" and k in backs:
        # a back-end call: its own time, no nested call
        if "server" not in t["tags"] or "downstream" in t["tags"] or t.get("chain"):
            bad.append("%s: back-end call with tags %s" % (name, t["tags"]))
        continue
    if t["operation"] != "slow" or k not in exp:
        bad.append("%s: not one of the relay's slow calls nor theirs" % name)
        continue
    n_relay += 1
    ch = t.get("chain") or []
    if "downstream" not in t["tags"]:
        bad.append("%s: tags %s" % (name, t["tags"]))
    elif not ch or "%s %s %s" % (ch[0]["client"], ch[0]["server"], ch[0]["request_id"]) != exp[k]:
        bad.append("%s: chain %s, expected %s" % (name, ch[:1], exp[k]))
    elif not ch[0].get("seen") or "server" not in ch[0]["tags"] or "downstream" in ch[0]["tags"]:
        bad.append("%s: its back-end call %s" % (name, ch[0]))
if len(tails) != 10 or n_relay != 5:
    bad.append("%d tail rows, %d of the relay's" % (len(tails), n_relay))
print("; ".join(bad) if bad else "the 5 slow relay calls: downstream -> their back-end calls: server; "
      "the 5 back-end calls: server")
sys.exit(1 if bad else 0)
PY
}
"$GS" read "$CAP" "${HOSTS[@]}" --tail 10 --format jsonl >"$WORK/tail.jsonl" 2>"$WORK/tail.err"
"$GS" read "$CAP" "${HOSTS[@]}" --tail 10 >"$WORK/tail.txt" 2>&1
if out=$(check_tail "$WORK/tail.jsonl"); then
	if [ "$(grep -c 'downstream .* -> \[server' "$WORK/tail.txt")" = 5 ]; then
		ok tail "$out; the text rows say it too"
	else
		ko tail "text form: $(grep -A6 '^slowest' "$WORK/tail.txt")"
	fi
else
	ko tail "$out"
fi

# --- report
# check_report HTML
check_report() {
	python3 - "$1" "$WORK/expected.txt" <<'PY'
import re, sys
html = open(sys.argv[1]).read()
exp = {}
for l in open(sys.argv[2]):
    p, c = l.split(" => ")
    cl, sv, rid = p.split()
    exp[p.strip()] = c.split()
# the slow calls listed (table rows: rank, operation, request id, ..., client, server)
wfs = re.findall(r'<svg class="plot waterfall".*?</svg>', html, re.S)
bad = []
for w in wfs:
    m = re.search(r'aria-label="\d+\. (\S+) #(\d+) and its nested calls', w)
    # each row's call on hover: "client -> server request id"
    rows = [" ".join(t.replace(" -&gt; ", " ").replace(" request ", " ").split())
            for t in re.findall(r'class="rowlabel"[^>]*>[^<]*<title>([^<]*)</title></text>', w)]
    k = rows[0]
    if k not in exp:
        bad.append("a waterfall for %s, no relay call" % k)
        continue
    cl, sv, rid, op = exp[k]
    if rows[1:] != ["%s %s %s" % (cl, sv, rid)]:
        bad.append("waterfall of %s: rows %s, expected %s %s %s" % (k, rows[1:], cl, sv, rid))
if not wfs:
    bad.append("no waterfall")
print("; ".join(bad) if bad else "%d waterfalls, each with its expected back-end call" % len(wfs))
sys.exit(1 if bad else 0)
PY
}
if "$GS" read "$CAP" "${HOSTS[@]}" --report "$WORK/report.html" >/dev/null 2>"$WORK/report.err" &&
	out=$(check_report "$WORK/report.html"); then
	ok report "$out"
else
	ko report "${out:-$(head -3 "$WORK/report.err")}"
fi

# --- summary: the split columns
if "$GS" read "$CAP" "${HOSTS[@]}" --tail 1 --format csv >"$WORK/sum.csv" 2>"$WORK/sum.err" &&
	out=$(python3 - "$WORK/sum.csv" "$D/back.spans" <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().split("\n\n")[0].splitlines()
rows = {r["operation"]: r for r in csv.DictReader(lines)}
slow = rows.get("slow")
# the back end's servant slept (slow(u)) as its log says: its longest
longest = max(int(l.split(",")[4]) - int(l.split(",")[3]) for l in open(sys.argv[2]) if l.split(",")[1] == "slow")
bad = []
if not slow or "downstream_max_us" not in slow:
    bad.append("no split columns: %s" % list(rows.get("slow", {}).keys())[-12:])
else:
    if float(slow["downstream_max_us"]) * 1000 < longest:
        bad.append("slow: downstream_max_us %s < the back end's longest servant time %d ns" % (slow["downstream_max_us"], longest))
    if int(slow["calls_with_downstream"]) != 5 or int(slow["nested_calls"]) != 5:
        bad.append("slow: %s with downstream, %s nested (5 and 5 expected)" % (slow["calls_with_downstream"], slow["nested_calls"]))
print("; ".join(bad) if bad else "slow: 5 nested, 5 with downstream, downstream_max_us %s >= servant %d us" % (slow["downstream_max_us"], longest // 1000))
sys.exit(1 if bad else 0)
PY
); then
	ok summary "$out"
else
	ko summary "${out:-$(head -3 "$WORK/sum.err")}"
fi

# --- live: the same capture replayed on a veth, `giopscope live` on its other end (end order:
# the nested calls end, and come out of the nesting stage, before their parents)
live_case() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP live: not root"
		return 0
	fi
	NS_TAG=nso
	. tests/lib/netns.sh
	ns_require
	ns_setup || { ko live "no namespaces"; return 0; }
	ns_start "$NS_SRV" "$WORK/live.err" "$GS" live -i "$NS_VETH_SRV" --duration 5 "${HOSTS[@]}" \
		--tail 10 --format jsonl -o "$WORK/live.out" --trace "$WORK/live.trace.json" --report "$WORK/live.html"
	local pid=$NS_LAST_PID
	if ! ns_wait_grep "$WORK/live.err" "listening on" 15; then
		ko live "giopscope live did not start: $(tail -3 "$WORK/live.err")"
		return 0
	fi
	if ! ip netns exec "$NS_CLI" python3 tests/lib/replay_sll2.py "$CAP" "$NS_VETH_CLI" >"$WORK/replay.log" 2>&1; then
		ko live "replay: $(tail -3 "$WORK/replay.log")"
		return 0
	fi
	ns_wait_exit "$pid" 30 || { ko live "giopscope live did not end after --duration"; return 0; }
	if grep -q '"type":"tail"' "$WORK/live.out" && out=$(check_tail "$WORK/live.out"); then
		ok live_tail "$out"
	else
		ko live_tail "${out:-no tail rows: $(tail -3 "$WORK/live.err")}"
	fi
	check_trace live_trace "$WORK/live.trace.json"
	if out=$(check_report "$WORK/live.html"); then
		ok live_report "$out"
	else
		ko live_report "$out"
	fi
}
live_case

echo "nest_outputs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
