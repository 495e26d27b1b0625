#!/bin/bash
# interleaved runs on database-large: codec list, exact or not
Z=/tmp/b-51/zsim
D=/var/tmp/bench/database-large
find $D -type f -print0 | xargs -0 cat > /dev/null
for rep in 1 2 3; do
  for c in lz4 lzjb gzip-6; do
    for mode in sampled exact; do
      extra=""; [ $mode = exact ] && extra="--exact"
      l=$(cut -d' ' -f1 /proc/loadavg)
      s=$(date +%s.%N)
      $Z scan $D --json --no-progress --threads 2 --compression $c $extra > /tmp/ib-$c-$mode.json 2>/dev/null
      e=$(date +%s.%N)
      python3 - "$c" "$mode" "$l" "$s" "$e" <<'PY'
import json,sys
c,mode,l,s,e=sys.argv[1:]
j=json.load(open(f"/tmp/ib-{c}-{mode}.json"))
r=j['results'][0]; t=j['input']['top_up']
ci=r.get('ci95')
hw = "%.3f%%"%(100*(ci[1]-ci[0])/2/r['compressratio']) if ci else "-"
print(f"{c}\t{mode}\tload={l}\twall={float(e)-float(s):.2f}\tratio={r['compressratio']}\texact={r['exact']}\thalf={hw}\tci={ci}\tcodec_s={r['timing']['codec_seconds']:.2f}\treread={t[0]['blocks_read_again'] if t else 0}\treread_s={t[0]['seconds'] if t else 0:.2f}")
PY
    done
  done
done
