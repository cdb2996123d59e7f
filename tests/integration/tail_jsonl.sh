#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/tail_jsonl.sh -- `--tail N --format jsonl` writes the tail as JSON lines
# wherever it goes (docs/output.md): on stdout after the summary, and on stderr beside the
# --pairs rows, for read and for attach. Every tail line is parsed with python's json module.
#   read_stdout  read CAPTURE --tail N --format jsonl: every stdout line is JSON, N tail objects
#   read_pairs   read CAPTURE --pairs --format jsonl --tail N: every stderr line is JSON, N tail
#                objects, ranks 1..N, total_us non-increasing, each one a row of stdout
#   attach       attach on loopback (omniORB apps, one namespace) --pairs --format jsonl --tail N:
#                every stderr line that is not attach's own "giopscope attach:" status is JSON;
#                N tail objects; the slowest are the workload's slow(20000 us) calls (the client
#                made 5 of them; each of them is >= 20000 us, the servant slept that long)
# Exit 0, 1 on a failure, 77 when a prerequisite is missing (not root, no eBPF build, ...).
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
CAP=tests/data/omniorb_demo.pcap
N=5
PORT=${PORT:-2809}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
[ -x "$GS" ] || { echo "tail_jsonl: no $GS (make first)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/gs-tail-jsonl.XXXXXX) || exit 2
pass=0 fail=0
ok() { echo "PASS $1: $2"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

# check_lines FILE N [PAIRS]: every line of FILE (but attach's status lines) is a JSON object;
# N of them are tail objects ranked 1..N, slowest first; with PAIRS (the JSON rows), each
# tail call is one of its rows with the same total_us
check_lines() {
	python3 - "$@" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
rows = {}
if len(sys.argv) > 3:
    for line in open(sys.argv[3]):
        r = json.loads(line)
        if r.get("type", "call") == "call" or "request_id" in r:
            rows[(r.get("client"), r.get("server"), r.get("request_id"))] = r
tails, bad = [], []
for i, line in enumerate(open(path), 1):
    line = line.rstrip("\n")
    if line.startswith("giopscope attach:") or not line:
        continue
    try:
        o = json.loads(line)
    except ValueError as e:
        bad.append("line %d is not JSON (%s): %s" % (i, e, line[:100]))
        continue
    if not isinstance(o, dict):
        bad.append("line %d is not an object" % i)
    elif o.get("type") == "tail":
        tails.append(o)
if len(tails) != n:
    bad.append("%d tail objects, want %d" % (len(tails), n))
for k, t in enumerate(tails):
    if t.get("rank") != k + 1:
        bad.append("tail %d has rank %r" % (k + 1, t.get("rank")))
    if k and t["total_us"] > tails[k - 1]["total_us"]:
        bad.append("tail %d slower than the one before" % (k + 1))
    if rows:
        r = rows.get((t["client"], t["server"], t["request_id"]))
        if r is None:
            bad.append("tail %d (%s request %s) is no row" % (k + 1, t["client"], t["request_id"]))
        elif abs(float(r["total_us"]) - t["total_us"]) > 0.001:
            bad.append("tail %d total_us %s, its row %s" % (k + 1, t["total_us"], r["total_us"]))
for b in bad[:10]:
    print(b)
if not bad:
    print("%d tail objects: %s" % (len(tails), ", ".join("%s %.0f us" % (t["operation"], t["total_us"]) for t in tails)))
sys.exit(1 if bad else 0)
PY
}

# --- read
if out=$("$GS" read "$CAP" --tail "$N" --format jsonl 2>"$WORK/err" >"$WORK/out" && check_lines "$WORK/out" "$N"); then
	ok read_stdout "$out"
else
	ko read_stdout "$out $(head -3 "$WORK/err")"
fi
if out=$("$GS" read "$CAP" --pairs --tail "$N" --format jsonl 2>"$WORK/err" >"$WORK/rows" &&
	check_lines "$WORK/err" "$N" "$WORK/rows"); then
	ok read_pairs "$out"
else
	ko read_pairs "$out"
fi

# --- attach (one namespace, loopback: server and client both followed)
attach_case() {
	if [ "$(id -u)" != 0 ] || ! "$GS" attach --help >/dev/null 2>&1; then
		echo "SKIP attach: not root or no attach in this build"
		return 77
	fi
	[ -x "$SERVER" ] && [ -x "$CLIENT" ] || make -s orb-apps BUILD="$BUILD" >/dev/null 2>&1 ||
		{ echo "SKIP attach: cannot build the ORB apps"; return 77; }
	NS_TAG=tlj
	. tests/lib/netns.sh
	ns_require
	NS_CLEANUP_HOOK=""
	ns_setup || { ko attach "no namespaces"; return 1; }
	ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:127.0.0.1:$PORT" \
		-o "$WORK/echo.ior" -d "$WORK/dead.ior"
	local srv=$NS_LAST_PID
	if ! ns_wait_file "$WORK/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
		ko attach "server did not start: $(tail -3 "$WORK/server.log")"
		return 1
	fi
	ip netns exec "$NS_SRV" "$GS" attach --port "$PORT" --pairs --format jsonl --tail "$N" \
		-o "$WORK/attach.jsonl" -q 2>"$WORK/attach.err" &
	local att=$!
	if ! ns_wait_attached "$WORK/attach.err" "$att"; then
		ko attach "attach did not start: $(tail -3 "$WORK/attach.err")"
		kill -KILL "$att" 2>/dev/null
		wait "$att" 2>/dev/null
		return 1
	fi
	ns_run "$NS_SRV" 120 "$CLIENT" -i "$WORK/echo.ior" -d "$WORK/dead.ior" -q -op echoString -size 32 -n 50 \
		>>"$WORK/client.log" 2>&1
	ns_run "$NS_SRV" 120 "$CLIENT" -i "$WORK/echo.ior" -d "$WORK/dead.ior" -q -op slow -size 20000 -n 5 \
		>>"$WORK/client.log" 2>&1
	sleep 0.5
	kill -INT "$att"
	local rc=0 i
	for i in $(seq 1 200); do
		kill -0 "$att" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$att" 2>/dev/null && kill -KILL "$att"
	wait "$att" || rc=$?
	ns_stop "$srv" TERM 20
	[ "$rc" = 0 ] || { ko attach "attach exit $rc: $(tail -3 "$WORK/attach.err")"; return 1; }
	if out=$(check_lines "$WORK/attach.err" "$N" "$WORK/attach.jsonl") &&
		out2=$(python3 - "$WORK/attach.err" <<'PY'
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
bad = [o for o in t if o.get("type") == "tail" and not (o["operation"] == "slow" and o["total_us"] >= 20000)]
print("%d of the slowest are not slow(20000 us) calls" % len(bad) if bad else "the 5 slowest are slow(20000 us)")
sys.exit(1 if bad else 0)
PY
		); then
		ok attach "$out; $out2"
	else
		ko attach "$out ${out2:-}"
	fi
}
attach_case
rc=$?

rm -rf "$WORK"
echo "tail_jsonl: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
[ "$rc" = 77 ] && [ "$pass" = 0 ] && exit 77
exit 0
