#!/bin/bash
# cold.sh ZSIM DIR REPS: cat vs zsim default scan, the page cache dropped (sync; drop_caches=3) before each run.
Z=$1; D=$2; R=$3
for i in $(seq $R); do
  for what in cat zsim zsim-off; do
    sync; echo 3 > /proc/sys/vm/drop_caches
    l=$(cut -d' ' -f1 /proc/loadavg)
    case $what in
      cat) /usr/bin/time -f "cat wall=%e cpu=%U+%S load=$l" bash -c "find $D -type f -print0 | xargs -0 cat > /dev/null" ;;
      zsim) /usr/bin/time -f "zsim-default wall=%e cpu=%U+%S load=$l" $Z scan $D --json -q --threads 2 > /dev/null ;;
      zsim-off) /usr/bin/time -f "zsim-compression-off wall=%e cpu=%U+%S load=$l" $Z scan $D --json -q --threads 2 --compression off > /dev/null ;;
    esac
  done
done
