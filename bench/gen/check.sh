#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/gen/check.sh: is the benchmark capture generator right? Each sample capture
# is decoded by Wireshark's GIOP dissector (tests/oracle/tshark_pairs.py) and by
# giopscope; tests/oracle/compare_pairs.py must find them identical, call for call,
# and both must count exactly the calls giopgen says it made. Also: checksums that
# tshark accepts, and the same bytes for the same seed. Under a minute.
#   GIOPGEN=build/bench/giopgen GIOPSCOPE=build/giopscope bench/gen/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
GIOPGEN=${GIOPGEN:-build/bench/giopgen}
GIOPSCOPE=${GIOPSCOPE:-build/giopscope}
tmp=$(mktemp -d /tmp/giopgen-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0

# name | giopgen options: every feature of the generator in at least one sample;
# open-all-rtx: GIOP 1.2 fragments of many messages interleaved, with retransmissions
samples=(
  "mix|--calls 1500 --connections 15 --seed 1"
  "retransmit|--calls 1500 --connections 15 --seed 2 --retransmit 0.01"
  "open-all-rtx|--calls 1200 --connections 6 --seed 3 --open-all --retransmit 0.01"
  "many-conns-v6|--calls 1500 --connections 200 --concurrent 150 --seed 4 --ipv6 0.5"
  "echo|--calls 1000 --connections 5 --seed 5 --mix echo"
  "no-close-no-replies|--calls 800 --connections 80 --concurrent 20 --seed 6 --no-close --no-replies"
)

check_one() {
  local name=$1 opts=$2 cap=$tmp/$1.pcap
  # shellcheck disable=SC2086
  "$GIOPGEN" $opts -o "$cap" 2>"$tmp/$name.gen"
  local calls
  calls=$(sed -n 's/^giopgen: \([0-9]*\) calls.*/\1/p' "$tmp/$name.gen")
  python3 tests/oracle/tshark_pairs.py "$cap" -o "$tmp/$name.expected.csv" 2>"$tmp/$name.tshark.err"
  "$GIOPSCOPE" read "$cap" --pairs --format csv -o "$tmp/$name.ours.csv"
  local expected ours bad
  expected=$(($(wc -l <"$tmp/$name.expected.csv") - 1))
  ours=$(($(wc -l <"$tmp/$name.ours.csv") - 1))
  bad=$(tshark -n -r "$cap" -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE \
        -Y 'tcp.checksum.status == 0 || ip.checksum.status == 0' 2>/dev/null | wc -l)
  if ! python3 tests/oracle/compare_pairs.py "$tmp/$name.expected.csv" "$tmp/$name.ours.csv" \
       >"$tmp/$name.cmp"; then
    echo "FAIL $name: giopscope and tshark disagree:"; tail -15 "$tmp/$name.cmp"
    return 1
  fi
  if [ "$expected" != "$calls" ] || [ "$ours" != "$calls" ]; then
    echo "FAIL $name: giopgen made $calls calls, tshark saw $expected, giopscope $ours"
    return 1
  fi
  if [ "$bad" != 0 ]; then
    echo "FAIL $name: $bad packets with a bad IP or TCP checksum"
    return 1
  fi
  echo "ok   $name: $calls calls, $(tail -1 "$tmp/$name.cmp")"
}

pids=()
for s in "${samples[@]}"; do
  ( check_one "${s%%|*}" "${s#*|}" >"$tmp/${s%%|*}.result" 2>&1 || exit 1 ) &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || fail=1
  s=${samples[$i]}
  cat "$tmp/${s%%|*}.result"
done

# determinism: a benchmark names its capture by options and seed
"$GIOPGEN" --calls 500 --seed 9 -o "$tmp/a.pcap" 2>/dev/null
"$GIOPGEN" --calls 500 --seed 9 -o - 2>/dev/null >"$tmp/b.pcap"
if cmp -s "$tmp/a.pcap" "$tmp/b.pcap"; then
  echo "ok   same seed, same bytes"
else
  echo "FAIL same seed gave different captures"; fail=1
fi
[ $fail = 0 ] && echo "giopgen check: all passed" || echo "giopgen check: FAILED"
exit $fail
