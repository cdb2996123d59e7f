#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# read --threads N gives the output of one thread, byte for byte: every capture of the golden
# set (tests/golden/cases.txt, with its options, stdin and split files included), the corpus
# (tests/data/corpus, and /work/shared/corpus when there), copies of the corpus with loss,
# reordering and duplicates (pcap_variants.py) and generated captures (retransmissions,
# interleaved fragments, calls never answered, IPv6), each read with --threads 1, 2 and 3 and
# every output compared: stdout, stderr, the exit code, -o files, --trace and --report files,
# for --pairs csv/jsonl/text, the summary text/csv/jsonl, --by, --tail, --interval.
# Also: every form of capture file the engine threads (and one thread) walk themselves or leave
# to libpcap (the file mapped, a seek where libpcap takes over; one thread's output over each
# form equal to libpcap's alone, reading it from stdin), tests/bad's read cases, --threads really starts
# N engine threads (strace), bad values
# are refused, and a bound reached with threads (a table, the order window) is said.
# READ_THREADS_QUICK=1: fewer option sets and lossy copies (for sanitizer builds).
# Exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
GEN=$BUILD/bench/giopgen
WORK=$(mktemp -d /tmp/gs-threads.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0

# run LABEL THREADS -- ARGS...: outputs into $WORK/run.THREADS/ (stdout, stderr, exit code,
# and the files the arguments name under @/, rewritten to that folder)
run() {
	local t=$1 d="$WORK/run.$1"
	shift
	rm -rf "$d"; mkdir -p "$d"
	local args=() a
	for a in "$@"; do args+=("${a//@\//$d/}"); done
	if [ "${STDIN:-}" ]; then
		"$GS" read -q --threads "$t" "${args[@]}" < "$STDIN" > "$d/stdout" 2> "$d/stderr"
	else
		"$GS" read -q --threads "$t" "${args[@]}" > "$d/stdout" 2> "$d/stderr"
	fi
	echo $? > "$d/rc"
	# the file names in messages are the only thing allowed to differ
	sed -i "s#$d/#@/#g" "$d/stderr" "$d/stdout"
	# and the line saying a bound was reached (checked by the caller)
	rm -f "$WORK/note.$t"
	if grep -q '^giopscope read: a bound was reached with --threads' "$d/stderr"; then
		touch "$WORK/note.$t"
		sed -i '/^giopscope read: a bound was reached with --threads/d' "$d/stderr"
	fi
}

# same LABEL ARGS...: one thread against two and three
same() {
	local label=$1 t bad=""
	shift
	run 1 "$@"
	[ -s "$WORK/run.1/stdout" ] || [ -s "$WORK/run.1/stderr" ] || [ -n "$(ls "$WORK/run.1" | grep -v '^std\|^rc$')" ] || \
		{ fail=$((fail + 1)); echo "FAIL $label: no output at all"; return; }
	for t in 2 3; do
		run "$t" "$@"
		if ! diff -r "$WORK/run.1" "$WORK/run.$t" > "$WORK/diff" 2>&1; then
			bad="$bad $t"
			echo "FAIL $label: --threads $t differs from --threads 1"
			head -n 8 "$WORK/diff" | sed 's/^/    /'
		fi
		# the same output, and a bound said only where the options set a small one
		if [ -e "$WORK/note.$t" ] && [ "$label" = "${label#*--max-}" ] && [ "$label" = "${label#*--order-window}" ]; then
			bad="$bad $t"
			echo "FAIL $label: --threads $t says a bound was reached"
		fi
	done
	if [ -z "$bad" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

# 1. the golden set, each case with its own options (stdin and split captures included)
while IFS='|' read -r cap opts _exp _code; do
	case "$cap" in ''|'#'*) continue ;; esac
	cap=$(echo $cap); opts=$(echo $opts)
	read -r -a caps <<< "$cap"
	read -r -a o <<< "$opts"
	if [ "${cap#-}" != "$cap" ]; then
		STDIN=${cap#-} same "golden $cap $opts" "${o[@]}" -
	else
		same "golden $cap $opts" "${o[@]}" "${caps[@]}"
	fi
done < tests/golden/cases.txt

# 2. captures, every output
caps=(tests/data/corpus/*.pcap tests/golden/open_all_rtx.pcap)
for f in /work/shared/corpus/*.pcap; do [ -f "$f" ] && caps+=("$f"); done
if [ -x "$GEN" ]; then
	"$GEN" -q --calls 20000 --seed 2 -o "$WORK/gen-default.pcap"
	"$GEN" -q --calls 8000 --connections 40 --seed 4 --open-all --retransmit 0.02 -o "$WORK/gen-openall-rtx.pcap"
	"$GEN" -q --calls 8000 --seed 8 --no-replies --no-close -o "$WORK/gen-noreplies.pcap"
	"$GEN" -q --calls 20000 --seed 5 --mix echo --retransmit 0.01 --ipv6 0.5 -o "$WORK/gen-echo-v6.pcap"
	caps+=("$WORK"/gen-*.pcap)
else
	echo "note: $GEN missing (make bench-tools): generated captures left out"
fi
full=("--pairs --format csv" "--pairs --format jsonl" "--pairs --format text" "--format text"
      "--format csv" "--format jsonl" "--by conn --format csv" "--by object" "--by server --format jsonl"
      "--by priority --format csv" "--tail 10" "--tail 10 --format jsonl" "--interval 0.01 --format csv"
      "--pairs --summary --tail 5 --interval 0.05 -o @/pairs.csv" "--trace @/t.json --report @/r.html --format jsonl")
# READ_THREADS_QUICK=1 (make check-asan, check-tsan: slow binaries): fewer option sets
if [ "${READ_THREADS_QUICK:-0}" = 1 ]; then
	full=("--pairs --format csv" "--format jsonl" "--tail 10 --by conn"
	      "--pairs --summary --tail 5 --interval 0.05 -o @/pairs.csv" "--trace @/t.json --report @/r.html --format jsonl")
fi
for f in "${caps[@]}"; do
	for opts in "${full[@]}"; do
		read -r -a o <<< "$opts"
		same "$(basename "$f") $opts" "${o[@]}" "$f"
	done
done

# 3. copies with loss, reordering and duplicates
for f in tests/data/corpus/*.pcap; do
	b=$(basename "$f" .pcap)
	kinds=(drop reorder dup mix)
	[ "${READ_THREADS_QUICK:-0}" = 1 ] && kinds=(mix)
	for k in "${kinds[@]}"; do
		python3 tests/integration/pcap_variants.py "$k" "$f" "$WORK/$b-$k.pcap" 5
		for opts in "--pairs --format csv" "--format jsonl" "--tail 5 --format jsonl" "--by conn"; do
			read -r -a o <<< "$opts"
			same "$b-$k $opts" "${o[@]}" "$WORK/$b-$k.pcap"
		done
	done
done

# 4. broken and hostile input (tests/bad/cases.txt's read cases): the same messages, exit
# codes and rows (malformed messages name their packet by the capture's numbering)
mkdir -p "$WORK/bad"
if python3 tests/bad/make_bad.py "$WORK/bad" > "$WORK/bad.out" 2>&1; then
	while IFS='|' read -r name args _rest; do
		case "$name" in ''|'#'*) continue ;; esac
		args=$(echo $args)
		case "$args" in read\ *) ;; *) continue ;; esac
		read -r -a o <<< "${args#read }"
		o=("${o[@]//%D/$WORK/bad}")
		same "bad $(echo $name): ${args#read }" "${o[@]}"
	done < tests/bad/cases.txt
else
	fail=$((fail + 1)); echo "FAIL make_bad.py: $(head -c 300 "$WORK/bad.out")"
fi

# 4b. every form of capture file the engines walk themselves (probe/pcap_walk.c) and those they
# leave to libpcap, from the start or from a record on: classic pcap forms (pcap_forms.py) and
# pcapng forms (pcapng_forms.py), each read as one file and as the first of two
wcaps=(tests/data/corpus/v05_multiplexed.pcap)
[ -f "$WORK/gen-default.pcap" ] && wcaps+=("$WORK/gen-default.pcap")
forms=()
for f in "${wcaps[@]}"; do
	b=$(basename "$f" .pcap)
	for k in le-us be-ns snap-low cut-data cut-header zero-snap; do
		python3 tests/golden/pcap_forms.py "$k" "$f" "$WORK/$b.$k.pcap" && forms+=("$WORK/$b.$k.pcap")
	done
	# (not le-ms, and spb (no time stamps) only on the small capture: calls starting at the
	# same instant may be ordered otherwise by the merge, docs/output.md)
	ng=(le-ns be-ns be-us le-100ns skip two-if tsoffset cut)
	[ "$f" = tests/data/corpus/v05_multiplexed.pcap ] && ng+=(spb)
	for k in "${ng[@]}"; do
		python3 tests/integration/pcapng_forms.py "$k" "$f" "$WORK/$b.ng-$k.pcapng" && forms+=("$WORK/$b.ng-$k.pcapng")
	done
done
wopts=("--pairs --format csv" "--format jsonl")
[ "${READ_THREADS_QUICK:-0}" = 1 ] && wopts=("--pairs --format csv")
for f in "${forms[@]}"; do
	for opts in "${wopts[@]}"; do
		read -r -a o <<< "$opts"
		same "walk $(basename "$f") $opts" "${o[@]}" "$f"
	done
	# (v13 after it: its time stamps are later than every one of these)
	same "walk $(basename "$f") + tests/data/corpus/v13_oneway_exceptions.pcap" --pairs \
		"$f" tests/data/corpus/v13_oneway_exceptions.pcap
done
# one thread walks pcapng files too, and reads classic ones with its pread reader
# (probe/tap_pcap.c); stdin ("-") is libpcap's alone: every
# form read as a file must give what libpcap gives reading it from stdin (stdout, stderr, the
# exit code; the file's name in messages aside)
for f in "${forms[@]}"; do
	for opts in "${wopts[@]}"; do
		read -r -a o <<< "$opts"
		"$GS" read -q "${o[@]}" "$f" > "$WORK/walk.out" 2> "$WORK/walk.err"; echo "exit $?" >> "$WORK/walk.err"
		"$GS" read -q "${o[@]}" - < "$f" > "$WORK/pcap.out" 2> "$WORK/pcap.err"; echo "exit $?" >> "$WORK/pcap.err"
		sed -i "s#^giopscope: -: #giopscope: $f: #" "$WORK/pcap.err"
		if [ -s "$WORK/walk.out" ] && cmp -s "$WORK/walk.out" "$WORK/pcap.out" && cmp -s "$WORK/walk.err" "$WORK/pcap.err"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL walk $(basename "$f") $opts: one thread reading the file differs from libpcap (stdin)"
			diff "$WORK/walk.out" "$WORK/pcap.out" | head -n 4 | sed 's/^/    /'
			diff "$WORK/walk.err" "$WORK/pcap.err" | head -n 4 | sed 's/^/    /'
		fi
	done
done
# the walk is really taken (the file mapped), by the engine threads and one thread (pcapng), and
# handed over to libpcap where it must be (a seek to the record); a hand-over that is not
# needed is a failure too
if command -v strace > /dev/null; then
	for f in "${forms[@]}"; do
		for t in 1 2; do
			# one thread walks pcapng only: a classic file goes through its pread
			# reader (faster there, probe/tap_pcap.c; tests/golden/read_paths.sh)
			case "$t:$f" in 1:*.pcap) continue ;; esac
			sz=$(stat -c %s "$f")
			strace -f -e trace=mmap,lseek -o "$WORK/strace" "$GS" read -q --threads $t --pairs "$f" > /dev/null 2>&1
			mapped=$(grep -c "mmap(NULL, $sz, PROT_READ, MAP_PRIVATE" "$WORK/strace")
			seeks=$(grep -c 'lseek' "$WORK/strace")
			case "$(basename "$f")" in
			*snap-low*|*cut-*|*ng-two-if*|*ng-cut*) want_seek=1 ;;
			# nothing walked: one thread's libpcap reads on from where its opening
			# left it (no seek); the threads' reader opens it anew (its check for
			# classic pcap asks libpcap's FILE for its offset, an lseek)
			*ng-tsoffset*) want_seek=$((t > 1)) ;;
			*) want_seek=0 ;;
			esac
			ok=0
			if [ "$want_seek" = 1 ]; then [ "$seeks" -ge 1 ] && ok=1; else [ "$seeks" -eq 0 ] && ok=1; fi
			if [ "$mapped" -eq 1 ] && [ "$ok" = 1 ]; then
				pass=$((pass + 1))
			else
				fail=$((fail + 1)); echo "FAIL walk of $(basename "$f") --threads $t: mapped $mapped, seeks $seeks (want a seek: $want_seek)"
			fi
		done
	done
fi

# 5. the threads are there: N engine threads besides the reader, none by default (a
# sanitizer's runtime may start one of its own: counted in both)
if command -v strace > /dev/null; then
	clones() {
		strace -f -e trace=clone,clone3 -o "$WORK/strace" "$GS" read -q "$@" \
			tests/data/corpus/v02_giop10_mix.pcap > /dev/null 2>&1
		grep -c 'clone' "$WORK/strace"
	}
	n1=$(clones)
	n3=$(clones --threads 3)
	if [ "$n1" -le 1 ] && [ $((n3 - n1)) -ge 3 ] && [ $((n3 - n1)) -le 4 ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL threads started: $n1 by default, $n3 with --threads 3"; fi
fi

# 6. bad values; a bound reached with threads is said
for v in 0 65 -1 2x ""; do
	"$GS" read --threads "$v" tests/data/corpus/v02_giop10_mix.pcap > /dev/null 2> "$WORK/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q -- '--threads wants 1..64' "$WORK/err"; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL --threads '$v': exit $rc, $(head -c 200 "$WORK/err")"; fi
done
if [ -x "$GEN" ]; then
	"$GS" read -q --threads 2 --max-open-calls 64 "$WORK/gen-noreplies.pcap" > /dev/null 2> "$WORK/err"
	"$GS" read -q --max-open-calls 64 "$WORK/gen-noreplies.pcap" > /dev/null 2> "$WORK/err1"
	if grep -q 'bound was reached with --threads 2' "$WORK/err" && ! grep -q 'bound was reached' "$WORK/err1"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL a bound reached with --threads 2 is not said (or said with one thread)"
	fi
	# the order window: one thread writes some rows early (counted), the threads say so
	"$GS" read -q --pairs --summary --order-window 64 "$WORK/gen-default.pcap" > /dev/null 2> "$WORK/err1"
	"$GS" read -q --threads 2 --pairs --summary --order-window 64 "$WORK/gen-default.pcap" > /dev/null 2> "$WORK/err"
	if grep -q 'rows_out_of_order [1-9]' "$WORK/err1" && grep -q 'bound was reached with --threads 2' "$WORK/err"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL an order window reached with --threads 2 is not said"
	fi
	# small windows: an engine whose batches of calls all wait in the merge gets one back
	# (seen hanging before: 3 threads, a window of 1000)
	for w in 1 1000; do
		timeout -s KILL 120 "$GS" read -q --threads 3 --pairs --order-window "$w" "$WORK/gen-default.pcap" \
			> "$WORK/w.csv" 2> "$WORK/err"
		rc=$?
		rows=$(($(wc -l < "$WORK/w.csv") - 1))
		if [ "$rc" -eq 0 ] && [ "$rows" -eq 20000 ] && grep -q 'bound was reached with --threads 3' "$WORK/err"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL --threads 3 --order-window $w: exit $rc, $rows rows"
		fi
	done
	# a window one thread reaches a few times: the engines write early the call one engine
	# would (the earliest ended one, of all the engines'), so the rows are one thread's and,
	# but for the few calls written after later ones (out of t_request_first order, whose
	# place depends on when the engines saw the window reached), in one thread's order
	"$GS" read -q --pairs --format csv --order-window 9000 "$WORK/gen-default.pcap" > "$WORK/ow1.csv" 2> /dev/null
	for t in 2 3; do
		"$GS" read -q --threads "$t" --pairs --format csv --order-window 9000 "$WORK/gen-default.pcap" \
			> "$WORK/ow.csv" 2> /dev/null
		if r=$(python3 -c 'import csv, sys
def load(p):
    rows = list(csv.reader(open(p)))
    c = rows[0].index("t_request_first")
    late, m = set(), ""
    for x in map(tuple, rows[1:]):
        if x[c] < m: late.add(x)
        else: m = x[c]
    return [tuple(x) for x in rows[1:]], late
a, la = load(sys.argv[1]); b, lb = load(sys.argv[2])
keep = lambda v: [x for x in v if x not in la | lb]
print(len(la), len(lb))
sys.exit(0 if la and sorted(a) == sorted(b) and keep(a) == keep(b) else 1)' "$WORK/ow1.csv" "$WORK/ow.csv"); then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL --threads $t --order-window 9000: not one thread's rows in its order (late rows: $r)"
		fi
	done
fi
# 7. the progress line on a terminal (script(1) gives read a pty; the rows go to a file): the
# same look as one thread's while the engines walk the file (a percentage and a multiple of
# 65536 packets), the same closing line with every packet counted, also when libpcap takes a
# cut file over from the walk; none with -q or when stderr is not a terminal
if [ -x "$GEN" ] && command -v script > /dev/null; then
	python3 tests/golden/pcap_forms.py cut-data "$WORK/gen-default.pcap" "$WORK/prog-cut.pcap"
	for f in "$WORK/gen-default.pcap" "$WORK/prog-cut.pcap"; do
		for t in 1 2; do
			timeout -s KILL 120 script -qfec "$GS read --threads $t --pairs -o $WORK/prog$t.csv $f 2>&1" \
				"$WORK/tty$t.raw" > /dev/null 2>&1
			tr '\r' '\n' < "$WORK/tty$t.raw" | grep -a 'packets *$' | sed 's/ *$//' > "$WORK/prog$t"
		done
		b=$(basename "$f")
		n=$(python3 -c 'import sys
d = open(sys.argv[1], "rb").read(); o, n = 24, 0
le = d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
while o + 16 <= len(d):
    o += 16 + int.from_bytes(d[o + 8:o + 12], "little" if le else "big"); n += 1
print(n - (o > len(d)))' "$f")
		want_last="giopscope: $f: $n packets"
		if grep -qE "^giopscope: $f: +[0-9]+%, 65536 packets$" "$WORK/prog2" &&
		   [ "$(tail -n 1 "$WORK/prog2")" = "$want_last" ] && [ "$(tail -n 1 "$WORK/prog1")" = "$want_last" ] &&
		   cmp -s "$WORK/prog1.csv" "$WORK/prog2.csv"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL progress line of --threads 2 ($b, $n packets): $(tr '\n' '|' < "$WORK/prog2")" \
				"(one thread: $(tr '\n' '|' < "$WORK/prog1"))"
		fi
	done
	timeout -s KILL 120 script -qfec "$GS read -q --threads 2 --pairs -o $WORK/prog2.csv $WORK/gen-default.pcap 2>&1" \
		"$WORK/tty-q.raw" > /dev/null 2>&1
	"$GS" read --threads 2 --pairs -o "$WORK/prog2.csv" "$WORK/gen-default.pcap" 2> "$WORK/err"
	if grep -qa 'packets' "$WORK/tty-q.raw" "$WORK/err"; then
		fail=$((fail + 1)); echo "FAIL a progress line with -q or off a terminal"
	else
		pass=$((pass + 1))
	fi
fi

echo "read --threads: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
