#!/usr/bin/env python3
"""Session 41: do the default scan's sampled intervals hold their --exact value at recordsizes
other than 128K? For each TREE:RECORDSIZE a default and an --exact scan (default codecs), then per
sampled figure the psize ratio, the interval's half width and whether it holds (as
../2026-12-04-s39-rare-classes/intervals.py: the interval is about the estimate's geometric
centre, so the exact unrounded ratio is that centre over the psize ratio).

  coverage.py BIN OUTDIR TREE:RS...
"""
import json, os, subprocess, sys

binary, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
total = misses = 0
for arg in sys.argv[3:]:
    tree, rs = arg.rsplit(":", 1)
    tag = "%s-%s" % (os.path.basename(tree.rstrip("/")), rs)
    res = {}
    for label, extra in (("default", []), ("exact", ["--exact"])):
        r = subprocess.run([binary, "scan", tree, "--recordsize", rs, "--json", "-q", *extra],
                           stdout=subprocess.PIPE, check=True)
        open(os.path.join(out, "%s-%s.json" % (tag, label)), "wb").write(r.stdout)
        res[label] = json.loads(r.stdout)
    ex = {r["compression"]: r for r in res["exact"]["results"]}
    line = []
    for r in res["default"]["results"]:
        if r.get("exact", True):
            continue
        e = ex[r["compression"]]
        lo, hi = r["ci95"]
        mid = (lo * hi) ** 0.5
        rr = r["psize"] / e["psize"]
        holds = lo <= mid / rr <= hi
        total += 1
        misses += not holds
        line.append("%s %.4f +-%.2f%% %s (%d blocks)" % (
            r["compression"], rr, (hi - lo) / 2 / mid * 100, "holds" if holds else "MISSES",
            r["timing"]["codec_bytes"] // int(rs.rstrip("k")) // 1024))
    print("%-28s %s" % (tag, " | ".join(line)), flush=True)
print("sampled figures %d, outside their interval %d" % (total, misses))
