#!/usr/bin/env python3
"""--compression all --recordsize 16k,128k,1M against the default scan, interleaved, per binary."""
import os, resource, statistics, subprocess, sys, time
d, reps = sys.argv[1], int(sys.argv[3])
zsims = sys.argv[2].split(',')
def run(z, extra):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.perf_counter()
    subprocess.run([z, "scan", d, "--json", "-q", "--threads", "2", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    w = time.perf_counter() - t0; r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return w, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
res = {}
for i in range(reps):
    for z in zsims:
        for mode, extra in (("default", []), ("all", ["--compression", "all", "--recordsize", "16k,128k,1M"])):
            w, cpu = run(z, extra)
            res.setdefault((z, mode), []).append((w, cpu))
            print("%s %s rep %d wall %.3f cpu %.2f load %.2f" % (os.path.basename(z), mode, i, w, cpu, os.getloadavg()[0]), flush=True)
for z in zsims:
    dw = statistics.median(w for w, _ in res[(z, "default")]); aw = statistics.median(w for w, _ in res[(z, "all")])
    dc = statistics.median(c for _, c in res[(z, "default")]); ac = statistics.median(c for _, c in res[(z, "all")])
    print("RATIO %s all/default wall %.3f/%.3f = %.2fx, cpu %.2f/%.2f = %.2fx" % (os.path.basename(z), aw, dw, aw / dw, ac, dc, ac / dc))
