import glob,sys
R=1/3.5e9
def parse(fn):
    lines=open(fn).read().split("\n")
    hdr=dict(kv.split("=") for kv in lines[0].split()[1:])
    pts=[]; shown=None; last=None
    for ln in lines[1:]:
        if ln.startswith("TRACE END"): continue
        if ln.startswith("TRACE "):
            d=dict(kv.split("=") for kv in ln.split()[1:])
            p=dict(t=float(d["t"]),cpu=float(d["cpu"]),total=int(d["read_total"]),read=int(d["read"]),codec=float(d["codec"]),unique=int(d["unique"]))
            a,b=d["logical"].split("/"); p["pct"]=int(a)/max(1,int(b))
            p["first"]=tuple(float(x) for x in d["first"].split(","))
            p["probed"]=tuple(float(x) for x in d["probed"].split(","))
            ok,ub,cpb=d["probe"].split(","); p["pok"]=ok=="1"; p["pub"]=float(ub); p["pcpb"]=float(cpb); p["exp"]=float(d["exp"])
            pts.append(p); last=p
        elif ln.startswith("scanned ") and "expected " in ln and "%)" in ln and shown is None:
            pct=int(ln.split("(")[1].split("%")[0])
            if pct>=10: shown=(last, float(ln.split("expected ")[1].split(" s")[0]))
    return hdr,pts,shown
def work(p): return p["read"]*R+p["codec"]
def WL(p):
    return (p["total"]-p["read"])*R+max(0,min(p["pub"]-p["unique"],p["total"]-p["read"]))*p["pcpb"]
def at(pts,t):  # the trace point at time t (first with t>=)
    for q in pts:
        if q["t"]>=t-1e-9: return q
    return pts[-1]
def estimators(pts,p,wall,sec):
    out={}
    out["cur"]=p["exp"]
    wl=WL(p)
    f=at(pts,p["first"][0]); pr=at(pts,p["probed"][0]) if p["probed"][0]>=0 else f
    dwf=work(p)-work(f)
    out["first"]=p["t"]+(p["t"]-f["t"])/dwf*wl if dwf>0 else None
    # cpu: kappa since probed, rate since first
    dwp=work(p)-work(pr); dcp=p["cpu"]-pr["cpu"]
    kappa=dcp/dwp if dwp>0 else (p["cpu"]-f["cpu"])/dwf
    rate=(p["cpu"]-f["cpu"])/(p["t"]-f["t"])
    out["cpu"]=p["t"]+wl*kappa/rate
    rate0=p["cpu"]/p["t"]
    out["cpu0"]=p["t"]+wl*kappa/rate0
    # oracle: true WL with current pace
    L=pts[-1]; wlt=work(L)-work(p)
    out["oracleWL"]=p["t"]+(p["exp"]-p["t"])/wl*wlt if wl>0 else None
    return out, dict(kappa=kappa, rate=rate, wl=wl, wlt=wlt)
if __name__=="__main__":
    for fn in sorted(sys.argv[1:]):
        hdr,pts,shown=parse(fn)
        wall=float(hdr["wall"]); sec=float(hdr["seconds"])
        if not shown: print(fn, "no shown"); continue
        p,e=shown
        o,x=estimators(pts,p,wall,sec)
        print("%-28s wall=%.2f t=%.2f pct=%.2f shown=%.1f | %s | k=%.2f rate=%.2f wl=%.2f/%.2f" % (fn.split("/")[-1][:28],wall,p["t"],p["pct"],e,
            " ".join("%s=%.2f"%(k,v/wall) for k,v in o.items() if v), x["kappa"],x["rate"],x["wl"],x["wlt"]))
