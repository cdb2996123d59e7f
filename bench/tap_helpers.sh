# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# bench/tap_helpers.sh -- what bench/attach_overhead.sh and bench/attach_toggle.sh share: start
# and stop a tap on the omniORB bench_server of a tests/lib/netns.sh pair, read its summary, the
# SCHED_IDLE spinners, MTU-sized frames on the veth, the set-up and clean-up of a run. Sourced
# after tests/lib/netns.sh; the caller sets:
#   GIOPSCOPE, GIOPSCOPE_REF (attach_ref; attach_sys: GIOPSCOPE attach --syscall-hooks), AFP_OPTS (dpdk), SRV_PID (the server), and may set
#   TC_FLOOR (the tc_* arms' bench/tc_floor, default $BUILD/bench/tc_floor),
#   TAP_SETTLE (sleep after the tap says it is ready, default 0.5 s), TAP_DRAIN (sleep before
#   the SIGINT that stops it, default 0.3 s), TAP_ATTACH_OPTS (more options for attach).
# start_probe sets PROBE_PID ("" for none); SPINNERS lists the spinners' pids; the cleanup
# tap_bench_setup installs kills both.

: "${TAP_SETTLE:=0.5}"
: "${TAP_DRAIN:=0.3}"
: "${TAP_ATTACH_OPTS:=}"
PROBE_PID=""
SPINNERS=""

# tap_spinners_start: one SCHED_IDLE busy loop per CPU (runs only when nothing else wants the
# CPU, yet the CPU never idles: docs/benchmarks.md, "Measuring on these machines")
tap_spinners_start() {
    local cpu
    for cpu in $(seq 0 $(($(nproc) - 1))); do
        taskset -c "$cpu" chrt --idle 0 bash -c 'while :; do :; done' &
        SPINNERS="$SPINNERS $!"
    done
}

# tap_veth_mtu_frames WHO: gso_max_segs 1 on both veth ends (frames as a NIC carries them;
# net_af_packet cuts frames larger than its ring slots)
tap_veth_mtu_frames() {
    if ! ip -n "$NS_SRV" link set dev "$NS_VETH_SRV" gso_max_segs 1 ||
        ! ip -n "$NS_CLI" link set dev "$NS_VETH_CLI" gso_max_segs 1; then
        echo "$1: cannot set gso_max_segs on the veth" >&2
        return 1
    fi
}

# start_probe ARM LOG: every tap writes its pairs to /dev/null (the work of formatting them is
# done) and its start line and summary to LOG (no -q: the progress line is for terminals
# only), whose echoString row says how many calls it saw. Returns once the tap says it is in
# place (and TAP_SETTLE more); 1 if it did not say so in time.
start_probe() {
    local arm=$1 log=$2
    PROBE_PID=""
    case "$arm" in
        none) return 0 ;;
        live|live_imm)
            # live_imm: immediate mode (--batch-ms 0), live's default before 2026-12-01
            # shellcheck disable=SC2046  # no word or none
            ip netns exec "$NS_SRV" "$GIOPSCOPE" live -i "$NS_VETH_SRV" --pairs -o /dev/null --summary \
                $([ "$arm" = live_imm ] && echo --batch-ms 0) 2>"$log" </dev/null &
            PROBE_PID=$!
            ns_wait_grep "$log" "listening on" 15 || return 1 ;;
        attach|attach_ref|attach_sys|attach_frozen|attach_idle|attach_sched|attach_orb)
            local bin=$GIOPSCOPE hooks=""
            [ "$arm" = attach_ref ] && bin=$GIOPSCOPE_REF
            # attach_idle: the reader at SCHED_IDLE once attached
            [ "$arm" = attach_idle ] && hooks=--idle-reader
            # attach_sys: the same build on its fallback path (the syscall hooks)
            [ "$arm" = attach_sys ] && hooks=--syscall-hooks
            # attach_frozen (attach_toggle.sh stops the reader for its on-window): a ring that
            # holds every record of the window
            [ "$arm" = attach_frozen ] && hooks="--ring-size 256m"
            # attach_sched, attach_orb: the opt-in splits of issue 17 (their cost)
            [ "$arm" = attach_sched ] && hooks=--sched
            [ "$arm" = attach_orb ] && hooks="--sched --orb omniorb"
            # shellcheck disable=SC2086
            "$bin" attach $hooks --pid "$SRV_PID" --pairs -o /dev/null --summary $TAP_ATTACH_OPTS 2>"$log" </dev/null &
            PROBE_PID=$!
            ns_wait_grep "$log" "^giopscope attach: following" "${ATTACH_START_S:-120}" || return 1 ;;
        tc_empty|tc_headers|tc_ring|tc_ring2|tc_store|tc_batch|tc_clsact|tc_ringr|tc_ringr4|tc_batchr|tc_batch8|tc_stagew|tc_stagew8|tc_coldw)
            # issue 16: bench/tc_floor, a tc program on the server veth's ingress and egress with
            # none (empty), some (headers) or more (ring; store: the record into a per-CPU slot,
            # not the ring) of the tap's per-packet work, as TCX
            # links like attach's, or the empty one through a clsact qdisc (clsact); no reader,
            # no summary (records pile up in its 256 MiB ring as under a frozen attach)
            # tc_ringr, tc_ringr4: ring with a reader emptying it every 50 ms, as attach's, in a
            # 64 MiB ring (attach's default) or a 4 MiB one; tc_ring2: a ring per direction;
            # tc_batch: the records staged per CPU, a CPU's staged records one ring record (full
            # 4 KiB area, 1 ms old, or its BPF timer); tc_batchr: that with tc_ringr's reader;
            # tc_batch8: an area of 8 records; tc_stagew, tc_stagew8: batch's writes into the
            # area (48 or 8 records in turn) without flushes or timer; tc_coldw: the record
            # 80 bytes on each run in a 1 MiB area per CPU, no ring (a ring's cold lines alone)
            local tcv=${arm#tc_} tco=""
            case "$arm" in
                tc_ringr) tcv=ring tco="-r 64 -c 50" ;;
                tc_ringr4) tcv=ring tco="-r 4 -c 50" ;;
                tc_batchr) tcv=batch tco="-r 64 -c 50" ;;
                tc_batch8) tcv=batch tco="-n 8" ;;
                tc_stagew8) tcv=stagew tco="-n 8" ;;
            esac
            # shellcheck disable=SC2086
            ip netns exec "$NS_SRV" "${TC_FLOOR:-${BUILD:-build}/bench/tc_floor}" -i "$NS_VETH_SRV" -v "$tcv" $tco \
                2>"$log" </dev/null &
            PROBE_PID=$!
            ns_wait_grep "$log" "^tc_floor: .*: ready" 15 || return 1 ;;
        dpdk)
            # the ring holds framecnt frames while the poller is away (docs/dpdk.md); on a shared 2-CPU
            # machine it is away for up to ~300 ms: 16384 frames of 2 KB (32 MiB) cover ~50k frames/s
            ip netns exec "$NS_SRV" "$GIOPSCOPE" dpdk --vdev "net_af_packet0,iface=$NS_VETH_SRV,$AFP_OPTS" \
                --no-huge --no-pci --pairs -o /dev/null --summary 2>"$log" </dev/null &
            PROBE_PID=$!
            ns_wait_grep "$log" "polling on lcore" 30 || return 1 ;;
    esac
    # settle: the tap is in place before the first SYN
    sleep "$TAP_SETTLE"
}

