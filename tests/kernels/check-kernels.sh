#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/kernels/check-kernels.sh [KERNEL...] -- `make check-kernels`: attach's integration
# tests inside QEMU guests that boot Debian's own kernel packages, against real omniORB servers
# and clients (the host's build, omniORB, tshark... seen through the guest's root).
#
# KERNEL (default: 6.1 6.1-rt 6.12) is
#   6.1      the newest /boot/vmlinuz-6.1.*-cloud-amd64 (linux-image-cloud-amd64, Debian 12)
#   6.1-rt   the newest /boot/vmlinuz-6.1.*-rt-amd64 (linux-image-rt-amd64: PREEMPT_RT)
#   6.12     the newest /boot/vmlinuz-6.12.*-cloud-amd64 (linux-image-6.12-cloud-amd64)
#   X.Y, X.Y-rt  the same for another series; or an exact version, /boot/vmlinuz-VERSION
# (scripts/install-deps.sh kernels installs the three packages; make check-kernels runs it).
#
# Each guest: QEMU with TCG (KVM hangs in the nested virtualisation of the machines this runs
# on), one host thread for both vCPUs (QEMU_ACCEL, below), -smp 2, -m 4G (KVM_CPUS,
# KVM_MEM); the kernel from /boot; an initramfs made here
# (busybox-static, tests/kernels/init, the kernel's virtio_pci, virtiofs and overlay modules
# from /lib/modules/VERSION) that mounts the host's / read-only over virtiofs under a RAM
# overlay (Debian's cloud kernels have no 9p), with build/kernels/VERSION/ shared writable at
# its own path, and only lo. Inside, tests/kernels/guest.sh runs tests/kernels/tests.list (or
# the tests named in KERNEL_TESTS) one by one, each bounded.
#
# Kept in build/kernels/VERSION/ (BUILD/kernels): console.log (the serial console), NAME.log
# (each test's output), failed/NAME/ (a failing scenario's files), results.tsv, guest.txt;
# build/kernels/summary.txt: the table printed at the end, kernel x test -> result and time,
# the reasons of the failures below it. Progress while it runs: the guest's console lines
# (each test's start, its scenarios' PASS/FAIL lines, a line a minute), prefixed by the kernel.
# Exit 0 when every test passed on every kernel (an optional test absent from the tree is
# "absent" and not a failure); 1 on any failure, a guest that gave no result included; 2 when
# it cannot run here (no QEMU, no such kernel, not built).
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2
TOP=$(pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
LIST=tests/kernels/tests.list
KERNEL_TESTS=${KERNEL_TESTS:-}
MEM=${KVM_MEM:-4G}
CPUS=${KVM_CPUS:-2}
# one host thread runs both vCPUs, in turn (thread=single): with a thread per vCPU (QEMU's
# default, MTTCG) a 6.12 guest oopsed once in five runs on an int3 in try_to_wake_up, a
# breakpoint the kernel had already patched away (a static key flipped when attach --sched
# enabled its tracepoints) still run by the other vCPU's stale translation; one thread also
# takes one of the host's cores, not two, and a run took as long (5.5-6 min for 6.12)
ACCEL=${QEMU_ACCEL:-tcg,thread=single}
# more QEMU options, split on blanks (e.g. QEMU_ARGS="-icount shift=auto,sleep=on")
QEMU_ARGS=${QEMU_ARGS:-}
OUTROOT=$BUILD/kernels
[ $# -gt 0 ] || set -- 6.1 6.1-rt 6.12

die() { echo "check-kernels: $*" >&2; exit 2; }
say() { echo "check-kernels: $*"; }

[ "$(id -u)" = 0 ] || die "not root (the guests' tests load eBPF; /boot/vmlinuz-* is root's)"
case "$TOP$BUILD" in *[[:space:]]*) die "a blank in $TOP or $BUILD (the kernel command line carries them)" ;; esac
for t in qemu-system-x86_64 cpio gzip; do
    command -v "$t" >/dev/null 2>&1 || die "$t not installed (scripts/install-deps.sh kernels)"
done
VIRTIOFSD=""
for v in /usr/lib/qemu/virtiofsd /usr/libexec/virtiofsd; do
    [ -x "$v" ] && { VIRTIOFSD=$v; break; }
done
[ -n "$VIRTIOFSD" ] || die "no virtiofsd (qemu-system-common: /usr/lib/qemu/virtiofsd)"
BUSYBOX=/bin/busybox
if [ ! -x "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
    die "$BUSYBOX missing or not static (busybox-static)"
fi
[ -x "$BUILD/giopscope" ] || die "$BUILD/giopscope not built (make)"
[ -x "$BUILD/orb/bench_server" ] || die "$BUILD/orb/bench_server not built (make orb-apps)"

# the tests: tests.list without comments, those of KERNEL_TESTS when set, as TSV
plan=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$LIST" |
       awk '{ c = $4; for (i = 5; i <= NF; i++) c = c " " $i; print $1 "\t" $2 "\t" $3 "\t" c }')
if [ -n "$KERNEL_TESTS" ]; then
    for t in $KERNEL_TESTS; do
        cut -f1 <<<"$plan" | grep -qx -- "$t" || die "no test $t in $LIST ($(cut -f1 <<<"$plan" | paste -sd' ' -))"
    done
    plan=$(awk -F'\t' -v want=" $KERNEL_TESTS " 'index(want, " " $1 " ")' <<<"$plan")
fi
ntests=$(grep -c . <<<"$plan")
# the guest's bound (KERNEL_TIMEOUT_S, default an hour: CI has 90 minutes for make check and
# one kernel): the tests it has not run by then are "not run" rows
vm_timeout=${KERNEL_TIMEOUT_S:-3600}
case "$vm_timeout" in ''|*[!0-9]*) die "KERNEL_TIMEOUT_S is a number of seconds, not '$vm_timeout'" ;; esac

