#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/dpdk_replay.sh -- packets per second through `giopscope dpdk` replaying a capture with
# DPDK's net_pcap driver, next to `giopscope read` of the same file, in one run.
#
#   bench/dpdk_replay.sh [-n RUNS] [-c COPIES] [-G]    (root; not part of make check)
#
# The capture: COPIES (default 100) copies of the omniORB capture
# tests/data/corpus/v01_giop12_echo2000.pcap, each on client ports of its own
# (bench/dpdk_bigcap.py): 401 100 packets, 200 100 calls, 65 MB, read from the page cache.
# Arms, interleaved RUNS times (default 7) so that a load change hits all of them alike;
# medians reported (docs/benchmarks.md, "Measuring on these machines": timings drift, compare within one run):
#   read          giopscope read BIG                                  (summary)
#   dpdk          giopscope dpdk --vdev net_pcap0,rx_pcap=BIG          (summary)
#   read --pairs  giopscope read BIG --pairs -o /dev/null
#   dpdk --pairs  giopscope dpdk --vdev net_pcap0,rx_pcap=BIG --pairs -o /dev/null
# For each: the wall time of the whole command (date before and after; for dpdk this includes
# starting the EAL and the 50 ms that tell the end of the file) and packets / wall time; the
# CPU time (user + system, GNU time; dpdk's poller also spins through those 50 ms); for dpdk
# also the rate of its receive loop alone, from the first burst to the last (its exit report). Then two references, RUNS/2 times each: infinite_rx (net_pcap loops over the 4011
# packets from memory, no file reads; TSC time stamps; the engine sees the same connections
# again and again) for 3 s, and net_null (a driver that makes up 64-byte frames: the
# receive loop and link-layer dispatch alone) for 3 s.
# Then, unless -G or without valgrind, instructions per packet, which do not drift with the
# machine's load: `valgrind --tool=callgrind` of read and of dpdk on 10 and on 30 copies; the
# difference over the 80 220 extra packets is the cost of one packet, the rest the fixed cost
# (the EAL's start and end for dpdk).
# Prints a Markdown section (date, CPU, kernel, DPDK, load, commands, medians) for
# docs/benchmarks.md.
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
G=${GIOPSCOPE:-build/giopscope}
RUNS=7
COPIES=100
GRIND=1
while getopts "n:c:Gh" o; do
	case $o in
	n) RUNS=$OPTARG ;;
	c) COPIES=$OPTARG ;;
	G) GRIND=0 ;;
	*) sed -n '3,29p' "$0"; exit 2 ;;
	esac
done
[ -x "$G" ] || { echo "dpdk_replay: $G not built" >&2; exit 2; }
"$G" dpdk --help >/dev/null 2>&1 || { echo "dpdk_replay: $G was built without DPDK" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "dpdk_replay: run as root (DPDK EAL)" >&2; exit 2; }

