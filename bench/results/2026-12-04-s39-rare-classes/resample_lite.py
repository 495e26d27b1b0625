#!/usr/bin/env python3
"""Design "rare-class census" (s39): a class = lz4's psize; a class of at most T unique blocks
(all of them, heavy ones included) is coded whole (a census, exact); the rest (common classes,
refcount < R) is a flat sample at level L, estimated by
  greg: zsim's regression on (refs*lsize, refs*lz4) over all common sampled blocks;
  strat: per-class ratio to the class's refs*lz4 total, linearised variance, summed;
  strat-eb4: per-class variance shrunk towards the pooled relative residual variance (4 df).
usage: resample_lite.py TABLE.csv NAME REPS T1,T2 L1,L2,... [R]"""
import csv, math, sys
sys.path.insert(0, ".")
from resample import splitmix, tz, CODECS, greg

def main():
    path, name, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    Ts = [int(v) for v in sys.argv[4].split(",")]
    Ls = [int(v) for v in sys.argv[5].split(",")]
    R = int(sys.argv[6]) if len(sys.argv) > 6 else 8
    B = []
    with open(path) as fh:
        for r in csv.DictReader(fh):
            B.append((int(r["lo"], 16), int(r["refs"]), int(r["lz4"]), [int(r[c]) for c in CODECS]))
    LS = 131072
    truth = [sum(b[1] * b[3][j] for b in B) for j in range(len(CODECS))]
    cls = {}
    for b in B:
        cls.setdefault(b[2], []).append(b)
    for T in Ts:
        rare = {x for x, v in cls.items() if len(v) <= T}
        cen = [b for b in B if b[2] in rare or b[1] >= R]
        pop = [b for b in B if not (b[2] in rare or b[1] >= R)]
        cen_tot = [sum(b[1] * b[3][j] for b in cen) for j in range(len(CODECS))]
        N = len(pop)
        S = sum(b[1] * LS for b in pop)
        X = sum(b[1] * b[2] for b in pop)
        Xh = {}
        Nh = {}
        for b in pop:
            Xh[b[2]] = Xh.get(b[2], 0) + b[1] * b[2]
            Nh[b[2]] = Nh.get(b[2], 0) + 1
        # one-pass coding: a common class also codes its first T blocks (order unknown: T)
        first = sum(min(T, len(v)) for x, v in cls.items() if x not in rare)
        for L in Ls:
            res = {m: [[0, [], []] for _ in CODECS] for m in ("greg", "strat", "strat-eb4")}
            ns = []
            for rep in range(reps):
                salt = splitmix(0x5eed0000 + rep)
                samp = [b for b in pop if tz(splitmix(b[0] ^ salt)) >= L]
                n = len(samp)
                ns.append(n)
                for j in range(len(CODECS)):
                    rows = [(b[1] * LS, b[1] * b[2], b[1] * b[3][j]) for b in samp]
                    g = greg(rows, N, S, X)
                    ests = {}
                    if g:
                        ests["greg"] = g["lin"]
                    # stratified ratio
                    by = {}
                    for b in samp:
                        by.setdefault(b[2], []).append((b[1] * b[2], b[1] * b[3][j]))
                    # pooled relative residual variance over all coded blocks of the classes
                    num = 0.0; den = 0
                    parts = []
                    ok = True
                    for x, rs in by.items():
                        sx = sum(r[0] for r in rs); sy = sum(r[1] for r in rs)
                        Rh = sy / sx
                        e = [r[1] - Rh * r[0] for r in rs]
                        nh = len(rs)
                        s2 = sum(v * v for v in e) / (nh - 1) if nh > 1 else 0.0
                        xbar = sx / nh
                        if nh > 1:
                            num += sum((v / xbar) ** 2 for v in e); den += nh - 1
                        parts.append((x, Rh, nh, s2, xbar))
                    vpool = num / den if den else 0.0
                    for meth in ("strat", "strat-eb4"):
                        tot = 0.0; var = 0.0
                        seen = set()
                        for x, Rh, nh, s2, xbar in parts:
                            seen.add(x)
                            tot += Rh * Xh[x]
                            f = nh / Nh[x]
                            if meth == "strat-eb4":
                                s2 = ((nh - 1) * s2 + 4 * vpool * xbar * xbar) / (nh - 1 + 4)
                            var += Nh[x] ** 2 * (1 - f) * s2 / nh
                        # classes with no sampled block: borrow the pooled ratio of y/x
                        miss = [x for x in Xh if x not in seen]
                        if miss:
                            allx = sum(r[1] * r[2] for r in samp); ally = sum(r[1] * r[3][j] for r in samp) if False else sum(b[1] * b[3][j] for b in samp)
                            allx = sum(b[1] * b[2] for b in samp)
                            Rp = ally / allx
                            for x in miss:
                                tot += Rp * Xh[x]
                                var += (Rp * Xh[x]) ** 2  # a 100% relative sd: no sample
                        ests[meth] = (tot, 1.959963985 * math.sqrt(var))
                    for meth, (tot, hw) in ests.items():
                        full = tot + cen_tot[j]
                        err = full - truth[j]
                        r = res[meth][j]
                        r[0] += abs(err) <= hw
                        r[1].append(hw / truth[j]); r[2].append(abs(err) / truth[j])
            ns.sort()
            print(f"{name} T={T} L={L} census={len(cen)} (rare classes {len(rare)}, heavy {sum(1 for b in B if b[1]>=R and b[2] not in rare)}) sample n~{ns[len(ns)//2]} one-pass coded~{len(cen)+ns[len(ns)//2]+first} of {len(B)}")
            for meth in res:
                cells = []
                for j, c in enumerate(CODECS):
                    cov, hws, errs = res[meth][j]
                    hws.sort(); errs.sort()
                    cells.append(f"{c} {cov/reps:.2f}/{100*hws[len(hws)//2]:.2f}%/{100*errs[int(0.95*len(errs))-1]:.2f}%")
                print(f"   {meth:10s} " + "  ".join(cells))
main()
