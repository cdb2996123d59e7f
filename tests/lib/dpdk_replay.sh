# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/lib/dpdk_replay.sh -- replay a capture through `giopscope dpdk --vdev
# net_pcap0,rx_pcap=FILE` and compare its calls with `giopscope read FILE`. Shared by
# tests/integration/dpdk_replay.sh (the corpus and its variants) and
# tests/integration/after/dpdk_replay_kept.sh (every capture the integration tests kept).
# Source it from a bash script, then:
#
#     dr_init TMPDIR             # G (giopscope), COMPARE, TMO; pass=0 fail=0
#     dr_require                 # exit 77 (skip) unless root and giopscope has DPDK
#     replay_capture NAME FILE   # the full check of one capture (below)
#     replay NAME FILE [dpdk options]   # read vs dpdk only
#     ok NAME [DETAIL] / bad NAME WHY [DETAILS...]   # PASS/FAIL lines, counted in pass/fail
#
# replay_capture checks, for one capture:
#   same calls     compare_pairs.py READ.csv DPDK.csv: request ids, operations, statuses, sizes,
#                  retransmits equal; time stamps within 1 us (the comparer's default tolerance)
#   same times     net_pcap passes the file's time stamps, but cut to microseconds (it opens the
#                  file with pcap_open_offline): compared EXACTLY (--tolerance-ns 0) with `read`
#                  of the file cut to microseconds by `editcap -F pcap` (skipped without editcap)
#   says so        the summary names the time source "capture file (net_pcap, us)"
#   ends by itself the replay stops at the end of the file (exit 0, under a timeout)

# dr_init TMPDIR: the variables the functions use
dr_init() {
	tmp=$1
	G=${GIOPSCOPE:-build/giopscope}
	COMPARE=${COMPARE:-tests/oracle/compare_pairs.py}
	TMO=${DPDK_TIMEOUT:-60}
	pass=0 fail=0
	have_editcap=0
	command -v editcap >/dev/null && have_editcap=1
	[ "$have_editcap" = 1 ] || echo "NOTE: editcap not installed: exact time stamp checks skipped"
}

dr_skip() { echo "SKIP: $*"; exit 77; }

dr_require() {
	[ -x "$G" ] || dr_skip "$G not built"
	"$G" dpdk --help >/dev/null 2>&1 || dr_skip "giopscope built without DPDK ($("$G" dpdk 2>&1 | head -1))"
	[ "$(id -u)" = 0 ] || dr_skip "not root (the DPDK EAL wants /var/run/dpdk and locked memory)"
	command -v python3 >/dev/null || dr_skip "python3 not installed"
}

ok() { echo "PASS $1${2:+: $2}"; pass=$((pass + 1)); }
bad() {
	echo "FAIL $1: $2"
	shift 2
	local l
	for l in "$@"; do printf '%s\n' "$l" | head -12 | sed 's/^/    /'; done
	fail=$((fail + 1))
}

# dpdk NAME OUT.csv ARGS...: giopscope dpdk ARGS --pairs under a timeout; stderr to NAME.err
dpdk() {
	local name=$1 out=$2
	shift 2
	timeout -k 5 "$TMO" "$G" dpdk "$@" --pairs >"$out" 2>"$tmp/$name.err"
}

# same NAME EXPECTED OURS [compare options]: compare_pairs, PASS/FAIL with its last line
same() {
	local name=$1 exp=$2 ours=$3
	shift 3
	if python3 "$COMPARE" "$exp" "$ours" "$@" >"$tmp/cmp" 2>&1; then
		ok "$name" "$(tail -n 1 "$tmp/cmp")"
	else
		bad "$name" "$(tail -n 1 "$tmp/cmp")" "$(head -n 10 "$tmp/cmp")"
	fi
}

# replay NAME FILE [dpdk options]: read vs dpdk on FILE
replay() {
	local name=$1 cap=$2 rc
	shift 2
	"$G" read "$cap" --pairs >"$tmp/read.csv" 2>/dev/null
	dpdk "$name" "$tmp/dpdk.csv" --vdev "net_pcap0,rx_pcap=$cap" "$@"
	rc=$?
	if [ "$rc" != 0 ]; then
		bad "$name" "exit $rc" "$(cat "$tmp/$name.err")"
		return 1
	fi
	same "$name" "$tmp/read.csv" "$tmp/dpdk.csv"
}

# replay_capture NAME FILE: replay, the time source named, the end of the file reached, and
# (with editcap) the time stamps exactly those of the file cut to microseconds
replay_capture() {
	local base=$1 cap=$2
	replay "$base" "$cap" --summary || return 1
	# the summary (on stderr with --pairs --summary) names the time source
	if grep -q "\[time stamps: capture file (net_pcap, us)\]" "$tmp/$base.err" &&
	   grep -q "stopped: end of the capture file" "$tmp/$base.err"; then
		ok "$base-says-time-source" "$(grep -o '\[time stamps: [^]]*\]' "$tmp/$base.err")"
	else
		bad "$base-says-time-source" "no time source or end in the summary" "$(cat "$tmp/$base.err")"
	fi
	if [ "$have_editcap" = 1 ]; then
		rm -f "$tmp/usec.pcap"
		editcap -F pcap "$cap" "$tmp/usec.pcap" >/dev/null 2>&1
		"$G" read "$tmp/usec.pcap" --pairs >"$tmp/read_us.csv" 2>/dev/null
		same "$base-exact-times" "$tmp/read_us.csv" "$tmp/dpdk.csv" --tolerance-ns 0
	fi
}
