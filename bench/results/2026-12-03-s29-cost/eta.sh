#!/bin/bash
# eta.sh ZSIM...: the expected time at 10% (bench/e2e/cost.py --progress), 3 runs on each sample,
# for each binary in turn. DATA: the samples' directory; OUT: a scratch directory.
here=$(cd "$(dirname "$0")" && pwd)
for z in "$@"; do
  echo "== progress: $z"
  python3 "$here/../../e2e/cost.py" --zsim "$z" --out "${OUT:?}/prog" --reps 3 --progress \
    "$DATA/database" "$DATA/fileserver" "$DATA/database-large" 2>&1 | grep -v "^$"
done
