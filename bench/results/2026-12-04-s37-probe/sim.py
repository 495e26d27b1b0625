#!/usr/bin/env python3
"""The cost probe's unique share of a tree over 40 draws (another seed of the short files' hash
each), by the draw's own data (ratio) and by the short files' known bytes (known), at the strides
given in blocks of 128K (stride, short stride in bytes; 0: the stride).

Usage: PYTHONHASHSEED=0 sim.py DIR STRIDE_BLOCKS:SHORT_BYTES...
"""
import hashlib
import os
import statistics
import sys

root = sys.argv[1]
bs = 128 * 1024
files = []
for dp, dn, fn in os.walk(root):
    for n in fn:
        p = os.path.join(dp, n)
        if os.path.islink(p) or not os.path.isfile(p):
            continue
        sz = os.path.getsize(p)
        if sz == 0:
            continue
        with open(p, 'rb') as f:
            data = f.read()
        files.append((n, sz, [hashlib.md5(data[i:i + bs]).digest() for i in range(0, sz, bs)]))
data_bytes = sum(f[1] for f in files)
seen, uniq = set(), 0
for n, sz, recs in files:
    for j, r in enumerate(recs):
        if r not in seen:
            seen.add(r)
            uniq += min(bs, sz - j * bs)
print("files %d, %d bytes, unique share %.3f" % (len(files), data_bytes, uniq / data_bytes))


def estimate(stride, short, seed):
    seen, u, drawn_data, short_bytes, reads, nrec = set(), 0.0, 0.0, 0.0, 0, 0
    for n, sz, recs in files:
        if sz >= stride:
            cnt = (sz + stride - 1) // stride
            for k in range(cnt):
                r = recs[k * stride // bs]
                drawn_data += sz / cnt
                reads += min(bs, sz - k * stride)
                nrec += 1
                if r not in seen:
                    seen.add(r)
                    u += sz / cnt
            continue
        short_bytes += sz
        if sz >= short or hash((n, sz, seed)) % short < sz:
            each = max(sz, short)
            drawn_data += each
            reads += min(bs, sz)
            nrec += 1
            if recs[0] not in seen:
                seen.add(recs[0])
                u += each
    long_data = drawn_data - 0  # (the long files' part is the same in both)
    known = u / (data_bytes)
    ratio = u / drawn_data if drawn_data else 0
    return ratio, known, reads, nrec


for arg in sys.argv[2:]:
    blocks, short = (int(x) for x in arg.split(":"))
    stride = blocks * bs
    short = short or stride
    rs, ks, rd, nr = [], [], [], []
    for seed in range(40):
        r, k, reads, n = estimate(stride, short, seed)
        rs.append(r), ks.append(k), rd.append(reads), nr.append(n)
    for name, xs in (("ratio", rs), ("known", ks)):
        xs.sort()
        print("stride %d blocks, short %d: reads %.1f MB, %d records; %s: median %.3f, "
              "2nd-39th of 40 %.3f-%.3f, all %.3f-%.3f" % (
                  blocks, short, statistics.mean(rd) / 1e6, statistics.mean(nr), name,
                  statistics.median(xs), xs[1], xs[-2], xs[0], xs[-1]))
