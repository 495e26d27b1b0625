#!/bin/bash
# Run as: flock LOCK measure.sh STATE OLD_ZSIM NEW_ZSIM
# Quiet measurement: pause others' heavy processes (not this script's), run `zsim report STATE
# --json` with each binary, interleaved, three times; resume them (also on failure).
state=$1 old=$2 new=$3
self=$$
pids=$(pgrep -f 'cc1plus|ctest|/build/' | grep -v -w "$self" | tr '\n' ' ')
mine=""
for p in $pids; do
  # leave out this script's own descendants
  if [ "$(ps -o sid= -p $p 2>/dev/null | tr -d ' ')" = "$(ps -o sid= -p $self | tr -d ' ')" ]; then continue; fi
  mine="$mine $p"
done
trap 'kill -CONT $mine 2>/dev/null' EXIT
kill -STOP $mine 2>/dev/null
sleep 2
uptime
for i in 1 2 3; do
  for z in "$old" "$new"; do
    /usr/bin/time -f "$(basename $z): wall %e s user %U s sys %S s maxrss %M KB" "$z" report "$state" --json > /dev/null
  done
done
uptime
