#!/usr/bin/env python3
"""OpenZFS 2.3.2 (Debian's libzpool, user space) as the oracle of zsim's `--profile 2.3`.

Library of run_openzfs23.py, standard library only:
  load_env       what build-harness wrote: the harness, the packaged zdb, its library directory
  measure        one pool per setting: the harness writes the tree into a fresh file-backed pool
                 (in a temporary directory, removed always) and prints its figures; the packaged
                 zdb then reads the exported pool (`zdb -e -p DIR -DD POOL`) and must agree with
                 the harness on every DDT object (entries, dspace, mspace) and on DEDUP
  parse_zdb_dd   the parser of zdb 2.3's -DD output (a pure function of text)

Command line (for debugging):
  oracle23.py measure ENVFILE TREE --recordsize 128k --compression lz4 --ashift 12 \
      --vdev disk --ddt fast
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

POOL = "zh23"


class OracleError(Exception):
    """A step against OpenZFS failed (harness, zdb or parse)."""


def load_env(path):
    """build-harness's OUTDIR/env -> {'HARNESS', 'ZDB', 'LIBDIR', 'OPENZFS'}."""
    env = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            if k:
                env[k] = v
    for need in ("HARNESS", "ZDB", "LIBDIR"):
        if need not in env:
            raise OracleError("%s: no %s=" % (path, need))
    return env


# zdb 2.3: "DDT-sha256-zap-unique: dspace=49152; mspace=65536; entries=30"
OBJ_RE = re.compile(r"^DDT-(\w+)-(\w+)-(\w+): dspace=(\d+); mspace=(\d+); entries=(\d+)$")
RATIO_RE = re.compile(r"^dedup = ([0-9.]+), compress = ([0-9.]+), copies = ([0-9.]+),")
HEADER_RE = re.compile(r"^DDT-(\w+): version=(\d+) \[(\w+)\]")


def parse_zdb_dd(text):
    """`zdb -DD` (2.3) -> {'format': 'FDT'|'LEGACY'|None, 'objects': {class: {entries, dspace,
    mspace}}, 'ratio': {dedup, compress, copies} or None}."""
    out = {"format": None, "objects": {}, "ratio": None}
    for line in text.splitlines():
        line = line.strip()
        m = HEADER_RE.match(line)
        if m:
            out["format"] = m.group(3)
            continue
        m = OBJ_RE.match(line)
        if m:
            o = out["objects"].setdefault(m.group(3), {"entries": 0, "dspace": 0, "mspace": 0})
            o["dspace"] += int(m.group(4))
            o["mspace"] += int(m.group(5))
            o["entries"] += int(m.group(6))
            continue
        m = RATIO_RE.match(line)
        if m:
            out["ratio"] = {"dedup": m.group(1), "compress": m.group(2), "copies": m.group(3)}
    return out


def harness_objects(doc, key="ddt_flushed"):
    """The harness's DDT objects of one state -> {class: {entries, dspace, mspace}}."""
    out = {}
    for o in doc[key]["objects"]:
        c = out.setdefault(o["class"], {"entries": 0, "dspace": 0, "mspace": 0})
        for k in ("entries", "dspace", "mspace"):
            c[k] += o[k]
    return out


def cross_check(doc, zdb):
    """Differences between the harness's figures and zdb's on the exported pool (empty: agree)."""
    diffs = []
    mine = harness_objects(doc)
    for cls in sorted(set(mine) | set(zdb["objects"])):
        a, b = mine.get(cls, {}), zdb["objects"].get(cls, {})
        for k in ("entries", "dspace", "mspace"):
            if a.get(k, 0) != b.get(k, 0):
                diffs.append("%s %s: harness %s, zdb %s" % (cls, k, a.get(k, 0), b.get(k, 0)))
    want = "FDT" if doc["settings"]["fast_dedup"] else "LEGACY"
    if mine and zdb["format"] != want:
        diffs.append("DDT format: zdb %s, asked %s" % (zdb["format"], want))
    # zdb prints the ratio rounded (%.2f), zpool (and the harness) truncated to 2 decimals.
    if zdb["ratio"] is not None and not (
            0 <= float(zdb["ratio"]["dedup"]) - float(doc["pool"]["dedupratio"]) <= 0.01 + 1e-9):
        diffs.append("dedup: harness %s, zdb %s" % (doc["pool"]["dedupratio"],
                                                     zdb["ratio"]["dedup"]))
    return diffs


