#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Comma lists on the command line are parsed one way (probe/opts.c, gs_parse_list): --ports of
# read/merge/live/attach's --port and --pid all refuse an empty item (a comma at the start, at
# the end, two in a row) and a bad item, with one line on stderr and exit 2. `attach --pid`
# refuses a kernel thread (found here in /proc: PF_KTHREAD in /proc/PID/stat) the same way,
# without needing a privilege; and as root, attached to a process without a TCP socket, it says
# so in one line and follows it anyway (and says nothing of the kind for a process that has one).
# Exit 0 pass, 1 fail (the root-only part prints a SKIP line when not root).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
CAP=tests/data/omniorb_demo.pcap
WORK=$(mktemp -d /tmp/gs-cli.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1: $2"; sed 's/^/    /' "$WORK/err" | head -5; }

# refused NAME REGEX ARGS...: exit 2, exactly one stderr line, matching REGEX, nothing on stdout
refused() {
	local name=$1 re=$2 rc lines
	shift 2
	timeout 20 "$GS" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	lines=$(wc -l <"$WORK/err")
	if [ "$rc" -ne 2 ]; then
		ko "$name" "exit $rc (want 2): giopscope $*"
	elif [ "$lines" -ne 1 ]; then
		ko "$name" "$lines stderr lines (want 1): giopscope $*"
	elif ! grep -Eq "$re" "$WORK/err"; then
		ko "$name" "stderr does not match /$re/: giopscope $*"
	elif [ -s "$WORK/out" ]; then
		ko "$name" "wrote to stdout: giopscope $*"
	else
		ok "$name"
	fi
}

# the same lists, every option that takes one
for list in "40123," ",40123" "2809,,683" ","; do
	refused "read --ports '$list'" "^giopscope read: bad --ports: an empty item in '$list'" \
		read --ports "$list" "$CAP"
	refused "merge --ports '$list'" "^giopscope merge: bad --ports: an empty item" \
		merge --ports "$list" "$CAP" "$CAP"
	refused "live --ports '$list'" "^giopscope live: bad --ports: an empty item" \
		live -i lo --duration 1 --ports "$list"
	refused "attach --port '$list'" "^giopscope attach: bad --port: an empty item" \
		attach --port "$list"
done
for list in "12," ",12" "12,,13" ","; do
	refused "attach --pid '$list'" "^giopscope attach: bad --pid: an empty item in '$list'" attach --pid "$list"
done
refused "read --ports 70000" "^giopscope read: bad --ports: '70000': not a port" read --ports 70000 "$CAP"
refused "read --ports 9-3" "range ends below its start" read --ports 9-3 "$CAP"
refused "attach --pid 0" "^giopscope attach: bad --pid: '0': not a process id" attach --pid 0
refused "attach --pid 12x" "^giopscope attach: bad --pid: '12x': not a process id" attach --pid 12x
refused "attach --pid 2147483648" "not a process id" attach --pid 2147483648

# a good list is still taken: the demo capture's calls are all on port 2809
want=$("$GS" read --pairs --format csv "$CAP" 2>/dev/null | wc -l)
got=$("$GS" read --pairs --format csv --ports 683,2809 "$CAP" 2>/dev/null | wc -l)
if [ "$want" -gt 1 ] && [ "$got" -eq "$want" ]; then ok "read --ports 683,2809"; else
	: >"$WORK/err"; ko "read --ports 683,2809" "$got lines, want $want"; fi

# kernel threads: PF_KTHREAD (0x00200000) in field 9 of /proc/PID/stat (after the ')' of the name)
kthreads=$(for f in /proc/[0-9]*/stat; do
	s=$(cat "$f" 2>/dev/null) || continue
	set -- ${s##*) }
	[ $# -ge 7 ] && [ $(( $7 & 0x00200000 )) -ne 0 ] && echo "${f//[^0-9]/}"
done | head -n 3)
if [ -z "$kthreads" ]; then
	echo "SKIP kernel threads: none visible in /proc (a PID namespace?)"
else
	for k in $kthreads; do
		refused "attach --pid $k (kernel thread)" "^giopscope attach: pid $k is a kernel thread" attach --pid "$k"
	done
	k=$(echo "$kthreads" | head -n 1)
	refused "attach --pid \$\$,$k" "^giopscope attach: pid $k is a kernel thread" attach --pid "$$,$k"
	# the list is parsed first: a trailing comma is the complaint, not the thread
	refused "attach --pid $k," "bad --pid: an empty item in '$k,'" attach --pid "$k,"
fi
refused "attach --pid (gone)" "^giopscope attach: no process " attach --pid 2147483647

# as root: no TCP socket -> one line, then followed; a listening socket -> no such line
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP attach to a process without sockets: not root"
else
	sleep 60 &
	bare=$!
	pids+=("$bare")
	python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print("up", flush=True); time.sleep(60)' >"$WORK/py.out" &
	lis=$!
	pids+=("$lis")
	for _ in $(seq 50); do grep -q up "$WORK/py.out" 2>/dev/null && break; sleep 0.1; done
	timeout 120 "$GS" attach --pid "$bare" --duration 1 -q >/dev/null 2>"$WORK/err"
	rc=$?
	n=$(grep -c "pid $bare has no TCP socket yet" "$WORK/err")
	if grep -q "no eBPF support" "$WORK/err"; then
		echo "SKIP attach to a process without sockets: this build has no eBPF support"
	elif [ "$rc" -eq 0 ] && [ "$n" -eq 1 ]; then
		ok "attach --pid (no TCP socket): warned once, exit 0"
	else
		ko "attach --pid (no TCP socket)" "exit $rc, $n warning lines (want 0 and 1)"
	fi
	if ! grep -q "no eBPF support" "$WORK/err"; then
		timeout 120 "$GS" attach --pid "$lis" --duration 1 -q >/dev/null 2>"$WORK/err"
		rc=$?
		if [ "$rc" -eq 0 ] && ! grep -q "no TCP socket" "$WORK/err" && grep -q "following pid $lis" "$WORK/err"; then
			ok "attach --pid (a listening socket): no warning"
		else
			ko "attach --pid (a listening socket)" "exit $rc, or a warning about sockets it has"
		fi
	fi
fi

echo "cli_lists: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
