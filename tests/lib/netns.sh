# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/lib/netns.sh -- two network namespaces joined by a veth pair, for tests that need a
# real network path between an ORB server and its clients. Source it from a bash script:
#
#     . tests/lib/netns.sh
#     ns_require                 # exit 77 (skip) unless root and `ip netns` work
#     ns_setup                   # creates the namespaces, installs the cleanup trap
#     ns_start "$NS_SRV" srv.log build/orb/bench_server -ORBendPoint "giop:tcp:$NS_SRV_IP4:2809" -o echo.ior
#     pid=$NS_LAST_PID
#     ns_wait_file echo.ior 10 || ...
#     ns_run "$NS_CLI" 60 build/orb/bench_client -i echo.ior ...
#     ns_stop "$pid"
#
# After ns_setup:
#   NS_SRV, NS_CLI         namespace names, unique per run: gs-srv-$$-N / gs-cli-$$-N (NS_TAG,
#                          default gs, replaces the leading gs: a test's own prefix)
#   NS_VETH_SRV, NS_VETH_CLI  the veth ends (in NS_SRV / NS_CLI)
#   NS_SRV_IP4, NS_CLI_IP4 10.x.y.2 / 10.x.y.1 (/24)
#   NS_SRV_IP6, NS_CLI_IP6 fd00::2 / fd00::1 (/64, nodad: usable at once)
#   NS_LAST_PID            pid of the last process ns_start started
#
# Every process started with ns_start is recorded and killed by pid at cleanup (TERM, a bounded
# wait, then KILL); the namespaces (and with them the veth pair) are deleted. ns_cleanup runs on
# EXIT, INT and TERM; a script that needs its own cleanup sets NS_CLEANUP_HOOK to a function
# name, which ns_cleanup calls first. Nothing here kills by name.

NS_PIDS=""
NS_LIST=""
NS_LAST_PID=""
NS_CLEANING=0
: "${NS_CLEANUP_HOOK:=}"
: "${NS_VERBOSE:=0}"
: "${NS_TAG:=gs}"

ns_log() {
    [ "$NS_VERBOSE" = 1 ] && echo "netns: $*" >&2
    return 0
}

# ns_skip REASON: print why and exit 77 (the automake/meson "skipped" status).
ns_skip() {
    echo "SKIP: $*" >&2
    exit 77
}

# ns_require: skip unless we can create namespaces and veth pairs.
ns_require() {
    [ "$(id -u)" = 0 ] || ns_skip "not root (network namespaces need CAP_SYS_ADMIN/CAP_NET_ADMIN)"
    command -v ip >/dev/null 2>&1 || ns_skip "ip (iproute2) not installed"
    ip netns list >/dev/null 2>&1 || ns_skip "'ip netns' is unavailable"
    local probe="gs-probe-$$"
    if ! ip netns add "$probe" >/dev/null 2>&1; then
        ns_skip "cannot create a network namespace"
    fi
    ip netns del "$probe" >/dev/null 2>&1
    return 0
}

# ns_setup: create NS_SRV and NS_CLI joined by a veth pair, with IPv4 and IPv6 addresses.
ns_setup() {
    local n=0
    while ip netns list 2>/dev/null | grep -q "^$NS_TAG-srv-$$-$n\b\|^$NS_TAG-cli-$$-$n\b"; do
        n=$((n + 1))
        [ "$n" -lt 100 ] || { echo "netns: no free namespace name" >&2; return 1; }
    done
    NS_SRV="$NS_TAG-srv-$$-$n"
    NS_CLI="$NS_TAG-cli-$$-$n"
    # interface names are at most 15 bytes; pids are at most 7 digits (NS_TAG: 3 bytes at most)
    NS_VETH_SRV="${NS_TAG}v$$s$n"
    NS_VETH_CLI="${NS_TAG}v$$c$n"
    local x=$((($$ / 250) % 250 + 1)) y=$(($$ % 250 + 1))
    NS_SRV_IP4="10.$x.$y.2"
    NS_CLI_IP4="10.$x.$y.1"
    NS_SRV_IP6="fd00::2"
    NS_CLI_IP6="fd00::1"

    trap 'ns_cleanup' EXIT
    trap 'ns_cleanup; trap - EXIT; exit 130' INT
    trap 'ns_cleanup; trap - EXIT; exit 143' TERM

    ip netns add "$NS_SRV" || return 1
    NS_LIST="$NS_SRV"
    ip netns add "$NS_CLI" || return 1
    NS_LIST="$NS_LIST $NS_CLI"
    ip link add "$NS_VETH_CLI" netns "$NS_CLI" type veth peer name "$NS_VETH_SRV" netns "$NS_SRV" || return 1
    local ns dev ip4 ip6
    for ns in "$NS_SRV" "$NS_CLI"; do
        if [ "$ns" = "$NS_SRV" ]; then
            dev=$NS_VETH_SRV ip4=$NS_SRV_IP4 ip6=$NS_SRV_IP6
        else
            dev=$NS_VETH_CLI ip4=$NS_CLI_IP4 ip6=$NS_CLI_IP6
        fi
        ip -n "$ns" link set lo up || return 1
        ip -n "$ns" addr add "$ip4/24" dev "$dev" || return 1
        ip -n "$ns" -6 addr add "$ip6/64" dev "$dev" nodad || return 1
        ip -n "$ns" link set "$dev" up || return 1
    done
    # the link is up once both ends report it (bounded)
    for _ in $(seq 1 50); do
        if ip -n "$NS_SRV" link show "$NS_VETH_SRV" 2>/dev/null | grep -q "state UP" &&
           ip -n "$NS_CLI" link show "$NS_VETH_CLI" 2>/dev/null | grep -q "state UP"; then
            ns_log "up: $NS_SRV($NS_SRV_IP4,$NS_SRV_IP6) <-> $NS_CLI($NS_CLI_IP4,$NS_CLI_IP6)"
            return 0
        fi
        sleep 0.1
    done
    echo "netns: veth $NS_VETH_SRV/$NS_VETH_CLI did not come up" >&2
    return 1
}

