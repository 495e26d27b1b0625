#!/bin/bash
# Interleaved runs: mpirun -n 2 --threads 1, the census at ceil(8/N) (old) against the reread (new).
mkdir -p /tmp/s50
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
OLD=$1; NEW=$2; TREE=$3; shift 3
for rep in 1 2 3; do for v in old new; do
  bin=$OLD; [ $v = new ] && bin=$NEW
  s=$(date +%s.%N)
  ZSIM_MPI_STATS=1 mpirun --allow-run-as-root --oversubscribe -n 2 $bin scan "$TREE" --threads 1 "$@" --json > /tmp/s50/$v-$rep.json 2>/tmp/s50/$v-$rep.err
  e=$(date +%s.%N)
  python3 - "$v" "$rep" "$s" "$e" /tmp/s50/$v-$rep.json /tmp/s50/$v-$rep.err <<'P'
import json,sys,re
v,rep,s,e,f,err=sys.argv[1:]
d=json.load(open(f)); t=sum(x['timing']['codec_seconds'] for x in d['results']); b=sum(x['timing']['codec_bytes'] for x in d['results'])
rr=sum(int(m) for m in re.findall(r'census_reread=(\d+)',open(err).read()))
print(f"{v} rep{rep} wall {float(e)-float(s):.2f} s, report {d['seconds']:.2f} s, codec {t:.1f} CPU s, {b/2**20:.0f} MiB coded, census_reread {rr}", flush=True)
P
done; done
