#!/usr/bin/env bash
# Warm-cache default scans, interleaved rounds: the binary before (REF) and after (NEW) the
# early-abort probe change, and a parallel xxh128sum, on the two large bench trees.
# usage: run.sh REF_ZSIM NEW_ZSIM ROUNDS TREE...
set -euo pipefail
ref=$1 new=$2 rounds=$3
shift 3
for tree in "$@"; do
  find "$tree" -type f -print0 | xargs -0 cat > /dev/null  # warm the page cache
  for ((k = 1; k <= rounds; k++)); do
    for bin in xxh "$ref" "$new"; do
      start=$(date +%s.%N)
      if [[ $bin == xxh ]]; then
        find "$tree" -type f -print0 | xargs -0 -P2 -n 400 xxh128sum > /dev/null 2>&1
        name=xxh128sum
      else
        "$bin" scan "$tree" > /dev/null 2>&1
        name=$([[ $bin == "$ref" ]] && echo before || echo after)
      fi
      end=$(date +%s.%N)
      printf '%s round %d %-9s %.2f s\n' "$(basename "$tree")" "$k" "$name" "$(echo "$end - $start" | bc)"
    done
  done
done
