#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run by `make check-golden`: giopscope reads a classic pcap file itself (large
# preads parsed in place, probe/tap_pcap.c) and hands everything else to libpcap:
# stdin, pcapng, and, from that record on, any record it does not vouch for
# (capture length above the snapshot length, a file cut short).  Reading a file
# through stdin goes through libpcap only, so for every form of a capture
# (tests/golden/pcap_forms.py: both byte orders, us and ns, a low or zero snapshot
# length, cut inside a record's data or header) `read FILE` must print exactly
# what `read - < FILE` prints: the pairs, the summary, the error line and the exit
# code, the file's name aside.
#
# GIOPSCOPE: the binary (default build/giopscope); GIOPGEN: the generator (default
# $BUILD/bench/giopgen, BUILD default build).
set -u
cd "$(dirname "$0")/../.." || exit 2
GS=${GIOPSCOPE:-build/giopscope}
GEN=${GIOPGEN:-${BUILD:-build}/bench/giopgen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { echo "PASS $*"; pass=$((pass + 1)); }
ko() { echo "FAIL $*"; fail=$((fail + 1)); }

# both MODE FILE: stdout, stderr and exit code of the file path and of stdin
both() {
	local mode=$1 f=$2 a b
	if [ "$mode" = pairs ]; then set -- --pairs --format csv --summary; else set --; fi
	a=$("$GS" read "$f" "$@" 2>&1; echo "exit $?")
	b=$("$GS" read - "$@" <"$f" 2>&1; echo "exit $?")
	# the name in an error line: the file's, or "-"
	b=${b//"giopscope: -:"/"giopscope: $f:"}
	b=${b//"read: -:"/"read: $f:"}
	# (the summary's first line on stderr may land inside a row of stdout's last
	# buffer: not only at a line start)
	b=$(printf '%s\n' "$b" | sed -e "s|^-: |$f: |" -e "s|-: \([0-9.]* s of capture\)|$f: \1|")
	if [ "$a" == "$b" ]; then
		ok "$(basename "$f") $mode: file = stdin ($(printf '%s\n' "$a" | wc -l) lines, $(printf '%s\n' "$a" | tail -1))"
	else
		ko "$(basename "$f") $mode: file and stdin differ"
		diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | head -5
	fi
}

caps=(tests/data/corpus/v02_giop10_mix.pcap tests/data/corpus/v05_multiplexed.pcap)
if [ -x "$GEN" ]; then
	# larger than the reader's buffer (512 KiB): records cross its refills
	"$GEN" --calls 6000 --seed 7 -q -o "$tmp/gen.pcap" && caps+=("$tmp/gen.pcap")
else
	ko "no generator at $GEN"
fi
for c in "${caps[@]}"; do
	b=$(basename "$c" .pcap)
	for form in le-us le-ns be-us be-ns snap-low zero-snap cut-data cut-header; do
		python3 tests/golden/pcap_forms.py "$form" "$c" "$tmp/$b.$form.pcap" || { ko "pcap_forms $form $c"; continue; }
		both pairs "$tmp/$b.$form.pcap"
	done
	both summary "$tmp/$b.le-us.pcap"
done
# the comparison can fail: the same packets with the second half 1 ns later, read
# as a file, against the original on stdin
f=$tmp/gen.late-1ns.pcap
if [ -f "$tmp/gen.le-ns.pcap" ] && python3 tests/golden/pcap_forms.py late-1ns "$tmp/gen.le-ns.pcap" "$f"; then
	a=$("$GS" read "$f" --pairs --format csv 2>/dev/null)
	b=$("$GS" read - --pairs --format csv <"$tmp/gen.le-ns.pcap" 2>/dev/null)
	if [ "$a" != "$b" ]; then ok "the comparison sees 1 ns (late-1ns read as a file vs le-ns on stdin)"
	else ko "late-1ns read as a file = le-ns on stdin"; fi
fi
# and the two paths are really two: a file is read with pread (giopscope's
# reader), stdin is not (libpcap's fread; the dynamic loader's few preads are
# in both counts)
if command -v strace >/dev/null; then
	f=$tmp/gen.le-us.pcap
	nf=$(strace -f -e trace=pread64 "$GS" read "$f" 2>&1 >/dev/null | grep -c '^pread64\|pread64(')
	ns=$(strace -f -e trace=pread64 "$GS" read - <"$f" 2>&1 >/dev/null | grep -c '^pread64\|pread64(')
	if [ "$nf" -gt $((ns + 10)) ]; then ok "a file is read by giopscope's reader ($nf preads), stdin by libpcap ($ns)"
	else ko "reader paths: $nf preads for a file, $ns for stdin (want 10 more for the file)"; fi
elif [ "${GIOPSCOPE_STRICT:-0}" = 1 ]; then
	ko "strace is missing (scripts/install-deps.sh installs it)"
else
	echo "SKIP which reader reads: strace is missing"
fi
echo "read paths: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
