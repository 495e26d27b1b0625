#!/usr/bin/env python3
"""Six v23 settings: one zsim run (median of REPS) against six trial copies into zfs-fuse."""
import os, resource, statistics, subprocess, sys, tempfile, time, shutil
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests', 'accuracy'))
import zfs_oracle as zo
zo.POOL_PREFIX = "zs31"
d, reps = sys.argv[1], int(sys.argv[3])
zsims = sys.argv[2].split(',')
settings = "off,lzjb,zle,gzip-1,gzip-6,gzip-9"
def load(): return os.getloadavg()[0]
def zsim_run(z):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.perf_counter()
    subprocess.run([z, "scan", d, "--profile", "v23", "--compression", settings, "--json", "-q",
                    "--threads", "2"], stdout=subprocess.DEVNULL, check=True)
    w = time.perf_counter() - t0; r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    return w, cpu
res = {z: [] for z in zsims}
for i in range(reps):
    for z in zsims:
        w, cpu = zsim_run(z); res[z].append(w)
        print("zsim %s rep %d wall %.3f cpu %.2f load %.2f" % (os.path.basename(z), i, w, cpu, load()), flush=True)
workdir = tempfile.mkdtemp(prefix="zs31-", dir=os.environ.get("TMPDIR", "/tmp"))
daemon = zo.Daemon(); daemon.ensure()
total = 0
try:
    for s in settings.split(","):
        pool = zo.Pool(workdir, 12, 8 << 30)
        try:
            t0 = time.perf_counter(); pool.create(); ds = pool.name + "/data"
            zo.run(["zfs", "create", "-o", "recordsize=128k", "-o", "compression=" + s, "-o",
                    "dedup=on", "-o", "atime=off", ds])
            zo.copy_with("cp-auto", d, os.path.join(pool.mnt, "data"))
            zo.settle(pool.name, ds); pool.export(); zo.parse_zdb_dd(pool.zdb("-DD"))
            t = time.perf_counter() - t0
        finally:
            pool.destroy()
        total += t
        print("trial-copy %s %.2f s load %.2f" % (s, t, load()), flush=True)
finally:
    shutil.rmtree(workdir, ignore_errors=True); daemon.stop()
for z in zsims:
    m = statistics.median(res[z])
    print("RATIO six copies %.2f s / zsim %s median %.3f s = %.2fx" % (total, os.path.basename(z), m, total / m))
