import sys
from est import *
def WLv(p, lo, hi):
    avg=max(0,min(p["pub"]-p["unique"],p["total"]-p["read"]))*p["pcpb"]
    tot=max(0,p["pub"]*p["pcpb"]-p["codec"])
    return (p["total"]-p["read"])*R+min(max(tot,lo*avg),hi*avg)
for fn in sorted(sys.argv[1:]):
    hdr,pts,shown=parse(fn)
    wall=float(hdr["wall"])
    if not shown or shown[0]["exp"]<0: print(fn.split('/')[-1][:26],"skip"); continue
    p,e=shown
    wl=WL(p); pace=(p["exp"]-p["t"])/wl
    out=[]
    for lo,hi in ((1,1),(0,99),(0.5,2),(0.67,1.5)):
        out.append("[%.2g,%.2g]=%.2f"%(lo,hi,(p["t"]+pace*WLv(p,lo,hi))/wall))
    print("%-26s %s"%(fn.split('/')[-1][:26]," ".join(out)))
