#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_ebpf.sh -- `giopscope attach` (eBPF packet tap + syscall probes) on
# real omniORB processes.
#
#   netns     bench_server in a server namespace, bench_client in a client namespace, joined by a
#             veth. `giopscope attach --pid SERVER` runs in the root namespace (it enters the
#             server's itself) while tcpdump captures the server's veth. Checks: every slow(usec)
#             call has server_process_us >= usec, the median excess is at most BOUND_US (the
#             p50/p99/max excess is printed: scheduling on a busy VM makes the tail long), and
#             server_process_us <= server_us (t5-t4 within t6-t3, the tap is on the server's
#             host); the client columns are empty (not followed); the columns up to capture_loss equal
#             `giopscope read` of the capture call for call (compare_pairs.py, timestamps within
#             TOL_NS: tcpdump stamps a packet where AF_PACKET sees it, attach where tc does);
#             gap_fills too, except in at most GAP_SWAP_MAX calls, each listed, whose message
#             has two segments less than GAP_SWAP_US apart in the capture, by at most the number
#             of such pairs: two segments of one connection can reach the veth on two CPUs at
#             once, and AF_PACKET and tc then may see them in other orders (gap_swaps.py).
#             With FCACHE=N, attach runs with --map-fcache N (0: every framing state in the
#             LRU hash, framed in the per-CPU spare copy; 1: one direct-mapped slot, the other
#             directions hashed) and its closing report must show that path taken (N=0: no
#             state in a slot, i.e. none hashed "with its slot held" and none taken; N=1: some
#             hashed with their slot held, and the slot taken from a closed connection (the
#             clients run one after another; a slot is free 10 ms after a FIN) at least once).
#   loopback  server and clients in one namespace over 127.0.0.1, `attach --port PORT
#             --idle-reader` (so both processes are followed; attach's process SCHED_IDLE once
#             attached, chrt -p): every answered call has all four instants and
#             client_syscall_us >= total_us >= server_process_us.
#   cleanup   attach stopped by SIGINT, SIGTERM, SIGHUP and SIGKILL: afterwards `bpftool prog show`,
#             `bpftool link show` show none of its programs or links, and `tc filter show` shows
#             nothing on the interfaces it tapped.
#   pid_exit  `attach --pid SERVER`, the server killed with a call in flight: one line, attach
#             ends by itself with exit 0, the summary and the calls (the one in flight NO_REPLY).
#   comm_restart  `attach --comm bench_server`, the server killed and started again (new pid):
#             the new one's calls have server_process_us too; attach goes on.
#   pid_reuse `attach --pid SERVER,OTHER`, the server killed and another server started with
#             the same pid (ns_last_pid): its calls get no server columns.
#   ring_full `--ring-size 8k` and a burst while attach is held by SIGSTOP: records lost, shown
#             in the progress line (on a terminal, script(1)) and the summary; the calls after
#             are all seen; exit 0. `--ring-size 4k` is refused.
#   iface_gone  the veth deleted under `attach -i VETH` (one line, exit 2, what it saw written)
#             and under `attach` on every interface (one line, goes on with lo).
#   clsact_stale `attach --tc-attach clsact` (whatever TC_ATTACH says) and its guard both killed
#             with SIGKILL leave its filter on lo (checked: the test can see it); the next
#             attach says it removed it, and after its SIGINT no filter of ours is on lo.
#   drop_user `attach -Z nobody`: an unknown user is exit 2, one line; -o where only root may
#             write is refused (opened after the switch) and nothing stays attached; while it
#             runs /proc/PID/status shows nobody's ids and no capability, every call of a client
#             is written, and after SIGINT no program or link of it is left.
#
# Every scenario runs on either path of the send/recv instants: attach's own choice (the
# default), which must be the programs the kernel's own facts call for (tests/lib/
# hook_paths.sh: the socket layer's tracepoints where its BTF has them, else fentry/fexit where
# it loads an fentry program, else kprobes, else the syscalls), or, with HOOKS=syscalls, the
# fallback (`attach --syscall-hooks`); while attach runs it must hold links of exactly those
# send/recv programs (its fdinfo), and its first line must name the path. With TC_ATTACH=clsact (or tcx) every attach gets
# `--tc-attach TC_ATTACH` and its first line must say `tc attach: TC_ATTACH`: the same calls
# and checks on tc clsact filters as on TCX links (cleanup: no filter, no clsact qdisc left).
#
# usage: tests/integration/attach_ebpf.sh [SCENARIO...]     (default: all; --list)
# environment: GIOPSCOPE, BUILD, PORT (2809), BOUND_US (1000), TOL_NS (1000000), GAP_SWAP_US (20),
#   GAP_SWAP_MAX (1), FCACHE (unset: attach's default direct-mapped framing table),
#   HOOKS (auto, the default, or syscalls), TC_ATTACH (unset: attach's choice; tcx, clsact),
#   KEEP_DIR (keep every scenario's files there), FAIL_DIR (default /tmp/gs-failing)
# Prints "PASS name" / "FAIL name: reason", then "N passed, N failed"; exit 0, 1 on a failure,
# 77 when it cannot run here (not root, no eBPF in the build, no BTF, no namespaces).

# shellcheck disable=SC2317  # scenario bodies and hooks are called indirectly
set -u
export LC_ALL=C

cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
COMPARE=${COMPARE:-tests/oracle/compare_pairs.py}
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
KEEP_DIR=${KEEP_DIR:-}
PORT=${PORT:-2809}
BOUND_US=${BOUND_US:-1000}
# 1 ms: on a loaded machine a softirq may run the tc hook well after AF_PACKET's stamp
TOL_NS=${TOL_NS:-1000000}
# RX_CLEAR (a compiled tests/lib/clear_edt.bpf.c; tests/integration/attach_rxstamp.sh sets
# it): the netns scenario with packets stamped at netif_rx, attach --rx-stamp, and its
# ingress instants checked against tcpdump's within RX_TOL_NS (1000)
RX_CLEAR=${RX_CLEAR:-}
RX_TOL_NS=${RX_TOL_NS:-1000}
# (tcpdump on the server veth holds rx timestamps on too: RX_ATTACH_ARGS= runs a build
# without --rx-stamp)
RX_ATTACH_ARGS=${RX_ATTACH_ARGS---rx-stamp}
SC_NOTE_RX=""
# gap_fills may differ only where the capture has two segments of the message this close (µs),
# in this many calls at most (tests/lib/gap_swaps.py)
GAP_SWAP_US=${GAP_SWAP_US:-20}
GAP_SWAP_MAX=${GAP_SWAP_MAX:-1}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
FC_ARGS=()
if [ -n "${FCACHE:-}" ]; then
    FC_ARGS=(--map-fcache "$FCACHE")
fi
ALL="netns loopback cleanup pid_exit comm_restart pid_reuse ring_full iface_gone drop_user clsact_stale"
HOOKS=${HOOKS:-auto}
case "$HOOKS" in
    auto) HOOK_ARGS=() HOOK_LINE="send/recv instants: " ;;
    syscalls) HOOK_ARGS=(--syscall-hooks) HOOK_LINE="send/recv instants: syscalls (fallback)"
              HOOK_SEND=sys_enter HOOK_RECV=sys_exit HOOK_WHY="--syscall-hooks" ;;
    *) echo "attach_ebpf: HOOKS is auto or syscalls, not $HOOKS" >&2; exit 2 ;;
