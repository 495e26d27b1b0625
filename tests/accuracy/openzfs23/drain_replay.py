#!/usr/bin/env python3
"""Which fast-dedup DDT leaves OpenZFS 2.3's dedup-log drain leaves uncompressed: the rule zsim
models (engine/zfs/ddt_log_drain.h; docs/accuracy.md, model changes 8 and 17) replayed on a real
pool's keys, or on random key sets of given counts.

The rule: after the copy the log is flushed in key order (= ZAP hash order, the key's first
word), 1000 entries per txg smeared over 8 sync passes (pass p takes what is left / (9 - p);
ddt.c: ddt_sync_flush_log_incremental); what pass p changes is written in pass p + 1, and a block
rewritten in its birth txg from pass 8 on is stored raw (zio.c: zio_write_compress); each class
is a fat ZAP whose full leaves split on the next hash bit (zap.c: zap_expand_leaf).

  drain_replay.py --env BUILD/accuracy/openzfs23/env --pool-dir DIR [--pool zh23]
      every leaf of both DDT ZAPs of an exported pool (a harness run with its pool kept): the
      keys' hashes read from the leaves' entry chunks (le_hash), each leaf's prefix, psize and
      birth txg as zdb shows them, then the rule replayed on those keys: raw leaves / leaves
      per class, measured and replayed.
  drain_replay.py --random N --unique U --duplicate D
      the raw leaves of N random key sets of U + D entries: their distribution and mean share
      (what zsim's SimulateDdtLogDrain estimates).

Standard library and the packaged zdb only.
"""
import argparse
import collections
import os
import random
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import leaf_survey  # noqa: E402
import oracle23  # noqa: E402

PASSES_MAX = 8        # zfs_dedup_log_flush_passes_max
DONT_COMPRESS = 8     # zfs_sync_pass_dont_compress
FLUSH_MIN = 1000      # zfs_dedup_log_flush_entries_min
LEAF_CAPACITY = 182   # 7-chunk fast-dedup entries in a 32K leaf of 1,278 chunks


