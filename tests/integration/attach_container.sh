#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_container.sh -- `giopscope attach --pid P` of an omniORB server that
# lives in a container-like place: its own mount namespace, where it is chrooted into a tmpfs
# root whose libraries are bind mounts (its omniORB library is /opt/orb/lib/libomniORB4.so.2.x
# there: a path the host does not have, and /proc/P/maps names it by the tmpfs mount's place,
# which /proc/P/root + it does not reach), and its own network namespace (a veth to the
# client's). attach runs from the host's namespaces, with no -i unless said.
#
# Scenarios:
#   orb      `attach --pid SERVER --sched --orb omniorb --pairs --format csv`: it starts (the
#            upcall probes attach through /proc/P/map_files), taps the server's veth (an
#            interface of the server's namespace only), and is back in the host's network
#            namespace once attached (/proc/ATTACH/ns/net); the client's calls (echoString x N,
#            slow(1000) x N, echoRecs(2000) x N_RECS) are each a row, NO_EXCEPTION, with
#            server_process_us, the sched split (server_oncpu_us, server_runq_us,
#            server_blocked_us; those the closing line counts as touched by a missed switch
#            excused) and the ORB split (orb_in_us, servant_us, orb_out_us), summing to
#            server_process_us (0.002 us); no call written without an instant it waited for
#   iface    -i names an interface of the server's namespace: `-i VETH_SRV` (not a host
#            interface) taps it and the calls are rows with their split; `-i gs-none0`: exit
#            2 and one line saying -i names the server namespace's interfaces; then the veth
#            is deleted inside the server's namespace while attach runs (back in the host's
#            namespace by then): `interface ... went away`, exit 2
#
# usage: tests/integration/attach_container.sh [SCENARIO...]     (default: all; --list)
# environment: GIOPSCOPE, BUILD, PORT (2809), N (40), N_RECS (10), KEEP_DIR, FAIL_DIR (default
#   /tmp/gs-failing), NS_TAG (ctr)
# Prints "PASS name (figures)" / "FAIL name: reason", then "N passed, N failed"; exit 0, 1 on a
# failure, 77 when it cannot run here (not root, no eBPF in the build, no BTF, no namespaces,
# no unshare/chroot).

# shellcheck disable=SC2317  # scenario bodies and hooks are called indirectly
set -u
export LC_ALL=C

cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
KEEP_DIR=${KEEP_DIR:-}
PORT=${PORT:-2809}
N=${N:-40}
N_RECS=${N_RECS:-10}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
ALL="orb iface"

. tests/lib/scenario.sh
sc_want attach_container "$ALL" "$@"
for v in PORT N N_RECS; do
    case "${!v}" in
        ''|*[!0-9]*) echo "attach_container: $v must be a number, not '${!v}'" >&2; exit 2 ;;
    esac
done

NS_TAG=${NS_TAG:-ctr}
. tests/lib/netns.sh
# shellcheck source=tests/lib/attach_run.sh
. tests/lib/attach_run.sh

skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "not root (eBPF and namespaces need it)"
for tool in python3 timeout unshare chroot mount; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed"
done
[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
[ -x "$GIOPSCOPE" ] || skip "$GIOPSCOPE not built"
if grep -q "this build has no eBPF support" "$GIOPSCOPE"; then
    skip "$GIOPSCOPE was built without eBPF"
fi
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi
# the server's libraries, bind mounted into its root at another path
LIBDIR=$(dirname "$(ldd "$SERVER" | awk '/libomniORB4/ { print $3 }')")
[ -d "$LIBDIR" ] || skip "cannot find the server's libomniORB4 (ldd $SERVER)"
LIBDIR=$(readlink -f "$LIBDIR")
unshare -m true 2>/dev/null || skip "cannot make a mount namespace (unshare -m)"
ns_require

WORK=$(mktemp -d /tmp/gs-ctr.XXXXXX) || exit 2
ATT_PID=""
work_cleanup() {
    if [ -n "$ATT_PID" ]; then
        kill -KILL "$ATT_PID" 2>/dev/null
        wait "$ATT_PID" 2>/dev/null
    fi
    # the tmpfs roots are mounted in the servers' own mount namespaces only (gone with them):
    # here they are empty directories
    rm -rf "$WORK"
}
NS_CLEANUP_HOOK=work_cleanup
ns_setup || { echo "FAIL setup: cannot create the network namespaces"; exit 1; }
cp "$GIOPSCOPE" "$WORK/giopscope" && GIOPSCOPE=$WORK/giopscope
[ -n "$KEEP_DIR" ] && mkdir -p "$KEEP_DIR"

SC_FAIL_PREFIX=attach_container_ SC_CP_OPTS=""

# what runs inside the server's new mount namespace (unshare -m, private): a tmpfs root with
# /usr, the library folder at /opt/orb/lib and the scenario's folder at /work bind mounted,
# then chroot and exec the server (every step an exec: the pid is the server's)
CONTAINER_INIT='set -e
root=$1 lib=$2 dir=$3
shift 3
mount -t tmpfs gs-ctr "$root"
mkdir -p "$root/usr" "$root/opt/orb/lib" "$root/work" "$root/tmp" "$root/dev"
mount --rbind /usr "$root/usr"
mount --bind "$lib" "$root/opt/orb/lib"
mount --bind "$dir" "$root/work"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
ln -s usr/bin "$root/bin"
exec chroot "$root" /usr/bin/env LD_LIBRARY_PATH=/opt/orb/lib "$@"'

# run_server: bench_server in NS_SRV and its own mount namespace, chrooted; SRV_PID
run_server() {
    mkdir -p "$SC_DIR/root" "$SC_DIR/app"
    cp "$SERVER" "$SC_DIR/app/bench_server"
    ns_start "$NS_SRV" "$SC_DIR/server.log" unshare -m --propagation private \
        bash -c "$CONTAINER_INIT" container "$SC_DIR/root" "$LIBDIR" "$SC_DIR/app" \
        /work/bench_server -ORBendPoint "giop:tcp:$NS_SRV_IP4:$PORT" -o /work/echo.ior -q
    SRV_PID=$NS_LAST_PID
    echo "# server (pid $SRV_PID) in $NS_SRV, own mount namespace, chroot $SC_DIR/root, omniORB from /opt/orb/lib ($LIBDIR)" \
        >>"$SC_DIR/commands.log"
    if ! ns_wait_file "$SC_DIR/app/echo.ior" 15 || ! ns_wait_port "$NS_SRV" "$PORT" 10; then
        err "server did not start" "$(tail -3 "$SC_DIR/server.log")"
        return 1
    fi
    # the premise: the library as the host names it (maps) is not a file here, nor under the
    # server's root
    local lib
    lib=$(awk '/libomniORB4/ { print $6; exit }' "/proc/$SRV_PID/maps")
    if [ -z "$lib" ] || [ -e "$lib" ] || [ -e "/proc/$SRV_PID/root$lib" ]; then
        err "the container is not one: libomniORB4 mapped as '$lib', reachable from the host"
        return 1
    fi
    echo "# maps: $lib" >>"$SC_DIR/commands.log"
}

# start_attach, stop_attach: tests/lib/attach_run.sh

# client ARGS...: bench_client in NS_CLI (must exit 0), its calls logged to lat-N.csv
CLIENTS=0
client() {
    CLIENTS=$((CLIENTS + 1))
    echo "# client in $NS_CLI: $CLIENT -i echo.ior -q -lat lat-$CLIENTS.csv $*" >>"$SC_DIR/commands.log"
    if ! ns_run "$NS_CLI" 120 "$CLIENT" -i "$SC_DIR/app/echo.ior" -q -lat "$SC_DIR/lat-$CLIENTS.csv" "$@" \
            >>"$SC_DIR/clients.log" 2>&1; then
        err "client ($*) failed" "$(tail -3 "$SC_DIR/clients.log")"
        return 1
    fi
}

# the tapped interfaces on the start line: the server's veth, which the host does not have
check_start_line() {
    local line
    line=$(grep -m1 "^giopscope attach: following" "$SC_DIR/attach.log")
    case "$line" in
        *"tapping"*"$NS_VETH_SRV"*) ;;
        *) err "the start line does not tap the server's $NS_VETH_SRV" "$line" ;;
    esac
    if ip link show "$NS_VETH_SRV" >/dev/null 2>&1; then
        err "the host has an interface $NS_VETH_SRV: the test proves nothing"
    fi
}

