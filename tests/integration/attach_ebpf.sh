#!/bin/bash
# tests/integration/attach_ebpf.sh -- `giopscope attach` (eBPF packet tap + syscall probes) on
# real omniORB processes.
#
#   netns     bench_server in a server namespace, bench_client in a client namespace, joined by a
#             veth. `giopscope attach --pid SERVER` runs in the root namespace (it enters the
#             server's itself) while tcpdump captures the server's veth. Checks: every slow(usec)
#             call has server_process_us >= usec, the median excess is at most BOUND_US (the
#             p50/p99/max excess is printed: scheduling on a busy VM makes the tail long), and
#             server_process_us <= server_us (t5-t4 within t6-t3, the tap is on the server's
#             host); the client columns are empty (not followed); the first 17 columns equal
#             `giopscope read` of the capture call for call (compare_pairs.py, timestamps within
#             TOL_NS: tcpdump stamps a packet where AF_PACKET sees it, attach where tc does).
#   loopback  server and clients in one namespace over 127.0.0.1, `attach --port PORT` (so both
#             processes are followed): every answered call has all four instants and
#             client_syscall_us >= total_us >= server_process_us.
#   cleanup   attach stopped by SIGINT, SIGTERM and SIGKILL: afterwards `bpftool prog show`,
#             `bpftool link show` show none of its programs or links, and `tc filter show` shows
#             nothing on the interfaces it tapped.
#
# usage: tests/integration/attach_ebpf.sh [SCENARIO...]     (default: all; --list)
# environment: GIOPSCOPE, BUILD, PORT (2809), BOUND_US (1000), TOL_NS (1000000),
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
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
ALL="netns loopback cleanup"

WANT=""
for a in "$@"; do
    case "$a" in
        --list) echo "$ALL" | tr ' ' '\n'; exit 0 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        *) case " $ALL " in
               *" $a "*) WANT="$WANT $a" ;;
               *) echo "attach_ebpf: unknown scenario $a (--list)" >&2; exit 2 ;;
           esac ;;
    esac
done
[ -n "$WANT" ] || WANT=$ALL

. tests/lib/netns.sh

skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "not root (eBPF and namespaces need it)"
for tool in tcpdump python3 timeout bpftool tc; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (scripts/install-deps.sh check)"
done
[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
[ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built"
# the stub of a build without eBPF carries this text; the real loader does not
if grep -q "this build has no eBPF support" "$GIOPSCOPE"; then
    skip "$GIOPSCOPE was built without eBPF"
fi
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-attach.XXXXXX) || exit 2
ATT_PID=""
work_cleanup() {
    if [ -n "$ATT_PID" ]; then
        kill -KILL "$ATT_PID" 2>/dev/null
        wait "$ATT_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
# a private copy: a rebuild while the test runs must not swap the binary under it
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
[ -n "$KEEP_DIR" ] && mkdir -p "$KEEP_DIR"

PASSED=0
FAILED=0
SC="" SC_DIR="" SC_ERR="" SC_DETAIL=""

err() {
    [ -n "$SC_ERR" ] || SC_ERR=$1
    shift
    local d
    for d in "$@"; do SC_DETAIL="$SC_DETAIL$d"$'\n'; done
}

sc_begin() {
    SC=$1 SC_ERR="" SC_DETAIL=""
    SC_DIR=$WORK/$SC
    mkdir -p "$SC_DIR"
}

sc_end() {
    if [ -n "$KEEP_DIR" ]; then
        rm -rf "${KEEP_DIR:?}/$SC"
        cp -r "$SC_DIR" "$KEEP_DIR/$SC"
    fi
    if [ -z "$SC_ERR" ]; then
        echo "PASS $SC${SC_NOTE:+ ($SC_NOTE)}"
        PASSED=$((PASSED + 1))
    else
        echo "FAIL $SC: $SC_ERR"
        [ -n "$SC_DETAIL" ] && printf '%s' "$SC_DETAIL" | sed 's/^/    /' | head -40
        mkdir -p "$FAIL_DIR"
        rm -rf "${FAIL_DIR:?}/attach_$SC"
        cp -r "$SC_DIR" "$FAIL_DIR/attach_$SC"
        echo "    files: $FAIL_DIR/attach_$SC"
        FAILED=$((FAILED + 1))
    fi
    SC_NOTE=""
}
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
    echo "# attach:$(printf ' %q' "${pre[@]}" "$GIOPSCOPE" attach "$@")" >>"$SC_DIR/commands.log"
    "${pre[@]}" "$GIOPSCOPE" attach "$@" 2>"$log" &
    ATT_PID=$!
    for _ in $(seq 1 300); do
        grep -q "^giopscope attach: following" "$log" 2>/dev/null && return 0
        ns_alive "$ATT_PID" || break
        sleep 0.05
    done
    err "attach did not start" "$(tail -5 "$log")"
    kill -KILL "$ATT_PID" 2>/dev/null
    wait "$ATT_PID" 2>/dev/null
    ATT_PID=""
    return 1
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

# ------------------------------------------------------------------ netns
scenario_netns() {
    sc_begin netns
    local sleeps="1000 3000 10000"
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        ns_start "$NS_SRV" "$SC_DIR/tcpdump.log" tcpdump -Z root -B 65536 --immediate-mode \
            --time-stamp-precision=nano -U -i "$NS_VETH_SRV" -w "$SC_DIR/cap.pcap" "tcp port $PORT"
        TD_PID=$NS_LAST_PID
        ns_wait_grep "$SC_DIR/tcpdump.log" "listening on" 15 || err "tcpdump did not start"
        if start_attach "$SC_DIR/attach.log" --pid "$SRV_PID" --pairs -o "$SC_DIR/attach.csv" -q; then
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
        fi
        sleep 0.3
        ns_stop "$TD_PID" INT 15
        ns_stop "$SRV_PID" TERM 20
        "$GIOPSCOPE" read "$SC_DIR/cap.pcap" --pairs --format csv -o "$SC_DIR/read.csv" 2>"$SC_DIR/read.log" ||
            err "giopscope read of the capture failed" "$(tail -2 "$SC_DIR/read.log")"
        if [ -s "$SC_DIR/attach.csv" ] && [ -s "$SC_DIR/read.csv" ]; then
            cut -d, -f1-17 "$SC_DIR/attach.csv" >"$SC_DIR/attach17.csv"
            if ! python3 "$COMPARE" "$SC_DIR/read.csv" "$SC_DIR/attach17.csv" --no-order \
                    --tolerance-ns "$TOL_NS" >"$SC_DIR/compare.txt" 2>&1; then
                err "attach's pairs differ from tcpdump + read" "$(tail -12 "$SC_DIR/compare.txt")"
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
                SC_NOTE="$(echo "$out" | head -1); $(tail -1 "$SC_DIR/compare.txt"); $(grep -o 'largest timestamp difference: [0-9]* ns' "$SC_DIR/compare.txt")"
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
        if start_attach "$SC_DIR/attach.log" --in "$NS_SRV" --port "$PORT" --pairs -o "$SC_DIR/attach.csv" -q; then
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

scenario_cleanup() {
    sc_begin cleanup
    local sig before_p before_l during_p during_l after_p after_l ours left
    if start_server "$NS_SRV" "$NS_SRV_IP4"; then
        for sig in INT TERM KILL; do
            before_p=" $(bpf_ids prog) " before_l=" $(bpf_ids link) "
            start_attach "$SC_DIR/attach_$sig.log" --pid "$SRV_PID" --pairs -o "$SC_DIR/attach_$sig.csv" -q || continue
            client "$NS_CLI" -op echoString -size 32 -n 20
            during_p=$(bpf_ids prog) during_l=$(bpf_ids link)
            ours=""
            for id in $during_p; do case "$before_p" in *" $id "*) ;; *) ours="$ours $id" ;; esac; done
            [ -n "$ours" ] || err "SIG$sig: no program of attach seen while it ran"
            stop_attach "$sig"
            case "$sig:$ATT_RC" in
                INT:0|TERM:0|KILL:137) ;;
                *) err "SIG$sig: attach exit status $ATT_RC" "$(tail -3 "$SC_DIR/attach_$sig.log")" ;;
            esac
            # the kernel frees programs after the last reference goes (bounded wait)
            for _ in $(seq 1 50); do
                after_p=" $(bpf_ids prog) " after_l=" $(bpf_ids link) "
                left=""
                for id in $ours; do case "$after_p" in *" $id "*) left="$left $id" ;; esac; done
                for id in $during_l; do
                    case "$before_l" in *" $id "*) ;; *) case "$after_l" in *" $id "*) left="$left link$id" ;; esac ;; esac
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
        SC_NOTE="SIGINT, SIGTERM, SIGKILL: no program, link or tc filter left"
    fi
    sc_end
}

T0=$(date +%s)
for sc in $WANT; do
    "scenario_$sc"
done
echo "$PASSED passed, $FAILED failed"
echo "attach_ebpf: $(($(date +%s) - T0)) s"
[ "$FAILED" = 0 ]
