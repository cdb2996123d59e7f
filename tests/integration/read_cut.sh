#!/usr/bin/env bash
# A capture file cut short while `read` walks it in place (tcpdump -W writing its ring of
# files over the one being read, a copy replaced under it): the read must not die of the
# SIGBUS the mapping raises (probe/pcap_walk_file.c), nor end quietly as if the file had
# ended, but stop with one line naming the file (ours, or libpcap's "truncated ..." when the
# cut lands inside a record it then reads), exit 1, and keep every row written before it
# whole. The file is truncated once the read is in it (mapped: /proc/PID/maps; or read past
# its first MiB: /proc/PID/fdinfo), to 0 bytes and to a middle offset: classic pcap with one
# thread (the pread reader) and two (the engines' walk), pcapng with one (the walk).
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
editcap -F pcapng "$WORK/src.pcap" "$WORK/src.pcapng" || { echo "FAIL editcap"; exit 1; }
cols=$("$GS" read -q "$WORK/src.pcap" --pairs --format csv 2>/dev/null | head -1 | tr ',' '\n' | wc -l)

# in_file PID FILE OUT: the read is in FILE: it has it mapped, or has written 2000 rows
in_file() {
	grep -q "$2" "/proc/$1/maps" 2>/dev/null && return 0
	[ "$(wc -l < "$3")" -gt 2000 ]
}

# cut THREADS SIZE FORM: read a copy, truncate it to SIZE once the read is in it
cut_case() {
	local t=$1 size=$2 form=$3 label="$3, --threads $1, cut to $2 bytes" i rc
	cp "$WORK/src.$form" "$WORK/a.$form"
	"$GS" read -q --threads "$t" "$WORK/a.$form" --pairs --format csv > "$WORK/out" 2> "$WORK/err" &
	pid=$!
	for ((i = 0; i < 4000; i++)); do
		in_file "$pid" "$WORK/a.$form" "$WORK/out" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.002
	done
	if ! in_file "$pid" "$WORK/a.$form" "$WORK/out"; then
		wait "$pid"; pid=
		bad "$label: the read was never seen in the file"
		return
	fi
	truncate -s "$size" "$WORK/a.$form"
	wait "$pid"; rc=$?; pid=
	if [ "$rc" -gt 128 ]; then
		bad "$label: killed by signal $((rc - 128))"; return
	fi
	if [ "$rc" -ne 1 ]; then
		bad "$label: exit $rc, not 1 (stderr: $(head -c 300 "$WORK/err"))"; return
	fi
	# (with threads, --pairs past the order window also says so: not this test's line)
	sed -i '/^giopscope read: a bound was reached with --threads/d' "$WORK/err"
	if [ "$(wc -l < "$WORK/err")" -ne 1 ] || ! grep -q "^giopscope: $WORK/a.$form: \(the file was cut short while it was read\|truncated .*\) (after [0-9]* packets)$" "$WORK/err"; then
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
	cut_case "$t" 0 pcap
	cut_case "$t" "$half" pcap
done
cut_case 1 0 pcapng
cut_case 1 "$half" pcapng
echo "read_cut: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
