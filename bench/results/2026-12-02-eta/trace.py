import subprocess, sys, time
t0=time.perf_counter()
p=subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
buf=b''
while True:
    c=p.stderr.read(1)
    if not c: break
    if c in b'\r\n':
        if buf.strip(): print("%6.2f %s" % (time.perf_counter()-t0, buf.decode(errors='replace').replace('\x1b[K','')[:150]))
        buf=b''
    else: buf+=c
p.wait(); print("%6.2f end" % (time.perf_counter()-t0))
