# gen.py DATA OUT SEED NUNIQ COPIES: NUNIQ 128K blocks of DATA (the database sample) picked by
# SEED, each salted in its first 16 bytes (unique), written COPIES times (f0..f<COPIES-1>).
import os, sys, random, hashlib
src, out, seed, nuniq, copies = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rs = 131072
pool = []
for dp, dn, fn in sorted(os.walk(src)):
    for f in sorted(fn):
        p = os.path.join(dp, f)
        for i in range(os.path.getsize(p) // rs):
            pool.append((p, i))
pick = random.Random(seed).sample(pool, nuniq)
data = bytearray()
for k, (p, i) in enumerate(pick):
    with open(p, 'rb') as fh:
        fh.seek(i * rs)
        b = bytearray(fh.read(rs))
    b[0:16] = hashlib.md5(b'%d-%d' % (seed, k)).digest()
    data += b
os.makedirs(out, exist_ok=True)
for c in range(copies):
    open(os.path.join(out, 'f%d' % c), 'wb').write(data)
