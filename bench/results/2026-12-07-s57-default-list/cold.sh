#!/usr/bin/env bash
# Cold cache (page cache dropped before each run): cat of every file vs the default scan.
# Usage: cold.sh ZSIM DIR...
set -euo pipefail
zsim=$1; shift
for dir in "$@"; do
  for round in 1 2 3; do
    sync; echo 3 > /proc/sys/vm/drop_caches
    t0=$(date +%s.%N); find "$dir" -type f -print0 | xargs -0 cat > /dev/null; t1=$(date +%s.%N)
    echo "$(basename "$dir") round $round cat $(echo "$t1 - $t0" | bc) s"
    sync; echo 3 > /proc/sys/vm/drop_caches
    t0=$(date +%s.%N); "$zsim" scan "$dir" --json -q > /dev/null; t1=$(date +%s.%N)
    echo "$(basename "$dir") round $round default $(echo "$t1 - $t0" | bc) s"
  done
done
