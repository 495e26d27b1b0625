#!/usr/bin/env python3
"""`zsim scan --since` on an unchanged tree against a full scan (issue 15's target: at least 20x
faster on the largest sample), warm page cache.

For each dataset: one full scan with --save (the base; its state file's size is reported), then
--reps repetitions of, interleaved, a full scan with --save and a --since scan from the base with
--save. Each --since run must read no byte of file data (its JSON's input.bytes_read is 0) and
give the full scan's figures (timings and run costs aside). Prints a table: median wall seconds of
each, their ratio, the state file's bytes, and bytes per file of the state.

Usage: bench/e2e/since.py --zsim BUILD/zsim DATASET_DIR... [--reps 5] [--flags "--recordsize 16k"]
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN_COSTS = {"bytes_read", "codec_bytes", "cpu_seconds_per_gb", "timing", "memory", "sentence",
             "codec_seconds"}


def figures(j):
    if isinstance(j, dict):
        return {k: figures(v) for k, v in j.items()
                if k not in RUN_COSTS and "second" not in k and "speed" not in k}
    if isinstance(j, list):
        return [figures(v) for v in j]
    return j


def run(cmd):
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr}")
    return wall, json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zsim", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--flags", default="")
    ap.add_argument("datasets", nargs="+")
    a = ap.parse_args()
    flags = a.flags.split()
    print("| dataset | files | full scan (s) | --since, unchanged (s) | speed-up | state bytes "
          "| state bytes per file |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for d in a.datasets:
            base = str(Path(tmp) / "base.zstate")
            out = str(Path(tmp) / "out.zstate")
            scan = [a.zsim, "scan", d, "--json", "-q"] + flags
            _, first = run(scan + ["--save", base])
            full_t, since_t = [], []
            for _ in range(a.reps):
                t, full = run(scan + ["--save", out])
                full_t.append(t)
                t, since = run(scan + ["--since", base, "--save", out])
                since_t.append(t)
                if since["input"]["bytes_read"] != 0:
                    sys.exit(f"{d}: --since read {since['input']['bytes_read']} bytes")
                if figures(since) != figures(full):
                    sys.exit(f"{d}: --since figures differ from the full scan's")
            files = first["input"]["files"]
            size = Path(base).stat().st_size
            f, s = statistics.median(full_t), statistics.median(since_t)
            print(f"| {Path(d).name} | {files} | {f:.3f} | {s:.3f} | {f / s:.1f}x | {size} "
                  f"| {size / max(files, 1):.0f} |")


if __name__ == "__main__":
    main()
