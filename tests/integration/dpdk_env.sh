#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/dpdk_env.sh -- `giopscope dpdk` in a bad environment: no port, the EAL
# refusing to start, a port that will not start, bad options. Every case must end (under a
# timeout: no hang) with exit code 2, exactly one line on stderr saying why, nothing on stdout,
# and no -o file left behind. Then a truncated capture replayed: exit 1, the calls before the
# cut still written.
#
# The cases that need a network interface run inside a throwaway network namespace (a veth
# pair), so that nothing touches the host's interfaces; they are skipped without `ip netns`.
#
# usage: tests/integration/dpdk_env.sh     environment: GIOPSCOPE (default build/giopscope)
# Prints PASS/FAIL lines and "N passed, N failed"; exit 0, 1 on a failure, 77 when skipped.
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2
G=${GIOPSCOPE:-build/giopscope}
TMO=${DPDK_TIMEOUT:-30}

. tests/lib/common.sh
[ -x "$G" ] || skip "$G not built"
"$G" dpdk --help >/dev/null 2>&1 || skip "giopscope built without DPDK"
[ "$(id -u)" = 0 ] || skip "not root (the DPDK EAL wants /var/run/dpdk and locked memory)"

tmp=$(mktemp -d /tmp/gs-dpdk-env.XXXXXX) || exit 2
NS=""
cleanup() {
	[ -n "$NS" ] && ip netns del "$NS" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
pass=0 fail=0
start=$(date +%s)
CAP=tests/data/omniorb_demo.pcap

# env NAME REGEX [netns] ARGS...: exit 2 within the timeout, one stderr line matching REGEX,
# empty stdout, no output file
env_case() {
	local name=$1 re=$2 rc lines
	shift 2
	local -a pre=()
	if [ "${1:-}" = netns ]; then
		shift
		if [ -z "$NS" ]; then
			echo "SKIP $name: no network namespace"
			return 0
		fi
		pre=(ip netns exec "$NS")
	fi
	rm -f "$tmp/out.csv"
	timeout -k 5 "$TMO" "${pre[@]}" "$G" dpdk -o "$tmp/out.csv" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	lines=$(wc -l <"$tmp/stderr")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "FAIL $name: hung (killed after ${TMO}s)"
	elif [ "$rc" != 2 ]; then
		echo "FAIL $name: exit $rc, want 2: $(head -c 300 "$tmp/stderr")"
	elif [ "$lines" != 1 ]; then
		echo "FAIL $name: $lines lines on stderr, want 1"
		sed 's/^/    /' "$tmp/stderr" | head -8
	elif ! grep -Eq -- "$re" "$tmp/stderr"; then
		echo "FAIL $name: stderr does not match /$re/: $(cat "$tmp/stderr")"
	elif [ -s "$tmp/stdout" ]; then
		echo "FAIL $name: wrote to stdout"
	elif [ -e "$tmp/out.csv" ]; then
		echo "FAIL $name: left $tmp/out.csv behind"
	else
		echo "PASS $name: $(cat "$tmp/stderr")"
		pass=$((pass + 1))
		return 0
	fi
	fail=$((fail + 1))
}

if command -v ip >/dev/null && ip netns add "gs-dpdkenv-$$" 2>/dev/null; then
	NS=gs-dpdkenv-$$
	if ! { ip -n "$NS" link add gsea type veth peer name gseb && ip -n "$NS" link set gsea up &&
		ip -n "$NS" link set gseb up && ip -n "$NS" link set lo up; }; then
		echo "FAIL setup: veth in $NS"
		exit 1
	fi
fi

# no port at all
env_case no-port "no DPDK port: give one" --no-pci
env_case vdev-missing-file "no DPDK port \(.*Couldn't open /nonexistent/x.pcap" --vdev net_pcap0,rx_pcap=/nonexistent/x.pcap
env_case vdev-not-a-capture "no DPDK port \(.*unknown file format" --vdev "net_pcap0,rx_pcap=$0"
env_case vdev-missing-iface "no DPDK port \(.*No such device" netns --vdev net_af_packet0,iface=nosuch0
env_case unknown-driver "DPDK EAL initialisation failed: .*net_nosuchdriver0" --vdev net_nosuchdriver0
env_case port-name "no DPDK port 'nosuch'" --vdev "net_pcap0,rx_pcap=$CAP" -i nosuch
# the EAL refuses to start
env_case eal-bad-option "DPDK EAL initialisation failed: .*command line" --eal --bogus-option --vdev net_null0
env_case eal-bad-lcore "DPDK EAL initialisation failed: .*lcore" -l 127 --vdev net_null0
env_case eal-conflict "DPDK EAL initialisation failed: .*not compatible" --in-memory --no-huge --vdev net_null0
env_case eal-before-dashes "DPDK EAL initialisation failed" --vdev net_null0 --bogus-eal-option -- --pairs
# ports that will not start
env_case rxq-too-many "net_pcap0 has 1 RX queue, not 4" --vdev "net_pcap0,rx_pcap=$CAP" --rxq 4
env_case mbuf-too-small "net_af_packet0 will not start: RX queue 0: .*will not fit in mbuf" netns \
	--vdev net_af_packet0,iface=gseb --mbuf-size 1024
if ls /usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so* >/dev/null 2>&1; then
	env_case af_xdp-no-such-queue "net_af_xdp0 will not start: RX queue 0: .*xsk" netns \
		--vdev net_af_xdp0,iface=gseb,start_queue=7
else
	echo "SKIP af_xdp-no-such-queue: no net_af_xdp driver"
fi
env_case file-and-live "replays a file and net_null0 does not" --vdev "net_pcap0,rx_pcap=$CAP" --vdev net_null0
env_case no-memory "cannot allocate .* mbufs" --vdev net_null0 --mbufs 60000000 --mbuf-size 65535 -m 64
# usage errors (before the EAL)
env_case bad-burst "--burst wants" --burst 0 --vdev net_null0
env_case unknown-option "unknown option '--nosuch'" --nosuch
env_case missing-value "needs a value" --vdev

# bad input: a capture cut in the middle of a packet -> exit 1, the calls before it written
head -c 40000 "$CAP" >"$tmp/cut.pcap"
"$G" read "$tmp/cut.pcap" --pairs >"$tmp/read.csv" 2>/dev/null
timeout -k 5 "$TMO" "$G" dpdk -q --vdev "net_pcap0,rx_pcap=$tmp/cut.pcap" --pairs >"$tmp/cut.csv" 2>"$tmp/cut.err"
rc=$?
if [ "$rc" = 1 ] && grep -q "could not be read" "$tmp/cut.err" && [ "$(wc -l <"$tmp/cut.csv")" -gt 1 ] &&
   python3 tests/oracle/compare_pairs.py "$tmp/read.csv" "$tmp/cut.csv" >"$tmp/cmp" 2>&1; then
	echo "PASS truncated-capture: exit 1, $(tail -1 "$tmp/cmp")"
	pass=$((pass + 1))
else
	echo "FAIL truncated-capture: exit $rc: $(tail -2 "$tmp/cut.err") $(tail -1 "$tmp/cmp" 2>/dev/null)"
	fail=$((fail + 1))
fi

echo "$pass passed, $fail failed ($(($(date +%s) - start)) s)"
[ "$fail" -eq 0 ]
