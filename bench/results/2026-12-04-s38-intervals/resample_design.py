#!/usr/bin/env python3
"""Stratified-by-lz4 designs (method e): lz4's psize x is known for every unique block before the
costly codecs run, so the level a block must reach to be coded may depend on its lz4 class:
class 0 x <= B/8, class 1 B/8 < x <= B/2, class 2 x > B/2. A block of class h is coded when its
(salted) level >= L + d[h] (d[h] = None: every block of the class, a take-all stratum); entries
with refcount >= R are a census (zsim: R = 8). Estimate: per class the regression estimator of
regression_estimator.cc (psize ~ a lsize + b lz4, per referenced block, through the origin) on
that class's sampled entries, its own fit where the class has >= MINFIT sampled entries, else the
whole sample's fit with the class's own residuals; variance = sum over classes of the
linearised per-class variance. Also: the same stratified estimate with a Satterthwaite t.

usage: resample_design.py TABLE.csv NAME REPS LEVELS(comma) > out.txt
"""
import csv, math, statistics, sys
sys.path.insert(0, __file__.rsplit("/", 1)[0] if "/" in __file__ else ".")
B = 131072
CODECS = ["zstd-3", "gzip-6", "lzjb", "zle"]
M64 = (1 << 64) - 1
MINFIT = 30


def splitmix(v):
    v = (v + 0x9E3779B97F4A7C15) & M64
    v = ((v ^ (v >> 30)) * 0xBF58476D1CE4E5B9) & M64
    v = ((v ^ (v >> 27)) * 0x94D049BB133111EB) & M64
    return v ^ (v >> 31)


def tz(v):
    return 64 if v == 0 else ((v & -v).bit_length() - 1)


def klass(x):
    return 0 if x <= B // 8 else 1 if x <= B // 2 else 2


def moments(rows):
    ss = sx = xx = sy = xy = 0.0
    for s, x, y in rows:
        ss += s * s; sx += s * x; xx += x * x; sy += s * y; xy += x * y
    return ss, sx, xx, sy, xy


def fit(m):
    ss, sx, xx, sy, xy = m
    det = ss * xx - sx * sx
    if not (det > 1e-9 * ss * xx):
        return None
    return ((xx * sy - sx * xy) / det, (ss * xy - sx * sy) / det)


from resample import tquant  # noqa: E402  (same folder)

DESIGNS = {
    # name: (offsets per class, census R)
    "flat": ((0, 0, 0), 8),                 # zsim today, but the estimate stratified by class
    "takeall-hi": ((0, 0, None), 8),
    "neyman-ish": ((2, 0, -3), 8),          # class 0 at 1/4 the rate, class 2 at 8x
    "neyman-ish-r2": ((2, 0, -3), 2),
    "lo+2 hi-2": ((2, 0, -2), 8),
    "lo+2 takeall-hi": ((2, 0, None), 8),
    "lo+2 takeall-hi r2": ((2, 0, None), 2),
}


