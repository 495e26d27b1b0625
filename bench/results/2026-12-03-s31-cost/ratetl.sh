#!/bin/bash
# ratetl.sh ZSIM DIR: the progress line's timeline (wall and process CPU seconds since start) of
# the default scan, without a cap and with --max-rate 200M/s.
here=$(cd "$(dirname "$0")" && pwd)
for extra in "" "--max-rate 200M/s"; do
  echo "-- default $extra"
  python3 "$here/tsprog.py" "$1" scan "$2" --json --progress --threads 2 $extra
done
