#!/bin/bash
# usage: measure.sh OUT SAMPLES... ; env EXTRA for extra flags
OUT=$1; shift
BEFORE=${BEFORE:?the zsim of the commit before (state format 8)}
AFTER=${AFTER:?the zsim of this commit (state format 9)}
D=${DATA:?DATA: the bundled samples (build/samples-data)}
for rep in 1 2; do
for s in "$@"; do
for which in before after; do
  B=$BEFORE; [ $which = after ] && B=$AFTER
  /usr/bin/time -f "%U %S %e" -o ${TMPDIR:-/tmp}/time.txt $B scan $D/$s --json -q --threads 1 $EXTRA > ${TMPDIR:-/tmp}/o.json 2>/dev/null
  python3 - "$which" "$s" "$rep" "$(cat ${TMPDIR:-/tmp}/time.txt)" "$(uptime | sed 's/.*average: //')" "${TMPDIR:-/tmp}/o.json" >> $OUT <<'PY'
import json,sys
which,s,rep,t,load,path=sys.argv[1:7]
d=json.load(open(path))
cs={}
for r in d['results']:
    cs.setdefault(r['compression'],[0,0])
    cs[r['compression']][0]+=r['timing']['codec_seconds']; cs[r['compression']][1]+=r['timing']['codec_bytes']
u,sy,e=t.split()
print(f"{s} rep{rep} {which} user {u} sys {sy} wall {e} load {load} " + " ".join(f"{k}={v[0]:.3f}s/{v[1]>>20}MiB" for k,v in cs.items()))
PY
done; done; done