SRC=tests/data/corpus/v01_giop12_echo2000.pcap
tmp=$(mktemp -d /tmp/gs-dpdk-bench.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
BIG=$tmp/big.pcap
python3 bench/dpdk_bigcap.py "$SRC" "$BIG" "$COPIES" || exit 2
PKTS=$(( $(python3 -c "
import struct,sys
d=open(sys.argv[1],'rb').read(); o=24; n=0
while o+16<=len(d):
    n+=1; o+=16+struct.unpack('<I',d[o+8:o+12])[0]
print(n)" "$BIG") ))
cat "$BIG" >/dev/null   # page cache
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

now() { date +%s%N; }
# GNU time for the CPU time (user + system) of each run: less sensitive to other work on the
# machine than the wall time, which waits for a CPU when the machine is loaded
TIME=""
[ -x /usr/bin/time ] && /usr/bin/time -f '%U' true 2>/dev/null && TIME=/usr/bin/time
# run ARM CMD...: wall seconds to $tmp/ARM.wall, the dpdk loop rate (if any) to $tmp/ARM.loop
run() {
	local arm=$1 t0 t1 rc
	shift
	t0=$(now)
	if [ -n "$TIME" ]; then
		"$TIME" -f '%U %S' -o "$tmp/cpu" "$@" >/dev/null 2>"$tmp/err"
	else
		"$@" >/dev/null 2>"$tmp/err"
	fi
	rc=$?
	t1=$(now)
	if [ "$rc" != 0 ]; then
		echo "dpdk_replay: $arm failed (exit $rc): $(tail -2 "$tmp/err")" >&2
		exit 1
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >>"$tmp/$arm.wall"
	sed -n 's/.* s from the first to the last (\([0-9]*\) packets\/s).*/\1/p' "$tmp/err" >>"$tmp/$arm.loop"
	[ -n "$TIME" ] && awk '{ printf "%.3f\n", $1 + $2 }' "$tmp/cpu" >>"$tmp/$arm.cpu"
}
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for _ in $(seq 1 "$RUNS"); do
	run read_summary "$G" read "$BIG"
	run dpdk_summary "$G" dpdk --vdev "net_pcap0,rx_pcap=$BIG"
	run read_pairs "$G" read "$BIG" --pairs -o /dev/null
	run dpdk_pairs "$G" dpdk --vdev "net_pcap0,rx_pcap=$BIG" --pairs -o /dev/null
done
for _ in $(seq 1 $(( (RUNS + 1) / 2 ))); do
	run infinite "$G" dpdk --vdev "net_pcap0,rx_pcap=$SRC,infinite_rx=1" --duration 3
	run null "$G" dpdk --vdev net_null0 --duration 3
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# instructions: per packet (slope between 10 and 30 copies) and fixed
GRIND_TEXT=""
command -v valgrind >/dev/null || GRIND=0
if [ "$GRIND" = 1 ]; then
	ir() { # Ir of a command under callgrind
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >/dev/null 2>"$tmp/cg.err" ||
			{ echo "dpdk_replay: callgrind of $* failed: $(tail -2 "$tmp/cg.err")" >&2; exit 1; }
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/cg.err"
	}
	python3 bench/dpdk_bigcap.py "$SRC" "$tmp/c10.pcap" 10 && python3 bench/dpdk_bigcap.py "$SRC" "$tmp/c30.pcap" 30 || exit 2
	r10=$(ir "$G" read "$tmp/c10.pcap"); r30=$(ir "$G" read "$tmp/c30.pcap")
	d10=$(ir "$G" dpdk --vdev "net_pcap0,rx_pcap=$tmp/c10.pcap"); d30=$(ir "$G" dpdk --vdev "net_pcap0,rx_pcap=$tmp/c30.pcap")
	GRIND_TEXT=$(awk -v r10="$r10" -v r30="$r30" -v d10="$d10" -v d30="$d30" -v per="$((PKTS / COPIES))" 'BEGIN {
		n = 20 * per; rp = (r30 - r10) / n; dp = (d30 - d10) / n
		printf "instructions (callgrind, 10 and 30 copies: slope per packet, intercept fixed):\n\n"
		printf "| | per packet | fixed |\n|---|---|---|\n"
		printf "| read | %.0f | %.1f M |\n", rp, (r10 - 10 * per * rp) / 1e6
		printf "| dpdk (net_pcap) | %.0f | %.1f M |\n", dp, (d10 - 10 * per * dp) / 1e6
		printf "\ndpdk / read per packet: %.2f\n", dp / rp }')
fi

CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
DPDKV=$(pkg-config --modversion libdpdk 2>/dev/null || echo "?")
# shellcheck disable=SC2016  # Markdown backquotes, not command substitution
row() { # arm label command
	local w l c cr="-"
	w=$(median "$tmp/$1.wall")
	l=$(median "$tmp/$1.loop")
	c="-"
	if [ -s "$tmp/$1.cpu" ]; then
		c=$(median "$tmp/$1.cpu")
		cr=$(awk -v p="$PKTS" -v c="$c" 'BEGIN { if (c > 0) printf "%.0f", p / c; else print "-" }')
	fi
	[ "$l" = "-" ] || l=$(printf '%.0f' "$l")
	if [ "$1" = infinite ] || [ "$1" = null ]; then
		printf '| %s | - | - | - | - | %s | `%s` |\n' "$2" "$l" "$3"
	else
		printf '| %s | %.3f | %.0f | %s | %s | %s | `%s` |\n' "$2" "$w" "$(awk -v p="$PKTS" -v w="$w" 'BEGIN { print p / w }')" \
			"$c" "$cr" "$l" "$3"
	fi
}
ratio() { awk -v a="$(median "$tmp/$1.wall")" -v b="$(median "$tmp/$2.wall")" 'BEGIN { printf "%.2f", a / b }'; }
cat <<EOF
### dpdk replay vs read ($(date -u '+%Y-%m-%d %H:%M UTC'))

- command: \`bench/dpdk_replay.sh -n $RUNS -c $COPIES\` (GIOPSCOPE=$G)
- machine: $CPU, $(nproc) CPUs, Linux $(uname -r), DPDK $DPDKV; load average $LOAD0 before, $LOAD1 after
- capture: $COPIES copies of \`$SRC\` (bench/dpdk_bigcap.py): $PKTS packets, $(($(stat -c %s "$BIG") / 1000000)) MB, in the page cache
- $RUNS interleaved runs of each arm, medians; infinite_rx and net_null $(( (RUNS + 1) / 2 )) runs of 3 s

| arm | wall s | packets/s (wall) | CPU s | packets/CPU s | packets/s (dpdk receive loop) | command |
|---|---|---|---|---|---|---|
$(row read_summary "read" "giopscope read BIG")
$(row dpdk_summary "dpdk (net_pcap)" "giopscope dpdk --vdev net_pcap0,rx_pcap=BIG")
$(row read_pairs "read --pairs" "giopscope read BIG --pairs -o /dev/null")
$(row dpdk_pairs "dpdk --pairs" "giopscope dpdk --vdev net_pcap0,rx_pcap=BIG --pairs -o /dev/null")
$(row infinite "dpdk infinite_rx (4011 packets looped)" "giopscope dpdk --vdev net_pcap0,rx_pcap=v01.pcap,infinite_rx=1 --duration 3")
$(row null "dpdk net_null (64-byte non-IP frames)" "giopscope dpdk --vdev net_null0 --duration 3")

wall time dpdk / read: $(ratio dpdk_summary read_summary) (summary), $(ratio dpdk_pairs read_pairs) (--pairs)

$GRIND_TEXT
EOF
