#!/usr/bin/env python3
"""Design "xclass": stratify by lz4's psize itself (x, a multiple of the sector, so at most 32
values for a 128K block at ashift 12), each class with its own level. lz4 runs on every unique
block before the costly codecs, so the class is known when the block is met; a class's level is
the highest at which its N_h unique blocks still leave K expected samples
(L_h = floor(log2(N_h / K)), 0 when N_h < 2K: every block of the class). The level of a class
only rises as the scan meets its blocks (as zsim's global level does), so every block at or above
the final level was coded whatever the order: a Bernoulli(2^-L_h) sample per class.
Estimate per class: a ratio to the class's known referenced lz4 total (x is constant within a
class; s = refs * lsize is then proportional to refs * x, so the regression reduces to the
ratio), linearised variance; sum over classes; entries with refcount >= R a census.
Intervals: z = 1.96 ("x-lin") and a Student t with Satterthwaite's df over the classes ("x-t");
"x-pool"/"x-pool-t": each sampled class's variance floored at what the pooled relative residual
variance (u = y/x - R_h over every class's coded blocks, take-all classes included) gives it;
"x-eb1"/"x-eb4": each class's variance shrunk towards that pooled one with 1 or 4 pseudo degrees
of freedom (empirical Bayes), z = 1.96.

usage: resample_xclass.py TABLE.csv NAME REPS K1,K2,... [R1,R2,...]
"""
import csv, math, statistics, sys
sys.path.insert(0, __file__.rsplit("/", 1)[0] if "/" in __file__ else ".")
from resample import tquant, splitmix, tz, CODECS  # noqa: E402


def main():
    path, name, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    Ks = [int(v) for v in sys.argv[4].split(",")]
    Rs = [int(v) for v in sys.argv[5].split(",")] if len(sys.argv) > 5 else [8]
    blocks = []
    with open(path) as fh:
        for r in csv.DictReader(fh):
            blocks.append((int(r["lo"], 16), int(r["refs"]), int(r["lz4"]), [int(r[c]) for c in CODECS]))
    truth = [sum(b[1] * b[3][j] for b in blocks) for j in range(len(CODECS))]
    stats, ncoded = {}, {}
    for rep in range(reps):
        salt = splitmix(0x5eed0000 + rep)
        lvl = {b[0]: tz(splitmix(b[0] ^ salt)) for b in blocks}
        for R in Rs:
            pop = [b for b in blocks if b[1] < R]
            cen = [sum(b[1] * b[3][j] for b in blocks if b[1] >= R) for j in range(len(CODECS))]
            ncen = sum(1 for b in blocks if b[1] >= R)
            classes = {}
            for b in pop:
                classes.setdefault(b[2], []).append(b)
            for K in Ks:
                samp = {}
                nc = 0
                for x, cb in classes.items():
                    Nh = len(cb)
                    Lh = int(math.floor(math.log2(Nh / K))) if Nh >= 2 * K else 0
                    samp[x] = (Lh, [b for b in cb if lvl[b[0]] >= Lh])
                    nc += len(samp[x][1])
                ncoded.setdefault((R, K), []).append((nc, ncen, len(classes)))
                for j in range(len(CODECS)):
                    # pooled relative residual variance over every class with >= 2 coded blocks
                    # (take-all ones included): u = y/x - R_h per coded block
                    pu = 0.0; pdf = 0
                    for x, cb in classes.items():
                        sb = samp[x][1]
                        if len(sb) < 2: continue
                        Rh = sum(b[1] * b[3][j] for b in sb) / sum(b[1] * b[2] for b in sb)
                        pu += sum((b[3][j] / b[2] - Rh) ** 2 for b in sb); pdf += len(sb) - 1
                    vpool = pu / pdf if pdf else 0.0
                    varp = 0.0; dfdenp = 0.0; veb = {1: 0.0, 4: 0.0}
                    tot = cen[j]; var = 0.0; dfden = 0.0; bad = False
                    for x, cb in classes.items():
                        Lh, sb = samp[x]
                        Nh, nh = len(cb), len(sb)
                        Xh = float(sum(b[1] * b[2] for b in cb))
                        if nh == 0:
                            bad = True; tot += Xh; continue  # lz4's psize stands in
                        rx = [float(b[1] * b[2]) for b in sb]; ry = [float(b[1] * b[3][j]) for b in sb]
                        Rh = sum(ry) / sum(rx)
                        tot += Rh * Xh
                        if nh >= Nh:
                            continue
                        if nh < 2:
                            bad = True; continue
                        d = [y - Rh * v for y, v in zip(ry, rx)]
                        vh = Nh * Nh * (1 - nh / Nh) * sum(t * t for t in d) / (nh - 1) / nh
                        var += vh; dfden += vh * vh / (nh - 1)
                        mx = sum(rx) / nh
                        vp = max(vh, Nh * Nh * (1 - nh / Nh) * vpool * mx * mx / nh)
                        varp += vp; dfdenp += vp * vp / (nh - 1)
                        for nu in (1, 4):  # shrink the class's variance towards the pooled one
                            s2 = sum(t * t for t in d) / (nh - 1)
                            s2eb = ((nh - 1) * s2 + nu * vpool * mx * mx) / (nh - 1 + nu)
                            veb[nu] += Nh * Nh * (1 - nh / Nh) * s2eb / nh
                    se = math.sqrt(var)
                    dfs = var * var / dfden if dfden > 0 else 1e9
                    sep = math.sqrt(varp)
                    dfp = varp * varp / dfdenp if dfdenp > 0 else 1e9
                    for meth, hw in (("x-lin", 1.959963985 * se), ("x-t", tquant(dfs) * se),
                                     ("x-pool", 1.959963985 * sep), ("x-pool-t", tquant(dfp) * sep),
                                     ("x-eb1", 1.959963985 * math.sqrt(veb[1])), ("x-eb4", 1.959963985 * math.sqrt(veb[4]))):
                        if bad: hw = float("inf")
                        err = tot - truth[j]
                        stats.setdefault((R, K, meth, CODECS[j]), []).append((abs(err) <= hw, hw / truth[j], err / truth[j]))
        print(f"# rep {rep} done", file=sys.stderr, flush=True)
    with open(f"xclass-{name}.csv", "w") as fo:
        fo.write("dataset,census_R,K,method,median_coded,census_entries,classes,codec,reps,coverage,median_rel_halfwidth_pct,median_abs_err_pct,p95_abs_err_pct\n")
        for R in Rs:
            for meth in ("x-lin", "x-t", "x-pool", "x-pool-t", "x-eb1", "x-eb4"):
                for K in Ks:
                    v0 = ncoded[(R, K)]
                    nc = statistics.median(v[0] for v in v0)
                    line = f"R{R} K{K:3d} {meth:5s} coded~{nc:6.0f} (+{v0[0][1]} census, {v0[0][2]} classes) |"
                    for c in CODECS:
                        v = stats[(R, K, meth, c)]
                        cov = sum(1 for t in v if t[0]) / len(v)
                        hw = statistics.median(t[1] for t in v) * 100
                        ae = sorted(abs(t[2]) * 100 for t in v)
                        line += f" {c} cov {cov:.2f} hw {hw:.2f}% |"
                        fo.write(f"{name},{R},{K},{meth},{nc:.0f},{v0[0][1]},{v0[0][2]},{c},{len(v)},{cov:.3f},{hw:.3f},{statistics.median(ae):.3f},{ae[min(len(ae)-1, int(0.95*len(ae)))]:.3f}\n")
                    print(line)


if __name__ == "__main__":
    main()
