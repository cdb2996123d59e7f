#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# read --threads against one thread and the bare libpcap loop, side by side.
#
#   bench/threads.sh CAPTURE [ROUNDS] [EXTRA READ OPTIONS...]
#
# Arms: build/bench/bare_loop CAPTURE; giopscope read -q --threads 1; --threads 2 (with the
# extra options, e.g. --pairs -o /dev/null); with OLD=/path/to/giopscope also that build's
# --threads 2 (arm old2: e.g. main's tree, to compare two designs). Each round runs every arm
# once, the order rotating from round to round, each under /usr/bin/time (wall, user, sys,
# peak RSS). Prints one line per run, then per arm the median wall time, the median of the
# per-round ratios to the bare loop (wall and CPU), the peak RSS and the load average before
# and after. The capture is read by cat once first, so every arm reads from the page cache.
set -u
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
BARE=$BUILD/bench/bare_loop
cap=${1:?usage: bench/threads.sh CAPTURE [ROUNDS] [READ OPTIONS...]}
rounds=${2:-5}
shift $(( $# >= 2 ? 2 : 1 ))
extra=("$@")
[ -x "$BARE" ] && [ -x "$GS" ] || { echo "make bench-tools first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat "$cap" > /dev/null
arms=(bare t1 t2)
[ -n "${OLD:-}" ] && arms+=(old2)
cmd() {
	case $1 in
	bare) echo "$BARE $cap" ;;
	t1) echo "$GS read -q --threads 1 ${extra[*]} $cap" ;;
	t2) echo "$GS read -q --threads 2 ${extra[*]} $cap" ;;
	old2) echo "$OLD read -q --threads 2 ${extra[*]} $cap" ;;
	esac
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < rounds; r++)); do
	for ((k = 0; k < ${#arms[@]}; k++)); do
		a=${arms[$(( (k + r) % ${#arms[@]} ))]}
		# shellcheck disable=SC2046
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/t" $(cmd "$a") > /dev/null 2> "$tmp/err" ||
			{ echo "$a failed: $(head -c 300 "$tmp/err")" >&2; exit 1; }
		read -r wall user sys rss < "$tmp/t"
		echo "$r $a $wall $user $sys $rss" | tee -a "$tmp/all" | \
			awk '{printf "round %d %-4s wall %6.2f s  cpu %6.2f s  rss %7.1f MiB\n", $1, $2, $3, $4 + $5, $6 / 1024}'
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for a in "${arms[@]:1}"; do echo "command $a: $(cmd "$a")"; done
echo "command bare: $(cmd bare)"
python3 - "$tmp/all" <<'EOF'
import sys, statistics as st
runs = {}
for line in open(sys.argv[1]):
    r, a, w, u, s, m = line.split()
    runs.setdefault(int(r), {})[a] = (float(w), float(u) + float(s), int(m))
for a in [a for a in ("bare", "t1", "t2", "old2") if a in runs[0]]:
    walls = [runs[r][a][0] for r in runs]
    cpus = [runs[r][a][1] for r in runs]
    rw = [runs[r][a][0] / runs[r]["bare"][0] for r in runs]
    rc = [runs[r][a][1] / max(runs[r]["bare"][1], 0.01) for r in runs]
    rss = max(runs[r][a][2] for r in runs) / 1024
    print(f"{a:4s} wall median {st.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f}), "
          f"cpu median {st.median(cpus):.2f} s, x bare wall {st.median(rw):.2f} "
          f"(per-round {', '.join(f'{x:.2f}' for x in rw)}), x bare cpu {st.median(rc):.2f}, peak rss {rss:.1f} MiB")
EOF
