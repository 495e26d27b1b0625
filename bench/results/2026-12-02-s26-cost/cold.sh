#!/bin/bash
# cold-cache: cat vs default zsim scan on DATA, page cache dropped before each run
BIN=$1; D=$2; N=${3:-2}
for i in $(seq $N); do
  sync; echo 3 > /proc/sys/vm/drop_caches
  l=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "cat wall=%e cpu=%U+%S load=$l" sh -c "find $D -type f -print0 | xargs -0 cat > /dev/null" 2>&1 | tail -1
  sync; echo 3 > /proc/sys/vm/drop_caches
  l=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "zsim wall=%e cpu=%U+%S load=$l" $BIN scan $D --json --threads 2 2>&1 >/dev/null | tail -1
done
