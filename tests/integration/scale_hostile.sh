#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/scale_hostile.sh: hostile input at scale (docs/reliability.md).
#
#   BUILD=build GIOPSCOPE=build/giopscope tests/integration/scale_hostile.sh [CASE...]
#
# A million connections never closed, a million requests never answered (also all open
# at once, and both at once), with the default limits and with small ones (--max-flows
# 1000 --max-open-calls 10000). The captures come from the benchmark generator
# (bench/gen: giopgen --no-close, --no-replies), piped straight into
# `giopscope read -` (nothing on disk). Per case:
#   - giopscope ends within SCALE_TIMEOUT seconds with exit 0 (a capture of valid
#     traffic, however hostile, is not bad input);
#   - every call is written once: the pair rows, counted by status, are what the
#     generator made (N calls; NO_EXCEPTION when answered, NO_REPLY when not);
#   - the summary's counters say what the limits did, exactly: connections_evicted
#     = connections open at once beyond --max-flows, open_calls_evicted = calls open
#     at once beyond --max-open-calls, no_reply = the unanswered calls;
#   - peak RSS (/usr/bin/time %M) is under the memory the limits allow: giopscope's
#     RSS on a ten-call capture with the same flags, plus every table sized from the
#     limits completely filled (tests/bad/table_bytes.c: the arithmetic of
#     gs_engine_new with the structures as compiled), plus 8 MiB (the strings table's
#     4 MiB of text and I/O buffers);
#   - with the small limits, peak RSS is below the default-limit run of the same
#     capture, when that ran: the bounds bite, memory shrinks.
# Prints one line per case (seconds, peak RSS, bound, counters) and exits 0, 1 (a
# case failed) or 77 (giopgen cannot be built).
#
#   SCALE_N        calls and connections (default 1000000)
#   SCALE_FULL=1   also the long cases (a million calls open at once with the default
#                  limits; never closed and never answered at once)
#   SCALE_TIMEOUT  seconds per case (default 120)
set -u
cd "$(dirname "$0")/../.." || exit 2
root=$(pwd)
BUILD=${BUILD:-build}
G=${GIOPSCOPE:-$BUILD/giopscope}
GEN=${GIOPGEN:-$BUILD/bench/giopgen}
N=${SCALE_N:-1000000}
TMO=${SCALE_TIMEOUT:-120}
case $G in /*) ;; *) G=$root/$G ;; esac

if [ ! -x "$G" ]; then
	echo "scale_hostile: $G is not an executable (make BUILD=$BUILD)" >&2
	exit 2
fi
if [ ! -x "$GEN" ] || [ -n "$(find bench/gen -newer "$GEN" -name '*.[ch]' 2>/dev/null)" ]; then
	make -s BUILD="$BUILD" "$BUILD/bench/giopgen" >&2 || { echo "scale_hostile: SKIP: cannot build giopgen"; exit 77; }
fi
if [ ! -x /usr/bin/time ]; then
	echo "scale_hostile: SKIP: no /usr/bin/time (GNU time)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/giopscope-scale.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
if ! ${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -Ianalysis -o "$tmp/table_bytes" tests/bad/table_bytes.c \
	"$BUILD/libgiopscope.a" 2>"$tmp/cc.err"; then
	echo "scale_hostile: cannot build tests/bad/table_bytes.c:" >&2
	cat "$tmp/cc.err" >&2
	exit 2
fi

DEF_FLOWS=65536 DEF_CALLS=1048576     # giopscope's defaults (docs/reliability.md, Limits)
SMALL=(--max-flows 1000 --max-open-calls 10000)
SMALL_FLOWS=1000 SMALL_CALLS=10000
SLACK_KB=$((8 * 1024))

# the case table: name | giopgen options | connections | all calls open at once (1/0)
# | answered (1/0) | connections never closed (1/0) | giopscope limits (default|small)
# calls_never_answered: a reply-less server behind 1000 connections of 1000 calls, 64
# connections open at a time, each closed after its last call; ..._all_open: every call
# is sent before any connection closes, so all of them are open at once (--max-open-calls
# holds them). The last two are long (the default-limit one takes 25-90 s here for a
# million calls open at once): only with SCALE_FULL=1 or when named.
CASES=(
	"conns_never_closed|--calls $N --connections $N --no-close|$N|0|1|1|default"
	"conns_never_closed_small|--calls $N --connections $N --no-close|$N|0|1|1|small"
	"calls_never_answered|--calls $N --connections 1000 --no-replies|1000|0|0|0|default"
	"calls_never_answered_all_open|--calls $N --connections 1000 --open-all --no-replies|1000|1|0|0|default|full"
	"calls_never_answered_all_open_small|--calls $N --connections 1000 --open-all --no-replies|1000|1|0|0|small"
	"both_small|--calls $N --connections $N --no-close --no-replies|$N|0|0|1|small|full"
)
COMMON_GEN=(--mix echo --cancel 0 --seed 8)

max0() { if [ "$1" -gt 0 ]; then echo "$1"; else echo 0; fi; }

# the base RSS (KB) of giopscope with these flags: a ten-call capture
declare -A base
base_rss() {
	local key=$1
	shift
	if [ -z "${base[$key]:-}" ]; then
		"$GEN" --calls 10 "${COMMON_GEN[@]}" -q -o "$tmp/ten.pcap" || return 1
		/usr/bin/time -f '%M' -o "$tmp/base.time" "$G" read "$tmp/ten.pcap" -q --pairs --format csv "$@" >/dev/null 2>&1
		base[$key]=$(tail -n 1 "$tmp/base.time")
	fi
	echo "${base[$key]}"
}

declare -A rss_of case_gen case_limits
pass=0 fail=0
selected=" $* "
for c in "${CASES[@]}"; do
	IFS='|' read -r name genopts conns all_open answered never_closed limits full <<<"$c"
	if [ $# -gt 0 ]; then
		[[ $selected == *" $name "* ]] || continue
	elif [ -n "$full" ] && [ "${SCALE_FULL:-0}" != 1 ]; then
		continue
	fi
	read -r -a gen_args <<<"$genopts"
	if [ "$limits" = small ]; then
		lim=("${SMALL[@]}") F=$SMALL_FLOWS C=$SMALL_CALLS
	else
		lim=() F=$DEF_FLOWS C=$DEF_CALLS
	fi
	calls=$(sed -n 's/.*--calls \([0-9]*\).*/\1/p' <<<"$genopts")

	# what the design says must happen
	if [ "$never_closed" = 1 ]; then
		want_conn_ev=$(max0 $((conns - F)))   # each new connection evicts the idlest
	elif [ "$all_open" = 1 ]; then
		want_conn_ev=$(max0 $((conns - F)))   # all open together until the end
	else
		want_conn_ev=0
	fi
	if [ "$all_open" = 1 ]; then
		want_call_ev=$(max0 $((calls - C)))   # every call open at once
	else
		want_call_ev=0
	fi
	if [ "$answered" = 1 ]; then
		want_status="NO_EXCEPTION=$calls" want_noreply=0
	else
		want_status="NO_REPLY=$calls" want_noreply=$calls
	fi

	rm -f "$tmp/time"
	start=$(date +%s.%N)
	timeout "$TMO" "$GEN" "${gen_args[@]}" "${COMMON_GEN[@]}" -o - 2>"$tmp/$name.gen" |
		/usr/bin/time -f '%e %M' -o "$tmp/time" timeout "$TMO" "$G" read - -q --pairs --format csv \
			--summary "${lim[@]}" 2>"$tmp/$name.sum" |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") col = i; next }
			 { n++; s[$col]++ } END { printf "rows=%d", n; for (k in s) printf " %s=%d", k, s[k]; print "" }' \
			>"$tmp/$name.rows"
	rcs=("${PIPESTATUS[@]}")
	wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	read -r secs rss < <(tail -n 1 "$tmp/time" 2>/dev/null || echo "? 0")
	why=()
	[ "${rcs[0]}" -eq 0 ] || why+=("giopgen exit ${rcs[0]}")
	if [ "${rcs[1]}" -eq 124 ]; then
		why+=("giopscope timed out after ${TMO}s")
	elif [ "${rcs[1]}" -ne 0 ]; then
		why+=("giopscope exit ${rcs[1]}, want 0: $(grep -m1 giopscope: "$tmp/$name.sum")")
	fi

	# the generator must have made what the case says
	gsum=$(cat "$tmp/$name.gen")
	gcalls=$(sed -n 's/^giopgen: \([0-9]*\) calls.*/\1/p' <<<"$gsum")
	gconns=$(sed -n 's/.* \([0-9]*\) connections (.*/\1/p' <<<"$gsum")
	gopen=$(sed -n 's/.*, \([0-9]*\) never closed).*/\1/p' <<<"$gsum")
	gunans=$(sed -n 's/.*), \([0-9]*\) unanswered calls.*/\1/p' <<<"$gsum")
	[ "$gcalls" = "$calls" ] || why+=("giopgen made ${gcalls:-?} calls, want $calls")
	[ "$gconns" = "$conns" ] || why+=("giopgen made ${gconns:-?} connections, want $conns")
	[ "$gopen" = $((never_closed ? conns : 0)) ] || why+=("giopgen left ${gopen:-?} connections open")
	[ "$gunans" = "$want_noreply" ] || why+=("giopgen left ${gunans:-?} calls unanswered, want $want_noreply")

	# every call written once, with the status it must have
	got_rows=$(cat "$tmp/$name.rows")
	nrows=$(sed -n 's/^rows=\([0-9]*\).*/\1/p' <<<"$got_rows")
	[ "$nrows" = "$calls" ] || why+=("${nrows:-0} rows, want $calls")
	[[ " $got_rows " == *" $want_status "* ]] || why+=("rows by status: $got_rows; want $want_status")

	# the summary's counters
	also=$(grep '^also:' "$tmp/$name.sum")
	counter() { local v; v=$(sed -n "s/.*[:,] $1 \([0-9]*\).*/\1/p" <<<"$also"); echo "${v:-0}"; }
	conn_ev=$(counter connections_evicted)
	call_ev=$(counter open_calls_evicted)
	noreply=$(sed -n 's/^calls [0-9]*: .* \([0-9]*\) no reply,.*/\1/p' "$tmp/$name.sum")
	[ "$conn_ev" = "$want_conn_ev" ] || why+=("connections_evicted $conn_ev, want $want_conn_ev")
	[ "$call_ev" = "$want_call_ev" ] || why+=("open_calls_evicted $call_ev, want $want_call_ev")
	[ "$noreply" = "$want_noreply" ] || why+=("no reply ${noreply:-?}, want $want_noreply")

	# memory: under what the limits allow; smaller with the small limits
	read -r fb cb < <("$tmp/table_bytes" "$F" "$C")
	b=$(base_rss "$limits" "${lim[@]}")
	bound=$((b + (fb + cb) / 1024 + SLACK_KB))
	[ "$rss" -gt 0 ] && [ "$rss" -le "$bound" ] || why+=("peak RSS $rss KB over the bound $bound KB")
	# the same capture with the default limits, when it ran before
	if [ "$limits" = small ]; then
		for other in "${!rss_of[@]}"; do
			[ "${case_gen[$other]}" = "$genopts" ] && [ "${case_limits[$other]}" = default ] || continue
			[ "$rss" -lt "${rss_of[$other]}" ] ||
				why+=("peak RSS $rss KB with the small limits, not below ${rss_of[$other]} KB with the defaults ($other)")
		done
	fi
	rss_of[$name]=$rss case_gen[$name]=$genopts case_limits[$name]=$limits

	line="$name (${secs} s giopscope, $wall s wall, peak RSS $((rss / 1024)) MiB, bound $((bound / 1024)) MiB; $got_rows; connections_evicted $conn_ev, open_calls_evicted $call_ev, no reply $noreply)"
	if [ ${#why[@]} -eq 0 ]; then
		pass=$((pass + 1))
		echo "PASS $line"
	else
		fail=$((fail + 1))
		msg=$(printf '%s; ' "${why[@]}")
		echo "FAIL $line: ${msg%; }"
		echo "     $GEN $genopts ${COMMON_GEN[*]} -o - | $G read - -q --pairs --format csv --summary ${lim[*]}"
	fi
done
echo "scale_hostile: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
