#!/usr/bin/env python3
"""A filesystem's dnode blocks and micro-ZAP directories rebuilt byte for byte from a `zdb
-ddddd` dump of an OpenZFS 2.3.2 pool and the tree the harness wrote into it, compressed with the
lz4 command and set against the psize OpenZFS gave each: what a dnode block and a directory cost,
and which facts of the files make the cost (docs/accuracy.md, "What still misses").

Layouts (OpenZFS 2.3.2): a dnode is 512 bytes (include/sys/dnode.h dnode_phys_t: type,
indblkshift, nlevels, nblkptr, bonustype, checksum, compress, flags, datablkszsec, bonuslen,
extra_slots, maxblkid, used, 32 bytes of pad; one blkptr_t of include/sys/spa.h: 3 DVAs,
blk_prop, pad, phys_birth, birth, fill, checksum, or an embedded payload; a 320-byte bonus: the
SA, include/sys/sa_impl.h sa_hdr_phys_t then the attributes as the harness writes them in
zfs_mknode's order: mode, size, gen, uid, gid, parent, flags, atime, mtime, ctime, crtime, links,
projid, the ACL's count and 3 trivial entries). A micro-ZAP block (include/sys/zap_impl.h) is
mzap_phys_t (block type, salt, normflags, pad: 64 bytes) then 64-byte entries (value = object |
type << 60, cd, pad, 50-byte name), in insertion order (zap_micro.c mzap_addent); the harness
inserts names sorted. Times come from the tree's stat (nanoseconds: zdb prints seconds), so the
tree must not have been touched since the pool was written; an embedded block's payload is the
file compressed again (lz4: the lz4 command's block; gzip: zlib at the dataset's level).

With --vary none|sizes|times, the same blocks with every file's size fields (dn_datablkszsec,
dn_maxblkid, dn_used, the DVA's asize, blk_prop's lsize and psize, the SA's size) or its atime and
ctime made one value: what those facts cost.

  zdb -e -p POOLDIR -ddddd POOL/fs > DUMP      # a pool the harness wrote (oracle23.measure
                                                # with the pool kept, as leaf_survey.py does)
  dnode_survey.py --dump DUMP --tree BUILD/samples-data/source [--gzip-level 6]

Standard library and the lz4 command.
"""
import argparse
import os
import random
import re
import struct
import subprocess
import sys
import zlib

FRAME = 15  # the lz4 command's frame: header 7, block size 4, end mark 4 (no checksums)
TYPES = {"ZFS plain file": 19, "ZFS directory": 20, "ZFS master node": 21,
         "ZFS delete queue": 22, "SA master node": 45, "SA attr registration": 46,
         "SA attr layouts": 47}
HEADER = re.compile(r"^\s+(-?\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*)$")
BLKPTR = re.compile(r"(\d+):([0-9a-f]+):([0-9a-f]+) ([0-9a-f]+)L/([0-9a-f]+)P F=(\d+) "
                    r"B=(\d+)/(\d+) cksum=([0-9a-f]+):([0-9a-f]+):([0-9a-f]+):([0-9a-f]+)")


def human(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * units[s[-1]]) if s[-1] in units else int(float(s))


def lz4_bytes(data):
    """ZFS's lz4 output length for `data`: the lz4 command's block plus ZFS's 4-byte header."""
    out = subprocess.run(["lz4", "-1", "-c", "-q", "--no-frame-crc", "-BD"], input=data,
                         capture_output=True, check=True).stdout
    return len(out) - FRAME + 4, out[11:len(out) - 4]


def parse(dump):
    objs, cur, in_blocks = {}, None, False
    with open(dump) as f:
        for line in f:
            s = line.strip()
            if s.startswith("Object  lvl"):
                cur, in_blocks = "next", False
                continue
            if cur == "next":
                m = HEADER.match(line)
                cur = int(m.group(1)) if m else None
                if m:
                    objs[cur] = {"lvl": int(m.group(2)), "dblk": human(m.group(4)),
                                 "type": m.group(9).strip(), "ents": {}, "bps": []}
                continue
            if cur is None:
                continue
            d = objs[cur]
            if s.startswith("Indirect blocks:"):
                in_blocks = True
                continue
            if in_blocks:
                m = re.match(r"^\s*([0-9a-f]+)\s+L(\d)\s+(.*)$", line)
                if m:
                    d["bps"].append((int(m.group(2)), m.group(3)))
                continue
            if "maxblkid" in s:
                d["maxblkid"] = int(s.split()[-1])
                continue
            m = re.match(r"^(size|mode|gen|links|parent)\s+(\d+)$", s)
            if m:
                d[m.group(1)] = int(m.group(2), 8 if m.group(1) == "mode" else 10)
            m = re.match(r"^(.*) = (\d+) \(type: (.*)\)$", s)
            if m:
                d["ents"][m.group(1)] = int(m.group(2))
    return objs


