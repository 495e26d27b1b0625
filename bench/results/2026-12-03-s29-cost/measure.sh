#!/bin/bash
# measure.sh BRANCH_ZSIM [MAIN_ZSIM]: the expected time at 10% (bench/e2e/cost.py --progress)
# on the three samples, 3 runs each, then signal-to-exit times. DATA: the samples' directory; OUT: a scratch directory.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cost=$here/../../e2e/cost.py
D=${DATA:?}
for z in "$@"; do
  echo "== progress: $z"
  python3 "$cost" --zsim "$z" --out "${OUT:?}/prog" --reps 3 --progress $D/database $D/fileserver $D/database-large 2>&1 | grep -v "^$"
done
z=$1
echo "== signal to exit: $z"
python3 "$here/sigexit.py" "$z" "${OUT:?}/sigout" $D/database-large INT 2 3
python3 "$here/sigexit.py" "$z" "${OUT:?}/sigout" $D/fileserver TERM 3 2 --compression all --recordsize 16k,128k,1M
