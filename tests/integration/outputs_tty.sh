#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/outputs_tty.sh -- what `giopscope live` does to the user's files and
# terminal, with a real omniORB server and client (tests/orb) in two network namespaces
# joined by a veth (tests/lib/netns.sh); live captures on the server's end.
#
#   setup_fail  existing keep.csv, keep.pcapng (-w) and t.json (--trace) in a folder; live
#               fails at set-up after the files would be opened (--metrics on an address
#               that is not local; --report into a missing folder; an unknown interface):
#               exit 2, one line, the three files byte-identical, no temporary file left.
#   sigint      live -o keep.csv -w -trace over existing files, 300 calls, SIGINT: exit 0,
#               keep.csv holds exactly the 300 calls (header + rows, read by column name),
#               the trace is complete JSON, the -w file gives the same calls, nothing else
#               in the folder.
#   sigkill     the same killed with SIGKILL (no chance to clean up): the calls written so
#               far are under the final name already (the file took its name when the
#               capture started), no temporary file.
#   tty_rows    live --pairs with stdout and stderr on one pty (script -qfec), calls going on
#               for seconds so that the progress line (\r\e[K live: ...) is drawn while rows
#               come: with every progress segment (from \r\e[K up to the next \r or
#               newline) taken out, every line left is the CSV header or a row that parses
#               (an endpoint first, the header's number of fields, its operation), and there
#               are as many rows as calls: a row printed after the progress text is lost
#               with the segment (or, if stripped differently, starts with "interface 0").
#
# usage: tests/integration/outputs_tty.sh [SCENARIO...]; environment GIOPSCOPE, BUILD, PORT
# (default 2813). Prints PASS/FAIL per scenario, exit 0, 1 on a failure, 77 when skipped.

