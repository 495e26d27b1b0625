#!/bin/bash
# eta.sh ZSIM: the expected time at 10% (bench/e2e/cost.py --progress) on the samples, with the
# 1-minute load before and after. DATA: the samples' directory; OUT: a scratch directory.
here=$(cd "$(dirname "$0")" && pwd)
echo "== $(date -u +%H:%M:%S) $1"; echo "uptime before: $(uptime)"
python3 "$here/../../e2e/cost.py" --zsim "$1" --out "${OUT:?}/prog" --reps 5 --progress "$DATA/database" "$DATA/fileserver" 2>&1 | grep -v "^$"
python3 "$here/../../e2e/cost.py" --zsim "$1" --out "${OUT:?}/prog" --reps 3 --progress "$DATA/database-large" 2>&1 | grep -v "^$"
echo "uptime after: $(uptime)"