esac
TC_ATTACH=${TC_ATTACH:-}
case "$TC_ATTACH" in
    "") ;;
    tcx|clsact) HOOK_ARGS+=(--tc-attach "$TC_ATTACH") ;;
    *) echo "attach_ebpf: TC_ATTACH is tcx or clsact, not $TC_ATTACH" >&2; exit 2 ;;
esac

. tests/lib/common.sh
. tests/lib/scenario.sh
sc_want attach_ebpf "$ALL" "$@"

. tests/lib/netns.sh
. tests/lib/keep_capture.sh
. tests/lib/hook_paths.sh

attach_require tcpdump tshark python3 timeout bpftool tc clang
if [ "$HOOKS" = auto ]; then
    hook_expect "$BUILD"
    echo "attach_ebpf: attach must take $HOOK_SEND + $HOOK_RECV ($HOOK_WHY)"
fi
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-attach.XXXXXX) || exit 2
ATT_PID=""
# shellcheck disable=SC2034  # read by work_cleanup (tests/lib/common.sh)
WORK_PID_VARS="ATT_PID"
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
# a private copy: a rebuild while the test runs must not swap the binary under it
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
[ -n "$KEEP_DIR" ] && mkdir -p "$KEEP_DIR"

SC_FAIL_PREFIX=attach_ SC_CP_OPTS=""
SC_NOTE=""

# start_server NS ADDR: bench_server listening on ADDR:PORT in NS
start_server() {
    rm -f "$SC_DIR/echo.ior" "$SC_DIR/dead.ior"
    ns_start "$1" "$SC_DIR/server.log" "$SERVER" -ORBendPoint "giop:tcp:$2:$PORT" \
        -o "$SC_DIR/echo.ior" -d "$SC_DIR/dead.ior"
    SRV_PID=$NS_LAST_PID
    if ! ns_wait_file "$SC_DIR/echo.ior" 15 || ! ns_wait_port "$1" "$PORT" 10; then
        err "server did not start" "$(tail -3 "$SC_DIR/server.log")"
        return 1
    fi
}

# start_attach LOG [ip netns exec NS] ARGS...: giopscope attach in the background; waits
# (bounded) until it says what it follows, i.e. everything is attached
start_attach() {
    local log=$1
    shift
    local -a pre=()
    if [ "$1" = "--in" ]; then
        pre=(ip netns exec "$2")
        shift 2
    fi
    local -a hk=("${HOOK_ARGS[@]}")
    case " $* " in *" --packets-only "*) hk=(); [ -n "$TC_ATTACH" ] && hk=(--tc-attach "$TC_ATTACH") ;; esac
    echo "# attach:$(printf ' %q' "${pre[@]}" "$GIOPSCOPE" attach "${hk[@]}" "$@")" >>"$SC_DIR/commands.log"
    "${pre[@]}" "$GIOPSCOPE" attach "${hk[@]}" "$@" 2>"$log" &
    ATT_PID=$!
    if ns_wait_attached "$log" "$ATT_PID"; then
        check_hooks "$log" "${#hk[@]}"
        return 0
    fi
    err "attach did not start" "$(tail -5 "$log")"
    kill -KILL "$ATT_PID" 2>/dev/null
    wait "$ATT_PID" 2>/dev/null
    ATT_PID=""
    return 1
}

# check_hooks LOG: attach's first line names the path of the send/recv instants, and `bpftool
# perf` (raw tracepoints and tracepoints, by the process holding them) shows attach's programs
# on exactly that path's: sock_recv_length and tcp_sendmsg_locked on the default path (no
# program on a syscall tracepoint: raw_syscalls sys_enter/sys_exit, syscalls:*), sys_enter and
# sys_exit on the fallback
check_hooks() {
    local line held want
    line=$(grep -m1 "^giopscope attach: following" "$1")
    if [ -n "$TC_ATTACH" ] && [[ "$line" != *"tc attach: $TC_ATTACH"* ]]; then
        err "attach's first line does not say \"tc attach: $TC_ATTACH\"" "$line"
        return 1
    fi
    case "$line" in
        *"(packets only)"*) return 0 ;;
        *"$HOOK_LINE"*) ;;
        *) err "attach's first line does not say \"$HOOK_LINE\"" "$line"; return 1 ;;
    esac
    # the send/recv programs attach holds links of (the tap's may be tc filters, not links)
    held=$(hook_held "$ATT_PID" | tr ' ' '\n' | grep -v '^giop_tap_' | sort | tr '\n' ' ' | sed 's/ $//')
    want=$(printf '%s\n' $HOOK_SEND $HOOK_RECV | sort | tr '\n' ' ' | sed 's/ $//')
    if [ "$held" != "$want" ]; then
        err "attach's send/recv programs: [$held], want [$want] ($HOOK_WHY)" "$line"
        return 1
    fi
    echo "# attach's send/recv programs: $held ($HOOK_WHY)" >>"$SC_DIR/commands.log"
}

# stop_attach SIGNAL: stop it, wait (bounded); sets ATT_RC
stop_attach() {
    local sig=$1
    # bash reports a job killed by a signal on the script's stderr, whenever it
    # reaps it: SIGKILL is the point of this, keep the notice out of the report
    exec 3>&2 2>/dev/null
    kill -s "$sig" "$ATT_PID" 2>/dev/null
    for _ in $(seq 1 200); do
        ns_alive "$ATT_PID" || break
        sleep 0.05
    done
    if ns_alive "$ATT_PID"; then
        err "attach did not exit within 10 s of SIG$sig"
        kill -KILL "$ATT_PID" 2>/dev/null
    fi
    wait "$ATT_PID"
    ATT_RC=$?
    ATT_PID=""
    exec 2>&3 3>&-
}

# client NS ARGS...: bench_client in NS (must exit 0)
client() {
    local ns=$1
    shift
    echo "# client in $ns:$(printf ' %q' "$CLIENT" -i echo.ior -d dead.ior "$@")" >>"$SC_DIR/commands.log"
    if ! ns_run "$ns" 120 "$CLIENT" -i "$SC_DIR/echo.ior" -d "$SC_DIR/dead.ior" -q "$@" \
            >>"$SC_DIR/clients.log" 2>&1; then
        err "client ($*) failed" "$(tail -3 "$SC_DIR/clients.log")"
        return 1
    fi
}

# check_fcache LOG: with FCACHE set, the closing report's framing-table counts show the path
# the framing states took (see the header)
check_fcache() {
    [ -n "${FCACHE:-}" ] || return 0
    local line hashed taken framed
    line=$(grep -m1 "^giopscope attach: kernel:" "$1")
    framed=$(sed -n 's/.* \([0-9]*\) connection directions framed.*/\1/p' <<<"$line")
    hashed=$(sed -n 's/.*framing state: \([0-9]*\) in the flow map.*/\1/p' <<<"$line")
    taken=$(sed -n 's/.* \([0-9]*\) fcache slots taken.*/\1/p' <<<"$line")
    if [ -z "$framed" ] || [ -z "$hashed" ] || [ -z "$taken" ] || [ "$framed" -lt 2 ]; then
        err "FCACHE=$FCACHE: no framing-table counts in the report" "$line"
    elif [ "$FCACHE" = 0 ] && { [ "$hashed" != 0 ] || [ "$taken" != 0 ]; }; then
        err "FCACHE=0: a framing state was in a slot" "$line"
    elif [ "$FCACHE" = 1 ] && { [ "$hashed" -lt 1 ] || [ "$taken" -lt 1 ]; }; then
        err "FCACHE=1: no direction went to the hash with its slot held, or none took it" "$line"
    fi
    echo "    fcache ($FCACHE): $framed directions framed, $hashed hashed with their slot held, $taken slots taken"
}

