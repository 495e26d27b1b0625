#!/bin/bash
# window2.sh: the six v23 settings against the trial copies again (5 zsim runs), then the
# expected time at 10% on the tiny sample, main against the branch. BIN, DATA, OUT from the caller.
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/trial6.py" "$DATA/database" "$BIN/zsim-main" 5
for z in zsim-main zsim-branch; do
  echo "-- $z"
  python3 "$here/../../e2e/cost.py" --zsim "$BIN/$z" --out "$OUT/prog-$z" --reps 5 --progress "$DATA/tiny" 2>&1 | grep -v "^$"
done
