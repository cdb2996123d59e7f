#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/report_metrics.sh -- `giopscope live --metrics --trace --report` on real
# omniORB traffic: a scrape of /metrics parses as Prometheus text and its counts equal the pairs
# records written meanwhile; at the end the trace parses and the report is self-contained.
#
# bench_server in a server namespace, `giopscope live -i VETH --pairs --metrics 127.0.0.1:PORT
# --trace --report` in the same namespace, bench_client (mix: echoString, fire, fail,
# echoOctets, dead, slow, echoRecs, _non_existent) in the client namespace. Then:
#   format      every line of the scrape is a HELP/TYPE comment or a sample of the text format
#               0.0.4; histogram buckets never decrease and +Inf equals _count
#   counts      per operation: giopscope_calls_total = rows of the pairs CSV, the histogram's
#               _count = rows with a reply, giopscope_call_errors_total = error rows
#               (format, buckets and counts: tests/lib/prom_check.py)
#   http        404 for another path, 405 for POST
#   refuse      --metrics localhost:9464 (a name) is refused (exit 2, one line)
#   outputs     after SIGINT: exit 0, the trace parses as JSON with one span per row, the report
#               has no URL or script and has its plots
# Skipped (77) unless root with network namespaces, and unless live has --metrics.
# Prints PASS/FAIL per check, then "N passed, N failed".
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
PORT=${PORT:-2809}
MPORT=${MPORT:-9464}

. tests/lib/common.sh
. tests/lib/netns.sh

[ -x "$GIOPSCOPE" ] || ns_skip "$GIOPSCOPE not built"
"$GIOPSCOPE" live --help 2>/dev/null | grep -q -- "--metrics" || ns_skip "giopscope live has no --metrics yet"
for tool in curl python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || ns_skip "$tool not installed"
done
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s orb-apps BUILD="$BUILD" >/dev/null 2>&1 || ns_skip "cannot build the ORB apps"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-report-metrics.XXXXXX) || exit 2
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }

PASSED=0
FAILED=0
pass() { echo "PASS $1${2:+: $2}"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1: $2"; FAILED=$((FAILED + 1)); }
finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
    exit $?
}

# a name is refused before anything is opened
out=$(ip netns exec "$NS_SRV" timeout 10 "$GIOPSCOPE" live -q -i lo --metrics "localhost:$MPORT" 2>&1)
rc=$?
if [ "$rc" = 2 ] && [ "$(echo "$out" | wc -l)" = 1 ]; then pass refuse "$out"; else fail refuse "exit $rc: $out"; fi

ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" \
    -o "$WORK/echo.ior" -d "$WORK/dead.ior"
ns_wait_file "$WORK/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 || { fail setup "server did not start"; finish; }

ns_start "$NS_SRV" "$WORK/live.log" "$GIOPSCOPE" live -q -i "$NS_VETH_SRV" --ports "$PORT" --pairs \
    -o "$WORK/pairs.csv" --metrics "127.0.0.1:$MPORT" --trace "$WORK/trace.json" --report "$WORK/report.html"
LIVE=$NS_LAST_PID
ns_wait_port "$NS_SRV" "$MPORT" 15 || { fail setup "no metrics port: $(tail -2 "$WORK/live.log")"; finish; }
sleep 0.5   # the capture is open once the port is (session before tap is not guaranteed)

ns_run "$NS_CLI" 60 "$CLIENT" -i "$WORK/echo.ior" -d "$WORK/dead.ior" -op mix -size 200 -n 90 \
    -lat "$WORK/c.lat.csv" >"$WORK/client.log" 2>&1 || { fail setup "client: $(tail -1 "$WORK/client.log")"; finish; }
# every call of the client has ended once the CSV stops growing (bounded)
prev=-1
for _ in $(seq 1 50); do
    n=$(wc -l <"$WORK/pairs.csv" 2>/dev/null || echo 0)
    [ "$n" = "$prev" ] && [ "$n" -gt 1 ] && break
    prev=$n
    sleep 0.2
done
sleep 0.3
ip netns exec "$NS_SRV" curl -s -m 5 "http://127.0.0.1:$MPORT/metrics" >"$WORK/scrape.txt"
cp "$WORK/pairs.csv" "$WORK/pairs.at_scrape.csv"
code404=$(ip netns exec "$NS_SRV" curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/other")
code405=$(ip netns exec "$NS_SRV" curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$MPORT/metrics")
if [ "$code404" = 404 ] && [ "$code405" = 405 ]; then pass http "404 and 405"; else fail http "got $code404 and $code405"; fi

# the format, bucket and count checks are shared with dpdk_counters.sh
python3 tests/lib/prom_check.py "$WORK/scrape.txt" "$WORK/pairs.at_scrape.csv" >"$WORK/check.txt" 2>&1
for k in FORMAT BUCKETS COUNTS; do
    line=$(grep "^$k " "$WORK/check.txt")
    case "$line" in
        "$k ok "*) pass "$(echo "$k" | tr 'A-Z' 'a-z')" "${line#"$k ok "}" ;;
        *) fail "$(echo "$k" | tr 'A-Z' 'a-z')" "${line:-$(cat "$WORK/check.txt")}" ;;
    esac
done

ns_stop "$LIVE" INT 20
rc=$?
python3 - "$WORK/trace.json" "$WORK/report.html" "$WORK/pairs.csv" >"$WORK/outputs.txt" 2>&1 <<'PY'
import csv, json, sys
t = json.load(open(sys.argv[1]))
spans = [e for e in t["traceEvents"] if e.get("ph") in ("X", "i")]
rows = list(csv.DictReader(open(sys.argv[3], newline="")))
h = open(sys.argv[2]).read()
ok = (len(spans) == len(rows) and "http://" not in h and "https://" not in h and "<script" not in h
      and h.count('<svg class="plot') >= 6)
print("trace %d events for %d rows; report %d bytes, %d plots" % (len(spans), len(rows), len(h), h.count('<svg class="plot')))
sys.exit(0 if ok else 1)
PY
prc=$?
if [ "$rc" = 0 ] && [ "$prc" = 0 ]; then pass outputs "$(cat "$WORK/outputs.txt")"; else fail outputs "live exit $rc; $(cat "$WORK/outputs.txt")"; fi
finish
