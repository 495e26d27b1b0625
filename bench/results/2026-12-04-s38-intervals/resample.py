#!/usr/bin/env python3
"""Resample the per-unique-block table written by probe.cc and score candidate 95% intervals for
the referenced psize total of each costly codec (regression on lz4's psize, as
engine/estimate/regression_estimator.cc and engine/finish/tally.cc do it).

usage: resample.py TABLE.csv NAME REPS LEVELS(comma) [BOOT]   (plain Python, no numpy)
Prints one line per (method, level, codec): coverage, median relative half width (of the whole
referenced psize total, census included), and z95, the z an interval of this method's spread
would need to cover 95% of the draws (the 95th percentile of 1.96 |error| / half width); writes
summary-NAME.csv (also the median and 95th percentile of |error|). n is the sampled entries
below the census refcount R (R = 8 unless the method says censusR).
"""
import csv, math, random, statistics, sys

B = 131072
CODECS = ["zstd-3", "gzip-6", "lzjb", "zle"]
M64 = (1 << 64) - 1


def splitmix(v):
    v = (v + 0x9E3779B97F4A7C15) & M64
    v = ((v ^ (v >> 30)) * 0xBF58476D1CE4E5B9) & M64
    v = ((v ^ (v >> 27)) * 0x94D049BB133111EB) & M64
    return v ^ (v >> 31)


def tz(v):
    return 64 if v == 0 else ((v & -v).bit_length() - 1)


