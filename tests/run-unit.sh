#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Runs cmocka test binaries: tests/run-unit.sh BIN...
#
# Prints one line per binary (and, for a failing one, the failed cases and what
# cmocka or the sanitizers said about them), then, last, one line
# "N passed, N failed" counting test cases over all binaries.  A binary that
# dies before reporting counts its cases that did not pass as failed; one that
# passes every case but still exits non-zero (a sanitizer at exit) counts one
# failure.  Exits non-zero when anything failed.
if [ "$#" -eq 0 ]; then
	echo "usage: $0 BIN..." >&2
	exit 2
fi
passed=0
failed=0
out=$(mktemp "${TMPDIR:-/tmp}/run-unit.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT TERM
for bin in "$@"; do
	name=$(basename "$bin")
	if [ ! -x "$bin" ]; then
		echo "$name: not built (1 failure)"
		failed=$((failed + 1))
		continue
	fi
	"$bin" >"$out" 2>&1
	rc=$?
	total=$(sed -n 's/^\[==========\] Running \([0-9][0-9]*\) test(s)\..*/\1/p' "$out" | head -n 1)
	ok=$(grep -c '^\[       OK \]' "$out")
	[ -n "$total" ] || total=0
	[ "$total" -ge "$ok" ] || total=$ok
	nfail=$((total - ok))
	if [ "$rc" -ne 0 ] && [ "$nfail" -eq 0 ]; then
		nfail=1
	fi
	passed=$((passed + ok))
	failed=$((failed + nfail))
	if [ "$nfail" -eq 0 ]; then
		echo "$name: $ok passed"
		continue
	fi
	echo "$name: $ok passed, $nfail failed (exit status $rc)"
	# the cases that failed: listed after cmocka's summary, or the one running when it died
	list=$(sed -n '/listed below:/,$p' "$out" | sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_]*\)$/\1/p' | tr '\n' ' ')
	if [ -z "$list" ] && [ "$ok" -lt "$total" ]; then
		list=$(sed -n 's/^\[ RUN      \] //p' "$out" | tail -n 1)
		[ -n "$list" ] && list="$list (did not finish)"
	elif [ -z "$list" ]; then
		list="(every case passed; the binary failed on exit)"
	fi
	[ -n "$list" ] && echo "    failed: $list"
	grep -E '^\[  ERROR   \]|^\[   LINE   \]|^ERROR: |runtime error|^SUMMARY: |^ +#[0-9]+ ' "$out" |
		head -n 40 | sed 's/^/    /'
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
