#!/bin/bash
# rate.sh ZSIM DIR: --max-rate 200M/s, three runs with the default codecs and one with none
# (bench/e2e/cost.py --rate).
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/../../e2e/cost.py" --zsim "$1" --out "${OUT:?}/rate" --reps 3 --rate "$2" 2>&1 | grep -v "^$"
