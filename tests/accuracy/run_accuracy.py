#!/usr/bin/env python3
"""The accuracy suite: zsim `--profile v23` against real ZFS (zfs-fuse, pool version 23).

For each dataset (built by samples/build-NAME) and each setting of its matrix (recordsize,
compression, ashift) the tree is written into a fresh file-backed pool (zfs_oracle.measure) and
scanned by `zsim scan --profile v23 --exact --json`; the figures are compared with the tolerances
of TOLERANCES. Writes OUT/accuracy-NAME.json and OUT/accuracy-NAME.md, prints the table when a
figure is off, exits 0 (all within tolerance), 1 (some off, or an error), 77 (skipped: /dev/fuse
absent).

  run_accuracy.py --zsim BUILD/zsim --source-dir REPO --out BUILD/accuracy --dataset tiny
  run_accuracy.py --zsim BUILD/zsim --out DIR --tree /some/tree --name mine    any tree, default matrix
  run_accuracy.py --collect BUILD/accuracy [--docs docs/accuracy.md]          merge the results

ZFS's figures depend only on the dataset's content and the setting, so they are cached under
OUT/oracle-cache keyed by the sample's checksum (the last line of samples/build-NAME); rerunning
after a zsim change then costs only the zsim scans. --no-cache measures again.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zfs_oracle  # noqa: E402

ORACLE_VERSION = 3  # bump when what measure() records changes, to invalidate the cache

# The matrix: per dataset, the settings (recordsize, compression, ashift) measured. Every
# compression on the small mixed dataset; a subset on the larger ones; both recordsizes (128k and a
# small one) and both ashifts (9 and 12) covered on every dataset.
ALL_COMPRESSIONS = ("off", "lzjb", "gzip-1", "gzip-6", "gzip-9", "zle")
MATRIX = {
    "tiny": [("128k", c, 12) for c in ALL_COMPRESSIONS] +
            [("8k", c, 9) for c in ALL_COMPRESSIONS],
    "fileserver": [("128k", "off", 12), ("128k", "lzjb", 12), ("128k", "gzip-6", 12),
                   ("128k", "gzip-9", 9), ("16k", "gzip-1", 9), ("16k", "zle", 12)],
    "source": [("128k", "lzjb", 12), ("128k", "gzip-9", 12), ("128k", "gzip-6", 9),
               ("16k", "gzip-1", 12), ("8k", "off", 9), ("8k", "zle", 12)],
    "database": [("8k", "off", 12), ("8k", "lzjb", 12), ("8k", "gzip-9", 12),
                 ("16k", "gzip-6", 9), ("16k", "zle", 9), ("128k", "gzip-1", 9)],
    # 4k and 16k on the sparse images: their indirect blocks follow where the data lies
    # (zsim counts the ranges with data; off writes the zero blocks, lzjb makes them holes).
    "vmstore": [("128k", "off", 12), ("128k", "lzjb", 12), ("128k", "gzip-6", 9),
                ("128k", "zle", 9), ("16k", "lzjb", 12), ("8k", "gzip-1", 9),
                ("4k", "lzjb", 9), ("4k", "off", 9)],
}
DEFAULT_MATRIX = [("128k", "off", 12), ("128k", "lzjb", 12), ("8k", "gzip-6", 9)]

# Tolerances of the issue. A widened one must say why, with the measured figure.
TOLERANCES = {
    "compressratio": 0.01,     # absolute, what zfs prints (2 decimals)
    "used": 0.01,              # relative, dataset `used`
    "pool_alloc": 0.02,        # relative, pool allocated bytes
    "ddt_per_entry": 0.10,     # relative, zdb's per-entry in-core and on-disk DDT sizes
}
# Widened, because ZFS itself does not give one figure: on a DDT object of fewer than
# SMALL_DDT_ENTRIES entries the per-entry sizes depend on how the entries were batched into txgs
# (when ZAP leaves split). Measured: the same 260 unique entries (tiny, 8k, gzip-1, ashift 9)
# gave 173 and 141 bytes in core, 295 and 271 on disk, in repeated runs (11 or 9 leaf blocks):
# no single model can be within 10% of both.
SMALL_DDT_ENTRIES = 1000
SMALL_DDT_TOLERANCE = 0.25
SMALL_DDT_NOTE = ("widened to 25%%: %d entries; ZFS gave 141 and 173 B in core for the same 260 "
                  "entries in repeated runs")

SIZES = {"k": 1 << 10, "m": 1 << 20}


def size_bytes(text):
    m = re.fullmatch(r"(\d+)([km]?)", text.lower())
    return int(m.group(1)) * SIZES.get(m.group(2), 1)


# ----------------------------------------------------------------------------------------------
# Datasets

def build_sample(source_dir, name, data_dir):
    """Runs samples/build-NAME into data_dir/NAME (idempotent) and returns (path, summary line)."""
    script = os.path.join(source_dir, "samples", "build-" + name)
    if not os.path.exists(script):
        raise zfs_oracle.OracleError("dataset script %s does not exist" % script)
    out = os.path.join(data_dir, name)
    p = subprocess.run([script, out, "--size", "small"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise zfs_oracle.OracleError("%s failed (exit %d): %s" %
                                     (script, p.returncode, p.stderr.strip()[-2000:]))
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    if not lines or "checksum=" not in lines[-1]:
        raise zfs_oracle.OracleError("%s printed no summary line" % script)
    return out, lines[-1]


def summary_field(summary, key):
    m = re.search(r"\b%s=(\S+)" % key, summary or "")
    return m.group(1) if m else None


# ----------------------------------------------------------------------------------------------
# zsim

def run_zsim(zsim, tree, settings, ashift):
    """One zsim scan for every (recordsize, compression) of settings at this ashift; returns
    {(recordsize_bytes, compression): result object}, and the seconds it took."""
    rss = sorted({size_bytes(rs) for rs, _, a in settings if a == ashift}, reverse=True)
    comps = []
    for _, c, a in settings:
        if a == ashift and c not in comps:
            comps.append(c)
    # sha256: the checksum v23's dedup=on uses, so that at compression off zsim's keys are the
    # pool's and the DDT is laid out on them (docs/accuracy.md, model change 19).
    cmd = [zsim, "scan", tree, "--profile", "v23", "--exact", "--json", "--quiet",
           "--checksum", "sha256", "--recordsize", ",".join("%dk" % (r >> 10) for r in rss),
           "--compression", ",".join(comps), "--ashift", str(ashift), "--vdev", "disk",
           "--exclude", ".zsim-sample*"]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise zfs_oracle.OracleError("cannot run %s: %s" % (zsim, e))
    secs = time.time() - t0
    if p.returncode not in (0, 1):
        raise zfs_oracle.OracleError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                                           p.stderr.strip()[-2000:]))
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        raise zfs_oracle.OracleError("zsim printed no JSON (%s): %r" % (e, p.stdout[:500]))
    out = {}
    for r in doc.get("results", []):
        out[(int(r["recordsize"]), r["compression"])] = r
    return out, secs, doc


def dig(obj, *path):
    for p in path:
        if not isinstance(obj, dict) or p not in obj:
            return None
        obj = obj[p]
    return obj


# ----------------------------------------------------------------------------------------------
# Comparison

def check(figure, zfs, zsim, ok, error="", tol="", note=""):
    return {"figure": figure, "zfs": zfs, "zsim": zsim, "ok": bool(ok), "error": error,
            "tol": tol, "note": note}


def rel_err(zsim, zfs):
    return (zsim - zfs) / zfs if zfs else (0.0 if zsim == zfs else float("inf"))


def compare(oracle, res):
    """The checks of one setting: oracle = zfs_oracle.measure() output, res = zsim's result object
    for the same (recordsize, compression, ashift) (None when zsim gave none)."""
    if res is None:
        return [check("zsim result", "present", "missing", False,
                      note="zsim printed no result for this (recordsize, compression)")]
    out = []
    objs = oracle["zdb"]["objects"]
    ddt = res.get("dedup", {})
    for cls in ("unique", "duplicate"):
        z = objs.get(cls, {}).get("entries", 0)
        s = dig(ddt, "entries", cls)
        out.append(check("DDT %s entries" % cls, z, s, s == z, "" if s is None else s - z,
                         "exact"))

    # Histogram, row by row (bucket = floor(log2(refcnt))), allocated and referenced blocks.
    zh = {int(b): row for b, row in oracle["histogram"].items()}
    sh = {}
    for row in ddt.get("histogram", []) or []:
        sh[zfs_oracle.bucket_of(int(row["refcnt"]))] = row
    bad = []
    for b in sorted(set(zh) | set(sh)):
        for side in ("allocated", "referenced"):
            zv = dig(zh.get(b), side, "blocks") or 0
            sv = dig(sh.get(b), side, "blocks") or 0
            if zv != sv:
                bad.append("refcnt %d %s blocks: zfs %d zsim %d" % (1 << b, side, zv, sv))
    out.append(check("histogram rows (alloc+ref blocks)", "%d rows" % len(zh),
                     "%d rows" % len(sh), not bad, "%d off" % len(bad) if bad else 0, "exact",
                     "; ".join(bad[:6]) + (" ..." if len(bad) > 6 else "")))
    # Informational: allocated psize/dsize totals of the exact histogram.
    for col in ("psize", "dsize"):
        zv = sum(row["allocated"][col] for row in zh.values())
        sv = sum(dig(row, "allocated", col) or 0 for row in sh.values())
        out.append(check("allocated %s (info)" % col.upper(), zv, sv, True,
                         "%+.2f%%" % (100 * rel_err(sv, zv)) if zv else "", "info"))

    # DEDUP as `zpool list` prints it.
    zd = oracle["zpool"]["dedup"]
    sd = ddt.get("ratio")
    sds = None if sd is None else "%.2f" % sd
    out.append(check("zpool DEDUP", zd, sds, sds == zd,
                     "" if sd is None else "%+.2f" % (sd - float(zd)), "printed 0.01"))

    # Informational: the data-only compression of zdb's ratio line (ref LSIZE / ref PSIZE of
    # the DDT) beside zsim's; compressratio differs from it by the dataset's metadata.
    zr = (oracle["zdb"].get("ratio") or {}).get("compress")
    sr = dig(ddt, "zdb", "compress")
    out.append(check("zdb data-only compress (info)", zr,
                     None if sr is None else "%.2f" % sr, True,
                     "" if sr is None or zr is None else "%+.2f" % (sr - float(zr)), "info"))

    zc = oracle["zfs"]["compressratio"]
    sc = res.get("compressratio")
    ok = sc is not None and abs(sc - float(zc)) <= TOLERANCES["compressratio"] + 1e-9
    out.append(check("compressratio", zc, None if sc is None else "%.2f" % sc, ok,
                     "" if sc is None else "%+.2f" % (sc - float(zc)),
                     "%.2f" % TOLERANCES["compressratio"]))

    for fig, zv, key, tol in (("dataset used", oracle["zfs"]["used"], "used",
                               TOLERANCES["used"]),
                              ("pool ALLOC (zdb -b)", oracle["zdb_b"]["spa_allocated"],
                               "pool_alloc", TOLERANCES["pool_alloc"])):
        sv = res.get(key)
        e = None if sv is None else rel_err(sv, zv)
        out.append(check(fig, zv, sv, e is not None and abs(e) <= tol + 1e-12,
                         "" if e is None else "%+.2f%%" % (100 * e), "%g%%" % (100 * tol)))
    # Informational: what each side charges beyond the data blocks of the DDT histogram, i.e.
    # the metadata (dnodes, indirect blocks, directories; for the pool also the DDT and the MOS).
    z_ref = sum(row["referenced"]["dsize"] for row in zh.values())
    z_all = sum(row["allocated"]["dsize"] for row in zh.values())
    s_ref = sum(dig(row, "referenced", "dsize") or 0 for row in sh.values())
    s_all = sum(dig(row, "allocated", "dsize") or 0 for row in sh.values())
    for fig, zv, sv in (("dataset metadata: used - data (info)", oracle["zfs"]["used"] - z_ref,
                         None if res.get("used") is None else res["used"] - s_ref),
                        ("pool metadata: alloc - data (info)",
                         oracle["zdb_b"]["spa_allocated"] - z_all,
                         None if res.get("pool_alloc") is None else res["pool_alloc"] - s_all)):
        out.append(check(fig, zv, sv, True,
                         "" if sv is None or not zv else "%+.1f%%" % (100 * rel_err(sv, zv)),
                         "info"))
    out.append(check("zpool list ALLOC (info)", oracle["zpool"]["alloc"],
                     None if res.get("pool_alloc") is None else
                     zfs_nicenum(res["pool_alloc"]), True, "", "info"))

    # zdb's per-entry DDT sizes, per class.
    for cls in ("unique", "duplicate"):
        o = objs.get(cls)
        if not o or not o["entries"]:
            continue
        small = o["entries"] < SMALL_DDT_ENTRIES
        tol = SMALL_DDT_TOLERANCE if small else TOLERANCES["ddt_per_entry"]
        for kind, label in (("in_core", "in core"), ("on_disk", "on disk")):
            zv = o[kind]
            sv = dig(ddt, "ddt_per_entry", cls, kind)
            # The unique object's size depends on its history (a ZAP never shrinks): zsim gives
            # the range from "no duplicate ever sat in it" (sv) to "every duplicate did" (sv_max);
            # ZFS's figure must fall in that range, widened by the tolerance.
            sv_max = dig(ddt, "ddt_per_entry", cls, kind + "_max") or sv
            if sv is None:
                e = None
            elif sv_max > sv and sv <= zv <= sv_max:
                e = 0.0
            elif zv > sv_max:
                e = rel_err(sv_max, zv)
            else:
                e = rel_err(sv, zv)
            shown = sv if sv_max == sv else "%s..%s" % (sv, sv_max)
            note = ("zsim has no dedup.ddt_per_entry.%s.%s" % (cls, kind) if sv is None else
                    SMALL_DDT_NOTE % o["entries"] if small else "")
            if sv is not None and sv_max != sv:
                note = (note + "; " if note else "") + (
                    "zsim's range: the unique object never shrinks, so its size depends on how "
                    "many duplicates passed through it (the txgs of their copies)")
            out.append(check("DDT %s bytes/entry %s" % (cls, label), zv, shown,
                             e is not None and abs(e) <= tol + 1e-12,
                             "" if e is None else "%+.1f%%" % (100 * e), "%g%%" % (100 * tol),
                             note))
    return out


def zfs_nicenum(n):
    """zfs_nicenum as v23 prints it: 1024-based, 3 significant digits."""
    units = "BKMGTPE"
    i = 0
    v = float(n)
    while v >= 1024 and i < len(units) - 1:
        v /= 1024
        i += 1
    if i == 0:
        return "%d" % n
    if n % (1 << (10 * i)) == 0:
        return "%d%s" % (int(v), units[i])
    for prec in (2, 1, 0):
        s = "%.*f%s" % (prec, v, units[i])
        if len(s) <= 5:
            return s
    return "%.0f%s" % (v, units[i])


# ----------------------------------------------------------------------------------------------
# Tables

def setting_label(s):
    return "%s %s a%d" % (s["recordsize"], s["compression"], s["ashift"])


def fmt(v):
    if v is None:
        return "—"
    if isinstance(v, float):
        return "%.4g" % v
    return str(v)


def table_md(results, only_off=False):
    """Markdown: an overview (one row per dataset x setting: ZFS / zsim (error), ✗ when outside
    the tolerance), then every figure (only those outside their tolerance with only_off)."""
    lines = ["| dataset | setting | off | DDT entries unique, dup | histogram | DEDUP | "
             "compressratio (data only) | used | pool alloc | DDT B/entry unique disk, core | "
             "DDT B/entry dup disk, core | metadata dataset, pool (info) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ds in results:
        for s in ds["settings"]:
            c = {x["figure"]: x for x in s["checks"]}
            off = [x for x in s["checks"] if not x["ok"]]

            def mark(*figs):
                return "" if all(c.get(f, {"ok": True})["ok"] for f in figs) else " ✗"

            def pair(fig, err=False):
                x = c.get(fig)
                if x is None:
                    return "—"
                return "%s / %s%s%s" % (fmt(x["zfs"]), fmt(x["zsim"]),
                                        " (%s)" % x["error"] if err and x["error"] != "" else "",
                                        mark(fig))

            def ddt(cls):
                figs = ["DDT %s bytes/entry %s" % (cls, k) for k in ("on disk", "in core")]
                if figs[0] not in c:
                    return "—"
                return "%s, %s / %s, %s%s" % (fmt(c[figs[0]]["zfs"]), fmt(c[figs[1]]["zfs"]),
                                              fmt(c[figs[0]]["zsim"]), fmt(c[figs[1]]["zsim"]),
                                              mark(*figs))
            ent = "%s, %s / %s, %s%s" % (
                fmt(dig(c, "DDT unique entries", "zfs")), fmt(dig(c, "DDT duplicate entries", "zfs")),
                fmt(dig(c, "DDT unique entries", "zsim")),
                fmt(dig(c, "DDT duplicate entries", "zsim")),
                mark("DDT unique entries", "DDT duplicate entries"))
            h = c.get("histogram rows (alloc+ref blocks)")
            hist = "—" if h is None else ("equal" if h["ok"] else "%s ✗" % h["error"])
            cr = pair("compressratio")
            d = c.get("zdb data-only compress (info)")
            if d is not None:
                cr += " (%s / %s)" % (fmt(d["zfs"]), fmt(d["zsim"]))
            md = [c.get("dataset metadata: used - data (info)"),
                  c.get("pool metadata: alloc - data (info)")]
            meta = "—" if None in md else "%s, %s / %s, %s" % (
                fmt(md[0]["zfs"]), fmt(md[1]["zfs"]), fmt(md[0]["zsim"]), fmt(md[1]["zsim"]))
            lines.append("| %s | %s | %d of %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                ds["dataset"], setting_label(s), len(off),
                len([x for x in s["checks"] if x["tol"] != "info"]), ent, hist,
                pair("zpool DEDUP"), cr, pair("dataset used", True),
                pair("pool ALLOC (zdb -b)", True), ddt("unique"), ddt("duplicate"), meta))
    lines += ["", ("Figures outside their tolerance:" if only_off else
                   "Every figure (✗ = outside its tolerance):"), "",
              "| dataset | setting | figure | ZFS | zsim | error | tolerance | ok | note |",
              "|---|---|---|---|---|---|---|---|---|"]
    for ds in results:
        for s in ds["settings"]:
            for x in s["checks"]:
                if only_off and x["ok"]:
                    continue
                lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    ds["dataset"], setting_label(s), x["figure"], fmt(x["zfs"]), fmt(x["zsim"]),
                    fmt(x["error"]), x["tol"], "ok" if x["ok"] else "✗",
                    x["note"].replace("|", "/")))
    return "\n".join(lines) + "\n"


def metadata(oracle):
    """'indirects, dnodes, DDT, rest' ASIZE from zdb -bbb's per-type table: file indirect blocks
    (ZFS plain file, level > 0), DMU dnode, the DDT ZAPs, every other non-file-data type."""
    types = oracle.get("zdb_types")
    if not types:
        return "—"
    totals = {r["type"]: r["asize"] for r in types if r["level"] is None}
    ind = sum(r["asize"] for r in types if r["type"] == "ZFS plain file" and r["level"])
    dn = totals.get("DMU dnode", 0)
    ddt = totals.get("DDT ZAP algorithm", 0)
    rest = totals.get("Total", 0) - totals.get("ZFS plain file", 0) - dn - ddt
    return ", ".join(zfs_nicenum(x) for x in (ind, dn, ddt, max(rest, 0)))


def oracle_md(results):
    """The ZFS figures alone (what zfs-fuse measured), one row per dataset x setting."""
    lines = ["| dataset | setting | used | referenced | compressratio | zpool ALLOC | "
             "SPA allocated | DEDUP | DDT unique (entries, disk/core B) | "
             "DDT duplicate (entries, disk/core B) | metadata ASIZE: file indirects, dnodes, "
             "DDT ZAPs, rest (zdb -bbb, rounded) | copy+settle+zdb s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ds in results:
        for s in ds["settings"]:
            o = s.get("oracle")
            if not o:
                continue
            objs = o["zdb"]["objects"]

            def obj(cls):
                x = objs.get(cls)
                return "0" if not x else "%d, %d/%d" % (x["entries"], x["on_disk"],
                                                         x["in_core"])
            t = o.get("seconds", {})
            lines.append("| %s | %s | %d | %d | %s | %s | %d | %s | %s | %s | %s | %s |" % (
                ds["dataset"], setting_label(s), o["zfs"]["used"], o["zfs"]["referenced"],
                o["zfs"]["compressratio"], o["zpool"]["alloc"], o["zdb_b"]["spa_allocated"],
                o["zpool"]["dedup"], obj("unique"), obj("duplicate"), metadata(o),
                "%.0f+%.0f+%.0f%s" % (t.get("copy", 0), t.get("settle", 0), t.get("zdb", 0),
                                      " (cached)" if s.get("cached") else "")))
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# Running one dataset

def cache_path(out, name, checksum, rs, comp, ashift):
    if not checksum:
        return None
    return os.path.join(out, "oracle-cache", "%s-%s-%s-%s-a%d-v%d.json" %
                        (name, checksum[:16], rs, comp, ashift, ORACLE_VERSION))


def run_dataset(a, name, tree, summary, matrix):
    checksum = summary_field(summary, "checksum")
    workdir = os.path.join(a.out, "work")
    os.makedirs(workdir, exist_ok=True)
    settings = []
    t_start = time.time()
    zres = {}
    zsecs = 0.0
    zsim_doc = None
    for ashift in sorted({x[2] for x in matrix}):
        r, secs, doc = run_zsim(a.zsim, tree, matrix, ashift)
        zsecs += secs
        zsim_doc = doc
        for k, v in r.items():
            zres[(k[0], k[1], ashift)] = v
    for rs, comp, ashift in matrix:
        cp = None if a.no_cache else cache_path(a.out, name, checksum, rs, comp, ashift)
        cached = False
        if cp and os.path.exists(cp):
            with open(cp) as f:
                oracle = json.load(f)
            cached = True
        else:
            zfs_oracle.log("%s: ZFS %s %s ashift %d ..." % (name, rs, comp, ashift))
            try:
                oracle = zfs_oracle.measure(tree, rs, comp, ashift, workdir)
            except zfs_oracle.OracleError as e:
                # A daemon that died or hung mid-suite is started again, and the setting
                # measured once more (zfs_oracle.revive_daemon).
                if not zfs_oracle.revive_daemon(a.daemon_state):
                    raise
                zfs_oracle.log("%s: %s; measuring %s %s ashift %d again" % (name, e, rs, comp,
                                                                           ashift))
                oracle = zfs_oracle.measure(tree, rs, comp, ashift, workdir)
            if cp:
                os.makedirs(os.path.dirname(cp), exist_ok=True)
                with open(cp + ".tmp", "w") as f:
                    json.dump(oracle, f, indent=1, sort_keys=True)
                os.rename(cp + ".tmp", cp)
        if oracle.get("ashift_zdb") not in (None, ashift):
            raise zfs_oracle.OracleError("pool has ashift %s, asked %d" %
                                         (oracle.get("ashift_zdb"), ashift))
        res = zres.get((size_bytes(rs), comp, ashift))
        settings.append({"recordsize": rs, "compression": comp, "ashift": ashift,
                         "cached": cached, "checks": compare(oracle, res), "oracle": oracle})
    return {"dataset": name, "tree": tree, "summary": summary,
            "zsim_version": (zsim_doc or {}).get("zsim_version"),
            "zsim_input": (zsim_doc or {}).get("input"), "settings": settings,
            "seconds": {"total": time.time() - t_start, "zsim": zsecs},
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def cleanup_stale(workdir):
    """Pools and directories this suite left behind in an earlier run that was killed (ctest
    timeout): named zacc<pid>_<n> with a pid that no longer runs. Others' pools are untouched."""
    try:
        listing = zfs_oracle.run(["zpool", "list", "-H", "-o", "name"], check=False).stdout
    except OSError:
        return
    for pool in listing.split():
        m = re.fullmatch(r"%s(\d+)_\d+" % zfs_oracle.POOL_PREFIX, pool)
        if m and not os.path.exists("/proc/%s" % m.group(1)):
            zfs_oracle.log("destroying stale pool %s of a dead run" % pool)
            zfs_oracle.run(["zpool", "destroy", "-f", pool], check=False)
    if os.path.isdir(workdir):
        for d in os.listdir(workdir):
            m = re.match(r"%s(\d+)_\d+-" % zfs_oracle.POOL_PREFIX, d)
            if m and not os.path.exists("/proc/%s" % m.group(1)):
                import shutil
                shutil.rmtree(os.path.join(workdir, d), ignore_errors=True)


