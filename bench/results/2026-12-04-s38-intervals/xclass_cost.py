#!/usr/bin/env python3
"""Expected blocks the xclass design codes in a scan that does not know each class's size N_h in
advance: a class's level rises with the count c of its blocks met so far,
l(c) = floor(log2(c / K)) (0 below 2K), and each block is coded when its level >= l(c) at the
time it is met. Expected coded = sum over c of 2^-l(c), against the final sample (what the
estimate uses, sum of N_h 2^-L_h). usage: xclass_cost.py TABLE.csv K1,K2,.. [R]"""
import csv, math, sys
path, Ks = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]
R = int(sys.argv[3]) if len(sys.argv) > 3 else 8
cnt = {}
for r in csv.DictReader(open(path)):
    if int(r["refs"]) < R:
        cnt[int(r["lz4"])] = cnt.get(int(r["lz4"]), 0) + 1
lev = lambda c, K: int(math.floor(math.log2(c / K))) if c >= 2 * K else 0
for K in Ks:
    final = sum(N * 2.0 ** -lev(N, K) for N in cnt.values())
    during = sum(sum(2.0 ** -lev(c, K) for c in range(1, N + 1)) for N in cnt.values())
    print(f"{path} R{R} K{K}: {len(cnt)} classes, final sample {final:.0f}, coded during the scan {during:.0f}")