# stop_probe: SIGINT (the probe writes its summary), bounded wait; returns 0 if it exited 0
stop_probe() {
    local rc=0
    [ -n "$PROBE_PID" ] || return 0
    sleep "$TAP_DRAIN"   # the last reply and the FIN reach the tap
    kill -INT "$PROBE_PID" 2>/dev/null
    for _ in $(seq 1 200); do ns_alive "$PROBE_PID" || break; sleep 0.1; done
    if ns_alive "$PROBE_PID"; then
        kill -KILL "$PROBE_PID" 2>/dev/null
        rc=137
    fi
    wait "$PROBE_PID" 2>/dev/null || rc=$?
    PROBE_PID=""
    return $rc
}

# seen LOG: the echoString calls the probe answered (calls - errors of its summary row)
seen() {
    awk '$1 == "echoString" && $4 == "|" { n = $2 - $3 } END { print n + 0 }' "$1" 2>/dev/null
}

# why LOG: the probe's loss counters, one line ("lost before the decoder" counts, TCP gaps,
# the dpdk poller's longest absence)
why() {
    sed -n 's/.*packets lost before the decoder: //p; s/.*\(capture gaps [0-9]*\).*/\1/p;
        s/.*\(longest poll gap [0-9.]* ms\).*/\1/p; s/.*\([0-9][0-9]* records lost (ring full)\).*/\1/p' "$1" |
        paste -sd';' - | sed 's/;/; /g'
}

# tap_machine: M_CPU, M_NPROC, M_KERNEL for a report's machine line
# shellcheck disable=SC2034
tap_machine() {
    M_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
    M_NPROC=$(nproc)
    M_KERNEL=$(uname -r)
}

# tap_bench_setup NAME: the work directory (WORK, /tmp/NAME.XXXXXX; copied to KEEP_DIR at the
# end when set), a cleanup for tests/lib/netns.sh to run at exit (the probe, the spinners),
# the namespaces, and private copies of GIOPSCOPE and GIOPSCOPE_REF (a rebuild during the run
# must not swap the binary under an arm or a window)
tap_bench_setup() {
    WORK=$(mktemp -d "/tmp/$1.XXXXXX") || return 1
    NS_CLEANUP_HOOK=tap_bench_cleanup
    ns_setup || return 1
    cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope || return 1
    if [ -n "${GIOPSCOPE_REF:-}" ]; then
        cp "$GIOPSCOPE_REF" "$WORK/giopscope_ref" && GIOPSCOPE_REF=$WORK/giopscope_ref || return 1
    fi
}

tap_bench_cleanup() {
    local p
    [ -n "$PROBE_PID" ] && kill -KILL "$PROBE_PID" 2>/dev/null
    for p in $SPINNERS; do kill -KILL "$p" 2>/dev/null; done
    for p in $SPINNERS $PROBE_PID; do wait "$p" 2>/dev/null; done
    if [ -n "${KEEP_DIR:-}" ]; then mkdir -p "$KEEP_DIR" && cp -r "$WORK"/. "$KEEP_DIR"/; fi
    rm -rf "$WORK"
}
