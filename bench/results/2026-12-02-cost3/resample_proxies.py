import csv, math, sys, hashlib
rows = list(csv.DictReader(open(sys.argv[1])))
N = len(rows)
codecs = ["lz4", "zstd-3", "gzip-6", "lzjb", "zle"]
def rnd(v): return max(512, math.ceil(v / 512) * 512)
aux = {c: [rnd(float(r["zle-4x4K"] if c == "zle" else r["lz4-4x4K"])) for r in rows] for c in codecs}
Y = {c: [float(r[c]) for r in rows] for c in codecs}
H = [int(r["h"]) for r in rows]
def mix(h, salt):
    h = (h ^ (salt * 0x9E3779B97F4A7C15)) & (2**64 - 1)
    h = (h * 0xbf58476d1ce4e5b9) & (2**64 - 1); h ^= h >> 31
    h = (h * 0x94d049bb133111eb) & (2**64 - 1); h ^= h >> 29
    return h
def lvl(h):
    b = (h >> 40) | (1 << 24)
    return (b & -b).bit_length() - 1
for L in [2, 3, 4, 5]:
    for c in codecs:
        y, x = Y[c], aux[c]
        X = sum(x); T = sum(y)
        res = {"lsize": [], "ratio": [], "reg": []}
        for salt in range(40):
            S = [i for i in range(N) if lvl(mix(H[i], salt)) >= L]
            n = len(S); f = n / N
            ys = [y[i] for i in S]; xs = [x[i] for i in S]
            my = sum(ys) / n; mx = sum(xs) / n
            # expansion (lsize aux, all equal)
            sy2 = sum((v - my) ** 2 for v in ys) / (n - 1)
            est = N * my; se = N * math.sqrt((1 - f) * sy2 / n)
            res["lsize"].append((est, se))
            R = my / mx
            se_r = N * math.sqrt((1 - f) * sum((ys[k] - R * xs[k]) ** 2 for k in range(n)) / (n - 1) / n)
            res["ratio"].append((R * X, se_r))
            sxy = sum((xs[k] - mx) * (ys[k] - my) for k in range(n)); sxx = sum((v - mx) ** 2 for v in xs)
            b = sxy / sxx
            e = [ys[k] - my - b * (xs[k] - mx) for k in range(n)]
            se_g = N * math.sqrt((1 - f) * sum(v * v for v in e) / (n - 2) / n)
            res["reg"].append((N * (my + b * (X / N - mx)), se_g))
        out = []
        for k, v in res.items():
            cov = sum(1 for est, se in v if abs(est - T) <= 1.96 * se) / len(v)
            hw = sorted(1.96 * se / est for est, se in v)[len(v) // 2]
            err = sorted(abs(est - T) / T for est, se in v)[int(len(v) * 0.95) - 1]
            out.append("%s hw %.2f%% cov %.2f err95 %.2f%%" % (k, 100 * hw, cov, 100 * err))
        print("L%d n~%d %-6s | %s" % (L, N >> L, c, " | ".join(out)), flush=True)
