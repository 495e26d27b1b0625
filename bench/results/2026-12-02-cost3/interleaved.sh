#!/bin/sh
# Interleaved runs on a warm cache: xxh128sum -P2, the previous binary (cost2, lsize ratios), this
# one; wall and CPU seconds of each, with the 1-minute load. Usage: interleaved.sh DIR OLD NEW REPS
d=$1; old=$2; new=$3; reps=${4:-5}
find "$d" -type f -print0 | xargs -0 cat > /dev/null
for i in $(seq "$reps"); do
  for what in xxh old new; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    case $what in
      xxh) t=$( { /usr/bin/time -f "%e %U %S" sh -c "find '$d' -type f -print0 | xargs -0 -P 2 -n 64 xxh128sum > /dev/null 2>&1"; } 2>&1 | tail -1) ;;
      old) t=$( { /usr/bin/time -f "%e %U %S" "$old" scan "$d" --json --threads 2 > /dev/null; } 2>&1 | tail -1) ;;
      new) t=$( { /usr/bin/time -f "%e %U %S" "$new" scan "$d" --json --threads 2 > /dev/null; } 2>&1 | tail -1) ;;
    esac
    echo "$what $(basename "$d") load=$load wall_user_sys=$t"
  done
done
