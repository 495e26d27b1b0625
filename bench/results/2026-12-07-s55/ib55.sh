#!/bin/bash
# interleaved lz4-alone on database-large: old binary (b-51), new (b-55), --exact
D=/var/tmp/bench/database-large
find $D -type f -print0 | xargs -0 cat > /dev/null
for rep in 1 2 3; do
  for v in old new exact; do
    Z=/tmp/b-55/zsim; extra=""
    [ $v = old ] && Z=/tmp/b-51/zsim
    [ $v = exact ] && extra="--exact"
    l=$(cut -d' ' -f1 /proc/loadavg)
    s=$(date +%s.%N)
    $Z scan $D --json --no-progress --threads 2 --compression lz4 $extra > /tmp/ib55-$v.json 2>/dev/null
    e=$(date +%s.%N)
    python3 - "$v" "$l" "$s" "$e" <<'PY'
import json,sys
v,l,s,e=sys.argv[1:]
j=json.load(open(f"/tmp/ib55-{v}.json"))
r=j['results'][0]; t=j['input']['top_up']
print(f"{v}\tload={l}\twall={float(e)-float(s):.2f}\tratio={r['compressratio']}\texact={r['exact']}\tpsize={r['psize']}\tcodec_s={r['timing']['codec_seconds']:.2f}\treread={t[0]['blocks_read_again'] if t else 0}")
PY
  done
done
