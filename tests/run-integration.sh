#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs every integration test script (tests/integration/*.sh, tests/bad/run.sh), then the
# scripts of tests/integration/after/ (they check what the others left: the captures kept
# with tests/lib/keep_capture.sh into GIOPSCOPE_KEEP_CAPTURES, a fresh directory made here
# and removed at the end, are replayed through `giopscope dpdk` by dpdk_replay_kept.sh).
# A script exits 0 (pass), 77 (skipped: not root, no namespaces...) or anything else (fail);
# a script that skips only some of its scenarios says so in a line starting with "SKIP".
#
# GIOPSCOPE_STRICT=1 (what `make check` sets: it has just installed every dependency and
# runs as root): a skip is a failure -- a test that did not run proves nothing, and on the
# machine make check prepared nothing should be missing.
set -u
cd "$(dirname "$0")/.."
STRICT=${GIOPSCOPE_STRICT:-0}
pass=0 fail=0 skip=0
out=$(mktemp /tmp/gs-integration.XXXXXX) || exit 2
GIOPSCOPE_KEEP_CAPTURES=$(mktemp -d /tmp/gs-kept.XXXXXX) || exit 2
export GIOPSCOPE_KEEP_CAPTURES
trap 'rm -f "$out"; rm -rf "$GIOPSCOPE_KEEP_CAPTURES"' EXIT
# tests/integration/*.sh does not match after/: those run last, once every capture is kept
for t in tests/bad/run.sh tests/integration/*.sh tests/integration/after/*.sh; do
	[ -x "$t" ] || continue
	echo "=== $t"
	start=$(date +%s)
	"$t" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	echo "=== $t: exit $rc in $(( $(date +%s) - start )) s"
	skipped_parts=$(grep -c '^SKIP\|: SKIP' "$out")
	if [ "$STRICT" = 1 ] && { [ "$rc" -eq 77 ] || [ "$skipped_parts" -gt 0 ]; }; then
		echo "=== $t: FAIL: skipped with GIOPSCOPE_STRICT=1 (make check installed every dependency; see the SKIP lines above)"
		rc=1
	fi
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)) ;;
	esac
done
echo "integration: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