# ------------------------------------------------------------------ netns
scenario_netns() {
    sc_begin netns
    local sleeps="1000 3000 10000"
    local rx_args=()
    if [ -n "$RX_CLEAR" ]; then
        # packets as a NIC hands them over: a tc program on the client's veth clears the
        # sender's delivery time (tests/lib/clear_edt.bpf.c), so the server's kernel stamps
        # them at netif_rx; attach holds rx timestamps on itself (--rx-stamp)
        ip netns exec "$NS_CLI" tc qdisc add dev "$NS_VETH_CLI" clsact &&
            ip netns exec "$NS_CLI" tc filter add dev "$NS_VETH_CLI" egress bpf da obj "$RX_CLEAR" sec tc ||
            err "cannot put the delivery-time clearer on $NS_VETH_CLI"
        read -r -a rx_args <<<"$RX_ATTACH_ARGS"
    fi
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        ns_start "$NS_SRV" "$SC_DIR/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
            --time-stamp-precision=nano -U -i "$NS_VETH_SRV" -w "$SC_DIR/cap.pcap" "tcp port $PORT"
        TD_PID=$NS_LAST_PID
        ns_wait_grep "$SC_DIR/tcpdump.log" "listening on" 15 || err "tcpdump did not start"
        if start_attach "$SC_DIR/attach.log" --pid "$SRV_PID" "${FC_ARGS[@]}" "${rx_args[@]}" --pairs \
                -o "$SC_DIR/attach.csv" -q; then
            # one connection per sleep time: the order of the connections tells the sleep
            for us in $sleeps; do
                client "$NS_CLI" -op slow -size "$us" -n 40
            done
            client "$NS_CLI" -op mix -size 24 -n 90
            client "$NS_CLI" -op echoOctets -size 100000 -n 5
            client "$NS_CLI" -ORBmaxGIOPVersion 1.1 -op echoRecs -size 2000 -n 5
            sleep 0.5
            stop_attach INT
            [ "$ATT_RC" = 0 ] || err "attach exit status $ATT_RC after SIGINT" "$(tail -3 "$SC_DIR/attach.log")"
            check_fcache "$SC_DIR/attach.log"
        fi
        sleep 0.3
        ns_stop "$TD_PID" INT 15
        ns_stop "$SRV_PID" TERM 20
        # the reference capture is also replayed through giopscope dpdk afterwards
        keep_capture "$SC_DIR/cap.pcap" "attach_ebpf-netns${RX_CLEAR:+-rx}"
        "$GIOPSCOPE" read "$SC_DIR/cap.pcap" --pairs --format csv -o "$SC_DIR/read.csv" 2>"$SC_DIR/read.log" ||
            err "giopscope read of the capture failed" "$(tail -2 "$SC_DIR/read.log")"
        if [ -s "$SC_DIR/attach.csv" ] && [ -s "$SC_DIR/read.csv" ]; then
            # read's columns: every one up to capture_loss (by name), not attach's six after it
            local ncol
            ncol=$(head -1 "$SC_DIR/attach.csv" | tr , '\n' | grep -n -x capture_loss | cut -d: -f1)
            cut -d, -f"1-${ncol:-0}" "$SC_DIR/attach.csv" >"$SC_DIR/attach_read.csv"
            # gap_fills on its own: the two taps may see two segments taken on two CPUs at
            # once in other orders (tests/lib/gap_swaps.py)
            if ! python3 "$COMPARE" "$SC_DIR/read.csv" "$SC_DIR/attach_read.csv" --no-order \
                    --ignore gap_fills --tolerance-ns "$TOL_NS" >"$SC_DIR/compare.txt" 2>&1; then
                err "attach's pairs differ from tcpdump + read" "$(tail -12 "$SC_DIR/compare.txt")"
            fi
            # RX_CLEAR: the server's ingress instants (t_request_*) are the kernel's receive
            # stamp, the one tcpdump reports: equal to the conversion's error, RX_TOL_NS
            if [ -n "$RX_CLEAR" ]; then
                if ! python3 "$COMPARE" "$SC_DIR/read.csv" "$SC_DIR/attach_read.csv" --no-order \
                        --ignore gap_fills,t_reply_first,t_reply_last,total_us,server_us \
                        --tolerance-ns "$RX_TOL_NS" >"$SC_DIR/compare_rx.txt" 2>&1; then
                    err "attach's ingress instants differ from tcpdump's by more than $RX_TOL_NS ns" \
                        "$(tail -4 "$SC_DIR/compare_rx.txt")"
                fi
                grep -q "ingress instants: 0 segments at the kernel" "$SC_DIR/attach.log" &&
                    err "no ingress segment at the kernel's receive stamp" "$(grep 'ingress instants' "$SC_DIR/attach.log")"
                SC_NOTE_RX="; rx: $(tail -1 "$SC_DIR/compare_rx.txt"), $(grep -o 'largest timestamp difference: [0-9]* ns' "$SC_DIR/compare_rx.txt"); $(grep -o 'ingress instants: [0-9]* segments at the kernel.s receive stamp, [0-9]* at the tap.s own' "$SC_DIR/attach.log")"
            fi
            if ! python3 tests/lib/gap_swaps.py "$SC_DIR/read.csv" "$SC_DIR/attach.csv" "$SC_DIR/cap.pcap" \
                    "$GAP_SWAP_US" "$GAP_SWAP_MAX" >"$SC_DIR/gap_swaps.txt" 2>&1; then
                err "attach's gap_fills differ from tcpdump + read" "$(tail -12 "$SC_DIR/gap_swaps.txt")"
            fi
            local out
            if out=$(python3 - "$SC_DIR/attach.csv" "$BOUND_US" $sleeps <<'PY' 2>&1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bound = float(sys.argv[2])
sleeps = [float(s) for s in sys.argv[3:]]
bad = []
slow = [r for r in rows if r["operation"] == "slow"]
# connections in the order they started: the clients ran in the order of `sleeps` (the
# mix, later, calls slow too: its connection is not one of these)
first = {}
for r in slow:
    t = float(r["t_request_first"])
    first[r["client"]] = min(first.get(r["client"], t), t)
order = sorted(first, key=first.get)[:len(sleeps)]
sleep_of = dict(zip(order, sleeps))
slow = [r for r in slow if r["client"] in sleep_of]
excess = []
for r in slow:
    if not r["server_process_us"]:
        bad.append("slow call %s %s without server_process_us" % (r["client"], r["request_id"]))
        continue
    sp = float(r["server_process_us"])
    want = sleep_of[r["client"]]
    if sp < want:
        bad.append("slow(%d) %s %s: server_process_us %.3f, less than the sleep" % (want, r["client"], r["request_id"], sp))
    excess.append(sp - want)
for r in rows:
    if r["server_process_us"] and r["server_us"] and float(r["server_process_us"]) > float(r["server_us"]):
        bad.append("%s %s: server_process_us %s > server_us %s" % (r["client"], r["request_id"], r["server_process_us"], r["server_us"]))
for r in rows:
    if r["t_client_send"] or r["t_client_recv"] or r["client_syscall_us"]:
        bad.append("client columns set, the client is not followed: %s %s" % (r["client"], r["request_id"]))
        break
    if r["status"] not in ("ONEWAY", "NO_REPLY") and not (r["t_server_recv"] and r["t_server_send"]):
        bad.append("answered call without the server's instants: %s %s %s" % (r["client"], r["request_id"], r["operation"]))
if len(slow) != 40 * len(sleeps):
    bad.append("%d slow calls, expected %d" % (len(slow), 40 * len(sleeps)))
excess.sort()
if excess:
    q = lambda p: excess[min(len(excess) - 1, int(p * len(excess)))]
    print("slow calls %d, server_process_us - sleep: p50 %.1f us, p99 %.1f us, max %.1f us"
          % (len(excess), q(0.5), q(0.99), excess[-1]))
    if q(0.5) > bound:
        bad.append("median excess %.1f us above the bound %.0f us" % (q(0.5), bound))
for b in bad[:20]:
    print("BAD " + b)
sys.exit(1 if bad else 0)
PY
            ); then
                SC_NOTE="$(echo "$out" | head -1); $(tail -1 "$SC_DIR/compare.txt"); $(tail -1 "$SC_DIR/gap_swaps.txt"); $(grep -o 'largest timestamp difference: [0-9]* ns' "$SC_DIR/compare.txt")$SC_NOTE_RX"
            else
                err "server_process_us checks failed" "$out"
            fi
        else
            err "no pairs from attach or read" "$(tail -3 "$SC_DIR/attach.log")"
        fi
    fi
    sc_end
}

