#!/usr/bin/env python3
"""The probe's codec cost per unique byte (ns/B) by several estimators, from the records a
debugging build of the probe printed (records/rec-SAMPLE-RUN.txt: one line per distinct record,
`REC bytes stands_for lz4_ns_per_byte codecs_ns_per_byte`, the last -1/bytes when not timed).
cap: the timed records' ns over their bytes (main's); plain: their mean weighted by what they
stand for; ratio: plain times lz4's mean over all / over the timed; reg: regression on lz4
(-w: each record's lz4 held to the timed records' range; the branch's CodecCpuPerByte).
Usage: probe_estimators.py records/rec-*.txt"""
import sys
def est(rows, mode):
    T=[r for r in rows if r[3]>=0]
    W=sum(r[1] for r in rows); wt=sum(r[1] for r in T)
    xt=sum(r[1]*r[2] for r in T)/wt; yt=sum(r[1]*r[3] for r in T)/wt
    if mode=='plain': return yt
    if mode=='cap': return sum(r[3]*r[0] for r in T)/sum(r[0] for r in T)
    lo=min(r[2] for r in T); hi=max(r[2] for r in T)
    xs=[(min(max(r[2],lo),hi) if 'w' in mode else r[2]) for r in rows]
    xa=sum(r[1]*x for r,x in zip(rows,xs))/W
    if mode.startswith('ratio'): return yt*xa/xt
    sxx=sum(r[1]*(r[2]-xt)**2 for r in T); sxy=sum(r[1]*(r[2]-xt)*(r[3]-yt) for r in T)
    b=max(0,sxy/sxx) if sxx>0 else 0
    return yt+b*(xa-xt)
for f in sys.argv[1:]:
    rows=[]
    for l in open(f):
        _,b,s,x,y=l.split(); rows.append((int(b),float(s),float(x),float(y) if not y.startswith('-') else -1))
    print(f.split('rec-')[1], ' '.join('%s=%.1f'%(m,est(rows,m)) for m in ('cap','plain','ratio','ratio-w','reg','reg-w')))
