#!/usr/bin/env python3
"""tsprog.py CMD...: runs CMD (a zsim scan with --progress), prints each progress line with the
seconds since start and the process's CPU seconds (user + system, /proc) at that moment."""
import os, subprocess, sys, time
TICK = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    try:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / TICK
    except OSError:
        return float("nan")
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
buf = b''
while True:
    c = p.stderr.read(1)
    if not c:
        break
    if c in b'\r\n':
        if buf.strip():
            print("%7.2f cpu %6.2f %s" % (time.perf_counter() - t0, cpu(p.pid),
                  buf.decode(errors='replace').replace('\x1b[K', '')[:130]), flush=True)
        buf = b''
    else:
        buf += c
p.wait()
print("%7.2f exit %d" % (time.perf_counter() - t0, p.returncode))