# resolve NAME: the kernel version it means, from /boot
resolve() {
    local name=$1 series flavour v
    if [ -e "/boot/vmlinuz-$name" ]; then
        echo "$name"
        return 0
    fi
    case "$name" in
        *-rt) series=${name%-rt} flavour=rt-amd64 ;;
        *) series=$name flavour=cloud-amd64 ;;
    esac
    case "$series" in
        [0-9]*.[0-9]*) ;;
        *) return 1 ;;
    esac
    # vmlinuz-6.1.0-57-cloud-amd64, vmlinuz-6.12.118+deb12-cloud-amd64: SERIES then a dot
    v=$(cd /boot && ls -d vmlinuz-"$series".*-"$flavour" 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -1)
    [ -n "$v" ] || return 1
    echo "$v"
}

# initramfs K: busybox, init, and the modules that reach virtiofs and the overlay (each one's
# dependencies first, from modules.dep), uncompressed; cached in OUTROOT/.initramfs, made again
# when init or this script is newer
initramfs() {
    local k=$1 m=/lib/modules/$1 img=$OUTROOT/.initramfs/$1.cpio.gz r mod p
    if [ -s "$img" ] && [ "$img" -nt tests/kernels/init ] && [ "$img" -nt tests/kernels/check-kernels.sh ] &&
       [ "$img" -nt "$m/modules.dep" ]; then
        echo "$img"
        return 0
    fi
    [ -r "$m/modules.dep" ] || { echo "no $m/modules.dep (is the kernel's package installed?)" >&2; return 1; }
    mkdir -p "$OUTROOT/.initramfs"
    r=$(mktemp -d "$OUTROOT/.initramfs/root.XXXXXX") || return 1
    mkdir -p "$r/bin" "$r/mods" "$r/proc" "$r/sys" "$r/dev"
    cp "$BUSYBOX" "$r/bin/busybox"
    cp tests/kernels/init "$r/init"
    chmod 755 "$r/init"
    : >"$r/mods/modules.list"
    local -A added=()
    # add_mod PATH (relative to $m): its dependencies (modules.dep lists every one), then it
    add_mod() {
        local rel=$1 dep base
        [ -n "${added[$rel]:-}" ] && return 0
        added[$rel]=1
        for dep in $(sed -n "s|^$rel: *||p" "$m/modules.dep"); do
            add_mod "$dep" || return 1
        done
        base=$(basename "$rel")
        base=${base%.xz} base=${base%.zst} base=${base%.gz}
        case "$rel" in
            *.xz) xz -dc "$m/$rel" ;;
            *.zst) zstd -dcq "$m/$rel" ;;
            *.gz) gzip -dc "$m/$rel" ;;
            *) cat "$m/$rel" ;;
        esac >"$r/mods/$base" || return 1
        echo "$base" >>"$r/mods/modules.list"
    }
    for mod in virtio_pci virtiofs overlay; do
        p=$(grep -oE "^[^:]*/$mod\.ko(\.xz|\.zst|\.gz)?:" "$m/modules.dep" | tr -d :)
        if [ -n "$p" ]; then
            add_mod "$p" || { echo "cannot add $p" >&2; rm -rf "$r"; return 1; }
        elif ! grep -q "/$mod\.ko" "$m/modules.builtin"; then
            echo "$k has no $mod, as a module or built in" >&2
            rm -rf "$r"
            return 1
        fi
    done
    (cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) >"$img.tmp" && mv "$img.tmp" "$img"
    rm -rf "$r"
    [ -s "$img" ] && echo "$img"
}

