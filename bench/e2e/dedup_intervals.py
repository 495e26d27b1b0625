#!/usr/bin/env python3
"""Coverage of a sampled table's dedup-ratio intervals: per dataset and recordsize, the exact
scan (`--exact`) against `--sample 1/M` for each M, for one or more zsim binaries (to compare a
change with the build before it). For every setting it prints the exact dedup ratio
(referenced / allocated dsize, unrounded), each binary's estimate and 95% interval, and whether
the interval holds it; then, per binary, how many held and their mean width relative to the
exact ratio.

Usage: bench/e2e/dedup_intervals.py --zsim NAME=BUILD/zsim [--zsim NAME=...]
           [--recordsize 128k,16k] [--sample 16,64] DATASET_DIR...
The exact scan runs with the first binary.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path


def scan(binary, dataset, recordsize, extra):
    out = subprocess.run([binary, "scan", dataset, "--json", "--recordsize", recordsize] + extra,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{binary} scan {dataset} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)["results"]


def dedup_ratio(result):
    total = result["dedup"]["total"]
    return total["referenced"]["dsize"] / total["allocated"]["dsize"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zsim", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--recordsize", default="128k,16k")
    ap.add_argument("--sample", default="16,64", help="the Ms of --sample 1/M, comma-separated")
    ap.add_argument("datasets", nargs="+")
    args = ap.parse_args()
    if any("=" not in z for z in args.zsim):
        ap.error("--zsim takes NAME=PATH")
    binaries = dict(z.split("=", 1) for z in args.zsim)
    first = next(iter(binaries.values()))
    totals = {name: [0, 0, 0.0] for name in binaries}
    for dataset in args.datasets:
        for rs in args.recordsize.split(","):
            exact = scan(first, dataset, rs, ["--exact"])
            for m in args.sample.split(","):
                sampled = {name: scan(b, dataset, rs, ["--sample", "1/" + m])
                           for name, b in binaries.items()}
                for i, e in enumerate(exact):
                    truth = dedup_ratio(e)
                    line = (f"{Path(dataset).name:12} {rs:5} 1/{m:<4} {e['compression']:8} "
                            f"exact {truth:.4f}")
                    for name, results in sampled.items():
                        r = results[i]
                        if not r["dedup"].get("ci95"):  # not sampled: nothing to check
                            line += f" | {name} {dedup_ratio(r):.4f} (no interval)"
                            continue
                        lo, hi = r["dedup"]["ci95"]
                        holds = lo <= truth <= hi
                        t = totals[name]
                        t[0] += holds
                        t[1] += 1
                        t[2] += (hi - lo) / truth
                        line += (f" | {name} {dedup_ratio(r):.4f} [{lo:.3f}, {hi:.3f}] "
                                 f"{'holds' if holds else 'MISSES'}")
                    print(line, flush=True)
    for name, (held, n, width) in totals.items():
        print(f"{name}: {held} of {n} intervals hold the exact ratio; mean width "
              f"{width / max(1, n):.3f} of it")


if __name__ == "__main__":
    main()
