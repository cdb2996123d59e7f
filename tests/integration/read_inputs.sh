#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# read's inputs as users hand them over (issue 31): a real capture (the omniORB captures of
# tests/data/corpus, merged into one in time order) cut by editcap -c and by tcpdump -C, the
# parts given in shuffled order, each compressed with gzip or zstd, the whole through stdin
# compressed: the same pair rows as the unsplit file, byte for byte, with one and two threads.
# Then each message, its exit code, stdout empty where the run failed, and the words that
# point to the fix: a repeated input read once, inputs that overlap sent to merge, a file
# that is no capture (plain, compressed, xz), a compressed stream cut short, --summary
# without --pairs, no file given, '-' among several, help read = read --help, --ports that
# leave out every call (the ports GIOP was on), rows out of start order in a capture that is
# not in time order (the capture named, not the order window), limits above the host's memory
# (a ceiling; where even address space lacks, the option and a value that fits), the count of segments with data (tshark's,
# on GIOP and on HTTP captured here on lo).
# Exit 0 pass, 1 fail, 77 skip.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/common.sh
BUILD=${BUILD:-build}
G=${GIOPSCOPE:-$BUILD/giopscope}
C=tests/data/corpus
[ -x "$G" ] || skip "$G not built"
for tool in editcap mergecap tcpdump tshark curl python3 gzip zstd xz; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not installed (scripts/install-deps.sh check)"
done
# an ASan build ($GIOPSCOPE=build/asan/giopscope) aborts where an allocation fails, unless told
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
WORK=$(mktemp -d /tmp/gs-inputs.XXXXXX) || exit 2
trap work_cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# one capture of 6533 packets over four connections' worth of omniORB traffic, nanoseconds
mergecap -F nsecpcap -w "$WORK/whole.pcap" $C/v01_*.pcap $C/v02_*.pcap $C/v05_*.pcap $C/v13_*.pcap ||
	{ echo "FAIL mergecap"; exit 1; }
"$G" read --pairs "$WORK/whole.pcap" >"$WORK/ref.csv" 2>"$WORK/ref.err" || { echo "FAIL the whole file: $(cat "$WORK/ref.err")"; exit 1; }
rows=$(($(wc -l <"$WORK/ref.csv") - 1))
[ "$rows" -gt 3000 ] || { echo "FAIL the whole file gave $rows rows"; exit 1; }

# same LABEL ARGS...: read ARGS, the rows must be the whole file's, nothing on stderr
same() {
	local label=$1 t
	shift
	for t in 1 2; do
		if "$G" read --threads "$t" --pairs "$@" >"$WORK/got.csv" 2>"$WORK/got.err" &&
		   cmp -s "$WORK/got.csv" "$WORK/ref.csv" && [ ! -s "$WORK/got.err" ]; then
			ok "$label, --threads $t: the $rows rows of the whole file"
		else
			bad "$label, --threads $t: $(cmp "$WORK/got.csv" "$WORK/ref.csv" 2>&1 | head -1) $(head -2 "$WORK/got.err")"
		fi
	done
}
# shuffled FILE...: the names in an order that is not theirs (reversed, then the first
# half after the second), the same every run
shuffled() {
	local a=("$@") n=$# i out=()
	for ((i = n - 1; i >= 0; i--)); do out+=("${a[i]}"); done
	echo "${out[@]:n/2}" "${out[@]:0:n/2}"
}

mkdir "$WORK/ed" "$WORK/td"
editcap -c 700 "$WORK/whole.pcap" "$WORK/ed/part.pcap" || { echo "FAIL editcap"; exit 1; }
# -Z root: tcpdump would write as its own user into a folder it cannot write
tcpdump -Z root --nano -r "$WORK/whole.pcap" -w "$WORK/td/rot" -C 1 2>/dev/null || { echo "FAIL tcpdump -C"; exit 1; }
ed=("$WORK"/ed/part*.pcap)
td=("$WORK"/td/rot*)
[ "${#ed[@]}" -ge 9 ] && [ "${#td[@]}" -ge 2 ] || { echo "FAIL ${#ed[@]} editcap parts, ${#td[@]} tcpdump parts"; exit 1; }
# shellcheck disable=SC2046
same "editcap -c 700: ${#ed[@]} parts, shuffled" $(shuffled "${ed[@]}")
# shellcheck disable=SC2046
same "tcpdump -C 1: ${#td[@]} parts, the last first" $(shuffled "${td[@]}")