SOCKS="" VFS_PIDS="" QEMU_PID=""
stop_vm() {
    local p
    for p in $QEMU_PID $VFS_PIDS; do
        kill -TERM "$p" 2>/dev/null
    done
    for p in $QEMU_PID $VFS_PIDS; do
        for _ in $(seq 1 50); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    QEMU_PID="" VFS_PIDS=""
    [ -n "$SOCKS" ] && rm -rf "$SOCKS"
    SOCKS=""
}
# the rows of the summary (kernel, test, result, seconds, reason), appended by run_kernel
ROWS=$(mktemp /tmp/gs-kernels.XXXXXX) || exit 2
trap 'stop_vm; rm -f "$ROWS"' EXIT
trap 'stop_vm; rm -f "$ROWS"; trap - EXIT; exit 130' INT
trap 'stop_vm; rm -f "$ROWS"; trap - EXIT; exit 143' TERM

# run_kernel NAME: one guest
run_kernel() {
    local name=$1 k out img shown lines start secs qrc boot t
    if ! k=$(resolve "$name"); then
        say "$name: no kernel in /boot (scripts/install-deps.sh kernels installs 6.1, 6.1-rt, 6.12)"
        printf '%s\t(boot)\tFAIL\t0\tno /boot/vmlinuz for %s\n' "$name" "$name" >>"$ROWS"
        return
    fi
    out=$OUTROOT/$k
    rm -rf "$out"
    mkdir -p "$out"
    printf '%s\n' "$plan" >"$out/plan.tsv"
    if ! img=$(initramfs "$k" 2>"$out/initramfs.err"); then
        say "$k: cannot make its initramfs: $(cat "$out/initramfs.err")"
        printf '%s\t(boot)\tFAIL\t0\tno initramfs: %s\n' "$k" "$(head -1 "$out/initramfs.err")" >>"$ROWS"
        return
    fi
    SOCKS=$(mktemp -d /tmp/gs-kernels-sock.XXXXXX) || exit 2
    "$VIRTIOFSD" --socket-path="$SOCKS/root" -o source=/,sandbox=chroot,cache=always,no_xattr \
        >>"$out/virtiofsd.log" 2>&1 &
    VFS_PIDS="$!"
    "$VIRTIOFSD" --socket-path="$SOCKS/out" -o source="$out",sandbox=chroot,cache=none,no_xattr \
        >>"$out/virtiofsd.log" 2>&1 &
    VFS_PIDS="$VFS_PIDS $!"
    for _ in $(seq 1 100); do
        [ -S "$SOCKS/root" ] && [ -S "$SOCKS/out" ] && break
        sleep 0.1
    done
    say "$k: booting (QEMU -accel $ACCEL, $CPUS vCPUs, $MEM; $ntests tests, at most $((vm_timeout / 60)) min); logs in $out"
    start=$(date +%s)
    qemu-system-x86_64 -accel "$ACCEL" -cpu max -smp "$CPUS" -m "$MEM" \
        -object memory-backend-memfd,id=mem,size="$MEM",share=on -numa node,memdev=mem \
        -kernel "/boot/vmlinuz-$k" -initrd "$img" \
        -append "console=ttyS0 quiet panic=-1 rdinit=/init gs.out=$out gs.top=$TOP" \
        -nic none -display none -no-reboot -serial stdio -monitor none \
        -chardev socket,id=root,path="$SOCKS/root" -device vhost-user-fs-pci,chardev=root,tag=root \
        -chardev socket,id=out,path="$SOCKS/out" -device vhost-user-fs-pci,chardev=out,tag=out \
        $QEMU_ARGS </dev/null >"$out/console.raw" 2>&1 &
    QEMU_PID=$!
    # the console as it comes, until the guest powers off or its bound passes
    shown=0
    for _ in $(seq 1 $((vm_timeout))); do
        kill -0 "$QEMU_PID" 2>/dev/null || break
        sleep 1
        lines=$(wc -l <"$out/console.raw")
        if [ "$lines" -gt "$shown" ]; then
            sed -n "$((shown + 1)),${lines}p" "$out/console.raw" | tr -d '\r' | sed "s/^/[$name] /"
            shown=$lines
        fi
    done
    if kill -0 "$QEMU_PID" 2>/dev/null; then
        say "$k: the guest ran past its bound ($vm_timeout s): stopped"
        echo "check-kernels: stopped after $vm_timeout s" >>"$out/console.raw"
        kill -TERM "$QEMU_PID" 2>/dev/null
        for _ in $(seq 1 50); do
            kill -0 "$QEMU_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$QEMU_PID" 2>/dev/null
    fi
    wait "$QEMU_PID" 2>/dev/null
    qrc=$?
    QEMU_PID=""
    stop_vm
    secs=$(($(date +%s) - start))
    sed -n "$((shown + 1)),\$p" "$out/console.raw" | tr -d '\r' | sed "s/^/[$name] /"
    tr -d '\r' <"$out/console.raw" >"$out/console.log" && rm -f "$out/console.raw"
    boot=$(sed -n 's/^boot_s //p' "$out/guest.txt" 2>/dev/null)
    # every test of the plan: its result, or "not run" when the guest ended before it
    while IFS=$'\t' read -r t _ _ _; do
        if grep -q "^$t	" "$out/results.tsv" 2>/dev/null; then
            grep -m1 "^$t	" "$out/results.tsv" | sed "s/^/$k	/" >>"$ROWS"
        else
            printf '%s\t%s\tFAIL\t-\tnot run: the guest ended first (%s/console.log)\n' "$k" "$t" "$out" >>"$ROWS"
        fi
    done <<<"$plan"
    # the guest's own row: its whole time (boot included); FAIL when it gave no result or its
    # kernel oopsed (the first such console line, with the task and workqueue it names)
    oops=$(grep -m1 -E 'Kernel panic|Oops:|BUG:|general protection fault' "$out/console.log" | sed 's/^\[ *[0-9.]*\] //')
    [ -n "$oops" ] && oops="$oops; $(grep -m3 -E '^\[ *[0-9.]*\] (CPU: .* Comm:|Workqueue:|RIP:)' "$out/console.log" |
                                      sed -e 's/^\[ *[0-9.]*\] //' -e 's/ Not tainted.*//' | paste -sd' ' -)"
    if [ ! -s "$out/guest.rc" ]; then
        printf '%s\t(guest)\tFAIL\t%s\tno result from the guest (%sqemu exit %s; %s/console.log)\n' \
            "$k" "$secs" "${oops:+$oops; }" "$qrc" "$out" >>"$ROWS"
    elif [ -n "$oops" ]; then
        printf '%s\t(guest)\tFAIL\t%s\tthe kernel oopsed: %s (%s/console.log)\n' "$k" "$secs" "$oops" "$out" >>"$ROWS"
    else
        printf '%s\t(guest)\tdone\t%s\tbooted in %s s\n' "$k" "$secs" "${boot:-?}" >>"$ROWS"
    fi
    say "$k: guest done in $((secs / 60)) min $((secs % 60)) s"
}

