#!/usr/bin/env bash
# A capture file cut short while `read` walks it in place (tcpdump -W writing its ring of
# files over the one being read, a copy replaced under it): the read must not die of the
# SIGBUS the mapping raises (probe/pcap_walk_file.c), but stop with one line naming the file,
# exit 1, and keep every row written before it whole. The file is truncated once the read has
# it mapped (/proc/PID/maps), to 0 bytes and to a middle offset, with one thread and two.
# Exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
GEN=$BUILD/bench/giopgen
WORK=$(mktemp -d /tmp/gs-cut.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$WORK"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

"$GEN" --calls 300000 --seed 9 -q -o "$WORK/src.pcap" || { echo "FAIL giopgen"; exit 1; }
cols=$("$GS" read -q "$WORK/src.pcap" --pairs --format csv 2>/dev/null | head -1 | tr ',' '\n' | wc -l)

# cut THREADS SIZE: read a copy, truncate it to SIZE once it is mapped
cut_case() {
	local t=$1 size=$2 label="--threads $1, cut to $2 bytes" i rc
	cp "$WORK/src.pcap" "$WORK/a.pcap"
	"$GS" read -q --threads "$t" "$WORK/a.pcap" --pairs --format csv > "$WORK/out" 2> "$WORK/err" &
	pid=$!
	for ((i = 0; i < 2000; i++)); do
		grep -q "$WORK/a.pcap" "/proc/$pid/maps" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.005
	done
	if ! grep -q "$WORK/a.pcap" "/proc/$pid/maps" 2>/dev/null; then
		wait "$pid"; pid=
		bad "$label: the file was never seen mapped"
		return
	fi
	truncate -s "$size" "$WORK/a.pcap"
	wait "$pid"; rc=$?; pid=
	if [ "$rc" -gt 128 ]; then
		bad "$label: killed by signal $((rc - 128))"; return
	fi
	if [ "$rc" -ne 1 ]; then
		bad "$label: exit $rc, not 1 (stderr: $(head -c 300 "$WORK/err"))"; return
	fi
	# (with threads, --pairs past the order window also says so: not this test's line)
	sed -i '/^giopscope read: a bound was reached with --threads/d' "$WORK/err"
	if [ "$(wc -l < "$WORK/err")" -ne 1 ] || ! grep -q "^giopscope: $WORK/a.pcap: .*cut short\|^giopscope: $WORK/a.pcap: .*truncated" "$WORK/err"; then
		bad "$label: not one line naming the file: $(head -c 300 "$WORK/err")"; return
	fi
	# the rows written before it are whole: every line has the header's columns
	if [ "$(awk -F, -v c="$cols" 'NF != c { n++ } END { print n + 0 }' "$WORK/out")" -ne 0 ]; then
		bad "$label: a row cut or malformed"; return
	fi
	ok "$label: exit 1, $(cat "$WORK/err" | cut -c1-120), $(($(wc -l < "$WORK/out") - 1)) rows whole"
}

half=$(( $(stat -c %s "$WORK/src.pcap") / 2 + 12345 ))
for t in 1 2; do
	cut_case "$t" 0
	cut_case "$t" "$half"
done
echo "read_cut: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