# ns_setup_back: a third namespace NS_BACK (a back end) on a second network of the server's
# namespace NS_SRV, which then has two interfaces, as a middle tier does: sets NS_BACK,
# VETH_B (NS_SRV's end), VETH_BACK (NS_BACK's end), RELAY_B (NS_SRV's address there) and
# BACK_IP, adds NS_BACK to NS_LIST (cleaned up with the others); waits, bounded, for the link.
# Call after ns_setup; returns 1 (after a FAIL line) if it cannot.
ns_setup_back() {
    local y=$(($$ % 250 + 1)) i
    NS_BACK="$NS_TAG-bak-$$"
    VETH_B="${NS_TAG}v$$r" VETH_BACK="${NS_TAG}v$$b"
    RELAY_B="192.168.$y.1" BACK_IP="192.168.$y.2"
    ip netns add "$NS_BACK" || { echo "FAIL setup: cannot create $NS_BACK"; return 1; }
    NS_LIST="$NS_LIST $NS_BACK"
    if ! { ip link add "$VETH_B" netns "$NS_SRV" type veth peer name "$VETH_BACK" netns "$NS_BACK" &&
           ip -n "$NS_SRV" addr add "$RELAY_B/24" dev "$VETH_B" &&
           ip -n "$NS_BACK" addr add "$BACK_IP/24" dev "$VETH_BACK" &&
           ip -n "$NS_BACK" link set lo up &&
           ip -n "$NS_SRV" link set "$VETH_B" up &&
           ip -n "$NS_BACK" link set "$VETH_BACK" up; }; then
        echo "FAIL setup: cannot join $NS_SRV and $NS_BACK"
        return 1
    fi
    for ((i = 0; i < 50; i++)); do
        ip -n "$NS_BACK" link show "$VETH_BACK" | grep -q "state UP" && break
        sleep 0.1
    done
}

# ns_start NS LOGFILE CMD [ARG...]: run CMD inside NS in the background, stdout+stderr to
# LOGFILE; its pid (ip netns exec execs CMD, so this is CMD's own pid) goes to NS_LAST_PID and
# to the cleanup list.
ns_start() {
    local ns=$1 log=$2 i
    shift 2
    ip netns exec "$ns" "$@" >"$log" 2>&1 &
    NS_LAST_PID=$!
    NS_PIDS="$NS_PIDS $NS_LAST_PID"
    # the pid is ip's until it has joined the namespace and exec'd the command: a caller that
    # hands it on at once (attach --pid) must find it in its namespace (bounded: 5 s)
    for i in $(seq 1 100); do
        [ "$(ip netns identify "$NS_LAST_PID" 2>/dev/null)" = "$ns" ] && break
        kill -0 "$NS_LAST_PID" 2>/dev/null || break
        sleep 0.05
    done
    ns_log "started pid $NS_LAST_PID in $ns: $*"
}

# ns_run NS TIMEOUT_S CMD [ARG...]: run CMD inside NS in the foreground, killed after TIMEOUT_S
# seconds (exit status 124 then, as timeout(1)). It runs as a recorded background job that the
# shell waits for, so that an INT/TERM to the script runs the cleanup at once (and kills it)
# instead of after the command ends. Its stdin is /dev/null.
ns_run() {
    local ns=$1 t=$2 pid rc
    shift 2
    timeout -k 5 "$t" ip netns exec "$ns" "$@" </dev/null &
    pid=$!
    NS_PIDS="$NS_PIDS $pid"
    wait "$pid"
    rc=$?
    NS_PIDS=$(echo "$NS_PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
    return $rc
}

# ns_alive PID: the process exists and is not a zombie.
ns_alive() {
    local st
    kill -0 "$1" 2>/dev/null || return 1
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case "$st" in Z*) return 1 ;; esac
    return 0
}

