// engine/zfs/ddt_log_drain.h
//
// Which blocks of a fast-dedup DDT end up stored uncompressed once its dedup log has drained
// into the two ZAPs (docs/zfs_model.md §6). The rule, from OpenZFS 2.3 (same in 2.4):
//   - each txg flushes at least zfs_dedup_log_flush_entries_min (1000) log entries, more when
//     the ingest rate is higher, in the log tree's order, which is the key order and so the
//     ZAP's hash order (ddt.c: ddt_sync_flush_log_incremental, ddt_log_take_first; the DDT
//     ZAP's hash is the key's first word, zap_micro.c: zap_hash with ZAP_FLAG_PRE_HASHED_KEY);
//   - it smears them over up to zfs_dedup_log_flush_passes_max (8) sync passes: pass p takes
//     what is left of the txg's share / (9 - p), i.e. 125 entries per pass at the minimum;
//   - what pass p changes in the MOS is written by pass p + 1's dsl_pool_sync
//     (spa.c: spa_sync_iterate_to_convergence), and a block rewritten in the txg in which it
//     was already written, from sync pass zfs_sync_pass_dont_compress (8) on, is written
//     uncompressed (zio.c: zio_write_compress, the BP_GET_LOGICAL_BIRTH(bp) == txg branch).
// So a leaf is raw when the last txg that touched it touched it in pass 7 or 8 and in an earlier
// pass too; the ZAP header (its entry count changes with every insert) and the indirect block
// above the leaves are raw when the drain's last txg reached pass 7. A new leaf (split off a
// full one) is a hole before its first write, so its first write is always compressed.
//
// The drain is simulated on uniform hashes (the key is a checksum): both classes' entries in
// one sorted stream, each class its own fat ZAP split as zap_expand_leaf / zap_leaf_split do
// (a full leaf splits on its next prefix bit; the upper half moves to a new block). Assumed: the
// whole table passes through the log once after the write, at the minimum rate (an idle pool
// whose ingest rate is below 1000 entries per txg; OpenZFS 2.3.2's own pool code drained the
// accuracy suite's copies so). Measured on 2.3.2 (tests/accuracy/openzfs23, zdb -dddddd of the
// DDT objects), raw / all leaves: vmstore 16K 9/17 unique and 9/32 duplicate (simulated 5-9 and
// 9-11), database 16K 3/32 and 1/4 (3-4, 1), fileserver 128K 4/16 and 0/1 (3-4, 0).
//
// Thread safety: pure functions (a process-wide cache of results, guarded by a mutex).

#ifndef ZSIM_ENGINE_ZFS_DDT_LOG_DRAIN_H_
#define ZSIM_ENGINE_ZFS_DDT_LOG_DRAIN_H_

#include <cstdint>
#include <span>

namespace zsim::zfs {

// zfs_dedup_log_flush_entries_min (ddt.c): the fewest log entries a txg flushes.
inline constexpr uint64_t kDdtLogFlushEntriesMin = 1000;
// zfs_dedup_log_flush_passes_max (ddt.c).
inline constexpr int kDdtLogFlushPassesMax = 8;
// zfs_sync_pass_dont_compress (zio.c).
inline constexpr int kSyncPassDontCompress = 8;

// True when a full ZAP leaf's hashes, and `h` coming in, are one value: no split separates
// them (a table keeps 30 bits of a compressed block's key word, ddt/written_key.h), so the leaf
// holds them all (ZFS would chain it) rather than the pointer table doubling without end. Both
// simulations of the ZAP (this drain's and ddt_footprint.cc's layout) ask it.
inline bool ZapLeafCannotSplit(std::span<const uint64_t> hashes, uint64_t h) {
  for (const uint64_t x : hashes) {
    if (x != h) return false;
  }
  return true;
}

// What the drain leaves stored raw in one class's ZAP.
struct DdtRawBlocks {
  double leaf_share = 0;       // raw leaves / leaves (expected)
  bool header_raw = false;     // the ZAP header block (block 0)
  bool indirects_raw = false;  // the indirect block(s) over the leaves that changed last
};

struct DdtLogDrain {
  DdtRawBlocks unique;
  DdtRawBlocks duplicate;
};

// The last sync pass in which the drain of `entries` log entries flushed, at `per_txg` entries
// per txg (1 .. kDdtLogFlushPassesMax; 0 for no entries).
int LastFlushPass(uint64_t entries, uint64_t per_txg = kDdtLogFlushEntriesMin);

// The drain of a fast-dedup table of `unique` + `duplicate` entries into ZAPs whose leaves hold
// `leaf_capacity` entries, at `per_txg` entries per txg. Large tables are simulated at 1/2^k of
// their entries (the raw share is a local property: entries per leaf and per pass do not change
// with the table's size); the header and indirect flags then follow LastFlushPass of the real
// count. The mean over seeded key sets (about 2^20 simulated entries in all). Deterministic.
// REQUIRES: leaf_capacity >= 1, per_txg >= kDdtLogFlushPassesMax.
DdtLogDrain SimulateDdtLogDrain(uint64_t unique, uint64_t duplicate, uint64_t leaf_capacity,
                                uint64_t per_txg = kDdtLogFlushEntriesMin);

// The drain of the table whose entries' ZAP hashes (each key's first word) are known: the same
// rule on those keys, one run. What it leaves raw is then the table's own, not an expectation
// (tests/accuracy/openzfs23/drain_replay.py: on OpenZFS 2.3.2's own keys the rule gives its raw
// leaves exactly). Any order of hashes. REQUIRES: as SimulateDdtLogDrain.
DdtLogDrain DdtLogDrainOfKeys(std::span<const uint64_t> unique_hashes,
                              std::span<const uint64_t> duplicate_hashes, uint64_t leaf_capacity,
                              uint64_t per_txg = kDdtLogFlushEntriesMin);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_DDT_LOG_DRAIN_H_
