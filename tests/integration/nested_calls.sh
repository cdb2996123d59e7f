#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/nested_calls.sh -- nested calls (issue 32) on a real three-tier omniORB chain:
# bench_client -> bench_relay -> bench_server, each in its own network namespace, the relay on two
# networks (one veth to the clients' subnet, one to the back end's). The relay forwards every
# call with its argument, so the sizes name which back-end call each client call waited for;
# tests/integration/nested_expect.py derives the expected parents from that and from the
# programs' own logs (never from giopscope) and checks giopscope's pairs CSV against them.
# Every capture is also checked against tshark's oracle (tests/oracle), the 19 base columns
# call for call.
#
# usage: tests/integration/nested_calls.sh [--list] [SCENARIO...]
#   tier_any      capture at the relay on every interface (tcpdump -i any: LINUX_SLL2, the packet
#                 direction recorded): 40 echoOctets, 10 echoString, 5 slow(20..60 ms) calls, one
#                 at a time: every back-end call's parent named (time), no client call given one;
#                 downstream_us within the relay's and the back end's logs
#   tier_multi    the same traffic captured on the relay's two interfaces at once: dumpcap -i A
#                 -i B (pcapng, one interface block each; sorted with reordercap, and as written),
#                 and one plain pcap per interface merged with mergecap; neither records the
#                 direction, so read with --host-addrs A,B: same parents; without it, none wrong
#   tier_threads  4 client threads through the relay at once (slow(1000 + 1000*thread + seq) us):
#                 the parents decided by time named, the others empty, none wrong (read with the
#                 capture's direction, and with --host-addrs)
#   cb_conn       callbacks over a connection of their own: 20 callMeBack(cb, 3); each ping's
#                 (and the server's LocateRequest's) parent is its callMeBack
#   cb_bidir      the same over bidirectional GIOP (the pings on the client's own connection)
#   tier_tail     --tail --format jsonl (--host-addrs) on the slowed chain: each slowed call reads `downstream`
#                 at the relay naming its back-end call, which reads `server` one level down
#   selfcheck     nested_expect.py on giopscope's base columns: the rig holds, the answer the rule
#                 gives (--write-reference) passes, the same with one parent moved fails
# environment: GIOPSCOPE (default build/giopscope), BUILD (build), KEEP_DIR (every scenario's
#   files kept there), FAIL_DIR (failing scenarios' files, default /tmp/gs-failing),
#   NS_VERBOSE=1 (namespace chatter)
# Prints PASS/FAIL per scenario, "N passed, N failed" and the time; exit 0, 1 on a failure,
# 77 when a prerequisite is missing (not root, no namespaces, no tshark/tcpdump/omniORB).

# shellcheck disable=SC2317  # scenario bodies and hooks are called indirectly
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
ORACLE=tests/oracle/tshark_pairs.py
COMPARE=tests/oracle/compare_pairs.py
EXPECT=tests/integration/nested_expect.py
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
RELAY=$BUILD/orb/bench_relay
PORT=2809
CB_PORT=2810
BIDIR_RULE="* unix,ssl,tcp,bidir"
SLOW_MIN=20000          # slow(u) with u >= this: slowed on purpose (tier_tail)

. tests/lib/common.sh
. tests/lib/netns.sh
. tests/lib/scenario.sh
. tests/lib/keep_capture.sh

sc_want nested_calls "tier_any tier_multi tier_threads cb_conn cb_bidir tier_tail selfcheck" "$@"

for tool in tcpdump tshark dumpcap mergecap reordercap capinfos python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (scripts/install-deps.sh check)"
done
[ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built (make)"
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ] || [ ! -x "$RELAY" ]; then
    if ! command -v omniidl >/dev/null 2>&1 || ! pkg-config --exists omniORB4 2>/dev/null; then
        skip "omniORB (omniidl, libomniorb4-dev) not installed"
    fi
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || { echo "FAIL setup: cannot build the ORB apps"; exit 1; }
fi
ns_require

