#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/bad/run.sh: giopscope against hostile and broken input (tests/bad/cases.txt).
#
#   GIOPSCOPE=build/giopscope tests/bad/run.sh [CASE...]
#
# Generates the captures with make_bad.py into a temporary directory, runs every
# case (or the ones named) under `timeout`, and checks: the exit code; for exit 1
# and 2 a stderr of exactly one line; stderr against the case's regex; the number
# of pair rows; the optional row regexes; and, where make_bad.py wrote a clean
# reference of what precedes the bad point, that its rows are all written.
# Prints "PASS name (seconds, peak RSS)" or "FAIL name (...): why" per case and
# "N passed, N failed"; exits 1 when a case failed.
#
#   GIOPSCOPE      binary to test (default build/giopscope)
#   BAD_SOURCE     real capture the cut/rewritten cases start from
#                  (default tests/data/corpus/v01_giop12_echo2000.pcap)
#   BAD_TIMEOUT    seconds per case (default 20)
#   BAD_KEEP=1     keep the temporary directory (its path is printed)
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2

G=${GIOPSCOPE:-build/giopscope}
TMO=${BAD_TIMEOUT:-20}
cases_file=$here/cases.txt
header='client,server,request_id,giop,kind,operation,oneway,status,request_bytes,reply_bytes,t_request_first,t_request_last,t_reply_first,t_reply_last,total_us,server_us,retransmits,gap_fills,capture_loss,parent_client,parent_server,parent_request_id,parent_basis,downstream_us'

if [ ! -x "$G" ]; then
	echo "run.sh: $G is not an executable (build it with make, or set GIOPSCOPE)" >&2
	exit 2
