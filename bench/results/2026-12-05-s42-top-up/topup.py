#!/usr/bin/env python3
"""The top-up, measured: for each tree and recordsize, a scan by each zsim given (default) and
one --exact scan; per codec the ratio, its interval, whether exact, the bytes coded, and the
wall time (median of --reps). Usage:
  topup.py --zsim NAME=BIN ... --tree DIR ... --recordsize 16k,128k --reps 3"""
import argparse, json, statistics, subprocess, time


def scan(binary, tree, rs, extra):
    t0 = time.monotonic()
    p = subprocess.run([binary, "scan", "--json", "--no-progress", "--recordsize", rs, tree] + extra,
                       capture_output=True, text=True)
    dt = time.monotonic() - t0
    if p.returncode not in (0, 1):
        raise SystemExit(f"{binary} {tree} {rs}: exit {p.returncode}: {p.stderr[:300]}")
    return json.loads(p.stdout), dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zsim", action="append", required=True)
    ap.add_argument("--tree", action="append", required=True)
    ap.add_argument("--recordsize", default="16k")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    bins = [z.split("=", 1) for z in a.zsim]
    for tree in a.tree:
        for rs in a.recordsize.split(","):
            exact, tex = scan(bins[0][1], tree, rs, ["--exact"])
            want = {r["compression"]: r for r in exact["results"]}
            print(f"== {tree} {rs}: --exact {tex:.2f} s, DDT entries "
                  f"{exact['memory']['ddt_table_entries']}")
            for name, b in bins:
                times, rep = [], None
                for _ in range(a.reps):
                    rep, dt = scan(b, tree, rs, [])
                    times.append(dt)
                print(f"  {name}: median {statistics.median(times):.2f} s "
                      f"(min {min(times):.2f}, max {max(times):.2f})")
                for r in rep["results"]:
                    e = want[r["compression"]]
                    ci = r.get("ci95")
                    ci_s = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"
                    held = "" if not ci else (" holds" if ci[0] - 0.01 <= e["compressratio"] <= ci[1] + 0.01 else " MISSES")
                    print(f"    {r['compression']:8} exact={str(r['exact']):5} ratio "
                          f"{r['compressratio']:.2f} (exact {e['compressratio']:.2f}) ci {ci_s}{held} "
                          f"psize/exact {r['psize'] / max(1, e['psize']):.4f} coded "
                          f"{r['timing']['codec_bytes'] / 2**20:.1f} MiB")


main()
