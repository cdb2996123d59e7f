# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/lib/keep_capture.sh -- keep a test's capture for the replays run after the
# integration tests (tests/integration/after/dpdk_replay_kept.sh: every kept capture through
# `giopscope dpdk --vdev net_pcap0,rx_pcap=FILE` must give the calls of `giopscope read FILE`).
#
#     . tests/lib/keep_capture.sh
#     keep_capture "$tmp/cap.pcap" read_vs_tshark-giop12
#
# keep_capture FILE NAME: when GIOPSCOPE_KEEP_CAPTURES names a directory (tests/run-integration.sh
# sets it to a fresh one), copy FILE there as NAME.pcap or NAME.pcapng (by the file's magic);
# otherwise do nothing. Bounded: a file over GIOPSCOPE_KEEP_MAX_MB (default 50) MB is not kept
# (and a line says so). Never fails the calling test: returns 0 whatever happens, and says why
# on stderr when it could not keep a file.
keep_capture() {
	local file=$1 name=$2 dir=${GIOPSCOPE_KEEP_CAPTURES:-} max_mb=${GIOPSCOPE_KEEP_MAX_MB:-50}
	local size magic ext=pcap
	[ -n "$dir" ] || return 0
	if [ ! -d "$dir" ]; then
		echo "keep_capture: $dir is not a directory: $name not kept" >&2
		return 0
	fi
	if [ ! -s "$file" ]; then
		echo "keep_capture: $file missing or empty: $name not kept" >&2
		return 0
	fi
	size=$(stat -c %s "$file" 2>/dev/null || echo 0)
	if [ "$size" -gt $((max_mb * 1024 * 1024)) ]; then
		echo "keep_capture: $name not kept: $((size / 1024 / 1024)) MB is over ${max_mb} MB (GIOPSCOPE_KEEP_MAX_MB)" >&2
		return 0
	fi
	magic=$(od -An -tx1 -N4 "$file" 2>/dev/null | tr -d ' \n')
	[ "$magic" = 0a0d0d0a ] && ext=pcapng
	name=$(printf '%s' "$name" | tr -c 'A-Za-z0-9._+-' '_')
	if ! cp "$file" "$dir/$name.$ext" 2>/dev/null; then
		echo "keep_capture: could not copy $file to $dir/$name.$ext" >&2
		rm -f "$dir/$name.$ext"
	fi
	return 0
}