# ns_wait_exit PID SECONDS: wait (bounded) for PID, one of our children, to end; its status in
# WAIT_RC (124, and return 1, when it had to be killed)
ns_wait_exit() {
    local pid=$1 t=$2
    for _ in $(seq 1 $((t * 20))); do
        ns_alive "$pid" || break
        sleep 0.05
    done
    if ns_alive "$pid"; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        WAIT_RC=124
        return 1
    fi
    wait "$pid"
    WAIT_RC=$?
}

# ns_stop PID [SIGNAL] [TIMEOUT_S]: signal PID (default TERM), wait up to TIMEOUT_S (default 10)
# for it to exit, then KILL it. Returns the process's exit status when it was our child and
# exited by itself, 0 when it was gone already, 137 when it had to be killed.
ns_stop() {
    local pid=$1 sig=${2:-TERM} t=${3:-10} rc=0
    [ -n "$pid" ] || return 0
    NS_PIDS=$(echo "$NS_PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
    if ! kill -0 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null
        return 0
    fi
    kill -s "$sig" "$pid" 2>/dev/null
    for _ in $(seq 1 $((t * 10))); do
        ns_alive "$pid" || break
        sleep 0.1
    done
    if ns_alive "$pid"; then
        echo "netns: pid $pid did not exit within ${t}s of SIG$sig, killing it" >&2
        kill -s KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        return 137
    fi
    wait "$pid" 2>/dev/null
    rc=$?
    return $rc
}

# ns_wait_file FILE [TIMEOUT_S]: wait (bounded, default 10 s) until FILE exists and is not empty.
ns_wait_file() {
    local f=$1 t=${2:-10}
    for _ in $(seq 1 $((t * 20))); do
        [ -s "$f" ] && return 0
        sleep 0.05
    done
    echo "netns: timed out after ${t}s waiting for $f" >&2
    return 1
}

# ns_wait_grep FILE REGEX [TIMEOUT_S]: wait until a line of FILE matches REGEX.
ns_wait_grep() {
    local f=$1 re=$2 t=${3:-10}
    for _ in $(seq 1 $((t * 20))); do
        grep -q -- "$re" "$f" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "netns: timed out after ${t}s waiting for '$re' in $f" >&2
    return 1
}

# ns_wait_attached LOG PID: wait until `giopscope attach` (PID, writing its stderr to LOG) says
# what it follows, i.e. every program is loaded and attached; 1 when PID ended first or after
# ATTACH_START_S (default 120) seconds. Loading means the kernel's verifier going over the
# taps: about 5 s of system time on an idle 2-vCPU machine here, several times that when the
# machine is loaded (41 s seen), so this bounds a wait, not a speed.
ns_wait_attached() {
    local log=$1 pid=$2
    for _ in $(seq 1 $((${ATTACH_START_S:-120} * 20))); do
        grep -q "^giopscope attach: following" "$log" 2>/dev/null && return 0
        ns_alive "$pid" || return 1
        sleep 0.05
    done
    return 1
}

# ns_wait_port NS PORT [TIMEOUT_S]: wait until a TCP socket listens on PORT inside NS.
ns_wait_port() {
    local ns=$1 port=$2 t=${3:-10}
    for _ in $(seq 1 $((t * 20))); do
        if ip netns exec "$ns" ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
            return 0
        fi
        sleep 0.05
    done
    echo "netns: timed out after ${t}s waiting for port $port in $ns" >&2
    return 1
}

# ns_cleanup: kill what ns_start started (by pid), delete the namespaces. Idempotent.
ns_cleanup() {
    [ "$NS_CLEANING" = 1 ] && return 0
    NS_CLEANING=1
    if [ -n "$NS_CLEANUP_HOOK" ]; then
        "$NS_CLEANUP_HOOK" || true
    fi
    local pid ns
    for pid in $NS_PIDS; do
        kill -s TERM "$pid" 2>/dev/null
    done
    for pid in $NS_PIDS; do
        for _ in $(seq 1 30); do
            ns_alive "$pid" || break
            sleep 0.1
        done
        if ns_alive "$pid"; then
            kill -s KILL "$pid" 2>/dev/null
        fi
        wait "$pid" 2>/dev/null
    done
    NS_PIDS=""
    for ns in $NS_LIST; do
        # anything still inside (started by other means) is killed by pid
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            kill -s KILL "$pid" 2>/dev/null
        done
        ip netns del "$ns" 2>/dev/null || echo "netns: could not delete $ns" >&2
    done
    NS_LIST=""
    NS_CLEANING=0
    return 0
}
