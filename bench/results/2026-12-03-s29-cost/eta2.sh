#!/bin/bash
# eta2.sh ZSIM: what runs (top), then the expected time at 10%: 5 runs on the database sample,
# 3 on the others. DATA: the samples' directory; OUT: a scratch directory.
here=$(cd "$(dirname "$0")" && pwd)
top -b -n 1 | sed -n '7,14p' | cut -c1-100
python3 "$here/../../e2e/cost.py" --zsim "$1" --out "${OUT:?}/prog" --reps 5 --progress "$DATA/database" 2>&1 | grep -v "^$"
python3 "$here/../../e2e/cost.py" --zsim "$1" --out "${OUT:?}/prog" --reps 3 --progress "$DATA/fileserver" "$DATA/database-large" 2>&1 | grep -v "^$"
top -b -n 1 | sed -n '7,14p' | cut -c1-100