# shellcheck disable=SC2317  # scenario bodies are called indirectly
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
case $GIOPSCOPE in /*) ;; *) GIOPSCOPE=$PWD/$GIOPSCOPE ;; esac
PORT=${PORT:-2813}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
ALL="setup_fail sigint sigkill tty_rows"
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
# the scenario bookkeeping (err, sc_begin, sc_end, the scenarios asked for) is tests/lib/scenario.sh's
. tests/lib/scenario.sh
sc_want outputs_tty "$ALL" "$@"

. tests/lib/common.sh
. tests/lib/netns.sh

for tool in python3 timeout script cmp; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed"
done
[ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built"
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    pkg-config --exists omniORB4 2>/dev/null || skip "omniORB (libomniorb4-dev) not installed"
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || { echo "FAIL setup: cannot build the ORB apps"; exit 1; }
fi
ns_require

WORK=$(mktemp -d /tmp/gs-out-tty.XXXXXX) || exit 2
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }

SC_ANNOUNCE=1 SC_FAIL_PREFIX=outputs_tty_
SRV_PID="" LIVE_PID=""
sc_reset() {
    SRV_PID="" LIVE_PID=""
    mkdir -p "$SC_DIR/out"
}
sc_stop() {
    [ -n "$LIVE_PID" ] && ns_stop "$LIVE_PID" KILL 5
    [ -n "$SRV_PID" ] && ns_stop "$SRV_PID" TERM 10
    return 0
}

start_server() {
    ns_start "$NS_SRV" "$SC_DIR/server.log" "$SERVER" -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" \
        -o "$SC_DIR/echo.ior"
    SRV_PID=$NS_LAST_PID
    ns_wait_file "$SC_DIR/echo.ior" 15 && ns_wait_port "$NS_SRV" "$PORT" 10 ||
        { err "server did not start: $(tail -2 "$SC_DIR/server.log")"; return 1; }
}

client() {
    ns_run "$NS_CLI" 120 "$CLIENT" -i "$SC_DIR/echo.ior" "$@" >>"$SC_DIR/client.log" 2>&1 ||
        err "client $*: exit status $?: $(tail -2 "$SC_DIR/client.log")"
}

# user_files: what an earlier run left, kept aside to compare with
user_files() {
    mkdir -p "$SC_DIR/orig"
    printf 'client,server\nearlier,run\n' >"$SC_DIR/orig/keep.csv"
    printf 'not a capture, but mine\n' >"$SC_DIR/orig/keep.pcapng"
    printf '{"earlier":true}\n' >"$SC_DIR/orig/t.json"
    rm -rf "$SC_DIR/out" && mkdir "$SC_DIR/out" && cp -p "$SC_DIR/orig/"* "$SC_DIR/out/"
}

# only_files NAME...: the output folder holds these and nothing else (no temporary file)
only_files() {
    local have want
    have=$(cd "$SC_DIR/out" && ls -A | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    [ "$have" = "$want" ] || err "the folder holds: $have(want: $want)"
}

# rows_of CSV OP: rows of the pairs CSV whose `operation` column is OP (by column name)
rows_of() {
    python3 - "$1" "$2" <<'EOF'
import csv, sys
with open(sys.argv[1], newline="") as f:
    r = csv.DictReader(f)
    if not r.fieldnames or "operation" not in r.fieldnames:
        print(0); sys.exit()
    print(sum(1 for row in r if row["operation"] == sys.argv[2]))
EOF
}

scenario_setup_fail() {
    sc_begin setup_fail
    local k=0 rc how
    for how in "--metrics 192.0.2.1:9464" "--report $SC_DIR/no-such-dir/r.html" "-i gs-no-such0"; do
        k=$((k + 1))
        user_files
        # shellcheck disable=SC2086  # $how is two words
        ip netns exec "$NS_SRV" timeout 10 "$GIOPSCOPE" live -i "$NS_VETH_SRV" --pairs -o "$SC_DIR/out/keep.csv" \
            -w "$SC_DIR/out/keep.pcapng" --trace "$SC_DIR/out/t.json" $how >"$SC_DIR/$k.out" 2>"$SC_DIR/$k.err"
        rc=$?
        [ "$rc" = 2 ] || err "$how: exit status $rc, want 2"
        [ "$(wc -l <"$SC_DIR/$k.err")" = 1 ] || err "$how: stderr is not one line: $(head -3 "$SC_DIR/$k.err" | tr '\n' '|')"
        for f in keep.csv keep.pcapng t.json; do
            cmp -s "$SC_DIR/orig/$f" "$SC_DIR/out/$f" || err "$how: $f changed"
        done
        only_files keep.csv keep.pcapng t.json
        echo "    $how: exit $rc: $(head -1 "$SC_DIR/$k.err")"
    done
    sc_end
}

# live_run SIGNAL: live over the user's files, 300 calls, then SIGNAL
live_run() {
    user_files
    start_server || return 1
    ns_start "$NS_SRV" "$SC_DIR/live.err" "$GIOPSCOPE" live -i "$NS_VETH_SRV" --pairs \
        -o "$SC_DIR/out/keep.csv" -w "$SC_DIR/out/keep.pcapng" --trace "$SC_DIR/out/t.json"
    LIVE_PID=$NS_LAST_PID
    ns_wait_grep "$SC_DIR/live.err" "listening on" 15 || { err "live did not start: $(tail -2 "$SC_DIR/live.err")"; return 1; }
    client -op echoString -size 32 -n 300
    # every call written (line-buffered) before the signal
    for _ in $(seq 1 50); do
        [ "$(rows_of "$SC_DIR/out/keep.csv" echoString)" -ge 300 ] && break
        sleep 0.1
    done
    ns_stop "$LIVE_PID" "$1" 10
    LIVE_PID_RC=$?
    LIVE_PID=""
}

scenario_sigint() {
    sc_begin sigint
    local n
    if live_run INT; then
        [ "$LIVE_PID_RC" = 0 ] || err "exit status $LIVE_PID_RC after SIGINT: $(tail -2 "$SC_DIR/live.err")"
        n=$(rows_of "$SC_DIR/out/keep.csv" echoString)
        [ "$n" = 300 ] || err "keep.csv holds $n echoString calls, want 300"
        python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["otherData"]["calls"] >= 300, d["otherData"]' \
            "$SC_DIR/out/t.json" 2>"$SC_DIR/json.err" || err "t.json: $(tail -1 "$SC_DIR/json.err")"
        "$GIOPSCOPE" read "$SC_DIR/out/keep.pcapng" --pairs -o "$SC_DIR/w.csv" 2>/dev/null ||
            err "read of the -w file: exit status $?"
        n=$(rows_of "$SC_DIR/w.csv" echoString)
        [ "$n" = 300 ] || err "the -w file gives $n echoString calls, want 300"
        only_files keep.csv keep.pcapng t.json
        echo "    SIGINT: exit $LIVE_PID_RC, keep.csv $(rows_of "$SC_DIR/out/keep.csv" echoString) calls, -w file $n calls"
    fi
    sc_end
}

scenario_sigkill() {
    sc_begin sigkill
    local n
    if live_run KILL; then
        n=$(rows_of "$SC_DIR/out/keep.csv" echoString)
        [ "$n" = 300 ] || err "keep.csv holds $n echoString calls after SIGKILL, want 300"
        cmp -s "$SC_DIR/orig/t.json" "$SC_DIR/out/t.json" && err "t.json is still the earlier run's"
        only_files keep.csv keep.pcapng t.json
        echo "    SIGKILL: keep.csv $n calls under its name, no temporary file"
    fi
    sc_end
}

scenario_tty_rows() {
    sc_begin tty_rows
    local calls=700 spid rc
    start_server || { sc_end; return; }
    # a pty for both stdout and stderr; live stops by itself after the last call
    ns_start "$NS_SRV" "$SC_DIR/script.log" script -qfec \
        "$GIOPSCOPE live -i $NS_VETH_SRV --pairs --count $calls" "$SC_DIR/tty.txt"
    spid=$NS_LAST_PID
    if ! ns_wait_grep "$SC_DIR/tty.txt" "listening on" 15; then
        err "live under script(1) did not start: $(head -c 300 "$SC_DIR/tty.txt")"
        sc_end
        return
    fi
    # about 3 s of calls (a 3 ms servant sleep each): the progress line is drawn between rows
    client -op slow -usecs 3000 -size 32 -n "$calls"
    for _ in $(seq 1 100); do
        ns_alive "$spid" || break
        sleep 0.1
    done
    ns_stop "$spid" TERM 5
    rc=$?
    [ "$rc" = 0 ] || err "live under script(1): exit status $rc"
    if ! python3 - "$SC_DIR/tty.txt" "$calls" >"$SC_DIR/check.txt" 2>&1 <<'EOF'; then
import csv, re, sys
raw = open(sys.argv[1], "rb").read().decode("latin-1")
calls = int(sys.argv[2])
# a progress sequence: \r\e[K and the progress text, up to the next \r or newline (a row
# glued to the text goes with it); a bare \r\e[K (the line wiped before rows) is dropped alone
prog = re.compile(r"\r\x1b\[K(live: \d+ calls, [^\r\n]*)?")
drawn = [m for m in prog.finditer(raw) if m.group(1)]
text = prog.sub("", raw)
lines = [l.rstrip("\r") for l in text.split("\n")]
header, rows, bad, last_row_at = None, 0, [], 0
ep = re.compile(r"^(\d{1,3}\.){3}\d{1,3}:\d+$|^\[[0-9a-f:.]+\]:\d+$")
for l in lines:
    if not l or l.startswith("giopscope live: ") or re.match(r"Script (started|done) on ", l):
        continue
    f = next(csv.reader([l]))
    if header is None and f and f[0] == "client":
        header = f
        continue
    if header is None:
        bad.append("before the header: " + l[:100]); continue
    kind, op = f[header.index("kind")] if len(f) == len(header) else "", \
        f[header.index("operation")] if len(f) == len(header) else ""
    if len(f) != len(header) or not ep.match(f[0]) or not ep.match(f[header.index("server")]) \
            or (kind, op) not in (("Request", "slow"), ("LocateRequest", "")):
        bad.append(l[:120]); continue
    rows += 1
# where the last row ends in the raw output: a progress line drawn before it means rows
# and progress really were interleaved (else this proves nothing)
for m in re.finditer(r",Request,slow,[^\r\n]*\r?\n", raw):
    last_row_at = m.end()
print("progress lines drawn: %d (%d before the last row); rows: %d of %d calls; bad lines: %d"
      % (len(drawn), sum(1 for m in drawn if m.start() < last_row_at), rows, calls, len(bad)))
for b in bad[:5]:
    print("  bad: %r" % b)
ok = header is not None and not bad and rows >= calls and \
     sum(1 for m in drawn if m.start() < last_row_at) >= 1
sys.exit(0 if ok else 1)
EOF
        err "$(head -1 "$SC_DIR/check.txt")" "$(sed -n '2,6p' "$SC_DIR/check.txt")"
        mkdir -p /tmp/gs-failing && cp "$SC_DIR/tty.txt" /tmp/gs-failing/outputs_tty.tty.txt
    fi
    echo "    $(head -1 "$SC_DIR/check.txt")"
    sc_end
}

sc_run_all
