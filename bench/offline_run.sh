#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/offline_run.sh MODE: the offline part of `make bench` / `make bench-quick`
# (giopscope read vs tshark, a bare libpcap loop and cat; instructions per packet;
# memory). Measures (offline_bench.py), then writes its sections of $BENCH_DOC and the
# SVG plots next to it (offline_report.py).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-${BENCH_MODE:-quick}}
BENCH_BIN=${BENCH_BIN:-${BUILD:-build}/bench}
DOC=${BENCH_DOC:-docs/benchmarks.md}
results=$BENCH_BIN/results-offline-$MODE.json
BENCH_BIN=$BENCH_BIN python3 bench/offline_bench.py "$MODE" -o "$results"
python3 bench/offline_report.py "$results" --doc "$DOC" --svg-dir "$(dirname "$DOC")"
