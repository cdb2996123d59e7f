#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/attach_reader_cost.sh -- attach's own CPU per call (its user-space reader: the ring,
# the engine, the instants, the parents by thread), two builds side by side: an omniORB
# bench_server (thread per connection) in a network namespace followed by `attach --pid
# --pairs`, one client making N echoString(32) calls; the builds alternate, ROUNDS each. The
# attach process's CPU time comes from /proc/PID/task/*/schedstat (ns), read after it follows
# the server and a second after the last call. Not part of make check; as root.
#
# usage: OLD=/path/to/old/giopscope bench/attach_reader_cost.sh
# environment: OLD (required), NEW (default build/giopscope), BUILD (build), N (40000),
#   ROUNDS (6), NS_TAG (atc)
# Prints one line per round and arm: rows written, attach's CPU seconds and µs a call.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
OLD=${OLD:-} NEW=${NEW:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server CLIENT=$BUILD/orb/bench_client
N=${N:-40000} ROUNDS=${ROUNDS:-6}
[ -x "$OLD" ] || { echo "attach_reader_cost: OLD=PATH, the giopscope to compare with" >&2; exit 2; }
[ -x "$NEW" ] && [ -x "$SERVER" ] && [ -x "$CLIENT" ] || { echo "attach_reader_cost: make && make orb-apps first" >&2; exit 2; }
. tests/lib/common.sh
NS_TAG=${NS_TAG:-atc}
. tests/lib/netns.sh
ns_require
WORK=$(mktemp -d /tmp/gs-reader-cost.XXXXXX) || exit 2
ATT_PID=""
# shellcheck disable=SC2034  # read by work_cleanup
WORK_PID_VARS="ATT_PID"
NS_CLEANUP_HOOK=work_cleanup
ns_setup || exit 1
ns_start "$NS_SRV" "$WORK/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:2809" -o "$WORK/echo.ior" -q
SRV=$NS_LAST_PID
ns_wait_file "$WORK/echo.ior" 15 || { echo "server did not start" >&2; exit 1; }
cp "$OLD" "$WORK/old" && cp "$NEW" "$WORK/new" || exit 2
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
for r in $(seq 1 "$ROUNDS"); do
    for arm in old new; do
        "$WORK/$arm" attach --pid "$SRV" --pairs -o "$WORK/$arm$r.csv" 2>"$WORK/$arm$r.log" &
        ATT_PID=$!
        ns_wait_attached "$WORK/$arm$r.log" "$ATT_PID" || { echo "attach $arm did not start" >&2; exit 1; }
        s0=$(cpu_ns "$ATT_PID")
        ns_run "$NS_CLI" 300 "$CLIENT" -i "$WORK/echo.ior" -q -op echoString -size 32 -n "$N" >/dev/null 2>&1
        sleep 1
        s1=$(cpu_ns "$ATT_PID")
        kill -INT "$ATT_PID"
        ns_wait_exit "$ATT_PID" 20
        ATT_PID=""
        rows=$(($(wc -l <"$WORK/$arm$r.csv") - 1))
        awk -v a="$arm" -v r="$r" -v d="$((s1 - s0))" -v n="$rows" 'BEGIN {
            printf "round %d %s: %d rows, attach CPU %.3f s (%.2f us/call)\n", r, a, n, d / 1e9, n ? d / 1e3 / n : 0 }'
    done
done