# ------------------------------------------------------------------ loopback
scenario_loopback() {
    sc_begin loopback
    if start_server "$NS_SRV" 127.0.0.1; then
        if start_attach "$SC_DIR/attach.log" --in "$NS_SRV" --port "$PORT" --idle-reader --pairs -o "$SC_DIR/attach.csv" -q; then
            # --idle-reader: the reader is a SCHED_IDLE process once attached (its first line is after)
            chrt -p "$ATT_PID" 2>&1 | grep -q "policy: SCHED_IDLE" ||
                err "attach --idle-reader: not SCHED_IDLE" "$(chrt -p "$ATT_PID" 2>&1)"
            client "$NS_SRV" -op slow -size 2000 -n 30
            client "$NS_SRV" -op echoString -size 32 -n 300
            client "$NS_SRV" -op mix -size 24 -n 90
            client "$NS_SRV" -op echoOctets -size 100000 -n 5
            client "$NS_SRV" -op slow -threads 4 -n 20 -usecs 100,2000,500 \
                -ORBoneCallPerConnection 0 -ORBmaxGIOPConnectionPerServer 1
            sleep 0.5
            stop_attach TERM
            [ "$ATT_RC" = 0 ] || err "attach exit status $ATT_RC after SIGTERM" "$(tail -3 "$SC_DIR/attach.log")"
        fi
        ns_stop "$SRV_PID" TERM 20
        local out
        if out=$(python3 - "$SC_DIR/attach.csv" <<'PY' 2>&1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bad = []
n = 0
us = lambda t: float(t)
for r in rows:
    if not r["total_us"]:
        continue
    n += 1
    key = "%s %s %s" % (r["client"], r["request_id"], r["operation"] or r["kind"])
    if not all(r[c] for c in ("t_client_send", "t_server_recv", "t_server_send", "t_client_recv")):
        bad.append("%s: instants missing" % key)
        continue
    cs, tot, sp = us(r["client_syscall_us"]), us(r["total_us"]), us(r["server_process_us"])
    if not (cs >= tot >= sp):
        bad.append("%s: client_syscall_us %.3f, total_us %.3f, server_process_us %.3f" % (key, cs, tot, sp))
if n < 300:
    bad.append("only %d answered calls" % n)
print("%d answered calls, client_syscall_us >= total_us >= server_process_us for every one" % n
      if not bad else "%d answered calls, %d bad" % (n, len(bad)))
for b in bad[:20]:
    print("BAD " + b)
sys.exit(1 if bad else 0)
PY
        ); then
            SC_NOTE=$out
        else
            err "ordering of the instants" "$out" "$(tail -3 "$SC_DIR/attach.log")"
        fi
    fi
    sc_end
}

# ------------------------------------------------------------------ cleanup
# ids of BPF programs and links as JSON lists
bpf_ids() {
    bpftool -j "$1" show 2>/dev/null | python3 -c 'import json,sys
d = json.load(sys.stdin) or []
print(" ".join(str(x["id"]) for x in d))'
}

# held_by PID KEY: the BPF object ids (KEY prog_id or link_id) the process PID holds file
# descriptors of (/proc/PID/fdinfo; a link's fdinfo names its program too); PID "all": every
# process's. Other engineers' probes may load programs at any time on this machine: what is
# ours is what our attach holds, not whatever appeared while it ran.
held_by() {
    local d=/proc/$1/fdinfo
    [ "$1" = all ] && d="/proc/[0-9]*/fdinfo"
    # shellcheck disable=SC2086
    cat $d/* 2>/dev/null | sed -n "s/^$2:[[:space:]]*//p" | sort -un | tr '\n' ' '
}

scenario_cleanup() {
    sc_begin cleanup
    local sig during_l after_p after_l ours left
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        for sig in INT TERM HUP KILL; do
            start_attach "$SC_DIR/attach_$sig.log" --pid "$SRV_PID" --pairs -o "$SC_DIR/attach_$sig.csv" -q || continue
            client "$NS_CLI" -op echoString -size 32 -n 20
            ours=$(held_by "$ATT_PID" prog_id) during_l=$(held_by "$ATT_PID" link_id)
            [ -n "$ours" ] || err "SIG$sig: no program of attach seen while it ran"
            [ -n "$during_l" ] || err "SIG$sig: no link of attach seen while it ran"
            stop_attach "$sig"
            case "$sig:$ATT_RC" in
                INT:0|TERM:0|HUP:0|KILL:137) ;;
                *) err "SIG$sig: attach exit status $ATT_RC" "$(tail -3 "$SC_DIR/attach_$sig.log")" ;;
            esac
            # the kernel frees programs after the last reference goes (bounded wait)
            for _ in $(seq 1 50); do
                after_p=" $(bpf_ids prog) " after_l=" $(bpf_ids link) "
                left=""
                for id in $ours; do case "$after_p" in *" $id "*) left="$left $id" ;; esac; done
                for id in $during_l; do
                    case "$after_l" in *" $id "*) left="$left link$id" ;; esac
                done
                [ -z "$left" ] && break
                sleep 0.1
            done
            [ -z "$left" ] || err "SIG$sig: still there after exit:$left" "$(bpftool prog show 2>&1 | tail -6)"
            local dev dir out
            for dev in lo "$NS_VETH_SRV"; do
                for dir in ingress egress; do
                    out=$(ip netns exec "$NS_SRV" tc filter show dev "$dev" "$dir" 2>/dev/null)
                    [ -z "$out" ] || err "SIG$sig: tc filter show dev $dev $dir: $out"
                done
            done
            out=$(ip netns exec "$NS_SRV" tc qdisc show dev "$NS_VETH_SRV" 2>/dev/null | grep -E "clsact|ingress")
            [ -z "$out" ] || err "SIG$sig: a clsact/ingress qdisc was left on $NS_VETH_SRV: $out"
            if [ "$sig" != KILL ]; then
                grep -q "^giopscope attach: kernel:" "$SC_DIR/attach_$sig.log" ||
                    err "SIG$sig: no closing report" "$(tail -3 "$SC_DIR/attach_$sig.log")"
                [ "$(grep -c . "$SC_DIR/attach_$sig.csv")" -gt 20 ] || err "SIG$sig: no calls written"
            fi
        done
        ns_stop "$SRV_PID" TERM 20
        SC_NOTE="SIGINT, SIGTERM, SIGHUP, SIGKILL: no program, link or tc filter left"
    fi
    sc_end
}

