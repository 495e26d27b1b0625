# coverage.py DIR TAG EXACTTAG: over DIR/TAG_s_SEED.json (sampled scans) against
# DIR/EXACTTAG_e_SEED.json (--exact), per sampled row: held / missed, in ratio space at the
# metadata psize M pinned by the exact rows' floored compressratio (ratio is monotone in M; an
# interval holds if it holds the exact (L + M) / (P_exact + M) at both ends of the pinned range);
# psize half-width from the interval's ends at the middle of that range.
import json, sys, glob, re, math
d, tag, ex = sys.argv[1:4]
held = miss = amb = zero = n = 0
hw, err = [], []
for f in sorted(glob.glob('%s/%s_s_*.json' % (d, tag))):
    s = re.search(r'_s_(\d+)\.json', f).group(1)
    a = json.load(open(f)); b = json.load(open('%s/%s_e_%s.json' % (d, ex, s)))
    E = {(r['recordsize'], r['compression']): r for r in b['results']}
    for r in a['results']:
        if r['exact']:
            continue
        x = E[(r['recordsize'], r['compression'])]; n += 1
        L, P, PX, (lo, hi), Mm = r['lsize'], r['psize'], x['psize'], r['ci95'], r['metadata_bytes']
        err.append(100 * (P / PX - 1))
        exacts = [q for q in b['results'] if q['recordsize'] == r['recordsize']]
        Ms = [M for M in range(0, Mm + 1, 16) if all(
            math.floor(100 * (q['lsize'] + M) / (q['psize'] + M) + 1e-9) == round(100 * q['compressratio'])
            for q in exacts)] or [0, Mm]
        if hi - lo < 1e-12:
            zero += 1; ok = P == PX; held += ok; miss += not ok; hw.append(0); continue
        oks = [lo <= (L + M) / (PX + M) <= hi for M in (min(Ms), max(Ms))]
        held += all(oks); miss += not any(oks); amb += any(oks) and not all(oks)
        M = (min(Ms) + max(Ms)) / 2
        hw.append(100 * ((L + M) / lo - (L + M) / hi) / 2 / P)
med = lambda v: sorted(v)[len(v) // 2] if v else 0
print('%s: sampled rows %d, held %d, missed %d, undecided %d, zero-width %d; psize half-width median '
      '%.1f%% (min %.2f%%, max %.1f%%); |error| median %.2f%%, max %.2f%%' % (
          tag, n, held, miss, amb, zero, med(hw), min(hw or [0]), max(hw or [0]),
          med([abs(e) for e in err]), max([abs(e) for e in err] or [0])))
