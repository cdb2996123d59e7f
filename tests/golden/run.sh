#!/usr/bin/env bash
# Golden tests as data: each line of tests/golden/cases.txt is
#   capture | options | expected pairs CSV | exit code
# A capture written as -FILE is fed on stdin ('giopscope read -').
# The output is compared call for call with tests/oracle/compare_pairs.py.
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
	if [ "${cap#-}" != "$cap" ]; then
		# shellcheck disable=SC2086
		"$GS" read $opts - < "${cap#-}" > "$out" 2> "$tmp/err$n"
	else
		# shellcheck disable=SC2086
		"$GS" read $opts "$cap" > "$out" 2> "$tmp/err$n"
	fi
	rc=$?
	name="$(basename "${cap#-}") $opts"
	if [ "$rc" != "$code" ]; then
		echo "FAIL $name: exit $rc, expected $code: $(head -c 300 "$tmp/err$n")"
		fail=$((fail + 1))
		continue
	fi
	if python3 tests/oracle/compare_pairs.py "$exp" "$out" > "$tmp/cmp$n" 2>&1; then
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
