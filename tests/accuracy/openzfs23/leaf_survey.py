#!/usr/bin/env python3
"""The DDT leaves of one OpenZFS 2.3.2 pool, leaf by leaf (what zsim's leaf model,
zfs::DdtLeafLz4Bytes, was fitted on for fast dedup; docs/accuracy.md model change 15). `--ddt
legacy` surveys a legacy table the same way (its ZAPs sit in the MOS directory, not under a
DDT-sha256 object).

Writes TREE into a fresh pool with the harness (as oracle23.measure does, the pool kept until the
end), then for each DDT class: every L0 leaf's psize (`zdb -dddddd`), and for each compressed
leaf its 32K read back (`zdb -R POOL 0:OFFSET:8000/PSIZE:dr`), its entries and the sizes in their
keys (zap_leaf.h: 48-byte header, 2K hash table, 1,278 chunks of 24 bytes; an entry chunk points
at its key's array chunks; the key is 5 big-endian words, the 5th dk_prop: lsize and psize in
512-byte units minus one), and its size compressed by the lz4 command (less the frame's 19
bytes). Prints one line per leaf and one per table: leaves, raw leaves, mean entries, mean lz4
bytes, D (the chance that two of the table's entries differ in (lsize, psize)).

  leaf_survey.py --env BUILD/accuracy/openzfs23/env --tree BUILD/samples-data/database \\
      --recordsize 16k --compression lz4 --ashift 9 [--ddt fast|legacy] [--workdir DIR]

Standard library, the lz4 command, the packaged zdb. Slow on the larger samples (one zdb per
leaf: a few minutes).
"""
import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracle23  # noqa: E402

LEAF = 32768
CHUNKS = 1278
CHUNK0 = 48 + 2048
ENTRY, FRAME = 252, 19


def zdb(env, pool_dir, *args):
    e = dict(os.environ, LD_LIBRARY_PATH=env["LIBDIR"])
    return subprocess.run([env["ZDB"], "-e", "-p", pool_dir] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=e).stdout


def leaf_entries(leaf):
    """[(lsize, psize)] of the entries of one decompressed 32K leaf."""
    def chunk(i):
        return leaf[CHUNK0 + 24 * i:CHUNK0 + 24 * (i + 1)]

    def array(c, n):
        out = b""
        while len(out) < n:
            ch = chunk(c)
            out += ch[1:22]
            c = struct.unpack_from("<H", ch, 22)[0]
        return out[:n]
    sizes = []
    for i in range(CHUNKS):
        ch = chunk(i)
        if ch[0] != ENTRY:
            continue
        name_chunk = struct.unpack_from("<H", ch, 4)[0]
        prop = struct.unpack(">Q", array(name_chunk, 40)[32:40])[0]
        sizes.append((((prop & 0xFFFF) + 1) << 9, (((prop >> 16) & 0xFFFF) + 1) << 9))
    return sizes


def diversity(sizes):
    n = len(sizes)
    if n < 2:
        return 0.0
    same = sum(k * (k - 1) for k in collections.Counter(sizes).values())
    return 1 - same / (n * (n - 1))


def lz4_bytes(data):
    out = subprocess.run(["lz4", "-1", "-c", "-q"], input=data, stdout=subprocess.PIPE).stdout
    return len(out) - FRAME


def survey(env, pool_dir, pool):
    top = zdb(env, pool_dir, "-dddd", pool, "1").decode()
    ddt_dir = re.search(r"DDT-sha256 = (\d+)", top)
    # fast dedup: the class ZAPs under the DDT's own directory object; legacy: in the MOS's
    listing = zdb(env, pool_dir, "-dddd", pool, ddt_dir.group(1)).decode() if ddt_dir else top
    if not re.search(r"DDT-sha256-zap-\w+ = \d+", listing):
        raise SystemExit("leaf_survey: no DDT in the pool")
    for m in re.finditer(r"DDT-sha256-zap-(\w+) = (\d+)", listing):
        cls, obj = m.group(1), m.group(2)
        text = zdb(env, pool_dir, "-dddddd", pool, obj).decode()
        leaves, raw, all_sizes = [], 0, []
        for line in text.splitlines():
            b = re.match(r"\s*([0-9a-f]+)\s+L0 0:([0-9a-f]+):([0-9a-f]+) .* ([0-9a-f]+)L/([0-9a-f]+)P",
                         line)
            if not b or b.group(1) == "0":  # block 0: the ZAP header
                continue
            if int(b.group(5), 16) == LEAF:
                raw += 1
                continue
            data = zdb(env, pool_dir, "-R", pool,
                       "0:%s:8000/%s:dr" % (b.group(2), b.group(3)))[:LEAF]
            if len(data) != LEAF:
                continue
            sizes = leaf_entries(data)
            all_sizes += sizes
            leaves.append((len(sizes), lz4_bytes(data), int(b.group(5), 16)))
            print("leaf %s %s entries %d lz4 %d psize %d D %.3f" % (
                cls, b.group(1), len(sizes), leaves[-1][1], leaves[-1][2], diversity(sizes)))
        if leaves:
            print("table %s leaves %d raw %d mean-entries %.1f mean-lz4 %.0f D %.3f" % (
                cls, len(leaves) + raw, raw, sum(x[0] for x in leaves) / len(leaves),
                sum(x[1] for x in leaves) / len(leaves), diversity(all_sizes)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--recordsize", default="16k")
    ap.add_argument("--compression", default="lz4")
    ap.add_argument("--ashift", type=int, default=9)
    ap.add_argument("--ddt", choices=("fast", "legacy"), default="fast")
    ap.add_argument("--workdir")
    a = ap.parse_args(argv)
    env = oracle23.load_env(a.env)
    tmp = tempfile.mkdtemp(prefix="zsim-leaves-", dir=a.workdir)
    try:
        cmd = oracle23.harness_command(env, a.tree, tmp, {
            "vdev": "disk", "ashift": a.ashift, "recordsize": a.recordsize,
            "compression": a.compression, "ddt": a.ddt})
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise SystemExit("leaf_survey: harness exit %d: %s" % (p.returncode, p.stderr[-2000:]))
        survey(env, tmp, oracle23.POOL)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
