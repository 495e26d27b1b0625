#!/usr/bin/env bash
# Default list (off, lz4, zstd-3) against the earlier one given explicitly and a parallel
# xxh128sum, warm cache, three interleaved rounds. Usage: run.sh ZSIM DIR...
set -euo pipefail
zsim=$1; shift
old=off,lz4,zstd-3,gzip-6,lzjb,zle
for dir in "$@"; do
  find "$dir" -type f -print0 | xargs -0 cat > /dev/null  # warm
  for round in 1 2 3; do
    t0=$(date +%s.%N); find "$dir" -type f -print0 | xargs -0 -P 2 -n 8 xxh128sum > /dev/null; t1=$(date +%s.%N)
    echo "$(basename "$dir") round $round xxh128sum $(echo "$t1 - $t0" | bc) s"
    for list in default "$old"; do
      args=(); [[ $list != default ]] && args=(--compression "$list")
      t0=$(date +%s.%N); "$zsim" scan "$dir" "${args[@]}" --json > /tmp/s57-$round.json 2>/dev/null; t1=$(date +%s.%N)
      echo "$(basename "$dir") round $round $list $(echo "$t1 - $t0" | bc) s $(jq -c '[.results[] | {c: .compression, r: .compressratio, e: .exact}]' /tmp/s57-$round.json)"
    done
  done
done
