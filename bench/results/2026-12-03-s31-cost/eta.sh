#!/bin/bash
# eta.sh ZSIM SAMPLE...: the expected time at 10% (bench/e2e/cost.py --progress), 5 runs per sample.
here=$(cd "$(dirname "$0")" && pwd)
z=$1; shift
python3 "$here/../../e2e/cost.py" --zsim "$z" --out "${OUT:?}/prog" --reps 5 --progress "$@" 2>&1 | grep -v "^$"
