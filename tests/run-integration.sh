#!/usr/bin/env bash
# Runs every integration test script (tests/integration/*.sh, tests/bad/run.sh).
# A script exits 0 (pass), 77 (skipped: not root, no namespaces...) or anything else (fail).
set -u
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0
for t in tests/bad/run.sh tests/integration/*.sh; do
	[ -x "$t" ] || continue
	echo "=== $t"
	start=$(date +%s)
	"$t"
	rc=$?
	echo "=== $t: exit $rc in $(( $(date +%s) - start )) s"
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)) ;;
	esac
done
echo "integration: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
