#!/bin/bash
# interleaved: default vs --compression all --recordsize 16k,128k,1M, two binaries
D=$1; shift; REPS=$1; shift
for i in $(seq $REPS); do
  for B in "$@"; do
    for mode in default all; do
      extra=""; [ $mode = all ] && extra="--compression all --recordsize 16k,128k,1M"
      l=$(cut -d' ' -f1 /proc/loadavg)
      /usr/bin/time -f "$(basename $B) $mode wall=%e cpu=%U+%S load=$l" $B scan $D --json --threads 2 $extra 2>&1 >/dev/null | tail -1
    done
  done
done
