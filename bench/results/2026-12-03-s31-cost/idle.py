#!/usr/bin/env python3
"""idle.py CMD...: runs CMD; prints its wall and CPU seconds, and the machine's busy, idle and stolen
CPU seconds over the same span (/proc/stat), and the CPU seconds of the busiest processes (with their waited-for children)."""
import os, subprocess, sys, time, resource
TICK = os.sysconf("SC_CLK_TCK")
def stat():
    f = open("/proc/stat").readline().split()[1:]
    v = [int(x) / TICK for x in f]
    return v[0] + v[1] + v[2] + v[5] + v[6], v[3] + v[4], v[7]  # busy, idle, steal
def procs():
    out = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                s = open("/proc/%s/stat" % p).read()
                name = s[s.index("(") + 1:s.rindex(")")]
                f = s.rsplit(")", 1)[1].split()
                out[p] = (name, (int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / TICK)
            except (OSError, ValueError):
                pass
    return out
p0, (b0, i0, s0) = procs(), stat()
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
w = time.perf_counter() - t0
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
p1, (b1, i1, s1) = procs(), stat()
cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
print("wall %.2f s, command CPU %.2f s (%.2f cores); machine busy %.2f s, idle %.2f s, "
      "stolen by the host %.2f s over the span" % (w, cpu, cpu / w, b1 - b0, i1 - i0, s1 - s0))
d = sorted(((p1[k][1] - p0.get(k, (None, 0))[1], p1[k][0], k) for k in p1), reverse=True)[:6]
print("busiest processes still present: " + ", ".join("%s(%s) %.2f s" % (n, k, c) for c, n, k in d))
