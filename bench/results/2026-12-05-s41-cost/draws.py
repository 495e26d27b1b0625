#!/usr/bin/env python3
"""Session 41: a second draw of the same tree's sample. zsim samples a codec's blocks by their
fingerprint's bits, so --checksum sha256 draws other blocks than the default xxh128 from the same
data; the --exact figures do not depend on it. Per TREE RS EXACT.json triple: both draws' sampled
figures against the exact scan's (as coverage.py).

  draws.py TREE RS EXACT.json [TREE RS EXACT.json ...]   (zsim: $ZSIM, default ./build/zsim)
"""
import os
import json, subprocess, sys
binary = os.environ.get("ZSIM", "./build/zsim")
for tree, rs, exact in [(sys.argv[i], sys.argv[i+1], sys.argv[i+2]) for i in range(1, len(sys.argv), 3)]:
    ex = {(r["recordsize"], r["compression"]): r for r in json.load(open(exact))["results"]}
    for ck in ("xxh128", "sha256"):
        out = subprocess.run([binary, "scan", tree, "--recordsize", rs, "--json", "-q", "--checksum", ck], stdout=subprocess.PIPE, check=True).stdout
        line = []
        for r in json.loads(out)["results"]:
            if r.get("exact", True) or (r["recordsize"], r["compression"]) not in ex: continue
            e = ex[(r["recordsize"], r["compression"])]
            lo, hi = r["ci95"]; mid = (lo*hi)**0.5; rr = r["psize"]/e["psize"]
            line.append("%s %.4f +-%.2f%% %s" % (r["compression"], rr, (hi-lo)/2/mid*100, "holds" if lo <= mid/rr <= hi else "MISSES"))
        print("%s %s %s: %s" % (tree.split('/')[-1], rs, ck, " | ".join(line)), flush=True)
