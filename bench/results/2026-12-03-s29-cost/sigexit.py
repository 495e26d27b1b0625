#!/usr/bin/env python3
"""Seconds from a signal to the exit of `zsim scan`, with the exit code and what is left in the
output directory. Usage: sigexit.py ZSIM OUTDIR DATA_DIR SIGNAL AFTER_SECONDS REPS [zsim args...]"""
import os
import shutil
import signal
import subprocess
import sys
import time

zsim, outdir, data, sig, after, reps = sys.argv[1:7]
extra = sys.argv[7:]
for i in range(int(reps)):
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    cmd = [zsim, "scan", data, "--threads", "2", "--html", os.path.join(outdir, "r.html"),
           "--save", os.path.join(outdir, "s.state")] + extra
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(float(after))
    t0 = time.perf_counter()
    p.send_signal(getattr(signal, "SIG" + sig))
    _, err = p.communicate()
    dt = time.perf_counter() - t0
    last = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
    print("signal-to-exit\t%s\tSIG%s after %ss\trc=%d\t%.3f s\tload=%.2f\tleft: %s\t| %s" % (
        os.path.basename(data.rstrip("/")), sig, after, p.returncode, dt, os.getloadavg()[0],
        " ".join(sorted(os.listdir(outdir))), last[0][:80]))
