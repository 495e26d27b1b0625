#!/usr/bin/env python3
"""Session 41: the pilot on every recordsize at least the first's. Warm scans of one tree at
several recordsizes, main and branch interleaved; per row and codec the codec bytes, codec
seconds and interval; then an --exact scan and whether each interval holds its value, within
+-0.5%.

  rows.py --main BIN --branch BIN --tree DIR --recordsize 16k,128k [--reps 3] --out DIR
"""
import argparse, json, os, subprocess, sys, time


def scan(binary, tree, rs, extra, out):
    t0 = time.perf_counter()
    r = subprocess.run([binary, "scan", tree, "--recordsize", rs, "--json", "-q", *extra],
                       stdout=subprocess.PIPE, check=True)
    wall = time.perf_counter() - t0
    with open(out, "wb") as f:
        f.write(r.stdout)
    return wall, json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--main", required=True)
    ap.add_argument("--branch", required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--recordsize", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    name = os.path.basename(a.tree.rstrip("/"))
    tag = "%s-%s" % (name, a.recordsize.replace(",", "_"))
    subprocess.run("find %s -type f -print0 | xargs -0 cat > /dev/null" % a.tree, shell=True)
    last = {}
    for i in range(a.reps):
        for label, b in (("main", a.main), ("branch", a.branch)):
            wall, js = scan(b, a.tree, a.recordsize, [],
                            os.path.join(a.out, "%s-%s-%d.json" % (tag, label, i)))
            print("%s %s rep%d wall %.2f s load %.2f" % (tag, label, i, wall, os.getloadavg()[0]),
                  flush=True)
            last[label] = js
    wall, exact = scan(a.branch, a.tree, a.recordsize, ["--exact"],
                       os.path.join(a.out, "%s-exact.json" % tag))
    print("%s exact wall %.2f s" % (tag, wall))
    report(exact, last)


def report(exact, last):
    # As bench/results/2026-12-04-s39-rare-classes/intervals.py, per (recordsize, codec): the
    # interval is about the estimate's geometric centre, so the exact unrounded ratio is that
    # centre over the psize ratio.
    ex = {(r["recordsize"], r["compression"]): r for r in exact["results"]}
    for label in ("main", "branch"):
        for r in last[label]["results"]:
            if r.get("exact", True):
                continue
            e = ex[(r["recordsize"], r["compression"])]
            lo, hi = r["ci95"]
            mid = (lo * hi) ** 0.5
            rr = r["psize"] / e["psize"]
            t = r["timing"]
            print("%-6s %7d %-7s codec %6.0f MiB %6.2f s  psize/exact %.4f +-%.2f%% %s" % (
                label, r["recordsize"], r["compression"], t["codec_bytes"] / 2**20,
                t["codec_seconds"], rr, (hi - lo) / 2 / mid * 100,
                "holds" if lo <= mid / rr <= hi else "MISSES"))

if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--report":  # rows.py --report EXACT.json DIR/TAG
        load = lambda p: json.load(open(p))
        report(load(sys.argv[2]), {"main": load(sys.argv[3] + "-main-2.json"),
                                   "branch": load(sys.argv[3] + "-branch-2.json")})
    else:
        main()
