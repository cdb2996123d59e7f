#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/run.sh: the benchmark driver behind `make bench` and `make bench-quick`.
#
#   bench/run.sh quick|full        (BUILD=build by default; BENCH_ONLY=offline,live,... to pick)
#
# 1. makes sure the tools are there (tshark, valgrind, perf, GNU time; Debian packages);
# 2. copies $BUILD/giopscope to $BUILD/bench/giopscope: every figure of the run comes
#    from that one binary, even if the tree is rebuilt meanwhile;
# 3. runs each part's script (the table PARTS below, no arguments), offline first. It gets in
#    its environment BENCH_MODE (quick|full), BUILD, BENCH_BIN ($BUILD/bench: giopscope,
#    giopgen, bare_loop) and BENCH_DOC (docs/benchmarks.md); what it prints is kept in
#    $BENCH_BIN/PART.out. A part writes its own section(s) of BENCH_DOC and leaves the rest
#    of the file alone (offline: between its <!-- offline-MODE:begin/end --> markers).
#    bench-quick runs the parts marked quick; the others need minutes and root (ORBs in
#    network namespaces) and run with `make bench` only.
# `make bench` is never part of `make check`.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-}
case "$MODE" in
  quick|full) ;;
  *) echo "usage: bench/run.sh quick|full" >&2; exit 2 ;;
esac
export BENCH_MODE=$MODE
export BUILD=${BUILD:-build}
export BENCH_BIN=$BUILD/bench
export BENCH_DOC=${BENCH_DOC:-docs/benchmarks.md}

# tools the offline part needs, by Debian package
missing=""
for pkg_tool in tshark:tshark valgrind:valgrind time:/usr/bin/time linux-perf:perf python3:python3; do
  pkg=${pkg_tool%%:*} tool=${pkg_tool#*:}
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "bench: missing:$missing (Debian packages; install them as root)" >&2
    exit 2
  fi
  echo "bench: installing:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
  apt-get update -q
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing
fi

for f in "$BUILD/giopscope" "$BENCH_BIN/giopgen" "$BENCH_BIN/bare_loop"; do
  [ -x "$f" ] || { echo "bench: $f is missing: run 'make bench' or 'make bench-quick'" >&2; exit 2; }
done
install -m 0755 "$BUILD/giopscope" "$BENCH_BIN/giopscope"

# part | script | in bench-quick
PARTS=(
  "offline|bench/offline_run.sh|yes"
  "open-calls-rss|bench/open_calls_rss.sh|yes"
  "attach|bench/attach_overhead.sh|no"
  "attach-toggle|bench/attach_toggle.sh|no"
  "syscall-floor|bench/syscall_floor.sh|no"
  "attach-host-tax|bench/attach_host_tax.sh|no"
  "live|bench/live_rate.sh|no"
  "dpdk|bench/dpdk_replay.sh|no"
  "workloads|bench/workloads.sh|no"
)
failed=""
for entry in "${PARTS[@]}"; do
  IFS='|' read -r part script quick <<<"$entry"
  if [ -n "${BENCH_ONLY:-}" ] && [[ ",$BENCH_ONLY," != *",$part,"* ]]; then
    continue
  fi
  [ "$MODE" = full ] || [ "$quick" = yes ] || continue
  if [ ! -x "$script" ]; then
    echo "bench: $script missing or not executable: $part skipped" >&2
    continue
  fi
  echo "bench: --- $part ($MODE): $script ---" >&2
  start=$(date +%s)
  # no arguments: each script takes its own defaults; BENCH_MODE says quick or full
  if "$script" | tee "$BENCH_BIN/$part.out"; then
    echo "bench: $part done in $(( $(date +%s) - start )) s (output: $BENCH_BIN/$part.out)" >&2
  else
    echo "bench: $part FAILED" >&2
    failed="$failed $part"
  fi
done
if [ -n "$failed" ]; then
  echo "bench: failed:$failed" >&2
  exit 1
fi
echo "bench: results in $BENCH_DOC" >&2
