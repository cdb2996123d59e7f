#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# attach's ingress instants at the kernel's receive stamp (session 11, issue 16): the netns
# scenario of tests/integration/attach_ebpf.sh with packets as a NIC hands them over -- a tc
# program on the client's veth (tests/lib/clear_edt.bpf.c) clears the sender's delivery time
# that TCP sets and veth keeps, so the server's kernel stamps each packet at netif_rx, before
# the backlog -- and `attach --rx-stamp`. tcpdump on the server's veth reports that stamp;
# attach's t_request_first/last (the server's ingress) must equal tcpdump's within RX_TOL_NS
# (1000 ns: the REALTIME -> MONOTONIC conversion; up to 361 ns seen on the test VM). A tap stamping by itself, after
# the backlog and its own parsing (main before session 11), is later by µs: this check fails
# there. Also: at least one ingress segment counted at the kernel's receive stamp.
# environment: as attach_ebpf.sh (GIOPSCOPE, BUILD, ...), RX_TOL_NS, RX_ATTACH_ARGS (--rx-stamp;
#   empty for a build without it: tcpdump holds rx timestamps on anyway), CPU_HOG (1: a busy loop
#   on each CPU at nice 0 while the clients run; the backlog waits behind it more often)
# Exit 0 pass, 1 fail, 77 skip.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
T=$(mktemp -d /tmp/gs-rxstamp.XXXXXX)
HOGS=()
cleanup() { for h in "${HOGS[@]}"; do kill "$h" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
command -v clang >/dev/null || { echo "SKIP attach_rxstamp: clang not installed"; exit 77; }
[ -f "$BUILD/ebpf/vmlinux.h" ] || { echo "SKIP attach_rxstamp: no $BUILD/ebpf/vmlinux.h (a build without eBPF)"; exit 77; }
clang -O2 -g -target bpf -I"$BUILD/ebpf" -c tests/lib/clear_edt.bpf.c -o "$T/clear_edt.bpf.o" ||
    { echo "FAIL attach_rxstamp: cannot build tests/lib/clear_edt.bpf.c"; exit 1; }
if [ "${CPU_HOG:-0}" = 1 ]; then
    for c in $(seq 0 $(($(nproc) - 1))); do taskset -c "$c" sh -c 'while :; do :; done' & HOGS+=($!); done
fi
RX_CLEAR="$T/clear_edt.bpf.o" bash tests/integration/attach_ebpf.sh netns
