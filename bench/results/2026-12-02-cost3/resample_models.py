import csv, math, sys, random
rows = list(csv.DictReader(open(sys.argv[1]))); N = len(rows); L = int(sys.argv[2]); trials = int(sys.argv[3])
B = 131072.0
def mix(i, salt):
    h = (i * 0x9E3779B97F4A7C15 + salt * 0xbf58476d1ce4e5b9) & (2**64 - 1)
    h ^= h >> 31; h = (h * 0x94d049bb133111eb) & (2**64 - 1); h ^= h >> 29
    return h
def solve(A, b):
    # small gaussian elimination
    n = len(b); M = [A[i][:] + [b[i]] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(M[r][c])); M[c], M[p] = M[p], M[c]
        for r in range(n):
            if r != c:
                f = M[r][c] / M[c][c]
                M[r] = [M[r][k] - f * M[c][k] for k in range(n + 1)]
    return [M[i][n] / M[i][i] for i in range(n)]
def greg(feats, y, S):
    k = len(feats[0]); n = len(S)
    A = [[sum(feats[i][a] * feats[i][b] for i in S) for b in range(k)] for a in range(k)]
    bb = [sum(feats[i][a] * y[i] for i in S) for a in range(k)]
    beta = solve(A, bb)
    e = [y[i] - sum(beta[a] * feats[i][a] for a in range(k)) for i in S]
    tot = [sum(feats[i][a] for i in range(N)) for a in range(k)]
    est = sum(beta[a] * tot[a] for a in range(k)) + N / n * sum(e)
    me = sum(e) / n
    se = N * math.sqrt((1 - n / N) * sum((v - me) ** 2 for v in e) / (n - k - 1) / n)
    return est, se
for c in ["zstd-3", "gzip-6", "lzjb"]:
    y = [float(r[c]) for r in rows]; x = [float(r["lz4"]) for r in rows]; T = sum(y)
    models = {
        "lsize": [[B] for i in range(N)],
        "s,x": [[B, x[i]] for i in range(N)],


    }
    out = []
    for name, F in models.items():
        cov = 0; hws = []; errs = []
        for salt in range(trials):
            S = [i for i in range(N) if ((mix(i, salt) >> 40) & ((1 << L) - 1)) == 0]
            est, se = greg(F, y, S)
            cov += abs(est - T) <= 1.96 * se; hws.append(1.96 * se / est); errs.append(abs(est - T) / T)
        hws.sort(); errs.sort()
        out.append("%s cov %.2f hw %.2f%% err95 %.2f%%" % (name, cov / trials, 100 * hws[len(hws) // 2], 100 * errs[int(0.95 * trials) - 1]))
    print(c, "L%d" % L, " | ".join(out), flush=True)