# ---- Student t quantile (regularised incomplete beta, Numerical Recipes' betacf) ----
def _betacf(a, b, x):
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d; d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + aa / c if abs(1 + aa / c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d; d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + aa / c if abs(1 + aa / c) > 1e-300 else 1e-300
        de = d * c
        h *= de
        if abs(de - 1) < 1e-12:
            break
    return h


def _ibeta(a, b, x):
    if x <= 0: return 0.0
    if x >= 1: return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1 - math.exp(lbt) * _betacf(b, a, 1 - x) / b


_tq = {}
def tquant(df, p=0.975):
    df = max(1.0, round(df, 1))
    if df > 1e6: return 1.959963985
    if df in _tq: return _tq[df]
    lo, hi = 0.0, 1000.0
    for _ in range(100):
        t = (lo + hi) / 2
        cdf = 1 - 0.5 * _ibeta(df / 2, 0.5, df / (df + t * t))
        if cdf < p: lo = t
        else: hi = t
    _tq[df] = (lo + hi) / 2
    return _tq[df]


# ---- the estimator ----
def fit(m):
    ss, sx, xx, sy, xy = m
    det = ss * xx - sx * sx
    if not (det > 1e-9 * ss * xx):
        return None
    return ((xx * sy - sx * xy) / det, (ss * xy - sx * sy) / det)


def greg(rows, N, S, X, z=1.959963985):
    """rows: list of (s, x, y) per sampled entry (refcount-weighted). Returns dict of
    method -> (total, half width) for the non-census part."""
    n = len(rows)
    out = {}
    if n < 4:
        return None
    ss = sum(r[0] * r[0] for r in rows); sx = sum(r[0] * r[1] for r in rows)
    xx = sum(r[1] * r[1] for r in rows); sy = sum(r[0] * r[2] for r in rows)
    xy = sum(r[1] * r[2] for r in rows)
    s_ = sum(r[0] for r in rows); x_ = sum(r[1] for r in rows); y_ = sum(r[2] for r in rows)
    f = fit((ss, sx, xx, sy, xy))
    if f is None:
        return None
    a, b = f
    e = [r[2] - a * r[0] - b * r[1] for r in rows]
    esum = sum(e)
    tot = max(0.0, a * S + b * X + N / n * esum)
    fpc = max(0.0, 1 - n / N)
    em = esum / n
    cen = sum((v - em) ** 2 for v in e)
    se = N * math.sqrt(fpc * cen / (n - 3) / n)
    out["lin"] = (tot, z * se)
    out["t"] = (tot, tquant(n - 3) * se)
    # effective df of the variance estimate from the residuals' kurtosis (Satterthwaite-like):
    # Var(s^2)/sigma^4 ~ (kappa - 1)/n, a chi-square's is 2/df
    m2 = cen / n
    m4 = sum((v - em) ** 4 for v in e) / n
    kappa = m4 / (m2 * m2) if m2 > 0 else 3.0
    dfk = max(1.0, min(n - 3.0, 2.0 * n / max(kappa - 1.0, 1e-9)))
    out["kurt-t"] = (tot, tquant(dfk) * se)
    # HC3-style: residuals inflated by 1/(1-h_i)
    det = ss * xx - sx * sx
    i00, i01, i11 = xx / det, -sx / det, ss / det
    e3 = []
    for r, v in zip(rows, e):
        h = r[0] * r[0] * i00 + 2 * r[0] * r[1] * i01 + r[1] * r[1] * i11
        e3.append(v / max(1e-6, 1 - h))
    m3 = sum(e3) / n
    se3 = N * math.sqrt(fpc * sum((v - m3) ** 2 for v in e3) / (n - 3) / n)
    out["hc3"] = (tot, z * se3)
    # delete-one jackknife of the total
    tj = []
    for r in rows:
        s, x, y = r
        fj = fit((ss - s * s, sx - s * x, xx - x * x, sy - s * y, xy - x * y))
        if fj is None:
            tj.append(tot); continue
        aj, bj = fj
        tj.append(aj * S + bj * X + N / (n - 1) * ((y_ - y) - aj * (s_ - s) - bj * (x_ - x)))
    tm = sum(tj) / n
    vj = fpc * (n - 1) / n * sum((t - tm) ** 2 for t in tj)
    out["jk"] = (tot, z * math.sqrt(vj))
    out["jk-t"] = (tot, tquant(n - 3) * math.sqrt(vj))
    out["_e"] = e
    out["_se"] = se
    return out


def boot_multi(rowsets, N, S, X, tots, nboot, seed, fpc):
    """Percentile bootstrap, the same resampled indices for every codec. rowsets: per codec the
    (s, x, y) list (same s, x). Returns per codec (lo, hi) of the total (deviation from the
    estimate scaled by sqrt(1 - f))."""
    rnd = random.Random(seed)
    n = len(rowsets[0])
    base = rowsets[0]
    k = len(rowsets)
    ys = [[r[2] for r in rs] for rs in rowsets]
    sims = [[] for _ in range(k)]
    sq = math.sqrt(fpc)
    for _ in range(nboot):
        cnt = [0] * n
        for _ in range(n):
            cnt[rnd.randrange(n)] += 1
        ss = sx = xx = s_ = x_ = 0.0
        sy = [0.0] * k; xy = [0.0] * k; y_ = [0.0] * k
        for i in range(n):
            c = cnt[i]
            if not c: continue
            s, x = base[i][0], base[i][1]
            ss += c * s * s; sx += c * s * x; xx += c * x * x; s_ += c * s; x_ += c * x
            for j in range(k):
                y = ys[j][i]
                sy[j] += c * s * y; xy[j] += c * x * y; y_[j] += c * y
        for j in range(k):
            f = fit((ss, sx, xx, sy[j], xy[j]))
            if f is None: continue
            a, b = f
            t = a * S + b * X + N / n * (y_[j] - a * s_ - b * x_)
            sims[j].append(tots[j] + sq * (t - tots[j]))
    res = []
    for j in range(k):
        v = sorted(sims[j])
        if len(v) < 10:
            res.append(None); continue
        lo = v[int(0.025 * (len(v) - 1))]; hi = v[int(math.ceil(0.975 * (len(v) - 1)))]
        res.append((lo, hi))
    return res


def main():
    path, name, reps, levels = sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(v) for v in sys.argv[4].split(",")]
    nboot = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    boot_max_n = int(sys.argv[6]) if len(sys.argv) > 6 else 2000
    blocks = []
    with open(path) as fh:
        for r in csv.DictReader(fh):
            blocks.append((int(r["lo"], 16), int(r["refs"]), int(r["lz4"]), [int(r[c]) for c in CODECS]))
    U = len(blocks)
    truth = [sum(b[1] * b[3][j] for b in blocks) for j in range(len(CODECS))]
    reflz4 = sum(b[1] * b[2] for b in blocks)
    print(f"# {name}: {U} unique non-zero 128K blocks, {sum(b[1] for b in blocks)} references")
    for R in (2, 3, 4, 8):
        cb = [b for b in blocks if b[1] >= R]
        print(f"#   refcount >= {R}: {len(cb)} entries, {sum(b[1] for b in cb)} refs, "
              f"{100 * sum(b[1] * b[2] for b in cb) / reflz4:.1f}% of lz4's referenced psize")
    # census variants: R = the refcount from which every entry is coded (zsim: 8)
    CENSUS = [8, 4, 3, 2]
    pre = {}
    for R in CENSUS:
        pop = [b for b in blocks if b[1] < R]
        cen = [sum(b[1] * b[3][j] for b in blocks if b[1] >= R) for j in range(len(CODECS))]
        S = float(sum(b[1] * B for b in pop)); X = float(sum(b[1] * b[2] for b in pop))
        pre[R] = (pop, cen, S, X)
    stats = {}  # (method, L, codec) -> list of (covered, relhw, relerr)
    nsamp = {L: [] for L in levels}

    def rec(meth, L, j, tot, hw):
        err = tot - truth[j]
        stats.setdefault((meth, L, CODECS[j]), []).append((abs(err) <= hw, hw / truth[j], err / truth[j],
                                                            1.959963985 * abs(err) / hw if hw > 0 else float("inf")))

    for rep in range(reps):
        salt = splitmix(0x5eed0000 + rep)
        lvl = {b[0]: tz(splitmix(b[0] ^ salt)) for b in blocks}
        for L in levels:
            for R in CENSUS:
                pop, cen, S, X = pre[R]
                N = len(pop)
                samp = [b for b in pop if lvl[b[0]] >= L]
                nsamp.setdefault((R, L), []).append(len(samp))
                if R == 8: nsamp[L].append(len(samp))
                rowsets = []
                tots = []
                for j in range(len(CODECS)):
                    rows = [(float(b[1] * B), float(b[1] * b[2]), float(b[1] * b[3][j])) for b in samp]
                    rowsets.append(rows)
                    g = greg(rows, N, S, X)
                    if g is None:
                        tots.append(None); continue
                    tots.append(g["lin"][0])
                    if R == 8:
                        for meth in ("lin", "t", "kurt-t", "hc3", "jk", "jk-t"):
                            t, hw = g[meth]
                            rec(meth, L, j, cen[j] + t, hw)
                        # stratified by refcount, census 8+: strata 1 / 2-3 / 4-7, a fit of
                        # their own where a stratum has >= 30 sampled entries, else the pooled
                        # fit with the stratum's own residuals (>= 2 entries), else the pooled
                        # residuals expanded to the stratum.
                        sv = 0.0; st = 0.0
                        a, b_ = fit((sum(r[0] * r[0] for r in rows), sum(r[0] * r[1] for r in rows),
                                     sum(r[1] * r[1] for r in rows), sum(r[0] * r[2] for r in rows),
                                     sum(r[1] * r[2] for r in rows)))
                        for lo_, hi_ in ((1, 1), (2, 3), (4, 7)):
                            popk = [bb for bb in pop if lo_ <= bb[1] <= hi_]
                            if not popk: continue
                            Nk = len(popk)
                            Sk = float(sum(bb[1] * B for bb in popk)); Xk = float(sum(bb[1] * bb[2] for bb in popk))
                            rk = [(float(bb[1] * B), float(bb[1] * bb[2]), float(bb[1] * bb[3][j])) for bb in samp if lo_ <= bb[1] <= hi_]
                            nk = len(rk)
                            gk = greg(rk, Nk, Sk, Xk) if nk >= 30 else None
                            if gk is not None:
                                st += gk["lin"][0]; sv += gk["_se"] ** 2
                            elif nk >= 2:
                                ek = [r[2] - a * r[0] - b_ * r[1] for r in rk]
                                mk = sum(ek) / nk
                                st += a * Sk + b_ * Xk + Nk / nk * sum(ek)
                                sv += Nk * Nk * max(0, 1 - nk / Nk) * sum((v - mk) ** 2 for v in ek) / (nk - 1) / nk
                            else:  # 0-1 sampled: the pooled residual variance per entry, scaled
                                e = g["_e"]; em = sum(e) / len(e)
                                st += a * Sk + b_ * Xk + Nk * em
                                vv = sum((v - em) ** 2 for v in e) / (len(e) - 1)
                                sv += Nk * Nk * vv / max(nk, 1)
                        rec("strat", L, j, cen[j] + st, 1.959963985 * math.sqrt(sv))
                    else:
                        t, hw = g["lin"]
                        rec(f"census{R}", L, j, cen[j] + t, hw)
                        t, hw = g["jk"]
                        rec(f"census{R}-jk", L, j, cen[j] + t, hw)
                if R == 8 and nboot and len(samp) <= boot_max_n and all(t is not None for t in tots):
                    res = boot_multi(rowsets, N, S, X, tots, nboot, salt ^ L, max(0.0, 1 - len(samp) / N))
                    for j, r in enumerate(res):
                        if r is None: continue
                        lo, hi = r
                        # covered when the truth's non-census part lies in [lo, hi]
                        cov = lo <= truth[j] - cen[j] <= hi
                        stats.setdefault(("boot", L, CODECS[j]), []).append(
                            (cov, (hi - lo) / 2 / truth[j], (tots[j] + cen[j] - truth[j]) / truth[j],
                             1.959963985 * abs(tots[j] + cen[j] - truth[j]) / ((hi - lo) / 2) if hi > lo else float("inf")))
        print(f"# rep {rep} done", file=sys.stderr, flush=True)
    meths = ["lin", "t", "hc3", "jk", "jk-t", "kurt-t", "boot", "strat", "census4", "census4-jk", "census3", "census3-jk", "census2", "census2-jk"]
    with open(f"summary-{name}.csv", "w") as fo:
        fo.write("dataset,method,level,median_n,codec,reps,coverage,median_rel_halfwidth_pct,median_abs_err_pct,p95_abs_err_pct,z_for_95pct\n")
        for meth in meths:
            for L in levels:
                R = int(meth[6:].split("-")[0]) if meth.startswith("census") else 8
                mn = statistics.median(nsamp[(R, L)])
                line = f"{meth:11s} L{L} n~{mn:6.0f} |"
                for c in CODECS:
                    v = stats.get((meth, L, c))
                    if not v:
                        line += f" {c} -- |"; continue
                    cov = sum(1 for t in v if t[0]) / len(v)
                    hw = statistics.median(t[1] for t in v) * 100
                    ae = sorted(abs(t[2]) * 100 for t in v)
                    mae = statistics.median(ae); p95 = ae[min(len(ae) - 1, int(0.95 * len(ae)))]
                    line += f" {c} cov {cov:.2f} hw {hw:.2f}% |"
                    zz = sorted(t[3] for t in v); z95 = zz[min(len(zz) - 1, int(math.ceil(0.95 * len(zz))) - 1)]
                    line += f" z95 {z95:.1f} |"
                    fo.write(f"{name},{meth},{L},{mn:.0f},{c},{len(v)},{cov:.3f},{hw:.3f},{mae:.3f},{p95:.3f},{z95:.2f}\n")
                print(line)


if __name__ == "__main__":
    main()
