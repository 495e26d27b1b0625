#!/usr/bin/env python3
"""Each sampled figure of a default v23 scan (before and after lzjb became the anchor) against the
--exact scan: compressratio, its 95% interval's relative half width, and whether it holds the
exact psize. usage: compare.py EXACT.json BEFORE.json AFTER.json"""
import json
import sys

exact, before, after = (json.load(open(p)) for p in sys.argv[1:4])
for x, b, a in zip(exact["results"], before["results"], after["results"]):
    line = [x["compression"], "exact %.4f" % x["compressratio_unrounded"]]
    for name, r in (("before", b), ("after", a)):
        if r["exact"]:
            line.append("%s exact" % name)
            continue
        lo, hi = r["ci95"]
        ratio = r["compressratio_unrounded"]
        holds = lo <= x["compressratio_unrounded"] <= hi
        line.append("%s %.4f +-%.2f%% %s" % (name, ratio, (hi - lo) / 2 / ratio * 100,
                                            "holds" if holds else "MISSES"))
    print("  ".join(line))
