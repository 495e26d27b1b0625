#!/bin/sh
# Interleaved runs for issue 19 (see notes.md). Usage: run.sh ZSIM DATABASE_LARGE FILESERVER
set -eu
Z=$1; DB=$2; FS=$3
t() { /usr/bin/time -f "%e %U %S" "$@" 2>&1 >/dev/null | tail -1; }
load() { cut -d' ' -f1 /proc/loadavg; }
cat "$DB" >/dev/null 2>&1 || true
find "$DB" -type f -print0 | xargs -0 cat > /dev/null   # warm the cache
for i in 1 2 3; do
  echo "xxh128sum db $(load) $(t sh -c "find '$DB' -type f -print0 | xargs -0 -P2 -n 64 xxh128sum")"
  echo "default db $(load) $(t "$Z" scan "$DB" --threads 2 --json --no-progress)"
done
"$Z" scan "$DB" --threads 2 --json --no-progress > default-db.json
"$Z" scan "$DB" --threads 2 --json --no-progress --exact > exact-db.json
for i in 1 2; do
  echo "default fs $(load) $(t "$Z" scan "$FS" --threads 2 --json --no-progress)"
  echo "all3 fs $(load) $(t "$Z" scan "$FS" --threads 2 --json --no-progress --compression all --recordsize 16k,128k,1M)"
done
echo "maxrate200M db $(load) $(t "$Z" scan "$DB" --threads 2 --json --no-progress --max-rate 200M/s --compression off)"
