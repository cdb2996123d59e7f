#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/after/dpdk_replay_kept.sh -- every capture the integration tests kept
# (tests/lib/keep_capture.sh, into GIOPSCOPE_KEEP_CAPTURES) replayed through `giopscope dpdk
# --vdev net_pcap0,rx_pcap=FILE` must give the same calls as `giopscope read FILE`: the checks
# of tests/integration/dpdk_replay.sh for the corpus (replay_capture in tests/lib/dpdk_replay.sh:
# same calls; time stamps exactly those of the file cut to microseconds, which is what net_pcap
# passes; the time source named; the end of the file reached).
#
# Run by tests/run-integration.sh after every other script (it sets GIOPSCOPE_KEEP_CAPTURES to
# a fresh directory and removes it afterwards). Not in tests/integration/*.sh, so the loop does
# not run it before the captures exist.
#
# usage: GIOPSCOPE_KEEP_CAPTURES=DIR tests/integration/after/dpdk_replay_kept.sh
# environment: GIOPSCOPE (default build/giopscope). Exit 0, 1 on a failure, 77 when skipped (not
# root, giopscope without DPDK, no directory, or no capture kept).
set -u
export LC_ALL=C
cd "$(dirname "$0")/../../.." || exit 2
. tests/lib/dpdk_replay.sh
G=${GIOPSCOPE:-build/giopscope}
dir=${GIOPSCOPE_KEEP_CAPTURES:-}
{ [ -n "$dir" ] && [ -d "$dir" ]; } || dr_skip "GIOPSCOPE_KEEP_CAPTURES is not a directory (nothing kept)"
dr_require
shopt -s nullglob
caps=("$dir"/*.pcap "$dir"/*.pcapng)
[ "${#caps[@]}" -gt 0 ] || dr_skip "no capture kept in $dir (did the integration tests run with keep_capture?)"

tmp=$(mktemp -d /tmp/gs-dpdk-kept.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
dr_init "$tmp"
start=$(date +%s)
empty=0
for cap in "${caps[@]}"; do
	name=$(basename "$cap")
	replay_capture "$name" "$cap"
	# a capture with no call would compare nothing: say so (it still must replay)
	[ "$(grep -c . "$tmp/read.csv")" -gt 1 ] || { echo "NOTE: $name holds no call"; empty=$((empty + 1)); }
done
echo "${#caps[@]} kept captures ($empty without calls): $pass passed, $fail failed ($(($(date +%s) - start)) s)"
[ "$fail" -eq 0 ]