def crashed_inside_libzpool(p):
    """True when the harness died by a signal raised by one of libzpool's own assertions."""
    return p.returncode < 0 and "libspl_assertf" in p.stderr


def assertion_line(stderr):
    """The failed assertion as libspl prints it (its first line), for the log."""
    for line in stderr.splitlines():
        if "==" in line or "ASSERT" in line or "VERIFY" in line:
            return line.strip()
    return "no assertion text"


EXCLUDE = ".zsim-sample"  # the sample's stamp: the harness skips every entry named so


def harness_command(env, tree, pool_dir, setting):
    """The harness's command line writing `tree` into a fresh pool in `pool_dir` with `setting`
    ({recordsize, compression, ashift, vdev, ddt: 'fast'|'legacy', dedup: 'on' (default)|'off'}),
    checksum sha256, as a filesystem lays the tree out."""
    return [env["HARNESS"], "--tree", tree, "--pool-dir", pool_dir, "--pool", POOL,
            "--vdev", setting["vdev"], "--ashift", str(setting["ashift"]),
            "--recordsize", setting["recordsize"], "--compression", setting["compression"],
            "--checksum", "sha256", "--dedup", setting.get("dedup", "on"),
            "--fast-dedup", "on" if setting["ddt"] == "fast" else "off",
            "--exclude-prefix", EXCLUDE, "--layout", "zpl"]


def measure(env, tree, setting, workdir=None, timeout=3600):
    """Writes `tree` into a fresh pool with `setting` ({recordsize, compression, ashift, vdev,
    ddt: 'fast'|'legacy', dedup: 'on' (default)|'off'}), returns the harness's JSON plus 'zdb' (parsed -DD) and 'zdb_diffs'
    (where the two disagree). The pool's files are removed whatever happens."""
    tmp = tempfile.mkdtemp(prefix="zsim-oz23-", dir=workdir)
    try:
        cmd = harness_command(env, tree, tmp, setting)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
        if crashed_inside_libzpool(p):
            # libzpool is a debug build (ZFS_DEBUG): an assertion of OpenZFS's own, seen once in
            # a teardown thread (dbu_evict: rc->rc_count == number), aborts the harness. That is
            # OpenZFS's state, not the tree's: measure once more in a fresh pool, and say so.
            sys.stderr.write("oracle23: the harness aborted inside libzpool (%s); measuring "
                             "again in a fresh pool\n" % assertion_line(p.stderr))
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=timeout)
        if p.returncode != 0:
            raise OracleError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                                   p.stderr.strip()[-2000:]))
        try:
            doc = json.loads(p.stdout)
        except ValueError as e:
            raise OracleError("harness printed no JSON (%s): %r" % (e, p.stdout[:500]))
        zenv = dict(os.environ, LD_LIBRARY_PATH=env["LIBDIR"])
        z = subprocess.run([env["ZDB"], "-e", "-p", tmp, "-DD", POOL], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=zenv, timeout=timeout)
        if z.returncode != 0:
            raise OracleError("zdb -e -p %s -DD %s: exit %d: %s" %
                              (tmp, POOL, z.returncode, z.stderr.strip()[-2000:]))
        doc["zdb"] = parse_zdb_dd(z.stdout)
        doc["zdb_diffs"] = cross_check(doc, doc["zdb"])
        return doc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("env")
    m.add_argument("tree")
    m.add_argument("--recordsize", default="128k")
    m.add_argument("--compression", default="lz4")
    m.add_argument("--ashift", type=int, default=12)
    m.add_argument("--vdev", default="disk")
    m.add_argument("--ddt", choices=("fast", "legacy"), default="fast")
    a = ap.parse_args(argv)
    setting = {k: getattr(a, k) for k in ("recordsize", "compression", "ashift", "vdev", "ddt")}
    try:
        print(json.dumps(measure(load_env(a.env), a.tree, setting), indent=1))
    except OracleError as e:
        sys.stderr.write("oracle23: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