def blkptr_words(line, otype, level, dvas):
    m = BLKPTR.search(line)
    vdev, off, asize = int(m[1]), int(m[2], 16), int(m[3], 16)
    lsize, psize, fill, birth = int(m[4], 16), int(m[5], 16), int(m[6]), int(m[7])
    comp = 2 if psize == lsize else 15  # off or lz4 (spa.h BP_SET_COMPRESS)
    w = [0] * 16
    for i in range(dvas):  # a ditto copy far away (zdb's compact line shows DVA[0] only)
        w[2 * i] = (vdev << 32) | (asize >> 9)
        w[2 * i + 1] = (off + i * 0x1f900000) >> 9
    w[6] = (((lsize >> 9) - 1) | (((psize >> 9) - 1) << 16) | (comp << 32) | (8 << 40)
            | (otype << 48) | (level << 56) | (1 << 63))
    w[10], w[11] = birth, fill
    w[12:16] = [int(m[i], 16) for i in range(9, 13)]
    return w, asize


def embedded_words(line, otype, payload):
    m = re.search(r"et=(\d+) ([0-9a-f]+)L/([0-9a-f]+)P B=(\d+)", line)
    lsize, psize, birth = int(m[2], 16), int(m[3], 16), int(m[4])
    w = [0] * 16
    w[6] = ((lsize - 1) | ((psize - 1) << 25) | (15 << 32) | (1 << 39) | (otype << 48)
            | (1 << 63))
    w[10] = birth
    data = (payload + bytes(112))[:psize] + bytes(112)
    for k, slot in enumerate((0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15)):
        w[slot] = struct.unpack("<Q", data[8 * k:8 * k + 8])[0]
    return w


def paths_of(objs):
    parent = {}
    for o, d in objs.items():
        if d["type"] == "ZFS directory":
            for name, child in d["ents"].items():
                parent[child] = (o, name)

    def path(o):
        parts = []
        while o in parent:
            o, name = parent[o]
            parts.append(name)
        return "/".join(reversed(parts))
    return {o: path(o) for o in objs if o in parent}


def payload(tree, path, psize, gzip_level):
    full = os.path.join(tree, path)
    if not os.path.isfile(full) or os.path.islink(full):
        return bytes((i * 13) & 0xFF for i in range(psize))  # a small directory: not rebuilt
    with open(full, "rb") as f:
        data = f.read()
    if gzip_level:
        return zlib.compress(data, gzip_level)
    n, block = lz4_bytes(data)
    return struct.pack(">I", n - 4) + block


