#!/bin/bash
# srctl.sh ZSIM DIR: three progress timelines (tsprog.py) of a default scan of DIR.
here=$(cd "$(dirname "$0")" && pwd)
cat $(find "$2" -type f) > /dev/null
for i in 1 2 3; do echo "-- run $i"; python3 "$here/tsprog.py" "$1" scan "$2" --json --progress --threads 2; done