def main():
    path, name, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    levels = [int(v) for v in sys.argv[4].split(",")]
    only = sys.argv[5].split(";") if len(sys.argv) > 5 else list(DESIGNS)
    blocks = []
    with open(path) as fh:
        for r in csv.DictReader(fh):
            x = int(r["lz4"])
            blocks.append((int(r["lo"], 16), int(r["refs"]), x, [int(r[c]) for c in CODECS], klass(x)))
    truth = [sum(b[1] * b[3][j] for b in blocks) for j in range(len(CODECS))]
    stats = {}
    ncoded = {}
    for rep in range(reps):
        salt = splitmix(0x5eed0000 + rep)
        lvl = {b[0]: tz(splitmix(b[0] ^ salt)) for b in blocks}
        for dname in only:
            offs, R = DESIGNS[dname]
            pop = [b for b in blocks if b[1] < R]
            cen = [sum(b[1] * b[3][j] for b in blocks if b[1] >= R) for j in range(len(CODECS))]
            ncen = sum(1 for b in blocks if b[1] >= R)
            byk = [[b for b in pop if b[4] == h] for h in range(3)]
            for L in levels:
                samp = [[b for b in byk[h] if offs[h] is None or lvl[b[0]] >= L + offs[h]] for h in range(3)]
                nc = sum(len(s) for s in samp)
                ncoded.setdefault((dname, L), []).append((nc, ncen))
                for j in range(len(CODECS)):
                    allrows = [(float(b[1] * B), float(b[1] * b[2]), float(b[1] * b[3][j])) for h in range(3) for b in samp[h]]
                    pf = fit(moments(allrows)) if len(allrows) >= 4 else None
                    if pf is None:
                        continue
                    tot = cen[j]; var = 0.0; dfden = 0.0; ok = True
                    for h in range(3):
                        Nh = len(byk[h])
                        if Nh == 0: continue
                        rows = [(float(b[1] * B), float(b[1] * b[2]), float(b[1] * b[3][j])) for b in samp[h]]
                        nh = len(rows)
                        Sh = float(sum(b[1] * B for b in byk[h])); Xh = float(sum(b[1] * b[2] for b in byk[h]))
                        f = fit(moments(rows)) if nh >= MINFIT else None
                        k = 3 if f is not None else 1
                        a, bb = f if f is not None else pf
                        if nh == 0:
                            ok = False; tot += a * Sh + bb * Xh; continue
                        e = [r[2] - a * r[0] - bb * r[1] for r in rows]
                        em = sum(e) / nh
                        tot += a * Sh + bb * Xh + Nh * em
                        if nh >= Nh:
                            continue
                        if nh - k < 1:
                            ok = False; continue
                        vh = Nh * Nh * (1 - nh / Nh) * sum((v - em) ** 2 for v in e) / (nh - k) / nh
                        var += vh
                        dfden += vh * vh / (nh - k)
                    se = math.sqrt(var)
                    dfs = var * var / dfden if dfden > 0 else 1e9
                    for meth, hw in (("strat-lin", 1.959963985 * se), ("strat-t", tquant(dfs) * se)):
                        if not ok: hw = float("inf")
                        err = tot - truth[j]
                        stats.setdefault((dname, meth, L, CODECS[j]), []).append((abs(err) <= hw, hw / truth[j], err / truth[j]))
        print(f"# rep {rep} done", file=sys.stderr, flush=True)
    print(f"# {name}: {len(blocks)} unique blocks; classes (x<=B/8, <=B/2, >B/2): "
          f"{[sum(1 for b in blocks if b[4] == h) for h in range(3)]}")
    with open(f"design-{name}.csv", "w") as fo:
        fo.write("dataset,design,method,level,median_coded,census_entries,codec,reps,coverage,median_rel_halfwidth_pct,median_abs_err_pct,p95_abs_err_pct\n")
        for dname in only:
            for meth in ("strat-lin", "strat-t"):
                for L in levels:
                    nc = statistics.median(v[0] for v in ncoded[(dname, L)]); ncen = ncoded[(dname, L)][0][1]
                    line = f"{dname:20s} {meth:9s} L{L} coded~{nc:6.0f} (+{ncen} census) |"
                    for c in CODECS:
                        v = stats.get((dname, meth, L, c))
                        if not v:
                            line += f" {c} -- |"; continue
                        cov = sum(1 for t in v if t[0]) / len(v)
                        hw = statistics.median(t[1] for t in v) * 100
                        ae = sorted(abs(t[2]) * 100 for t in v)
                        line += f" {c} cov {cov:.2f} hw {hw:.2f}% |"
                        fo.write(f"{name},{dname},{meth},{L},{nc:.0f},{ncen},{c},{len(v)},{cov:.3f},{hw:.3f},{statistics.median(ae):.3f},{ae[min(len(ae)-1, int(0.95*len(ae)))]:.3f}\n")
                    print(line)


main()