# ------------------------------------------------------------------ clsact_stale
# our_filters NS DEV: giopscope's clsact filter lines on DEV's ingress (handle 0x6773, pref 49573)
our_filters() {
    ip netns exec "$1" tc filter show dev "$2" ingress 2>/dev/null | grep "pref 49573 .*handle 0x67[78].*giop_tap"
}

scenario_clsact_stale() {
    sc_begin clsact_stale
    local guard left tc_was=$TC_ATTACH
    local -a hooks_was=("${HOOK_ARGS[@]}")
    # clsact whatever TC_ATTACH says: the scenario is about its filters
    if [ "$TC_ATTACH" != clsact ]; then
        TC_ATTACH=clsact
        HOOK_ARGS+=(--tc-attach clsact)
    fi
    if start_server "$NS_SRV" "$NS_SRV_IP4" &&
            start_attach "$SC_DIR/attach_1.log" --in "$NS_SRV" --port "$PORT" -i lo -q \
                -o "$SC_DIR/out_1.txt"; then
        [ -n "$(our_filters "$NS_SRV" lo)" ] || err "no clsact filter of attach on lo while it ran"
        # attach and its guard (the child that removes the filters when attach dies) both gone:
        # what a kill -9 of the process group leaves
        guard=$(pgrep -P "$ATT_PID" -f giopscope | head -1)
        [ -n "$guard" ] || err "attach --tc-attach clsact has no guard child"
        [ -n "$guard" ] && kill -KILL "$guard" 2>/dev/null
        stop_attach KILL
        sleep 0.3
        left=$(our_filters "$NS_SRV" lo)
        [ -n "$left" ] || err "attach and its guard SIGKILLed left no filter: the next start has nothing to remove"
        if start_attach "$SC_DIR/attach_2.log" --in "$NS_SRV" --port "$PORT" -i lo -q -o "$SC_DIR/out_2.txt"; then
            grep -q "removed the tc filter a killed giopscope left on lo ingress" "$SC_DIR/attach_2.log" ||
                err "the next attach did not say it removed the stale filter" "$(head -3 "$SC_DIR/attach_2.log")"
            [ "$(our_filters "$NS_SRV" lo | grep -c .)" = 1 ] || err "not exactly one filter of ours on lo" \
                "$(ip netns exec "$NS_SRV" tc filter show dev lo ingress)"
            stop_attach INT
            [ "$ATT_RC" = 0 ] || err "attach after SIGINT: exit $ATT_RC"
            sleep 0.2
            left=$(ip netns exec "$NS_SRV" tc filter show dev lo ingress 2>/dev/null)
            [ -z "$left" ] || err "a filter is left on lo after SIGINT" "$left"
            SC_NOTE="a filter a SIGKILLed attach+guard left was removed by the next start; none after its SIGINT"
        fi
    fi
    ns_stop "$SRV_PID" TERM 20
    TC_ATTACH=$tc_was HOOK_ARGS=("${hooks_was[@]}")
    sc_end
}

# ------------------------------------------------------------------ robustness (issue 8)
# What happens to a running attach when what it follows changes under it: the process exits
# (pid_exit), is restarted (comm_restart), its pid goes to another process (pid_reuse), the ring
# overflows (ring_full), the tapped interface is deleted (iface_gone). docs/attach.md, "While it
# runs", says what each should do; these check it.

# rob_wait_exit SECONDS: wait (bounded) for attach (ATT_PID) to end by itself; sets ATT_RC and
# clears ATT_PID. 1 when it was still running (it is then stopped with SIGINT).
rob_wait_exit() {
    local t=$1
    for _ in $(seq 1 $((t * 20))); do
        ns_alive "$ATT_PID" || break
        sleep 0.05
    done
    if ns_alive "$ATT_PID"; then
        stop_attach INT
        return 1
    fi
    wait "$ATT_PID"
    ATT_RC=$?
    ATT_PID=""
    return 0
}

# rob_calls CSV MODE ARGS: checks of the pairs CSV (prints a one-line note, exit 1 with reasons)
#   filled OP N        at least N answered OP calls, every one with server_process_us
#   groups OP N US...  the OP calls per client connection, in the order they started: group k has
#                      N answered calls, each with server_process_us >= US[k] (or, for US "-",
#                      with every server column empty)
#   noreply OP         at least one OP call is NO_REPLY
rob_calls() {
    python3 - "$@" <<'PY'
import csv, sys
path, mode, op = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [r for r in csv.DictReader(open(path, newline="")) if r["operation"] == op]
answered = lambda r: r["status"] not in ("ONEWAY", "NO_REPLY", "CANCELLED") and r["total_us"]
srv_cols = ("t_server_recv", "t_server_send", "server_process_us")
bad = []
if mode == "filled":
    n = int(sys.argv[4])
    ok = [r for r in rows if answered(r)]
    if len(ok) < n:
        bad.append("%d answered %s calls, expected at least %d" % (len(ok), op, n))
    bad += ["%s %s without server_process_us" % (r["client"], r["request_id"]) for r in ok if not r["server_process_us"]]
    note = "%d answered %s calls with server_process_us" % (len(ok), op)
elif mode == "groups":
    n, want = int(sys.argv[4]), sys.argv[5:]
    first = {}
    for r in rows:
        first[r["client"]] = min(first.get(r["client"], 1e300), float(r["t_request_first"]))
    order = sorted(first, key=first.get)
    if len(order) != len(want):
        bad.append("%d client connections calling %s, expected %d" % (len(order), op, len(want)))
    notes = []
    for cl, us in zip(order, want):
        g = [r for r in rows if r["client"] == cl and answered(r)]
        if len(g) != n:
            bad.append("connection %s: %d answered calls, expected %d" % (cl, len(g), n))
        if us == "-":
            f = [r for r in g if any(r[c] for c in srv_cols)]
            bad += ["connection %s call %s: server columns set (%s), its process is not followed"
                    % (cl, r["request_id"], r["server_process_us"]) for r in f[:5]]
            notes.append("%d calls without server columns" % len(g))
        else:
            f = [r for r in g if not r["server_process_us"] or float(r["server_process_us"]) < float(us)]
            bad += ["connection %s call %s: server_process_us '%s', expected >= %s"
                    % (cl, r["request_id"], r["server_process_us"], us) for r in f[:5]]
            notes.append("%d calls with server_process_us >= %s" % (len(g), us))
    note = "; ".join(notes)
elif mode == "noreply":
    nr = [r for r in rows if r["status"] == "NO_REPLY"]
    if not nr:
        bad.append("no %s call is NO_REPLY (statuses: %s)" % (op, sorted(set(r["status"] for r in rows))))
    note = "%d %s call(s) NO_REPLY" % (len(nr), op)
for b in bad[:12]:
    print("BAD " + b)
print(note)
sys.exit(1 if bad else 0)
PY
}