T_START=$(date +%s.%N)
WORK=$(mktemp -d /tmp/gs-nested.XXXXXX) || exit 2
NS_CLEANUP_HOOK=work_cleanup
NS_TAG=tir
# NS_CLI: the clients; NS_SRV: the relay (middle tier); NS_BACK: the back end, on a second
# network of the relay's
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
NS_RELAY=$NS_SRV RELAY_A=$NS_SRV_IP4 VETH_A=$NS_VETH_SRV
ns_setup_back || exit 1

SC_RM_DIR=1
BACK_PID="" RELAY_PID="" CAP_PIDS="" SRV_PID=""
CLIENT_N=0
LATS=()

sc_reset() { BACK_PID="" RELAY_PID="" CAP_PIDS="" SRV_PID="" CLIENT_N=0; LATS=(); }

sc_stop() {
    local p
    for p in $CAP_PIDS; do ns_stop "$p" INT 10; done
    for p in $RELAY_PID $BACK_PID $SRV_PID; do ns_stop "$p" TERM 20; done
    CAP_PIDS="" RELAY_PID="" BACK_PID="" SRV_PID=""
}

note() { echo "$*" >>"$SC_DIR/commands.log"; }

# start_chain [RELAY_OPTS...]: the back end (bench_server, servant log) and the relay (relay log,
# RELAY_OPTS: more -ORB options) in front of it.
# The relay does not verify the back end's object first (-ORBverifyObjectExistsAndType 0): every
# call it makes is then a forwarded one, named by its argument.
start_chain() {
    ns_start "$NS_BACK" "$SC_DIR/back.log" "$SERVER" -ORBendPoint "giop:tcp:$BACK_IP:$PORT" \
        -o "$SC_DIR/back.ior" -servant-log "$SC_DIR/back.spans" -q
    BACK_PID=$NS_LAST_PID
    note "# back end: bench_server -ORBendPoint giop:tcp:$BACK_IP:$PORT -servant-log back.spans"
    ns_wait_file "$SC_DIR/back.ior" 15 || { err "back end did not start" "$(tail -3 "$SC_DIR/back.log")"; return 1; }
    local -a opts=("$@")
    ns_start "$NS_RELAY" "$SC_DIR/relay.log" "$RELAY" -ORBendPoint "giop:tcp:$RELAY_A:$PORT" \
        -ORBverifyObjectExistsAndType 0 "${opts[@]}" -b "$SC_DIR/back.ior" -o "$SC_DIR/echo.ior" \
        -relay-log "$SC_DIR/relay.spans" -q
    RELAY_PID=$NS_LAST_PID
    note "# relay: bench_relay -ORBendPoint giop:tcp:$RELAY_A:$PORT -ORBverifyObjectExistsAndType 0 ${opts[*]} -relay-log relay.spans"
    ns_wait_file "$SC_DIR/echo.ior" 15 || { err "relay did not start" "$(tail -3 "$SC_DIR/relay.log")"; return 1; }
}

# stop_chain: relay first (its log is written at stop), then the back end; both exit 0
stop_chain() {
    ns_stop "$RELAY_PID" TERM 20 || err "relay exit status $? after SIGTERM" "$(tail -3 "$SC_DIR/relay.log")"
    ns_stop "$BACK_PID" TERM 20 || err "back end exit status $? after SIGTERM" "$(tail -3 "$SC_DIR/back.log")"
    RELAY_PID="" BACK_PID=""
}

