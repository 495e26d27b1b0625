#!/usr/bin/env python3
"""Estimation benchmark of zsim (issue 8): per dataset, the exact scan against the two kinds of
estimate, with speed and peak memory of each run (warm page cache, median of --reps).

  exact     zsim scan DIR --exact                      every codec on every unique block
  default   zsim scan DIR                              costly codecs on a sample (+-0.5% target)
  sample64  zsim scan DIR --exact --sample 1/64        the dedup table keeps 1/64 of the keys
                                                       (every codec on every kept key; the
                                                       referenced side's occurrence sample at
                                                       the plan's level)
  sample64d zsim scan DIR --sample 1/64                both: 1/64 of the keys, costly codecs and
                                                       the occurrence sample at the plan's level

For every setting it prints the exact figure, the estimate and its 95% interval: compressratio
as the report gives it (default vs exact; floored to 2 decimals, so "holds" allows 0.01), the
psize estimate's error, and the dedup ratio (sample64 and sample64d vs exact, zdb's unrounded
dedup), and whether each interval holds the exact figure. Output: a markdown report on stdout (and --out FILE).

Usage: bench/e2e/estimation.py --zsim BUILD/zsim [--recordsize 128k] [--reps 3] DATASET_DIR...
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import sample_stamp  # noqa: E402

MODES = {
    "exact": ["--exact"],
    "default": [],
    "sample64": ["--exact", "--sample", "1/64"],
    "sample64d": ["--sample", "1/64"],
}


def label(d):
    """The dataset's name and size from its samples/build-* stamp (database-medium), else the
    directory's name."""
    name, size, _ = sample_stamp(d)
    return f"{name}-{size}" if size != "?" else name


def run(zsim, directory, recordsize, extra):
    """One zsim run: (wall s, peak RSS KiB, parsed JSON)."""
    with tempfile.NamedTemporaryFile("r") as timing, tempfile.NamedTemporaryFile("r") as out:
        cmd = ["/usr/bin/time", "-f", "%e %M", "-o", timing.name, zsim, "scan", str(directory),
               "--recordsize", recordsize, "--json", "-q"] + extra
        with open(out.name, "w") as sink:
            subprocess.run(cmd, stdout=sink, check=True)
        wall, rss = timing.read().split()[-2:]
        return float(wall), int(rss), json.load(open(out.name))


def interval(ci):
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"


def holds(ci, truth):
    if not ci:
        return "-"
    return "yes" if ci[0] <= truth <= ci[1] else "**no**"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zsim", required=True)
    ap.add_argument("--recordsize", default="128k")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("datasets", nargs="+")
    a = ap.parse_args()
    lines = [f"# zsim estimates against exact scans (recordsize {a.recordsize})", "",
             f"Median of {a.reps} runs per mode, warm page cache; peak RSS of the whole process.",
             ""]
    for d in a.datasets:
        d = Path(d)
        for _ in range(2):  # warm the page cache
            run(a.zsim, d, a.recordsize, ["--compression", "off"])
        stats, report = {}, {}
        for _ in range(a.reps):
            for mode, extra in MODES.items():
                wall, rss, j = run(a.zsim, d, a.recordsize, extra)
                stats.setdefault(mode, []).append((wall, rss))
                report[mode] = j
        lines += [f"## {label(d)}", "", "| mode | median s | peak RSS MiB |",
                  "| --- | --- | --- |"]
        for mode in MODES:
            walls = [w for w, _ in stats[mode]]
            rss = max(r for _, r in stats[mode])
            lines.append(f"| {mode} | {statistics.median(walls):.3f} | {rss / 1024:.1f} |")
        lines += ["", "| setting | compressratio exact | default (95% interval) | holds | psize vs exact | "
                  "dedup exact | sample 1/64 (95% interval) | within 2% | holds | "
                  "sample 1/64, default codecs | within 2% | holds | its psize vs exact |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for e, s, m, md in zip(report["exact"]["results"], report["default"]["results"],
                               report["sample64"]["results"], report["sample64d"]["results"]):
            # compressratio as zsim reports it (metadata included, floored to 2 decimals): the
            # interval is for that figure, so it holds the exact one to within the flooring.
            ce, cs = e["compressratio"], s["compressratio"]
            ci = s.get("ci95")
            held = "-" if not ci else (
                "yes" if ci[0] - 0.01 <= ce <= ci[1] + 0.01 else "**no**")
            dp = s["psize"] / e["psize"] - 1 if e["psize"] else 0.0
            de, dm = e["dedup"]["zdb"]["dedup"], m["dedup"]["zdb"]["dedup"]
            dd = md["dedup"]["zdb"]["dedup"]
            dpd = md["psize"] / e["psize"] - 1 if e["psize"] else 0.0
            exact_mark = "" if s["exact"] is False else " (exact)"
            lines.append(
                f"| {e['compression']} | {ce:.2f} | {cs:.2f}{exact_mark} {interval(ci)} | {held} "
                f"| {dp:+.2%} | {de:.4f} | {dm:.4f} {interval(m['dedup'].get('ci95'))} | "
                f"{'yes' if abs(dm / de - 1) <= 0.02 else '**no**'} ({dm / de - 1:+.2%}) "
                f"| {holds(m['dedup'].get('ci95'), de)} "
                f"| {dd:.4f} {interval(md['dedup'].get('ci95'))} "
                f"| {'yes' if abs(dd / de - 1) <= 0.02 else '**no**'} ({dd / de - 1:+.2%}) "
                f"| {holds(md['dedup'].get('ci95'), de)} | {dpd:+.2%} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
