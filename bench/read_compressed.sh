#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/read_compressed.sh GIOPSCOPE FILE ROUNDS: read of FILE, FILE.zst and FILE.gz (and through
# stdin) next to cat, zstd -dc and gzip -dc, the arms interleaved round by round; prints each
# arm's wall seconds per round (docs/benchmarks.md, "Compressed captures").
G=$1; F=$2; R=$3
arms=("cat $F" "zstd -dcq $F.zst" "gzip -dc $F.gz" "$G read $F" "$G read $F.zst" "$G read $F.gz" "zstd -dcq $F.zst | $G read -" "gzip -dc $F.gz | $G read -")
for ((r = 0; r < R; r++)); do
  for i in "${!arms[@]}"; do
    s=$(date +%s.%N); bash -c "${arms[i]}" >/dev/null; e=$(date +%s.%N)
    echo "$i $(echo "$e - $s" | bc)"
  done
done | awk -v n=${#arms[@]} '{t[$1]=t[$1]" "$2} END {for (i=0;i<n;i++) print i, t[i]}'
for i in "${!arms[@]}"; do echo "$i: ${arms[i]}"; done
