#!/usr/bin/env python3
"""The pilot rule (engine/estimate/pilot_level.cc) on random draws of 256 unique blocks of a
per-block table (session 38 probe.cc: lz4 and codec psize per unique 128K block).
usage: pilot_sim.py TABLE.csv..."""
import csv, math, random, sys
CODECS=["zstd-3","gzip-6","lzjb","zle"]
def level_for(pts, U, budget, h=0.0025, floor=1024, z=1.96):
    m=len(pts)
    xs=[p[0] for p in pts]; ys=[p[1] for p in pts]
    mx=sum(xs)/m; my=sum(ys)/m
    sxx=sum((x-mx)**2 for x in xs); sxy=sum((x-mx)*(y-my) for x,y in zip(xs,ys))
    b=sxy/sxx if sxx>0 else 0
    e=[y-my-b*(x-mx) for x,y in zip(xs,ys)]
    s2=sum(v*v for v in e)/(m-2)
    rho=math.sqrt(s2)/my
    n=max(floor,(z*rho/h)**2)
    L=budget
    while U/2**(L+1)>=n: L+=1
    return L, rho, n
for f in sys.argv[1:]:
    R=list(csv.DictReader(open(f)))
    U=len(R)
    for h in (0.0025,):
      for m in (128,256):
        out={c:[] for c in CODECS}
        for rep in range(200):
            random.seed(rep)
            pick=random.sample(R,m)
            for c in CODECS:
                L,rho,n=level_for([(float(r['lz4']),float(r[c])) for r in pick],U,0,h)
                out[c].append(L)
        print(f,U,'m',m,'h',h,{c:sorted(set((l,out[c].count(l)) for l in out[c])) for c in CODECS})