# check_back: attach is in the host's network namespace once attached
check_back() {
    local mine theirs
    mine=$(readlink /proc/self/ns/net)
    theirs=$(readlink "/proc/$ATT_PID/ns/net" 2>/dev/null)
    [ "$mine" = "$theirs" ] || err "attach stayed in network namespace $theirs (the host's: $mine)"
}

# check_rows: every call the clients made is a row with both splits (python below)
check_rows() {
    local out
    if grep -q "written without a syscall instant" "$SC_DIR/attach.log"; then
        err "calls written without a syscall instant" "$(grep "written without" "$SC_DIR/attach.log")"
        return
    fi
    # shellcheck disable=SC2046  # the latency files, one argument each
    if out=$(python3 - "$SC_DIR/pairs.csv" "$SC_DIR/attach.log" $(ls "$SC_DIR"/lat-*.csv) 2>&1 <<'PY'
import collections, csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
log = open(sys.argv[2]).read()
made = collections.Counter()
for f in sys.argv[3:]:
    for r in csv.DictReader(open(f, newline="")):
        made[r["op"]] += 1
bad = []
need = ["server_process_us", "server_oncpu_us", "server_runq_us", "server_blocked_us", "orb_in_us",
        "servant_us", "orb_out_us"]
for k in need:
    if rows and k not in rows[0]:
        print("no column", k); sys.exit(1)
m = re.search(r"; (\d+) call sides not split \((\d+) touched by a loss or a missed switch", log)
if not m:
    print("no sched closing line"); sys.exit(1)
excused = int(m.group(2))
reqs = [r for r in rows if r["kind"] == "Request"]
seen = collections.Counter(r["operation"] for r in reqs)
if seen != made:
    bad.append(f"Requests per operation {dict(seen)}, the clients made {dict(made)}")
for r in reqs:
    if r["status"] != "NO_EXCEPTION":
        bad.append(f"{r['operation']} request {r['request_id']}: {r['status']}")
for r in rows:
    what = f"{r['operation'] or r['kind']} request {r['request_id']}"
    if not r["server_process_us"]:
        bad.append(f"{what}: no server_process_us"); continue
    if not r["server_oncpu_us"]:
        if excused:
            excused -= 1
        else:
            bad.append(f"{what}: no sched split (none excused)")
    if r["kind"] != "Request":
        continue
    if not r["servant_us"]:
        bad.append(f"{what}: no ORB split"); continue
    s = float(r["orb_in_us"]) + float(r["servant_us"]) + float(r["orb_out_us"])
    if abs(s - float(r["server_process_us"])) > 0.002:
        bad.append(f"{what}: orb_in+servant+orb_out {s:.3f} != server_process_us {r['server_process_us']}")
slow = sorted(float(r["servant_us"]) for r in reqs if r["operation"] == "slow" and r["servant_us"])
if slow and slow[0] < 1000:
    bad.append(f"slow(1000): servant_us {slow[0]} < 1000")
for b in bad[:10]:
    print(b)
print(f"{len(rows)} rows, {len(reqs)} Requests = the clients' {sum(made.values())} calls, every one split"
      + (f"; slow servant_us p50 {slow[len(slow) // 2]:.0f} us" if slow else ""))
sys.exit(1 if bad or not reqs else 0)
PY
    ); then
        SC_NOTE="${SC_NOTE:+$SC_NOTE; }$(printf '%s' "$out" | tail -1)"
    else
        err "checks failed" "$out"
    fi
}