def dnode_image(objs, paths, tree, vary, gzip_level):
    image = bytearray(512 * (max(objs) + 1))
    for o, d in objs.items():
        if o < 0:
            continue
        t = TYPES.get(d["type"], 0)
        sa = t in (19, 20)
        alike = vary == "sizes" and t == 19
        top = [line for level, line in d["bps"] if level == d["lvl"] - 1]
        used, words = 0, None
        for level, line in d["bps"]:
            if "EMBEDDED" not in line and BLKPTR.search(line):
                used += blkptr_words(line, t, level, 1)[1]
        if top and "EMBEDDED" in top[0]:
            psize = int(re.search(r"/([0-9a-f]+)P", top[0])[1], 16)
            words = embedded_words(top[0], t, payload(tree, paths.get(o, ""), psize,
                                                      gzip_level))
        elif top:
            line = top[0]
            if alike:
                line = re.sub(r":[0-9a-f]+ [0-9a-f]+L/[0-9a-f]+P", ":2000 2000L/2000P", line)
                used = 8192
            words = blkptr_words(line, t, d["lvl"] - 1, 2 if t != 19 or d["lvl"] > 1 else 1)[0]
        base = 512 * o
        image[base:base + 64] = struct.pack(
            "<BBBBBBBBHHB3xQQ32x", t, 17, d["lvl"], 1, 44 if sa else 0, 0, 0,
            0x0B if sa else 0x01, 16 if alike else d["dblk"] >> 9, 176 if sa else 0, 0,
            0 if alike else d.get("maxblkid", 0), used)
        if words:
            image[base + 64:base + 192] = struct.pack("<16Q", *words)
        if not sa:
            continue
        st = os.lstat(os.path.join(tree, paths[o])) if o in paths else None
        atime, mtime, ctime = ((st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns) if st
                               else (0, 0, 0))
        if vary == "times":
            atime, ctime = 1796213664331254816, 1796213663847254822
        size = 8192 if alike else d.get("size", 0)
        bonus = struct.pack("<IHH", 0x2F505A, 2 | (1 << 10), 24)
        bonus += struct.pack("<7Q", d.get("mode", 0), size, d.get("gen", 0), 0, 0,
                             d.get("parent", 0), 0x840800000004)
        for ns in (atime, mtime, ctime, ctime):
            bonus += struct.pack("<QQ", ns // 10**9, ns % 10**9)
        bonus += struct.pack("<3Q", d.get("links", 1), 0, 3)
        for i, who in enumerate((0x1000, 0x2000, 0x4000)):
            bonus += struct.pack("<HHI", 0, who, 0x1F0086 | (0x10079 if i == 0 else 0))
        image[base + 192:base + 192 + len(bonus)] = bonus
    return image


def microzap_block(objs, d, salt):
    block = struct.pack("<QQQ40x", 0x8000000000000003, salt, 0)
    for name, obj in sorted(d["ents"].items()):
        t = 4 if objs.get(obj, {}).get("type") == "ZFS directory" else 8
        block += struct.pack("<QIH", obj | (t << 60), 0, 0) + name.encode().ljust(50, b"\0")
    return block.ljust(d["dblk"], b"\0")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", required=True, help="zdb -ddddd of the filesystem")
    ap.add_argument("--tree", required=True, help="the tree the harness wrote")
    ap.add_argument("--gzip-level", type=int, default=0, help="the dataset's gzip level")
    ap.add_argument("--vary", choices=("none", "sizes", "times"), default="none")
    a = ap.parse_args(argv)
    objs = parse(a.dump)
    paths = paths_of(objs)
    psizes = [int(re.search(r"/([0-9a-f]+)P", line)[1], 16)
              for level, line in objs[0]["bps"] if level == 0]
    image = dnode_image(objs, paths, a.tree, a.vary, a.gzip_level)
    exact = within = built_total = 0
    for b, measured in enumerate(psizes):
        raw = lz4_bytes(bytes(image[b * 16384:(b + 1) * 16384]).ljust(16384, b"\0"))[0]
        built = min(16384, -(-raw // 512) * 512)
        built_total += built
        exact += built == measured
        within += abs(built - measured) <= 512
    print("dnode blocks: %d, psize %d built (ashift 9) against %d measured; %d exact, %d within "
          "a sector" % (len(psizes), built_total, sum(psizes), exact, within))
    rng = random.Random(1)
    rows = []
    for d in objs.values():
        tops = [line for level, line in d["bps"] if level == 0]
        if d["type"] != "ZFS directory" or not tops or "EMBEDDED" in tops[0]:
            continue
        if d["dblk"] > 128 << 10:
            continue  # a fat ZAP
        raw = lz4_bytes(microzap_block(objs, d, rng.getrandbits(64)))[0]
        measured = int(re.search(r"/([0-9a-f]+)P", tops[0])[1], 16)
        rows.append((len(d["ents"]), sum(len(n) for n in d["ents"]), raw, measured))
    print("micro-ZAP directories stored: %d, %d built at their psize (ashift 9); entries, name "
          "bytes, lz4 bytes, psize:" % (len(rows), sum(1 for r in rows
                                                      if -(-r[2] // 512) * 512 == r[3])))
    for r in sorted(rows, reverse=True)[:10]:
        print("  %d %d %d %d" % r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