# every other part compressed with gzip, the others with zstd (the names say nothing:
# read goes by content), shuffled
mixed=()
for ((i = 0; i < ${#ed[@]}; i++)); do
	if ((i % 2)); then gzip -c "${ed[i]}" >"$WORK/ed/c$i"; else zstd -q -c "${ed[i]}" >"$WORK/ed/c$i"; fi
	mixed+=("$WORK/ed/c$i")
done
# shellcheck disable=SC2046
same "editcap parts, gzip and zstd alternately, shuffled" $(shuffled "${mixed[@]}")
gzip -c "$WORK/whole.pcap" >"$WORK/whole.pcap.gz"
zstd -q -c "$WORK/whole.pcap" >"$WORK/whole.pcap.zst"
editcap -F pcapng "$WORK/whole.pcap" "$WORK/whole.pcapng"
zstd -q -c "$WORK/whole.pcapng" >"$WORK/whole.pcapng.zst"
same "whole, gzip" "$WORK/whole.pcap.gz"
same "whole, zstd" "$WORK/whole.pcap.zst"
same "whole pcapng, zstd" "$WORK/whole.pcapng.zst"
for z in gz zst; do
	if "$G" read --pairs - <"$WORK/whole.pcap.$z" >"$WORK/got.csv" 2>"$WORK/got.err" && cmp -s "$WORK/got.csv" "$WORK/ref.csv"; then
		ok "whole, $z, through stdin"
	else
		bad "whole, $z, through stdin: $(head -2 "$WORK/got.err")"
	fi
done
# a pipe given by name (process substitution), compressed or not: read as it comes, not
# looked into first (its first bytes would be lost)
for z in gz zst; do
	if "$G" read --pairs <(cat "$WORK/whole.pcap.$z") >"$WORK/got.csv" 2>"$WORK/got.err" && cmp -s "$WORK/got.csv" "$WORK/ref.csv"; then
		ok "whole, $z, through a named pipe"
	else
		bad "whole, $z, through a named pipe: $(head -2 "$WORK/got.err")"
	fi
done
# concatenated gzip members and zstd frames are one stream each (gzip's, zstd's rule)
cat "${ed[0]}" >"$WORK/cat.pcap"
half=$(( $(stat -c %s "$WORK/whole.pcap") / 2 ))
{ head -c "$half" "$WORK/whole.pcap" | gzip -c; tail -c +$((half + 1)) "$WORK/whole.pcap" | gzip -c; } >"$WORK/two.gz"
{ head -c "$half" "$WORK/whole.pcap" | zstd -q -c; tail -c +$((half + 1)) "$WORK/whole.pcap" | zstd -q -c; } >"$WORK/two.zst"
same "two gzip members" "$WORK/two.gz"
same "two zstd frames" "$WORK/two.zst"

# expect LABEL RC STDOUT(empty|rows) REGEX ARGS...: the exit code, stdout empty or the whole
# file's rows, and stderr matching REGEX (the words pointing to the fix)
expect() {
	local label=$1 want=$2 out=$3 re=$4 rc why=
	shift 4
	"$G" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || why="exit $rc, want $want;"
	case $out in
	empty) [ -s "$WORK/out" ] && why="$why stdout not empty ($(head -c 80 "$WORK/out"));" ;;
	rows) cmp -s "$WORK/out" "$WORK/ref.csv" || why="$why not the whole file's rows;" ;;
	esac
	[ -z "$re" ] || grep -Eq -- "$re" "$WORK/err" || why="$why stderr lacks /$re/: $(head -2 "$WORK/err")"
	if [ -z "$why" ]; then ok "$label"; else bad "$label: $why"; fi
}

cp "$WORK/whole.pcap" "$WORK/copy.pcap"
expect "the same file twice: read once, said in one line" 0 rows \
	"whole.pcap is the same file as .*whole.pcap: read once" read --pairs "$WORK/whole.pcap" "$WORK/whole.pcap"
expect "a copy and its zstd: the same packets, read once" 0 rows \
	"carries the same packets as .*: read once" read --pairs "$WORK/copy.pcap" "$WORK/whole.pcap.zst"
editcap -t 0.01 "$WORK/whole.pcap" "$WORK/later.pcap"
expect "two captures overlapping in time: sent to merge" 1 any \
	"starts [0-9.]+ s before .*whole.pcap ends.*giopscope merge .*whole.pcap .*later.pcap" \
	read --pairs "$WORK/later.pcap" "$WORK/whole.pcap"
printf 'GET / HTTP/1.1\r\n\r\n' >"$WORK/text.txt"
gzip -c "$WORK/text.txt" >"$WORK/text.gz"
xz -c "$WORK/whole.pcap" >"$WORK/whole.xz"
# cut in the middle of the compressed bytes
head -c $(( $(stat -c %s "$WORK/whole.pcap.zst") / 2 )) "$WORK/whole.pcap.zst" >"$WORK/cut.zst"
head -c $(( $(stat -c %s "$WORK/whole.pcap.gz") / 2 )) "$WORK/whole.pcap.gz" >"$WORK/cut.gz"
: >"$WORK/empty"
expect "a text file: not a capture, nothing on stdout" 1 empty "text.txt: not a pcap or pcapng capture" read "$WORK/text.txt"
expect "an empty file: not a capture, nothing on stdout" 1 empty "empty: not a pcap or pcapng capture" read "$WORK/empty"
expect "a good capture and a text file: nothing on stdout" 1 empty "text.txt: not a pcap" read --pairs "$WORK/whole.pcap" "$WORK/text.txt"
expect "gzip of a text file: not a capture inside its compression" 1 empty \
	"text.gz: not a pcap or pcapng capture inside its compression" read "$WORK/text.gz"
expect "xz: named, with the command that reads it" 1 empty \
	"compressed with xz, which giopscope does not read.*xz -dc .*whole.xz \| giopscope read -" read "$WORK/whole.xz"
expect "a zstd stream cut short: said so" 1 any "cut.zst: the zstd stream ends inside a frame \(the file is cut short\)" read --pairs "$WORK/cut.zst"
expect "a gzip stream cut short: said so" 1 any "cut.gz: the gzip stream ends inside a member \(the file is cut short\)" read --pairs "$WORK/cut.gz"
# the first deflate block's header (after gzip -n's 10-byte header) made an invalid block type
gzip -n -c <"$WORK/whole.pcap" >"$WORK/bad.gz"
printf '\007' | dd of="$WORK/bad.gz" bs=1 seek=10 conv=notrunc 2>/dev/null
expect "a corrupt gzip stream: said so, nothing on stdout" 1 empty "bad.gz: the gzip stream is corrupt \(invalid block type\)" read --pairs "$WORK/bad.gz"
expect "--summary without --pairs: where it belongs" 2 empty "--summary goes with --pairs.*drop --summary or add --pairs" \
	read --summary "$WORK/whole.pcap"
expect "--order-window with the summary alone: where it belongs" 2 empty \
	"--order-window .* goes with --pairs, --tail, --interval, --report or --trace; drop it here" \
	read --order-window 10 "$WORK/whole.pcap"
expect "no file given: '-' named" 2 empty "no capture file given: .*'-' to read stdin" read
expect "'-' among several inputs: refused, what to do" 2 empty "'-' \(stdin\) is read alone.*save it to a file" \
	read "$WORK/whole.pcap" -
expect "--ports that leave out every call: the ports GIOP was on" 0 any \
	"no calls on the ports --ports gave; GIOP requests went to port 2809 .*: --ports 2809" \
	read --ports 2810 "$WORK/whole.pcap"
expect "the same with --threads 2" 0 any "GIOP requests went to port 2809 .*: --ports 2809" \
	read --threads 2 --ports 2810 "$WORK/whole.pcap"
if "$G" read --ports 2809 "$WORK/whole.pcap" 2>&1 >/dev/null | grep -q "ports --ports gave"; then
	bad "--ports on the right port: a hint all the same"
else
	ok "--ports on the right port: no hint"
fi
# one file whose packets go back in time (parts concatenated out of order): rows out of
# start order with an order window larger than the file, which was then never the cause
mergecap -a -F nsecpcap -w "$WORK/back.pcap" "${ed[3]}" "${ed[0]}" "${ed[1]}" "${ed[2]}"
expect "rows out of order in a file not in time order: the capture named, not the window" 0 any \
	"rows out of start order .*the capture's packets are not in time order \(the order window, 1000000 calls, was never full\); 'mergecap -w" \
	read --pairs --order-window 1000000 "$WORK/back.pcap"
if grep -q "was full" "$WORK/err"; then bad "the window blamed when it was never full"; else ok "the window not blamed"; fi
# limits inside their ranges larger than the host: a ceiling, not memory taken at start (the
# tables are address space, filled as the input needs); where even that is not there (a 4 GB
# address space, ulimit -v), the option named with a value that fits, and that value works
for args in "--max-memory 64g" "--max-flows 67108864" "--max-memory 1048576g"; do
	# shellcheck disable=SC2086
	expect "$args on a small capture: the rows, as without it" 0 rows "" read --pairs $args "$WORK/whole.pcap"
done
if ! ( ulimit -v 4000000; "$G" version >/dev/null 2>&1 ) 2>/dev/null; then
	# (a sanitizer's shadow memory does not fit in 4 GB)
	ok "limits beyond a 4 GB address space: not for this build ($G does not start in 4 GB)"
else
	for opt in "--max-memory 64g" "--max-flows 67108864"; do
		name=${opt% *}
		( ulimit -v 4000000; "$G" read $opt "$WORK/whole.pcap" >"$WORK/out" 2>"$WORK/err" ); rc=$?
		fit=$(sed -n "s/.*$name \([0-9]*[gm]*\) fits.*/\1/p" "$WORK/err")
		if [ "$rc" = 2 ] && [ ! -s "$WORK/out" ] && [ -n "$fit" ] &&
		   grep -q "cannot set up the tables: $opt asks for more memory than this process can have" "$WORK/err" &&
		   ( ulimit -v 4000000; "$G" read --pairs "$name" "$fit" "$WORK/whole.pcap" 2>/dev/null | cmp -s - "$WORK/ref.csv" ); then
			ok "$opt in a 4 GB address space: $name $fit fits, and does"
		else
			bad "$opt in a 4 GB address space: exit $rc, $(head -1 "$WORK/err")"
		fi
	done
fi
# the count of TCP segments with data is tshark's (tcp.len > 0), one a segment, on GIOP, on
# connections --ports leaves out, and on HTTP (not GIOP: its connections' later segments too)
tshark_segs() { tshark -r "$1" -Y "tcp.len > 0" 2>/dev/null | wc -l; }
our_segs() { "$G" read "$@" 2>/dev/null | sed -n 's/^packets [0-9]* (\([0-9]*\) TCP segments* with data.*/\1/p'; }
want=$(tshark_segs "$WORK/whole.pcap")
for args in "" "--ports 2810"; do
	# shellcheck disable=SC2086
	got=$(our_segs $args "$WORK/whole.pcap")
	if [ -n "$got" ] && [ "$got" = "$want" ]; then ok "segments with data ${args:-(GIOP)}: $got, as tshark"; else bad "segments with data ${args:-(GIOP)}: $got, tshark $want"; fi
done
hport=$((20000 + RANDOM % 20000))
mkdir "$WORK/www" && echo hello >"$WORK/www/index.html"
(cd "$WORK/www" && exec python3 -m http.server "$hport" --bind 127.0.0.1 >/dev/null 2>&1) &
HTTP_PID=$!
tcpdump -Z root -i lo -U --immediate-mode -w "$WORK/http.pcap" "tcp port $hport" >/dev/null 2>"$WORK/td.err" &
TD_PID=$!
WORK_PID_VARS="HTTP_PID TD_PID"
# tcpdump says so once it listens
for ((i = 0; i < 100; i++)); do grep -q "listening on" "$WORK/td.err" && break; sleep 0.1; done
for ((i = 0; i < 50; i++)); do curl -s -o /dev/null "http://127.0.0.1:$hport/" && break; sleep 0.1; done
curl -s -o /dev/null "http://127.0.0.1:$hport/index.html"
sleep 0.5
kill "$TD_PID" "$HTTP_PID" 2>/dev/null; wait "$TD_PID" "$HTTP_PID" 2>/dev/null
WORK_PID_VARS=
want=$(tshark_segs "$WORK/http.pcap")
got=$(our_segs "$WORK/http.pcap")
if [ "${want:-0}" -ge 4 ] && [ "$got" = "$want" ] && "$G" read "$WORK/http.pcap" | grep -q "$want not GIOP or left out"; then
	ok "HTTP: $got segments with data, all not GIOP, as tshark"
else
	bad "HTTP: $got segments with data, tshark $want: $("$G" read "$WORK/http.pcap" | grep '^packets')"
fi
"$G" help read >"$WORK/h1" 2>&1; r1=$?
"$G" read --help >"$WORK/h2" 2>&1; r2=$?
if [ "$r1" = 0 ] && [ "$r2" = 0 ] && cmp -s "$WORK/h1" "$WORK/h2" && grep -q "usage: giopscope read" "$WORK/h1"; then
	ok "help read prints read --help"
else
	bad "help read (exit $r1) and read --help (exit $r2) differ"
fi
expect "a pipe among several inputs: refused, what to do" 2 empty "is read alone.*a pipe cannot show.*save it to a file" \
	read "$WORK/whole.pcap" <(cat "$WORK/whole.pcap")
expect "/dev/null: not a capture, nothing on stdout" 1 empty "/dev/null: not a pcap or pcapng capture" read /dev/null
expect "help of no command: said" 2 empty "no command 'nope'" help nope

echo "read_inputs: $pass passed, $fail failed"
[ "$fail" = 0 ]