fi
case $G in /*) ;; *) G=$root/$G ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/giopscope-bad.XXXXXX") || exit 2
if [ "${BAD_KEEP:-0}" = 1 ]; then
	echo "run.sh: keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi
D=$tmp/cap
W=$tmp/work
mkdir -p "$D" "$W"

gen=(python3 "$here/make_bad.py" "$D")
[ -n "${BAD_SOURCE:-}" ] && gen+=(--source "$BAD_SOURCE")
if ! "${gen[@]}" >"$W/gen.out" 2>&1; then
	echo "run.sh: make_bad.py failed:" >&2
	cat "$W/gen.out" >&2
	exit 2
fi

timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%e %M' -o "$W/time")

trim() {
	local s=$1
	s=${s#"${s%%[![:space:]]*}"}
	s=${s%"${s##*[![:space:]]}"}
	printf '%s' "$s"
}

# rows FILE: the data rows of a pairs CSV (header dropped)
rows() {
	awk -v h="$header" 'NR == 1 && $0 == h { next } { print }' "$1"
}

# subseq A B: every line of A appears in B, in the same order
subseq() {
	awk 'BEGIN { n = 0; i = 0 } NR == FNR { want[n++] = $0; next } i < n && $0 == want[i] { i++ } END { exit !(i == n) }' "$1" "$2"
}

pass=0
fail=0
failed=()
selected=" $* "

while IFS= read -r line || [ -n "$line" ]; do
	case $line in '' | '#'*) continue ;; esac
	# split on " | "
	fields=()
	rest=$line
	while :; do
		case $rest in
		*' | '*)
			fields+=("$(trim "${rest%%' | '*}")")
			rest=${rest#*' | '}
			;;
		*)
			fields+=("$(trim "$rest")")
			break
			;;
		esac
	done
	if [ ${#fields[@]} -lt 5 ]; then
		echo "run.sh: bad line in cases.txt: $line" >&2
		fail=$((fail + 1))
		continue
	fi
	name=${fields[0]}
	argstr=${fields[1]//%D/$D}
	want_rc=${fields[2]}
	want_err=${fields[3]}
	want_rows=${fields[4]}
	if [ $# -gt 0 ] && [[ $selected != *" $name "* ]]; then
		continue
	fi
	read -r -a args <<<"$argstr"

	out=$W/$name.out
	err=$W/$name.err
	rm -f "$W/time"
	"${timer[@]}" timeout "$TMO" "$G" "${args[@]}" >"$out" 2>"$err" </dev/null
	rc=$?
	secs=? rss=?
	if [ -s "$W/time" ]; then
		read -r secs rss < <(tail -n 1 "$W/time")
		rss="$rss KB"
		secs="$secs s"
	fi

	why=()
	if [ "$rc" -eq 124 ]; then
		why+=("timed out after ${TMO}s")
	elif [ "$rc" -ne "$want_rc" ]; then
		why+=("exit $rc, want $want_rc")
	fi
	# sanitizer reports are never expected
	if grep -qE 'runtime error:|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer' "$err"; then
		why+=("sanitizer: $(grep -m1 -E 'runtime error:|Sanitizer' "$err")")
	fi
	nerr=$(awk 'END { print NR }' "$err")
	if [ "$want_rc" -ne 0 ] && [ "$nerr" -ne 1 ]; then
		why+=("stderr has $nerr lines, want exactly 1")
	fi
	if [ "$want_err" = '^$' ]; then
		[ -s "$err" ] && why+=("stderr not empty: $(head -n 1 "$err")")
	elif ! grep -qE -- "$want_err" "$err"; then
		why+=("stderr does not match /$want_err/: $(head -n 1 "$err")")
	fi
	rows "$out" >"$W/$name.rows"
	nrows=$(awk 'END { print NR }' "$W/$name.rows")
	case $want_rows in
	'>='*)
		[ "$nrows" -ge "${want_rows#>=}" ] || why+=("$nrows pair rows, want at least ${want_rows#>=}")
		;;
	*)
		[ "$nrows" -eq "$want_rows" ] || why+=("$nrows pair rows, want $want_rows")
		;;
	esac
	for ((i = 5; i < ${#fields[@]}; i++)); do
		chk=${fields[$i]}
		case $chk in
		+*) grep -qE -- "${chk#+}" "$W/$name.rows" || why+=("no row matches /${chk#+}/") ;;
		-*) grep -qE -- "${chk#-}" "$W/$name.rows" && why+=("a row matches /${chk#-}/: $(grep -m1 -E -- "${chk#-}" "$W/$name.rows")") ;;
		*) why+=("cases.txt: check '$chk' wants a + or - prefix") ;;
		esac
	done
	# the clean capture of what precedes the bad point, if there is one
	for a in "${args[@]}"; do
		case $a in "$D"/*.pcap | "$D"/*.pcapng) ;; *) continue ;; esac
		ref=${a%.*}.ref.${a##*.}
		[ -f "$ref" ] || continue
		refargs=()
		for b in "${args[@]}"; do
			if [ "$b" = "$a" ]; then refargs+=("$ref"); else refargs+=("$b"); fi
		done
		timeout "$TMO" "$G" "${refargs[@]}" >"$W/$name.ref.out" 2>/dev/null </dev/null
		rows "$W/$name.ref.out" >"$W/$name.ref.rows"
		nref=$(awk 'END { print NR }' "$W/$name.ref.rows")
		if [ "$nref" -eq 0 ] && [ "$want_rows" != 0 ]; then
			why+=("the reference $(basename "$ref") gave no rows")
		elif ! subseq "$W/$name.ref.rows" "$W/$name.rows"; then
			why+=("rows of $(basename "$ref") (the calls before the bad point) missing or changed")
		fi
		break
	done

	if [ ${#why[@]} -eq 0 ]; then
		pass=$((pass + 1))
		echo "PASS $name ($secs, $rss)"
	else
		fail=$((fail + 1))
		failed+=("$name")
		msg=$(printf '%s; ' "${why[@]}")
		echo "FAIL $name ($secs, $rss): ${msg%; }"
		echo "     $G ${args[*]//$D/\$D}"
	fi
done <"$cases_file"

# Output files are never opened through a symbolic link (a link planted in a shared
# directory must not make a root-run probe overwrite another file): -o, --report and
# --trace each pointed at a link to a victim file: exit 2, one line saying why, the victim
# unchanged. (live's -w goes through the same gs_out_create; tests/unit/test_out_file.c.)
for opt in -o --report --trace; do
	name=symlink_${opt#--}
	name=${name/symlink_-o/symlink_o}
	if [ $# -gt 0 ] && [[ $selected != *" $name "* ]]; then
		continue
	fi
	echo "not yours" >"$tmp/victim.txt"
	ln -sf "$tmp/victim.txt" "$tmp/$name.link"
	timeout "$TMO" "$G" read tests/data/corpus/v13_oneway_exceptions.pcap --pairs "$opt" "$tmp/$name.link" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
	rc=$?
	why=()
	[ "$rc" = 2 ] || why+=("exit $rc, want 2")
	[ "$(awk 'END { print NR }' "$tmp/$name.err")" = 1 ] || why+=("stderr is not one line: $(head -3 "$tmp/$name.err" | tr '\n' '|')")
	grep -q "^giopscope read: $tmp/$name.link: is a symbolic link, not followed\$" "$tmp/$name.err" || why+=("reason: $(head -1 "$tmp/$name.err")")
	[ "$(cat "$tmp/victim.txt")" = "not yours" ] || why+=("the file behind the link was written")
	if [ ${#why[@]} -eq 0 ]; then
		pass=$((pass + 1))
		echo "PASS $name ($(head -1 "$tmp/$name.err"))"
	else
		fail=$((fail + 1))
		failed+=("$name")
		msg=$(printf '%s; ' "${why[@]}")
		echo "FAIL $name: ${msg%; }"
	fi
done

# What the user already has is never lost to a run that cannot start: with -o, --report and
# --trace naming existing files, a missing capture (the only one, or the second), a bad option
# value, an unwritable --report or a missing merge input is exit 2 with one line, and every
# file is byte-identical afterwards, with no temporary file left in the folder. A capture cut
# short (exit 1) still replaces them: the rows before the cut (cut_mid_record's reference)
# under the final names, the trace complete JSON, nothing else in the folder.
K=$tmp/keep
C=tests/data/corpus/v13_oneway_exceptions.pcap
keep_reset() {
	rm -rf "$K"
	mkdir -p "$K/orig"
	printf 'client,server\nmine,do not lose\n' >"$K/orig/keep.csv"
	printf '<html>my report</html>\n' >"$K/orig/r.html"
	printf '{"mine":1}\n' >"$K/orig/t.json"
	mkdir "$K/out"
	cp -p "$K/orig/"* "$K/out/"
}
# keep_case NAME WANT_RC ARGS...: ARGS may use @K (the output folder)
keep_case() {
	local name=$1 want=$2 a args=() rc why=() f left
	shift 2
	if [ "$nargs" -gt 0 ] && [[ $selected != *" $name "* ]]; then
		return
	fi
	keep_reset
	for a in "$@"; do args+=("${a//@K/$K/out}"); done
	timeout "$TMO" "$G" "${args[@]}" >"$K/stdout" 2>"$K/stderr" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || why+=("exit $rc, want $want")
	[ "$(awk 'END { print NR }' "$K/stderr")" = 1 ] || why+=("stderr is not one line: $(head -3 "$K/stderr" | tr '\n' '|')")
	left=$(cd "$K/out" && ls -A | grep -vxE 'keep\.csv|r\.html|t\.json' | tr '\n' ' ')
	[ -z "$left" ] && [ "$(ls -A "$K/out" | wc -l)" = 3 ] || why+=("folder holds: $(ls -A "$K/out" | tr '\n' ' ')")
	if [ "$want" = 2 ]; then
		for f in keep.csv r.html t.json; do
			cmp -s "$K/orig/$f" "$K/out/$f" || why+=("$f changed")
		done
	else
		rows "$K/out/keep.csv" >"$K/rows"
		timeout "$TMO" "$G" read "$D/cut_mid_record.ref.pcap" --pairs 2>/dev/null | rows /dev/stdin >"$K/ref.rows"
		[ -s "$K/ref.rows" ] || why+=("the reference gave no rows")
		cmp -s "$K/ref.rows" "$K/rows" || why+=("keep.csv: $(wc -l <"$K/rows") rows, not the $(wc -l <"$K/ref.rows") before the cut")
		head -n 1 "$K/out/keep.csv" | grep -qx "$header" || why+=("keep.csv: no header: $(head -c 80 "$K/out/keep.csv")")
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$K/out/t.json" 2>/dev/null ||
			why+=("t.json is not complete JSON")
		grep -q '</html>' "$K/out/r.html" && ! cmp -s "$K/orig/r.html" "$K/out/r.html" || why+=("r.html not rewritten")
	fi
	if [ ${#why[@]} -eq 0 ]; then
		pass=$((pass + 1))
		echo "PASS $name ($(head -1 "$K/stderr"))"
	else
		fail=$((fail + 1))
		failed+=("$name")
		msg=$(printf '%s; ' "${why[@]}")
		echo "FAIL $name: ${msg%; }"
		echo "     $G ${args[*]}"
	fi
}
nargs=$#
outs=(--pairs -o @K/keep.csv --report @K/r.html --trace @K/t.json)
keep_case keep_missing_input 2 read "$tmp/mix.pcapp" "${outs[@]}"
keep_case keep_second_input_missing 2 read "$C" "$tmp/mix.pcapp" "${outs[@]}"
keep_case keep_input_is_a_folder 2 read "$C" "$tmp" "${outs[@]}"
keep_case keep_bad_option_value 2 read "$C" "${outs[@]}" --tail 0
keep_case keep_unwritable_report 2 read "$C" --pairs -o @K/keep.csv --trace @K/t.json --report "$tmp/no-such-dir/r.html"
keep_case keep_merge_missing_input 2 merge "$C" "$tmp/mix.pcapp" "${outs[@]}"
keep_case keep_truncated_capture 1 read "$D/cut_mid_record.pcap" "${outs[@]}"

[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