# renew_veth: the veth pair again (iface deletes it), as ns_setup made it
renew_veth() {
    local ns dev ip4
    ip link add "$NS_VETH_CLI" netns "$NS_CLI" type veth peer name "$NS_VETH_SRV" netns "$NS_SRV" || return 1
    for ns in "$NS_SRV" "$NS_CLI"; do
        if [ "$ns" = "$NS_SRV" ]; then dev=$NS_VETH_SRV ip4=$NS_SRV_IP4; else dev=$NS_VETH_CLI ip4=$NS_CLI_IP4; fi
        ip -n "$ns" addr add "$ip4/24" dev "$dev" && ip -n "$ns" link set "$dev" up || return 1
    done
}

calls() {
    client -op echoString -size 32 -n "$N" &&
        client -op slow -size 1000 -n "$N" &&
        client -op echoRecs -size 2000 -n "$N_RECS"
}

scenario_orb() {
    sc_begin orb
    CLIENTS=0
    if run_server; then
        if start_attach --pid "$SRV_PID" --sched --orb omniorb --pairs --format csv -o "$SC_DIR/pairs.csv" -q; then
            check_start_line
            check_back
            calls
            sleep 0.5
            stop_attach
        fi
        ns_stop "$SRV_PID" TERM 20 || err "server exit status $? after SIGTERM"
        [ -z "$SC_ERR" ] && check_rows
    fi
    sc_end
}

scenario_iface() {
    sc_begin iface
    CLIENTS=0
    local rc lines
    if run_server; then
        # a name the server's namespace does not have: one line, exit 2
        echo "# attach: $GIOPSCOPE attach --pid $SRV_PID -i gs-none0" >>"$SC_DIR/commands.log"
        timeout 120 "$GIOPSCOPE" attach --pid "$SRV_PID" -i gs-none0 >"$SC_DIR/none.out" 2>"$SC_DIR/none.err"
        rc=$?
        lines=$(wc -l <"$SC_DIR/none.err")
        [ "$rc" = 2 ] || err "-i gs-none0: exit status $rc, want 2" "$(cat "$SC_DIR/none.err")"
        if [ "$lines" != 1 ] || ! grep -q "network namespace of pid $SRV_PID" "$SC_DIR/none.err"; then
            err "-i gs-none0: not one line naming pid $SRV_PID's network namespace" "$(cat "$SC_DIR/none.err")"
        fi
        if [ -z "$SC_ERR" ] && start_attach --pid "$SRV_PID" -i "$NS_VETH_SRV" --sched --orb omniorb --pairs \
                --format csv -o "$SC_DIR/pairs.csv" -q; then
            check_start_line
            check_back
            calls
            sleep 0.5
            # the tapped interface goes, inside the server's namespace: attach (back in the
            # host's) still hears of it
            ip -n "$NS_SRV" link del "$NS_VETH_SRV"
            renew_veth || err "cannot make the veth pair again"
            if ns_wait_exit "$ATT_PID" 20; then
                [ "$WAIT_RC" = 2 ] || err "attach: exit status $WAIT_RC after its interface went, want 2"
                grep -q "interface $NS_VETH_SRV went away" "$SC_DIR/attach.log" ||
                    err "attach did not say $NS_VETH_SRV went away" "$(tail -3 "$SC_DIR/attach.log")"
            else
                err "attach did not stop within 20 s of its interface going away"
            fi
            ATT_PID=""
        fi
        ns_stop "$SRV_PID" TERM 20 || err "server exit status $? after SIGTERM"
        [ -z "$SC_ERR" ] && check_rows
        SC_NOTE="${SC_NOTE:+$SC_NOTE; }-i gs-none0: $(cat "$SC_DIR/none.err")"
    fi
    sc_end
}

sc_run_all