mkdir -p "$OUTROOT"
say "kernels: $*; tests: $(cut -f1 <<<"$plan" | paste -sd' ' -)"
for name in "$@"; do
    run_kernel "$name"
done

# the summary: kernel x test -> result and time, then why each failure failed
{
    echo "check-kernels: $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$TOP" describe --always --dirty 2>/dev/null)"
    printf '%-30s %-16s %-7s %7s\n' kernel test result time
    awk -F'\t' '{ printf "%-30s %-16s %-7s %7s\n", $1, $2, $3, ($4 == "-" ? "-" : $4 " s") }' "$ROWS"
    if grep -q '	FAIL	' "$ROWS"; then
        echo
        echo "failures:"
        awk -F'\t' '$3 == "FAIL" { print "  " $1 " " $2 ": " $5 }' "$ROWS"
    fi
} >"$OUTROOT/summary.txt"
echo
cat "$OUTROOT/summary.txt"
pass=$(awk -F'\t' '$2 !~ /^\(/ && $3 == "pass"' "$ROWS" | grep -c .)
fail=$(awk -F'\t' '$3 == "FAIL"' "$ROWS" | grep -c .)
absent=$(awk -F'\t' '$3 == "absent"' "$ROWS" | grep -c .)
echo "check-kernels: $pass passed, $fail failed, $absent absent (summary: $OUTROOT/summary.txt)"
[ "$fail" -eq 0 ]
