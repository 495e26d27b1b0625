#!/usr/bin/env python3
"""Each sampled figure of default scans (JSON) against the --exact scan's: psize ratio, the 95%
interval's half width and whether it holds the exact ratio (the interval is about the estimate's
geometric centre, so the exact unfloored ratio is that centre over the psize ratio), and the
bytes the codec ran on. usage: intervals.py EXACT.json SCAN.json..."""
import json
import sys

exact = {r["compression"]: r for r in json.load(open(sys.argv[1]))["results"]}
for path in sys.argv[2:]:
    out = []
    for r in json.load(open(path))["results"]:
        if r.get("exact"):
            continue
        e = exact[r["compression"]]
        lo, hi = r["ci95"]
        rr = r["psize"] / e["psize"]
        mid = (lo * hi) ** 0.5
        holds = lo <= mid / rr <= hi
        out.append("%s psize/exact=%.4f +-%.2f%% %s coded=%.0fM" % (
            r["compression"], rr, (hi - lo) / 2 / mid * 100, "holds" if holds else "MISSES",
            r["timing"]["codec_bytes"] / 1e6))
    print(path, " | ".join(out))
