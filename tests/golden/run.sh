#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Golden tests as data: each line of tests/golden/cases.txt is
#   capture | options | expected | exit code
# A capture written as -FILE is fed on stdin ('giopscope read -'); several captures
# separated by spaces are read in that order ('giopscope read A B C').
# With --pairs, the output is compared call for call with tests/oracle/compare_pairs.py.
# Otherwise it is a summary (--format csv, --by, --interval): it must equal the expected
# file, and the expected file must agree with the calls of the capture's own pairs case
# (tests/oracle/summary_oracle.py golden: counts exact, percentiles within the histogram's
# error of the exact ones).
set -u
cd "$(dirname "$0")/../.."
GS=${GIOPSCOPE:-build/giopscope}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 n=0
while IFS='|' read -r cap opts exp code; do
	case "$cap" in ''|'#'*) continue ;; esac
	trim() { local v=$1; v=${v#"${v%%[![:space:]]*}"}; printf '%s' "${v%"${v##*[![:space:]]}"}"; }
	cap=$(trim "$cap"); opts=$(trim "$opts"); exp=$(trim "$exp"); code=$(trim "$code")
	n=$((n + 1))
	out="$tmp/out$n.csv"
	read -r -a caps <<< "$cap"
	if [ "${cap#-}" != "$cap" ]; then
		# shellcheck disable=SC2086
		"$GS" read $opts - < "${cap#-}" > "$out" 2> "$tmp/err$n"
	else
		# shellcheck disable=SC2086
		"$GS" read $opts "${caps[@]}" > "$out" 2> "$tmp/err$n"
	fi
	rc=$?
	name=""
	for c in "${caps[@]}"; do name="$name$(basename "${c#-}") "; done
	name="$name$opts"
	if [ "$rc" != "$code" ]; then
		echo "FAIL $name: exit $rc, expected $code: $(head -c 300 "$tmp/err$n")"
		fail=$((fail + 1))
		continue
	fi
	case " $opts " in
	*" --pairs "*) cmp=(python3 tests/oracle/compare_pairs.py "$exp" "$out") ;;
	*) cmp=(python3 tests/oracle/summary_oracle.py golden "$cap" "$opts" "$exp" "$out") ;;
	esac
	if "${cmp[@]}" > "$tmp/cmp$n" 2>&1; then
		echo "PASS $name ($(tail -n 1 "$tmp/cmp$n"))"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		head -n 20 "$tmp/cmp$n" | sed 's/^/    /'
		fail=$((fail + 1))
	fi
done < tests/golden/cases.txt
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
