#!/usr/bin/env python3
"""What a default scan costs (issue 19), on this machine, in one run: the default scan against a
parallel xxh128sum (warm page cache) and against cat (cold: every file's pages dropped with
posix_fadvise(POSIX_FADV_DONTNEED) before each run), each sampled figure's 95% interval against
the --exact value, `--compression all` at three recordsizes against the default, the rate
`--max-rate` achieves, and the expected time the progress line shows at 10% of each scan against
its actual time. Every figure is a ratio of medians of interleaved runs, with the 1-minute load
average at each run (other work shares the machine).

Usage:
  bench/e2e/cost.py --zsim BUILD/zsim --out DIR --warm DIR... [--cold DIR...] [--all DIR]
                    [--rate DIR] [--progress DIR...] [--exact DIR...] [--reps 3]
                  [--progress-args="--compression all"]

--progress-args: options added to the --progress stage's scans (e.g. a codec list, whose cost
warning, when printed, is logged with the scan's actual time).
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

CORES = os.cpu_count() or 1


def load1():
    return os.getloadavg()[0]


def files_of(d):
    out = []
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(p)
    return sorted(out)


def drop_pages(files):
    """Drops the clean page-cache pages of every file (needs no root)."""
    for p in files:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def run(cmd, shell=False):
    """(wall seconds, stdout, stderr); raises on a failure."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (cmd, p.returncode, p.stderr[-2000:]))
    return wall, p.stdout, p.stderr


class Log:
    def __init__(self, out):
        self.out = out
        self.raw = open(out / "raw.txt", "a")

    def add(self, what, dataset, wall, extra=""):
        line = "%s\t%s\tload=%.2f\twall=%.3f\t%s" % (what, dataset, load1(), wall, extra)
        print(line, flush=True)
        self.raw.write(line + "\n")
        self.raw.flush()


def zsim_scan(args, d, extra):
    wall, out, err = run([args.zsim, "scan", d, "--json", "--threads", str(CORES), *extra])
    return wall, json.loads(out), err.decode(errors="replace")


def name_of(d):
    try:
        for line in (Path(d) / ".zsim-sample").read_text().split("\n"):
            if line.startswith("summary="):
                f = dict(t.split("=", 1) for t in line[len("summary="):].split() if "=" in t)
                sample, size = f.get("sample", Path(d).name), f.get("size", "?")
                # Some builders name the sample with its size already ("database-large").
                return sample if sample.endswith("-" + size) else "%s-%s" % (sample, size)
    except OSError:
        pass
    return Path(d).name


def xxh_cmd(d):
    return "find %s -type f -print0 | xargs -0 -P %d -n 64 xxh128sum > /dev/null" % (d, CORES)


def cat_cmd(d):
    return "find %s -type f -print0 | xargs -0 cat > /dev/null" % d


def warm(args, log, d):
    name = name_of(d)
    run(cat_cmd(d), shell=True)  # into the page cache
    xs, zs = [], []
    for _ in range(args.reps):
        w, _, _ = run(xxh_cmd(d), shell=True)
        log.add("xxh128sum-P%d" % CORES, name, w)
        xs.append(w)
        w, js, _ = zsim_scan(args, d, [])
        coded = sum(r["timing"]["codec_bytes"] for r in js["results"] if r["compression"] != "off")
        log.add("zsim-default", name, w, "codec_bytes=%d read=%d" % (coded, js["input"]["bytes_read"]))
        zs.append(w)
        (args.outdir / ("default-%s.json" % name)).write_text(json.dumps(js))
    r = statistics.median(xs) / statistics.median(zs)
    log.add("RATIO warm default/xxh128sum throughput", name, 0, "%.3f" % r)


def cold(args, log, d):
    name = name_of(d)
    files = files_of(d)
    cs, zs = [], []
    for _ in range(args.reps):
        drop_pages(files)
        w, _, _ = run(cat_cmd(d), shell=True)
        log.add("cat-cold", name, w)
        cs.append(w)
        drop_pages(files)
        w, js, _ = zsim_scan(args, d, [])
        log.add("zsim-default-cold", name, w, "read=%d" % js["input"]["bytes_read"])
        zs.append(w)
    r = statistics.median(cs) / statistics.median(zs)
    log.add("RATIO cold default/cat throughput", name, 0, "%.3f" % r)


def intervals(args, log, d):
    name = name_of(d)
    w, exact, _ = zsim_scan(args, d, ["--exact"])
    log.add("zsim-exact", name, w)
    (args.outdir / ("exact-%s.json" % name)).write_text(json.dumps(exact))
    p = args.outdir / ("default-%s.json" % name)
    if not p.exists():
        w, js, _ = zsim_scan(args, d, [])
        p.write_text(json.dumps(js))
    default = json.loads(p.read_text())
    for s, e in zip(default["results"], exact["results"]):
        if s.get("ci95") is None:
            log.add("interval", name, 0, "%s %s exact (no sample)" % (s["recordsize"], s["compression"]))
            continue
        lo, hi = s["ci95"]
        mid = s["compressratio"]
        # The report floors compressratio to two decimals (as zfs does); the interval is of the
        # unfloored ratio, whose estimate is about the interval's geometric centre, so the exact
        # psize gives the truth it must hold (metadata aside, which dilutes both alike): a 0.01
        # slack is 0.4% at a ratio of 2.6, wider than the intervals themselves.
        truth = (lo * hi) ** 0.5 * s["psize"] / e["psize"]
        holds = lo <= truth <= hi
        log.add("interval", name, 0,
                "%s %s sampled=%.3f [%.3f, %.3f] half-width=%.2f%% exact=%.3f (unfloored "
                "%.4f) holds=%s psize/exact=%.4f coded=%d/%d" % (
                    s["recordsize"], s["compression"], mid, lo, hi, 100 * (hi - lo) / 2 / mid,
                    e["compressratio"], truth, holds, s["psize"] / e["psize"],
                    s["timing"]["codec_bytes"], e["timing"]["codec_bytes"]))


