#!/usr/bin/env python3
"""Markdown tables from the summary CSVs: rows method x n, per codec "coverage / median half width
/ 95th percentile of |error|". usage: make_tables.py summary-X.csv [methods,...]"""
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = sys.argv[2].split(",") if len(sys.argv) > 2 else None
codecs = ["zstd-3", "gzip-6", "lzjb", "zle"]
key = "method" if "method" in rows[0] else None
groups = {}
for r in rows:
    if "design" in r:
        m = f'{r["design"]} {r["method"]}'; n = f'{r["median_coded"]}'
    elif "K" in r:
        m = f'xclass R{r["census_R"]} {r["method"]}'; n = f'{r["median_coded"]} (K {r["K"]})'
    else:
        m = r["method"]; n = r["median_n"]
    if want and m not in want:
        continue
    groups.setdefault((m, n), {})[r["codec"]] = r
print("| method | n coded | " + " | ".join(f"{c} cov / hw / p95 err" for c in codecs) + " |")
print("| --- | --- | " + " | ".join("---" for _ in codecs) + " |")
for (m, n), g in groups.items():
    cells = []
    for c in codecs:
        r = g.get(c)
        if not r:
            cells.append("-"); continue
        hw = r["median_rel_halfwidth_pct"]
        hw = "inf" if hw in ("inf",) or float(hw) > 1e6 else f"{float(hw):.2f}%"
        cells.append(f'{float(r["coverage"]):.2f} / {hw} / {float(r["p95_abs_err_pct"]):.2f}%')
    print(f"| {m} | {n} | " + " | ".join(cells) + " |")