# rob_crash PID: SIGKILL (a crash), bounded wait; bash's "Killed" notice kept out of the report
rob_crash() {
    exec 3>&2 2>/dev/null
    ns_stop "$1" KILL 5
    exec 2>&3 3>&-
}

scenario_pid_exit() {
    sc_begin pid_exit
    local cli n out
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        if start_attach "$SC_DIR/attach.log" --pid "$SRV_PID" --pairs --summary -o "$SC_DIR/attach.csv" -q; then
            client "$NS_CLI" -op slow -size 1000 -n 20
            # a call in flight when the server dies: slow(3 s), the server killed 0.7 s into it
            ns_start "$NS_CLI" "$SC_DIR/inflight.log" "$CLIENT" -i "$SC_DIR/echo.ior" \
                -d "$SC_DIR/dead.ior" -q -op slow -size 3000000 -n 1
            cli=$NS_LAST_PID
            sleep 0.7
            rob_crash "$SRV_PID"
            # --pid: once every followed process is gone, attach ends (as strace -p), exit 0
            rob_wait_exit 5 || err "attach still running 5 s after the only process it followed exited"
            [ "$ATT_RC" = 0 ] || err "attach exit status $ATT_RC after its process exited (want 0)" \
                "$(tail -3 "$SC_DIR/attach.log")"
            n=$(grep -c "exited" "$SC_DIR/attach.log")
            [ "$n" = 1 ] && grep -q "^giopscope attach: pid $SRV_PID exited: no followed process left, stopping$" \
                "$SC_DIR/attach.log" || err "want one line 'pid $SRV_PID exited ...', got $n" "$(cat "$SC_DIR/attach.log")"
            grep -q "^giopscope attach: kernel:" "$SC_DIR/attach.log" || err "no closing report"
            grep -q "calls" "$SC_DIR/attach.log" && grep -q "slow" "$SC_DIR/attach.log" || err "no summary on stderr"
            out=$(rob_calls "$SC_DIR/attach.csv" filled slow 20) || err "calls before the exit" "$out"
            SC_NOTE=$out
            out=$(rob_calls "$SC_DIR/attach.csv" noreply slow) || err "the call in flight" "$out"
            SC_NOTE="$SC_NOTE; $out; exit 0 after one line"
        fi
        ns_stop "$cli" TERM 5
        ns_stop "$SRV_PID" TERM 5
    fi
    sc_end
}

scenario_comm_restart() {
    sc_begin comm_restart
    local pid1 out
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        pid1=$SRV_PID
        # --comm follows processes of its own network namespace: run it in the server's
        if start_attach "$SC_DIR/attach.log" --in "$NS_SRV" --comm bench_server --pairs \
                -o "$SC_DIR/attach.csv" -q; then
            client "$NS_CLI" -op slow -size 2000 -n 20
            rob_crash "$SRV_PID"
            if start_server "$NS_SRV" "$NS_SRV_IP4"; then
                [ "$pid1" != "$SRV_PID" ] || err "the restarted server has the same pid $pid1"
                client "$NS_CLI" -op slow -size 3000 -n 20
            fi
            sleep 0.3
            ns_alive "$ATT_PID" || err "attach --comm ended when the process it followed exited"
            stop_attach INT
            [ "$ATT_RC" = 0 ] || err "attach exit status $ATT_RC after SIGINT" "$(tail -3 "$SC_DIR/attach.log")"
            out=$(rob_calls "$SC_DIR/attach.csv" groups slow 20 2000 3000) ||
                err "the restarted server's calls" "$out"
            SC_NOTE="pids $pid1 then $SRV_PID: $out"
        fi
        ns_stop "$SRV_PID" TERM 5
    fi
    sc_end
}

# rob_spawn_at PID LOG CMD...: runs CMD with process id PID (a pid that was just freed): sets
# ns_last_pid to PID-1 and forks, again while another fork takes it first (bounded). Sets
# NS_LAST_PID (recorded for the cleanup); 1 when the pid could not be had.
rob_spawn_at() {
    local want=$1 log=$2
    shift 2
    python3 - "$want" "$@" >"$log" 2>&1 <<'PY' || return 1
import os, sys
want = int(sys.argv[1])
for attempt in range(200):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(want - 1))
    pid = os.fork()
    if pid == 0:
        if os.getpid() != want:
            os._exit(99)
        os.setsid()
        os.execvp(sys.argv[2], sys.argv[2:])
    if pid == want:
        sys.exit(0)
    os.waitpid(pid, 0)
sys.exit(1)
PY
    NS_LAST_PID=$want
    NS_PIDS="$NS_PIDS $want"
}