def write_results(out, result):
    name = result["dataset"]
    with open(os.path.join(out, "accuracy-%s.json" % name), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    md = table_md([result])
    with open(os.path.join(out, "accuracy-%s.md" % name), "w") as f:
        f.write(md)
    return md


# ----------------------------------------------------------------------------------------------
# Collecting every dataset into one report (and docs/accuracy.md)

DOC_MARK = "<!-- accuracy-table: generated by tests/accuracy/run_accuracy.py --collect -->"


def collect(out, docs):
    results = []
    for n in sorted(os.listdir(out) if os.path.isdir(out) else []):
        if n.startswith("accuracy-") and n.endswith(".json"):
            with open(os.path.join(out, n)) as f:
                results.append(json.load(f))
    order = list(MATRIX)
    results.sort(key=lambda r: (order.index(r["dataset"]) if r["dataset"] in order else 99,
                                r["dataset"]))
    n_off = sum(1 for r in results for s in r["settings"] for x in s["checks"] if not x["ok"])
    n_all = sum(1 for r in results for s in r["settings"] for x in s["checks"]
                if x["tol"] != "info")
    head = ["Latest run: %s, zsim %s; %d datasets, %d settings, %d of %d asserted figures "
            "outside their tolerance. In the tables: ZFS / zsim (error), ✗ = outside the "
            "tolerance." % (max((r["when"] for r in results), default="—"),
                            ", ".join(sorted({str(r.get("zsim_version")) for r in results})),
                            len(results), sum(len(r["settings"]) for r in results), n_off,
                            n_all), "",
            "| dataset | sample | settings measured / cached | seconds (zsim) |",
            "|---|---|---|---|"]
    for r in results:
        cached = sum(1 for s in r["settings"] if s.get("cached"))
        head.append("| %s | %s | %d / %d | %.0f (%.1f) |" % (
            r["dataset"], r.get("summary") or r["tree"], len(r["settings"]) - cached, cached,
            r["seconds"]["total"], r["seconds"]["zsim"]))
    tail = "\nWhat ZFS measured (bytes exact unless rounded by zpool):\n\n" + oracle_md(results)
    text = "\n".join(head) + "\n\n" + table_md(results) + tail
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    if docs and not results:
        sys.stderr.write("run_accuracy: no results in %s; %s left as it is\n" % (out, docs))
    elif docs:
        with open(docs) as f:
            doc = f.read()
        rest = ""
        if DOC_MARK in doc:
            # The generated part runs to the next section (the OpenZFS 2.3.2 suite's), kept.
            at = doc.index(DOC_MARK)
            end = doc.find("\n## ", at)
            rest = doc[end:] if end >= 0 else ""
            doc = doc[:at]
        else:
            doc = doc.rstrip("\n") + "\n\n"
        with open(docs, "w") as f:
            f.write(doc + DOC_MARK + "\n\n" + "\n".join(head) + "\n\n" +
                    table_md(results, only_off=True) + tail + rest)
    return text, n_off


# ----------------------------------------------------------------------------------------------

def parse_matrix(text):
    out = []
    for item in text.split(","):
        rs, comp, ashift = item.split(":")
        out.append((rs, comp, int(ashift)))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description="zsim --profile v23 against real ZFS (zfs-fuse)")
    ap.add_argument("--zsim")
    ap.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    ap.add_argument("--out", help="results, caches and pool work files go here")
    ap.add_argument("--data-dir", help="where samples are built (default OUT/samples-data)")
    ap.add_argument("--dataset", action="append", default=[])
    ap.add_argument("--tree", help="measure this tree instead of a sample (needs --name)")
    ap.add_argument("--name")
    ap.add_argument("--matrix", help="override: rs:comp:ashift,... e.g. 128k:lzjb:12,8k:off:9")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--daemon-state", help="the fixture's STATEFILE (zfs_oracle.py daemon-start): "
                    "a daemon that dies mid-run is started again and recorded there")
    ap.add_argument("--collect", metavar="OUT")
    ap.add_argument("--docs", help="with --collect: rewrite the table part of this Markdown file")
    a = ap.parse_args(argv)

    if a.collect:
        text, n_off = collect(a.collect, a.docs)
        print(text)
        return 0
    if not a.zsim or not a.out or not (a.dataset or a.tree):
        ap.error("need --zsim, --out and --dataset NAME or --tree PATH --name NAME")
    if a.out:
        # Results of an earlier run of these datasets must not pass for this run's.
        for name in a.dataset + ([a.name] if a.tree and a.name else []):
            for ext in ("json", "md"):
                try:
                    os.unlink(os.path.join(a.out, "accuracy-%s.%s" % (name, ext)))
                except OSError:
                    pass
    if not zfs_oracle.fuse_available():
        print("SKIPPED: %s is absent on this machine, so zfs-fuse (the real ZFS this suite "
              "compares zsim with) cannot run; the accuracy suite is skipped." %
              zfs_oracle.fuse_device())
        return zfs_oracle.SKIP
    os.makedirs(a.out, exist_ok=True)
    a.out = os.path.abspath(a.out)
    if not os.access(a.zsim, os.X_OK):
        print("FAILED: zsim binary %s not found" % a.zsim)
        return 1
    daemon = zfs_oracle.Daemon()
    failed = False
    try:
        try:
            daemon.ensure()
        except zfs_oracle.OracleError as e:
            if not zfs_oracle.revive_daemon(a.daemon_state):
                raise
            zfs_oracle.log("%s; the daemon was started again" % e)
        cleanup_stale(os.path.join(a.out, "work"))
        jobs = []
        if a.tree:
            jobs.append((a.name or os.path.basename(a.tree.rstrip("/")), a.tree, None,
                         parse_matrix(a.matrix) if a.matrix else DEFAULT_MATRIX))
        data_dir = a.data_dir or os.path.join(a.out, "samples-data")
        for name in a.dataset:
            tree, summary = build_sample(a.source_dir, name, data_dir)
            jobs.append((name, tree, summary,
                         parse_matrix(a.matrix) if a.matrix else MATRIX.get(name,
                                                                             DEFAULT_MATRIX)))
        for name, tree, summary, matrix in jobs:
            result = run_dataset(a, name, tree, summary, matrix)
            md = write_results(a.out, result)
            off = [x for s in result["settings"] for x in s["checks"] if not x["ok"]]
            print("%s: %d settings, %d figures outside tolerance, %.0f s (zsim %.1f s)" %
                  (name, len(result["settings"]), len(off), result["seconds"]["total"],
                   result["seconds"]["zsim"]))
            print("ZFS figures:\n" + oracle_md([result]))
            if off:
                failed = True
                print(md)
    except zfs_oracle.SkipTest as e:
        print("SKIPPED: %s" % e)
        return zfs_oracle.SKIP
    except (zfs_oracle.OracleError, subprocess.TimeoutExpired) as e:
        print("FAILED: %s" % e)
        return 1
    finally:
        daemon.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main(sys.argv[1:]))