class Zap:
    """One DDT ZAP during the drain: leaves by hash prefix, per block its last write."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.leaves = [[0, [], 1]]      # prefix length, hashes, block id
        self.birth = [0, 0]             # per block: txg of its last write (0: a hole)
        self.raw = [False, False]
        self.dirty = set()
        self.table = [0]
        self.shift = 0

    def add(self, h):
        self.dirty.add(0)  # the header's entry count
        while True:
            idx = h >> (64 - self.shift) if self.shift else 0
            leaf = self.leaves[self.table[idx]]
            if len(leaf[1]) < self.capacity:
                leaf[1].append(h)
                self.dirty.add(leaf[2])
                return
            if leaf[0] == self.shift:  # zap_grow_ptrtbl
                self.table = [x for x in self.table for _ in (0, 1)]
                self.shift += 1
                continue
            plen = leaf[0] + 1
            bit = 64 - plen
            fresh = [plen, [x for x in leaf[1] if (x >> bit) & 1], len(self.birth)]
            self.birth.append(0)
            self.raw.append(False)
            leaf[1] = [x for x in leaf[1] if not (x >> bit) & 1]
            leaf[0] = plen
            self.dirty.update((leaf[2], fresh[2]))
            span = 1 << (self.shift - plen + 1)
            first = idx // span * span
            for j in range(first + span // 2, first + span):
                self.table[j] = len(self.leaves)
            self.leaves.append(fresh)

    def write(self, txg, sync_pass):
        for b in self.dirty:
            self.raw[b] = self.birth[b] == txg and sync_pass >= DONT_COMPRESS
            self.birth[b] = txg
        self.dirty.clear()

    def raw_leaves(self):
        return sum(1 for leaf in self.leaves if self.raw[leaf[2]]), len(self.leaves)


def replay(unique, duplicate, capacity=LEAF_CAPACITY, per_txg=FLUSH_MIN):
    """(raw, leaves) of the unique and duplicate ZAPs, and the txgs the drain took."""
    stream = sorted([(h, 0) for h in unique] + [(h, 1) for h in duplicate])
    zaps = [Zap(capacity), Zap(capacity)]
    pos, txg = 0, 0
    while pos < len(stream):
        txg += 1
        left = per_txg
        for p in range(1, PASSES_MAX + 1):
            if pos >= len(stream):
                break
            take = min(max(1, left // (PASSES_MAX + 1 - p)), len(stream) - pos)
            for h, c in stream[pos:pos + take]:
                zaps[c].add(h)
            pos += take
            left -= min(left, take)
            for z in zaps:
                z.write(txg, p + 1)
    return zaps[0].raw_leaves(), zaps[1].raw_leaves(), txg


def read_pool(env, pool_dir, pool):
    """{class: [hash]} of the entries and [(class, prefix, prefix_len, entries, psize, birth)]
    of the leaves, read from the pool's DDT ZAPs."""
    top = leaf_survey.zdb(env, pool_dir, "-dddd", pool, "1").decode()
    ddt_dir = re.search(r"DDT-sha256 = (\d+)", top)
    if not ddt_dir:
        raise SystemExit("drain_replay: no fast-dedup DDT in the pool (legacy tables have no log)")
    listing = leaf_survey.zdb(env, pool_dir, "-dddd", pool, ddt_dir.group(1)).decode()
    keys, leaves = {"unique": [], "duplicate": []}, []
    for m in re.finditer(r"DDT-sha256-zap-(\w+) = (\d+)", listing):
        cls = m.group(1)
        text = leaf_survey.zdb(env, pool_dir, "-dddddd", pool, m.group(2)).decode()
        for line in text.splitlines():
            b = re.match(r"\s*([0-9a-f]+)\s+L0 0:([0-9a-f]+):[0-9a-f]+ .* [0-9a-f]+L/([0-9a-f]+)P"
                         r" .*B=(\d+)/", line)
            if not b or b.group(1) == "0":  # block 0: the ZAP header
                continue
            psize = int(b.group(3), 16)
            spec = "8000:r" if psize == leaf_survey.LEAF else "8000/%x:dr" % psize
            data = leaf_survey.zdb(env, pool_dir, "-R", pool,
                                   "0:%s:%s" % (b.group(2), spec))[:leaf_survey.LEAF]
            if len(data) != leaf_survey.LEAF:
                raise SystemExit("drain_replay: could not read leaf %s" % b.group(1))
            prefix = struct.unpack_from("<Q", data, 16)[0]       # zap_leaf_phys lh_prefix
            prefix_len = struct.unpack_from("<H", data, 32)[0]   # lh_prefix_len
            n = 0
            for i in range(leaf_survey.CHUNKS):
                at = leaf_survey.CHUNK0 + 24 * i
                if data[at] == leaf_survey.ENTRY:
                    keys[cls].append(struct.unpack_from("<Q", data, at + 16)[0])  # le_hash
                    n += 1
            leaves.append((cls, prefix, prefix_len, n, psize, int(b.group(4))))
    return keys, leaves


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env")
    ap.add_argument("--pool-dir")
    ap.add_argument("--pool", default="zh23")
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--unique", type=int, default=0)
    ap.add_argument("--duplicate", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if a.random:
        counts = [collections.Counter(), collections.Counter()]
        share = [0.0, 0.0]
        for s in range(a.random):
            r = random.Random(a.seed + s)
            u = [r.getrandbits(64) for _ in range(a.unique)]
            d = [r.getrandbits(64) for _ in range(a.duplicate)]
            for c, (raw, n) in enumerate(replay(u, d)[:2]):
                counts[c][raw] += 1
                share[c] += raw / n if n else 0.0
        for c, name in enumerate(("unique", "duplicate")):
            print("%s: raw leaves %s, mean share %.4f" % (
                name, " ".join("%d:%d" % kv for kv in sorted(counts[c].items())),
                share[c] / a.random))
        return 0
    if not a.env or not a.pool_dir:
        ap.error("--env and --pool-dir, or --random")
    keys, leaves = read_pool(oracle23.load_env(a.env), a.pool_dir, a.pool)
    for cls, prefix, plen, n, psize, birth in sorted(leaves, key=lambda x: (x[0], x[1])):
        print("leaf %s %s/%d entries %d psize %d birth %d%s" % (
            cls, format(prefix, "0%db" % plen) if plen else "-", plen, n, psize, birth,
            " raw" if psize == leaf_survey.LEAF else ""))
    u, d, txgs = replay(keys["unique"], keys["duplicate"])
    for name, got in (("unique", u), ("duplicate", d)):
        mine = [x for x in leaves if x[0] == name]
        print("%s: %d entries; measured %d raw of %d leaves; replayed %d raw of %d" % (
            name, len(keys[name]), sum(1 for x in mine if x[4] == leaf_survey.LEAF), len(mine),
            got[0], got[1]))
    print("drain txgs: measured %d (distinct leaf births), replayed %d" % (
        len({x[5] for x in leaves}), txgs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