# rob_reuse_once K: the server and K other followed processes (K + 1 pids: up to 8 are compared
# in the program's read-only data, more through its hash map); the server's pid then reused
rob_reuse_once() {
    local k=$1 old keepers="" i out
    start_server "$NS_SRV" "$NS_SRV_IP4" || return 1
    old=$SRV_PID
    # other followed processes keep attach running after the server is gone
    for i in $(seq 1 "$k"); do
        ns_start "$NS_SRV" /dev/null sleep 60
        keepers="$keepers,$NS_LAST_PID"
    done
    if start_attach "$SC_DIR/attach_$k.log" --pid "$old$keepers" --pairs -o "$SC_DIR/attach_$k.csv" -q; then
        client "$NS_CLI" -op slow -size 2000 -n 20
        rob_crash "$old"
        ns_wait_grep "$SC_DIR/attach_$k.log" "pid $old exited; still following $k of $((k + 1))$" 5 ||
            err "attach did not say that pid $old exited" "$(tail -3 "$SC_DIR/attach_$k.log")"
        # an unrelated process (another server, same port) gets the same pid
        rm -f "$SC_DIR/echo.ior" "$SC_DIR/dead.ior"
        if ! rob_spawn_at "$old" "$SC_DIR/server2_$k.log" ip netns exec "$NS_SRV" "$SERVER" \
                -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o "$SC_DIR/echo.ior" -d "$SC_DIR/dead.ior"; then
            err "could not start a process with pid $old again (ns_last_pid)"
        elif ! ns_wait_file "$SC_DIR/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
            err "the second server did not start" "$(tail -3 "$SC_DIR/server2_$k.log")"
        else
            SRV_PID=$NS_LAST_PID
            [ "$(ip netns identify "$SRV_PID")" = "$NS_SRV" ] || err "pid $SRV_PID is not the new server"
            client "$NS_CLI" -op slow -size 3000 -n 20
        fi
        sleep 0.3
        ns_alive "$ATT_PID" || err "attach ended while other followed processes still ran"
        stop_attach INT
        [ "$ATT_RC" = 0 ] || err "attach exit status $ATT_RC after SIGINT" "$(tail -3 "$SC_DIR/attach_$k.log")"
        # the first server's calls have the server columns, the impostor's none
        out=$(rob_calls "$SC_DIR/attach_$k.csv" groups slow 20 2000 -) ||
            err "attribution after pid reuse ($((k + 1)) pids)" "$out"
        SC_NOTE="${SC_NOTE:+$SC_NOTE; }$((k + 1)) pids, $old reused: $out"
    fi
    for i in ${keepers//,/ }; do ns_stop "$i" TERM 5; done
    ns_stop "$SRV_PID" TERM 5
    return 0
}

scenario_pid_reuse() {
    sc_begin pid_reuse
    rob_reuse_once 1
    rob_reuse_once 8
    sc_end
}

scenario_ring_full() {
    sc_begin ring_full
    local rc lost tpid child out
    # smaller than the largest record: refused
    "$GIOPSCOPE" attach --pid 1 --ring-size 4k >/dev/null 2>"$SC_DIR/small.log"
    rc=$?
    [ "$rc" = 2 ] && grep -q "ring-size" "$SC_DIR/small.log" ||
        err "--ring-size 4k: exit status $rc (want 2)" "$(cat "$SC_DIR/small.log")"
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        # on a terminal (script(1)) for the progress line; script's child (exec) is attach
        echo "# attach (script): $GIOPSCOPE attach --pid $SRV_PID --ring-size 8k ..." >>"$SC_DIR/commands.log"
        script -qfec "exec $GIOPSCOPE attach ${HOOK_ARGS[*]} --pid $SRV_PID --ring-size 8k --pairs --summary -o $SC_DIR/attach.csv" \
            "$SC_DIR/tty.log" </dev/null >/dev/null 2>&1 &
        tpid=$!
        ns_wait_attached "$SC_DIR/tty.log" "$tpid"
        child=$(cat "/proc/$tpid/task/$tpid/children" 2>/dev/null)
        if [ -n "$child" ] && grep -q "^giopscope attach: following" "$SC_DIR/tty.log"; then
            # a burst while the reader is held (SIGSTOP: as a reader starved of CPU), more than
            # an 8 KiB ring holds whatever the scheduler does
            kill -STOP "$child"
            client "$NS_CLI" -op echoOctets -size 200000 -n 10 -threads 2
            # script(1) stops itself when its child stops: both go on
            kill -CONT "$tpid" "$child"
            # then a trickle the ring holds: every call of it is seen
            client "$NS_CLI" -op slow -size 20000 -n 10
            sleep 1.2 # a progress line after the burst (one a second)
        else
            err "attach did not start" "$(tail -3 "$SC_DIR/tty.log")"
        fi
        [ -n "$child" ] && kill -INT "$child"
        for _ in $(seq 1 200); do
            ns_alive "$tpid" || break
            sleep 0.05
        done
        ns_alive "$tpid" && { err "attach did not exit within 10 s of SIGINT"; kill -KILL $child "$tpid"; }
        wait "$tpid"
        rc=$?
        [ "$rc" = 0 ] || err "attach exit status $rc with a full ring (want 0)" "$(tail -5 "$SC_DIR/tty.log")"
        tr '\r' '\n' <"$SC_DIR/tty.log" >"$SC_DIR/attach.log"
        lost=$(sed -n 's/.* \([0-9][0-9]*\) records lost (ring full).*/\1/p' "$SC_DIR/attach.log")
        if [ "${lost:-0}" -gt 0 ]; then
            grep -q "packets lost before the decoder: kernel $lost," "$SC_DIR/attach.log" ||
                err "the summary does not show the $lost records lost" "$(grep lost "$SC_DIR/attach.log")"
            grep -q "dropped: kernel [1-9]" "$SC_DIR/attach.log" ||
                err "the progress line never showed the loss" "$(grep dropped "$SC_DIR/attach.log" | tail -2)"
        else
            err "no record lost with an 8k ring: the burst did not fill it" "$(grep kernel: "$SC_DIR/attach.log")"
        fi
        out=$(rob_calls "$SC_DIR/attach.csv" groups slow 10 20000) || err "the calls after the overflow" "$out"
        SC_NOTE="$lost records lost, in the progress line and the summary; ${out:-?} after; exit 0"
        ns_stop "$SRV_PID" TERM 5
    fi
    sc_end
}

# rob_veth_restore: the veth pair again, as ns_setup made it (after iface_gone deleted it)
rob_veth_restore() {
    ip link add "$NS_VETH_CLI" netns "$NS_CLI" type veth peer name "$NS_VETH_SRV" netns "$NS_SRV" || return 1
    ip -n "$NS_SRV" addr add "$NS_SRV_IP4/24" dev "$NS_VETH_SRV" &&
    ip -n "$NS_SRV" -6 addr add "$NS_SRV_IP6/64" dev "$NS_VETH_SRV" nodad &&
    ip -n "$NS_CLI" addr add "$NS_CLI_IP4/24" dev "$NS_VETH_CLI" &&
    ip -n "$NS_CLI" -6 addr add "$NS_CLI_IP6/64" dev "$NS_VETH_CLI" nodad &&
    ip -n "$NS_SRV" link set "$NS_VETH_SRV" up && ip -n "$NS_CLI" link set "$NS_VETH_CLI" up || return 1
    for _ in $(seq 1 50); do
        ip -n "$NS_CLI" link show "$NS_VETH_CLI" 2>/dev/null | grep -q "state UP" && return 0
        sleep 0.1
    done
    return 1
}

scenario_iface_gone() {
    sc_begin iface_gone
    local other orc n
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        # two at once: one given the veth with -i (it must stop), one on every interface (lo
        # and the veth: it goes on with lo)
        if start_attach "$SC_DIR/attach_all.log" --pid "$SRV_PID" --pairs -o "$SC_DIR/attach_all.csv" -q; then
            other=$ATT_PID
            ATT_PID=""
            if start_attach "$SC_DIR/attach.log" --pid "$SRV_PID" -i "$NS_VETH_SRV" --pairs --summary \
                    -o "$SC_DIR/attach.csv" -q; then
                client "$NS_CLI" -op slow -size 1000 -n 20
                ip -n "$NS_SRV" link del "$NS_VETH_SRV" || err "ip link del $NS_VETH_SRV failed"
                rob_wait_exit 5 || err "attach -i $NS_VETH_SRV still running 5 s after the interface went away"
                [ "$ATT_RC" = 2 ] || err "attach -i: exit status $ATT_RC when its interface went away (want 2)"
                n=$(grep -c "went away" "$SC_DIR/attach.log")
                [ "$n" = 1 ] && grep -q "interface $NS_VETH_SRV went away .*: stopping$" "$SC_DIR/attach.log" ||
                    err "attach -i: want one line 'interface $NS_VETH_SRV went away ...: stopping', got $n" \
                        "$(cat "$SC_DIR/attach.log")"
                grep -q "^giopscope attach: kernel:" "$SC_DIR/attach.log" || err "attach -i: no closing report"
                grep -q "slow" "$SC_DIR/attach.log" || err "attach -i: no summary"
                out=$(rob_calls "$SC_DIR/attach.csv" filled slow 20) || err "attach -i: calls seen before" "$out"
            fi
            sleep 0.3
            ATT_PID=$other
            ns_alive "$ATT_PID" || err "attach on every interface ended when one of two went away" \
                "$(tail -3 "$SC_DIR/attach_all.log")"
            grep -q "interface $NS_VETH_SRV went away; still tapping 1 interface$" "$SC_DIR/attach_all.log" ||
                err "attach on every interface: no line about $NS_VETH_SRV" "$(tail -3 "$SC_DIR/attach_all.log")"
            stop_attach INT
            orc=$ATT_RC
            [ "$orc" = 0 ] || err "attach on every interface: exit status $orc after SIGINT"
            SC_NOTE="-i veth: one line, exit 2, ${out:-?}; on lo+veth: one line, goes on"
        fi
        ns_stop "$SRV_PID" TERM 5
        rob_veth_restore || err "could not recreate the veth pair"
    fi
    sc_end
}

# ------------------------------------------------------------------ drop_user
# ours_gone BEFORE_PROGS BEFORE_LINKS: waits (bounded) until no program or link that was not in
# the BEFORE lists, and that no running process holds, is left; prints what is left
ours_gone() {
    local before_p=" $1 " before_l=" $2 " left id held_p held_l
    for _ in $(seq 1 50); do
        left=""
        # new since BEFORE and held by no running process (another engineer's probe holds
        # its own): attach, gone, would have left them
        held_p=" $(held_by all prog_id) " held_l=" $(held_by all link_id) "
        for id in $(bpf_ids prog); do
            case "$before_p$held_p" in *" $id "*) ;; *) left="$left prog$id" ;; esac
        done
        for id in $(bpf_ids link); do
            case "$before_l$held_l" in *" $id "*) ;; *) left="$left link$id" ;; esac
        done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    echo "$left"
    return 1
}