# capture NAME ARGS...: a capture tool in the relay namespace (tcpdump ... or dumpcap ...),
# waited for until it listens
capture() {
    local name=$1
    shift
    ns_start "$NS_RELAY" "$SC_DIR/$name.caplog" "$@"
    CAP_PIDS="$CAP_PIDS $NS_LAST_PID"
    note "# capture $name:$(printf ' %q' "$@")"
    ns_wait_grep "$SC_DIR/$name.caplog" "listening on\|Capturing on" 15 ||
        { err "capture $name did not start" "$(tail -3 "$SC_DIR/$name.caplog")"; return 1; }
    # dumpcap says "Capturing on" before its capture is open; the file's header is written
    # once it is
    if [ "$1" = dumpcap ]; then
        local file="" prev="" a w
        for a in "$@"; do [ "$prev" = -w ] && file=$a; prev=$a; done
        for ((w = 0; w < 150; w++)); do
            [ -s "$file" ] && break
            sleep 0.1
        done
        [ -s "$file" ] || { err "capture $name wrote no file header" "$(tail -3 "$SC_DIR/$name.caplog")"; return 1; }
        sleep 0.3
    fi
}
tcpdump_at() {  # NAME IFACE FILE
    capture "$1" tcpdump -Z root -B 65536 --immediate-mode --time-stamp-precision=nano -U \
        -i "$2" -w "$3" "tcp port $PORT or tcp port $CB_PORT"
}