def all_vs_default(args, log, d):
    name = name_of(d)
    ds, alls = [], []
    for i in range(args.reps):
        w, _, _ = zsim_scan(args, d, [])
        log.add("zsim-default", name, w)
        ds.append(w)
        if i < args.all_reps:
            w, js, err = zsim_scan(args, d, ["--compression", "all", "--recordsize",
                                               "16k,128k,1M"])
            log.add("zsim-all-3rs", name, w, "warning=%r" % err.strip()[:300])
            alls.append(w)
    r = statistics.median(alls) / statistics.median(ds)
    log.add("RATIO all-3rs/default time", name, 0, "%.2f" % r)


def rate(args, log, d):
    """--max-rate 200M/s (zsim's M is 2^20: 209.7 MB/s), --reps runs with the default codecs and
    one with none (the throttle alone: the default scan of a small tree can be CPU-bound below the
    cap on a loaded machine); the achieved rate is the bytes read over the run's wall time."""
    name = name_of(d)
    cap = 200 << 20
    run(cat_cmd(d), shell=True)
    shares = []
    for extra in [[]] * args.reps + [["--compression", "off"]]:
        w, js, _ = zsim_scan(args, d, ["--max-rate", "200M/s", *extra])
        read = js["input"]["bytes_read"]
        if not extra:
            shares.append(read / w / cap)
        log.add("zsim-max-rate-200M" + "".join(extra), name, w,
                "read=%d achieved=%.1f MiB/s over wall (%.1f%% of the cap of 200 MiB/s), %.1f "
                "MiB/s over the scan's seconds" % (read, read / w / 2**20, 100 * read / w / cap,
                                                   read / js["seconds"] / 2**20))
    log.add("RATE default achieved/cap", name, 0, "%s median %.3f within 5%%: %s" % (
        " ".join("%.3f" % x for x in shares), statistics.median(shares),
        "yes" if all(x >= 0.95 for x in shares) else "no"))


def progress(args, log, d):
    """The progress line's expected time when the scan passes 10%, against its actual time; --reps
    runs, each logged, then the median and worst ratio. The target: every ratio in [0.75, 1.25]."""
    name = name_of(d)
    run(cat_cmd(d), shell=True)
    ratios = []
    for _ in range(args.reps):
        # On a terminal: in a log zsim writes a progress line every 10 s only ("zsim: progress:
        # ..."), too few to see 10% of a scan of seconds. script(1) gives it a pseudo-terminal,
        # whose output (zsim's stderr; the report goes to /dev/null) comes back on stdout.
        cmd = [args.zsim, "scan", d, "--json", "--progress", "--threads", str(CORES)] + \
            shlex.split(args.progress_args)
        w, out, err = run(["script", "-qec", " ".join(shlex.quote(c) for c in cmd) +
                           " > /dev/null", "/dev/null"])
        text = out.decode(errors="replace").replace("\x1b[K", "")
        for ln in text.replace("\r", "\n").split("\n"):
            if "expected to take" in ln:
                log.add("cost-warning", name, w, "actual %.2f s | %s" % (w, ln.strip()))
        shown = None
        for ln in text.replace("\n", "\r").split("\r"):
            if not ln.startswith("scanned ") or "%)" not in ln or "expected " not in ln:
                continue
            pct = int(ln.split("(")[1].split("%")[0])
            if pct >= 10:
                shown = (pct, float(ln.split("expected ")[1].split(" s")[0]), ln.strip())
                break
        if shown is None:
            log.add("progress-at-10%", name, w, "no progress line at or past 10% (scan too short)")
            continue
        ratios.append(shown[1] / w)
        log.add("progress-at-10%", name, w, "at %d%%: expected %.1f s, actual %.2f s, ratio %.2f | %s"
                % (shown[0], shown[1], w, shown[1] / w, shown[2][:160]))
    if ratios:
        worst = max(ratios, key=lambda r: abs(r - 1))
        log.add("progress-at-10%-summary", name, 0,
                "ratios %s median %.2f worst %.2f within 25%%: %s" % (
                    " ".join("%.2f" % r for r in ratios), statistics.median(ratios), worst,
                    "yes" if all(0.75 <= r <= 1.25 for r in ratios) else "no"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zsim", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--all-reps", type=int, default=1)
    ap.add_argument("--progress-args", default="")
    # Each stage takes the dataset directories it runs on, in this order.
    stages = (("warm", warm), ("exact", intervals), ("cold", cold), ("all", all_vs_default),
              ("rate", rate), ("progress", progress))
    for name, _ in stages:
        ap.add_argument("--" + name, nargs="*", default=[], metavar="DIR")
    args = ap.parse_args()
    args.zsim = str(Path(args.zsim).resolve())
    args.outdir = Path(args.out)
    args.outdir.mkdir(parents=True, exist_ok=True)
    log = Log(args.outdir)
    for name, stage in stages:
        for d in getattr(args, name):
            stage(args, log, d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