scenario_drop_user() {
    sc_begin drop_user
    local rc uid gid zdir before_p before_l left line n
    uid=$(id -u nobody 2>/dev/null) gid=$(id -g nobody 2>/dev/null)
    if [ -z "$uid" ]; then
        err "no user nobody on this machine"
        sc_end
        return
    fi
    # nobody's own directory for -o (the work directory is root's, 0700)
    zdir=$(mktemp -d /tmp/gs-attach-z.XXXXXX) && chmod 755 "$zdir" && chown nobody "$zdir"
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        "$GIOPSCOPE" attach --pid "$SRV_PID" -Z no_such_user_xyz >"$SC_DIR/a.out" 2>"$SC_DIR/a.err"
        rc=$?
        [ "$rc" = 2 ] || err "-Z no_such_user_xyz: exit status $rc"
        { [ "$(grep -c . "$SC_DIR/a.err")" = 1 ] &&
          grep -qx "giopscope attach: -Z: no user 'no_such_user_xyz'" "$SC_DIR/a.err"; } ||
            err "-Z no_such_user_xyz: want one line naming the user" "$(head -3 "$SC_DIR/a.err")"
        before_p=$(bpf_ids prog) before_l=$(bpf_ids link)
        # -o in root's directory: opened after the switch, so refused; the tap goes with it
        "$GIOPSCOPE" attach "${HOOK_ARGS[@]}" --pid "$SRV_PID" -Z nobody -o "$SC_DIR/root.csv" -q >"$SC_DIR/b.out" 2>"$SC_DIR/b.err"
        rc=$?
        [ "$rc" = 2 ] || err "-Z nobody -o in root's directory: exit status $rc (opened before the switch?)"
        grep -q "cannot write $SC_DIR/root.csv: Permission denied" "$SC_DIR/b.err" ||
            err "-Z nobody -o in root's directory: no reason given" "$(head -3 "$SC_DIR/b.err")"
        [ -e "$SC_DIR/root.csv" ] && err "-Z nobody: the -o file was created in root's directory"
        left=$(ours_gone "$before_p" "$before_l") || err "-o refused: still attached:$left"
        if start_attach "$SC_DIR/attach.log" --pid "$SRV_PID" --pairs -Z nobody -o "$zdir/attach.csv" -q; then
            # "following" is printed after the switch
            grep -E "^(Uid|Gid|Groups|CapPrm|CapEff|CapBnd|NoNewPrivs):" "/proc/$ATT_PID/status" >"$SC_DIR/status.txt"
            for line in "Uid:	$uid	$uid	$uid	$uid" "Gid:	$gid	$gid	$gid	$gid" \
                        "CapEff:	0000000000000000" "CapPrm:	0000000000000000" "NoNewPrivs:	1"; do
                grep -qx "$line" "$SC_DIR/status.txt" ||
                    err "-Z nobody: /proc/PID/status lacks '${line//	/ }'" "$(tr '\t' ' ' <"$SC_DIR/status.txt")"
            done
            client "$NS_CLI" -op echoString -size 32 -n 100
            client "$NS_CLI" -op slow -size 1000 -n 10
            sleep 0.5
            stop_attach INT
            [ "$ATT_RC" = 0 ] || err "attach -Z nobody: exit status $ATT_RC after SIGINT" "$(tail -3 "$SC_DIR/attach.log")"
            grep -q "^giopscope attach: kernel:" "$SC_DIR/attach.log" ||
                err "attach -Z nobody: no closing report" "$(tail -3 "$SC_DIR/attach.log")"
            [ "$(stat -c %U "$zdir/attach.csv" 2>/dev/null)" = nobody ] ||
                err "attach -Z nobody: the -o file is not nobody's" "$(ls -l "$zdir")"
            cp "$zdir/attach.csv" "$SC_DIR/attach.csv" 2>/dev/null
            n=$(grep -c ',echoString,0,NO_EXCEPTION,' "$SC_DIR/attach.csv" 2>/dev/null)
            [ "$n" = 100 ] || err "attach -Z nobody: $n echoString calls written, the client made 100"
            # the syscall probes still deliver (the ring buffer is read as nobody)
            n=$(python3 -c 'import csv,sys
print(sum(1 for r in csv.DictReader(open(sys.argv[1])) if r["operation"] == "slow" and r["server_process_us"]))' \
                "$SC_DIR/attach.csv" 2>/dev/null)
            [ "$n" = 10 ] || err "attach -Z nobody: $n of 10 slow calls with server_process_us"
            left=$(ours_gone "$before_p" "$before_l") || err "attach -Z nobody: still attached after exit:$left"
            SC_NOTE="$(grep -E '^(Uid|CapEff):' "$SC_DIR/status.txt" | tr '\t\n' '  ')calls written: 100 + 10, nothing left attached"
        fi
        ns_stop "$SRV_PID" TERM 20
    fi
    rm -rf "$zdir"
    sc_end
}

T0=$(date +%s)
for sc in $WANT; do
    "scenario_$sc"
done
echo "$PASSED passed, $FAILED failed"
echo "attach_ebpf: $(($(date +%s) - T0)) s"
[ "$FAILED" = 0 ]
