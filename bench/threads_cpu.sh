#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The CPU time of each engine thread of read --threads 2, side by side: the critical path of
# the threaded read, less exposed to other processes taking the CPUs than wall time is.
#
#   bench/threads_cpu.sh CAPTURE ROUNDS GIOPSCOPE...
#
# Each round runs `GIOPSCOPE read -q --threads 2 CAPTURE` once per build (interleaved) under
# `perf record -e cpu-clock -F 4000` and counts each thread's samples (4000 a second of CPU):
# the two engine threads are the two highest thread ids (the main thread is the lowest).
# Prints per build the medians of the first engine's seconds, the second's, the larger of the
# two and their sum. perf's sampling (and other processes sharing the caches) inflate every
# figure, by a fifth to a half on the 2-vCPU VM of session 10: compare builds in the
# same run. The capture is read by cat once first (page cache).
set -u
cap=${1:?usage: bench/threads_cpu.sh CAPTURE ROUNDS GIOPSCOPE...}
rounds=${2:?}
shift 2
[ $# -ge 1 ] || { echo "usage: bench/threads_cpu.sh CAPTURE ROUNDS GIOPSCOPE..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat "$cap" > /dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < rounds; r++)); do
	for gs in "$@"; do
		perf record -q -e cpu-clock -F 4000 -o "$tmp/perf.data" "$gs" read -q --threads 2 "$cap" \
			> /dev/null 2> "$tmp/err" || { echo "$gs failed: $(head -c 300 "$tmp/err")" >&2; exit 1; }
		echo "$gs $(perf script -i "$tmp/perf.data" -F tid 2> /dev/null | sort -n | uniq -c | tail -2 |
			awk '{printf "%d ", $1}')" >> "$tmp/all"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/all" <<'PY'
import sys, statistics as st
runs = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3:
        runs.setdefault(f[0], []).append((int(f[1]) / 4000, int(f[2]) / 4000))
for gs, v in runs.items():
    print(f"{gs}: engine 1 {st.median(a for a, _ in v):.3f} s, engine 2 {st.median(b for _, b in v):.3f} s, "
          f"larger {st.median(max(x) for x in v):.3f} s, sum {st.median(sum(x) for x in v):.3f} s "
          f"(median of {len(v)})")
PY