stop_captures() {
    local p
    sleep 0.3     # the last FIN/ACKs
    for p in $CAP_PIDS; do ns_stop "$p" INT 15; done
    CAP_PIDS=""
    grep -h "dropped by kernel" "$SC_DIR"/*.caplog 2>/dev/null | grep -v "^0 packets" | grep -q . &&
        err "a capture dropped packets" "$(grep -h dropped "$SC_DIR"/*.caplog)"
    return 0
}

# client ARGS...: bench_client in the client namespace on the relay's IOR (or IOR=FILE), logging
# its calls to cN.lat.csv; must exit 0
client() {
    CLIENT_N=$((CLIENT_N + 1))
    local lat=$SC_DIR/c$CLIENT_N.lat.csv log=$SC_DIR/c$CLIENT_N.log
    note "# client c$CLIENT_N: bench_client -i ${IOR:-echo.ior}$(printf ' %q' "$@")"
    ns_run "$NS_CLI" 120 "$CLIENT" -i "$SC_DIR/${IOR:-echo.ior}" -lat "$lat" "$@" >"$log" 2>&1 ||
        err "client c$CLIENT_N ($*) exit status $?" "$(tail -3 "$log")"
    LATS+=("$lat")
}

# the chain's workload, one call at a time: 40 echoOctets (sizes 100..139), 10 echoString
# (lengths 10..19), 5 slow calls of 20..60 ms
chain_workload() {
    client -op echoOctets -size 100 -distinct -n 40
    client -op echoString -size 10 -distinct -n 10
    client -op slow -usecs 20000,30000,40000,50000,60000 -n 5
}

# read_both CAP NAME [ARGS...]: tshark's pairs of CAP (NAME.expected.csv); giopscope's
# (NAME.ours.csv, with ARGS after the capture) compared with them on the 19 base columns (their
# order too, unless NO_ORDER=1); CAP kept for the dpdk replays unless NO_KEEP=1
read_both() {
    local cap=$1 name=$2 rc
    shift 2
    # kept for the dpdk replays after the tests (tests/integration/after), unless NO_KEEP=1: a
    # second read of the same file, or one out of time order (the replay checks the row order)
    [ -n "${NO_KEEP:-}" ] || keep_capture "$cap" "nested_calls-$SC-$name"
    python3 "$ORACLE" "$cap" -o "$SC_DIR/$name.expected.csv" >"$SC_DIR/$name.oracle.log" 2>&1 ||
        { err "oracle failed on $name" "$(tail -3 "$SC_DIR/$name.oracle.log")"; return 1; }
    note "# ours $name: giopscope read $(basename "$cap") --pairs --format csv$(printf ' %q' "$@")"
    "$GIOPSCOPE" read "$cap" --pairs --format csv "$@" >"$SC_DIR/$name.ours.csv" 2>"$SC_DIR/$name.giopscope.err"
    rc=$?
    [ "$rc" = 0 ] || { err "giopscope read $name $*: exit status $rc" "$(head -3 "$SC_DIR/$name.giopscope.err")"; return 1; }
    python3 "$COMPARE" ${NO_ORDER:+--no-order} "$SC_DIR/$name.expected.csv" "$SC_DIR/$name.ours.csv" \
        >"$SC_DIR/$name.compare.txt" 2>&1 ||
        err "$name: giopscope differs from tshark: $(grep -m1 '^compare:' "$SC_DIR/$name.compare.txt")" \
            "$(grep -v '^compare:' "$SC_DIR/$name.compare.txt" | head -12)"
    return 0
}

# expect_chain NAME [nested_expect.py options]: the chain's parents in NAME.ours.csv
expect_chain() {
    local name=$1 out
    shift
    local -a lats=()
    local l
    for l in "${LATS[@]}"; do lats+=(--lat "$l"); done
    if ! out=$(python3 "$EXPECT" chain --cap "$SC_DIR/$CAP_OF" --oracle "$SC_DIR/$name.expected.csv" \
            --ours "$SC_DIR/$name.ours.csv" --host "$RELAY_A,$RELAY_B" --relay-log "$SC_DIR/relay.spans" \
            --back-log "$SC_DIR/back.spans" "${lats[@]}" "$@" 2>&1); then
        err "$name: nesting" "$out"
    fi
    echo "$name: $out" >>"$SC_DIR/expect.txt"
    # "NAME: named/nested (decided, ambiguous)"
    SC_NOTE="${SC_NOTE:+$SC_NOTE; }$name: $(echo "$out" | sed -n 's/^nesting: \([0-9]*\) nested calls, \([0-9]*\) decided.*, \([0-9]*\) ambiguous.*; \([0-9]*\) named/\4\/\1 named (\2 decided, \3 ambiguous)/p')"
}

# ---------------------------------------------------------------- scenarios
scenario_tier_any() {
    sc_begin tier_any
    if start_chain && tcpdump_at any any "$SC_DIR/any.pcap"; then
        chain_workload
        stop_captures
        stop_chain
        capinfos -E "$SC_DIR/any.pcap" 2>/dev/null | grep -q "Linux cooked-mode capture v2" ||
            err "tcpdump -i any did not write LINUX_SLL2"
        CAP_OF=any.pcap
        read_both "$SC_DIR/any.pcap" any && expect_chain any --min-decided 55
    fi
    sc_end
}

scenario_tier_multi() {
    sc_begin tier_multi
    if start_chain && capture dumpcap dumpcap -q -n -i "$VETH_A" -i "$VETH_B" -f "tcp port $PORT" \
            -w "$SC_DIR/two.pcapng" &&
       tcpdump_at a "$VETH_A" "$SC_DIR/a.pcap" && tcpdump_at b "$VETH_B" "$SC_DIR/b.pcap"; then
        chain_workload
        stop_captures
        stop_chain
        local addrs="$RELAY_A,$RELAY_B" dirs
        # neither records the packets' direction: dumpcap 4.0 writes no EPB flags on Linux, a
        # plain pcap has none; so the relay's addresses are given (--host-addrs)
        dirs=$(tshark -r "$SC_DIR/two.pcapng" -T fields -e frame.packet_flags_direction 2>/dev/null | sort -u | tr -d '\n')
        note "# two.pcapng EPB direction flags: '${dirs}'"
        # dumpcap writes each interface's packets as they come from its own ring: the file is
        # not in time order (giopscope says so and suggests sorting); read sorted and as written
        reordercap "$SC_DIR/two.pcapng" "$SC_DIR/two_sorted.pcapng" >"$SC_DIR/reordercap.log" 2>&1 ||
            err "reordercap failed" "$(tail -3 "$SC_DIR/reordercap.log")"
        mergecap -F pcap -w "$SC_DIR/merged.pcap" "$SC_DIR/a.pcap" "$SC_DIR/b.pcap" 2>"$SC_DIR/mergecap.log" ||
            err "mergecap failed" "$(tail -3 "$SC_DIR/mergecap.log")"
        CAP_OF=two_sorted.pcapng
        read_both "$SC_DIR/two_sorted.pcapng" two --host-addrs "$addrs" && expect_chain two --min-decided 55
        CAP_OF=two.pcapng
        NO_ORDER=1 NO_KEEP=1 read_both "$SC_DIR/two.pcapng" two_unsorted --host-addrs "$addrs" &&
            expect_chain two_unsorted --never-wrong
        CAP_OF=merged.pcap
        read_both "$SC_DIR/merged.pcap" merged --host-addrs "$addrs" && expect_chain merged --min-decided 55
        # without --host-addrs nothing in these captures ties the relay's two addresses
        # together: whatever is named must still be right
        NO_KEEP=1 read_both "$SC_DIR/merged.pcap" merged_noaddrs && expect_chain merged_noaddrs --never-wrong
    fi
    sc_end
}

scenario_tier_threads() {
    sc_begin tier_threads
    # the relay serves from a pool of threads, not one per connection
    if start_chain -ORBthreadPerConnectionPolicy 0 && tcpdump_at any any "$SC_DIR/any.pcap"; then
        client -op slow -size 1000 -distinct -threads 4 -n 25
        stop_captures
        stop_chain
        CAP_OF=any.pcap
        read_both "$SC_DIR/any.pcap" any && expect_chain any --min-ambiguous 1
        # the same with the relay's addresses named: the decision by time alone
        NO_KEEP=1 read_both "$SC_DIR/any.pcap" addrs --host-addrs "$RELAY_A,$RELAY_B" &&
            expect_chain addrs --min-ambiguous 1
    fi
    sc_end
}

# callbacks: bench_server in the relay's namespace (address A), the client's Callback servant
# on CLI:CB_PORT; one callMeBack at a time, so the client's log says which call each ping
# served
scenario_cb() {
    local name=$1 mode=$2
    local -a srv_opts=() cli_opts=()
    if [ "$mode" = bidir ]; then
        srv_opts=(-bidir -ORBacceptBiDirectionalGIOP 1 -ORBserverTransportRule "$BIDIR_RULE")
        cli_opts=(-bidir -ORBofferBiDirectionalGIOP 1 -ORBclientTransportRule "$BIDIR_RULE")
    fi
    sc_begin "$name"
    ns_start "$NS_RELAY" "$SC_DIR/server.log" "$SERVER" -ORBendPoint "giop:tcp:$RELAY_A:$PORT" \
        "${srv_opts[@]}" -o "$SC_DIR/cb.ior" -q
    SRV_PID=$NS_LAST_PID
    note "# server: bench_server -ORBendPoint giop:tcp:$RELAY_A:$PORT$(printf ' %q' "${srv_opts[@]}")"
    if ns_wait_file "$SC_DIR/cb.ior" 15 && tcpdump_at veth "$VETH_A" "$SC_DIR/cb.pcap"; then
        IOR=cb.ior client -ORBendPoint "giop:tcp:$NS_CLI_IP4:$CB_PORT" "${cli_opts[@]}" -op callback -size 3 -n 20
        stop_captures
        ns_stop "$SRV_PID" TERM 20 || err "server exit status $?"
        SRV_PID=""
        read_both "$SC_DIR/cb.pcap" cb
        local out
        if ! out=$(python3 "$EXPECT" callback --oracle "$SC_DIR/cb.expected.csv" --ours "$SC_DIR/cb.ours.csv" \
                --host "$RELAY_A" --lat "${LATS[0]}" 2>&1); then
            err "cb: nesting" "$out"
        fi
        echo "$out" >>"$SC_DIR/expect.txt"
        SC_NOTE=$(echo "$out" | sed -n 's/^nesting: \([0-9]*\) nested calls, \([0-9]*\) decided.*, \([0-9]*\) ambiguous.*; \([0-9]*\) named/\4\/\1 named (\2 decided, \3 ambiguous)/p')
    else
        err "server or capture did not start" "$(tail -3 "$SC_DIR/server.log")"
    fi
    sc_end
}
scenario_cb_conn() { scenario_cb cb_conn conn; }
scenario_cb_bidir() { scenario_cb cb_bidir bidir; }

# --tail on the slowed chain: the 5 slowed relay calls and their 5 back-end calls are the 10
# slowest of the capture; --tail 30 holds them all
scenario_tier_tail() {
    sc_begin tier_tail
    if start_chain && tcpdump_at any any "$SC_DIR/any.pcap"; then
        chain_workload
        stop_captures
        stop_chain
        CAP_OF=any.pcap
        # the relay's addresses named (tier_any checks what the capture's direction gives)
        local addrs="$RELAY_A,$RELAY_B"
        if read_both "$SC_DIR/any.pcap" any --host-addrs "$addrs"; then
            note "# tail: giopscope read any.pcap --host-addrs $addrs --tail 30 --format jsonl"
            "$GIOPSCOPE" read "$SC_DIR/any.pcap" --host-addrs "$addrs" --tail 30 --format jsonl \
                >"$SC_DIR/tail.out" 2>"$SC_DIR/tail.jsonl" ||
                err "giopscope read --tail 30 --format jsonl: exit status $?" "$(head -3 "$SC_DIR/tail.jsonl")"
            cat "$SC_DIR/tail.out" >>"$SC_DIR/tail.jsonl"   # the tail is on stdout without --pairs
            expect_chain any --tail "$SC_DIR/tail.jsonl" --slow-min "$SLOW_MIN"
        fi
    fi
    sc_end
}

# the checker itself: one wrong parent in an otherwise checked CSV must make it fail
scenario_selfcheck() {
    sc_begin selfcheck
    if start_chain && tcpdump_at any any "$SC_DIR/any.pcap"; then
        client -op echoOctets -size 100 -distinct -n 10
        client -op slow -usecs 20000,30000 -n 2
        stop_captures
        stop_chain
        CAP_OF=any.pcap
        read_both "$SC_DIR/any.pcap" any
        local -a lats=() l
        for l in "${LATS[@]}"; do lats+=(--lat "$l"); done
        local -a args=(--cap "$SC_DIR/any.pcap" --oracle "$SC_DIR/any.expected.csv" --host "$RELAY_A,$RELAY_B"
                       --relay-log "$SC_DIR/relay.spans" --back-log "$SC_DIR/back.spans" "${lats[@]}")
        # the rig alone (no giopscope) must hold
        python3 "$EXPECT" chain "${args[@]}" >"$SC_DIR/rig.txt" 2>&1 ||
            err "the rig does not hold (nested_expect.py without giopscope)" "$(cat "$SC_DIR/rig.txt")"
        # what a correct reader writes must pass, and with one parent moved, fail as WRONG
        python3 "$EXPECT" chain "${args[@]}" --ours "$SC_DIR/any.ours.csv" --write-reference "$SC_DIR/ref.csv" \
            >"$SC_DIR/ref.txt" 2>&1 || err "nested_expect.py --write-reference failed" "$(cat "$SC_DIR/ref.txt")"
        python3 "$EXPECT" chain "${args[@]}" --ours "$SC_DIR/ref.csv" >>"$SC_DIR/ref.txt" 2>&1 ||
            err "nested_expect.py fails the reference answer" "$(cat "$SC_DIR/ref.txt")"
        if python3 "$EXPECT" wrong-parent "$SC_DIR/ref.csv" "$SC_DIR/wrong.csv" --host "$RELAY_A,$RELAY_B" >"$SC_DIR/wrong.txt" 2>&1; then
            if python3 "$EXPECT" chain "${args[@]}" --ours "$SC_DIR/wrong.csv" >>"$SC_DIR/wrong.txt" 2>&1; then
                err "nested_expect.py passed a CSV with a wrong parent" "$(cat "$SC_DIR/wrong.txt")"
            elif ! grep -q "WRONG parent" "$SC_DIR/wrong.txt"; then
                err "nested_expect.py failed the wrong parent for another reason" "$(cat "$SC_DIR/wrong.txt")"
            fi
        else
            err "nested_expect.py wrong-parent failed" "$(cat "$SC_DIR/wrong.txt")"
        fi
    fi
    sc_end
}

sc_run_all
rc=$?
echo "time: $(awk -v a="$T_START" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }')"
exit $rc
