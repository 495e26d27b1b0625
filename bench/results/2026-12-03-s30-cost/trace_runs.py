#!/usr/bin/env python3
"""trace_runs.py ZSIM OUTDIR REPS DIR...: runs ZSIM scan with ZSIM_PACE_TRACE=1, --progress, --json,
saves stderr + wall + json seconds + load per run."""
import json, os, subprocess, sys, time
zsim, out, reps, dirs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
os.makedirs(out, exist_ok=True)
env = dict(os.environ, ZSIM_PACE_TRACE="1")
for d in dirs:
    subprocess.run("find %s -type f -print0 | xargs -0 cat > /dev/null" % d, shell=True)
    name = os.path.basename(d.rstrip("/"))
    for i in range(reps):
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        p = subprocess.run([zsim, "scan", d, "--json", "--progress", "--threads", "2"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        js = json.loads(p.stdout)
        tag = "%s-%d-%d" % (name, int(time.time()), i)
        with open(os.path.join(out, tag + ".txt"), "w") as f:
            f.write("RUN name=%s wall=%.4f seconds=%.4f load=%.2f rc=%d\n" % (name, wall, js.get("seconds", -1), load, p.returncode))
            f.write(p.stderr.decode(errors="replace").replace("\r", "\n"))
        print(tag, "wall=%.3f seconds=%.3f load=%.2f" % (wall, js.get("seconds", -1), load), flush=True)
