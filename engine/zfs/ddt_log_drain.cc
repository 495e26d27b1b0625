#include "engine/zfs/ddt_log_drain.h"

#include <algorithm>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/base/mix.h"
#include "engine/zfs/simulation_cache.h"

namespace zsim::zfs {
namespace {

// The raw share of one table is a draw of its key set (which leaves hold the pass-6/7 and
// pass-7/8 boundaries of each txg, and whether such a leaf reaches into the next txg's range):
// for vmstore 16K's 2,754 + 5,125 entries, 700 random key sets give 3 to 10 raw unique leaves
// of about 19, a share of 0.400 on average, 0.06 standard deviation per set
// (tests/accuracy/openzfs23/drain_replay.py; the same rule on the 7,879 keys of OpenZFS
// 2.3.2's own pool gives its 5 raw leaves of 20). The model wants the mean, so it simulates key
// sets until about kSimulatedEntries entries have passed (at least kMinSeeds sets): the
// Monte-Carlo error of the share is then about 0.005 whatever the table's size (a larger table
// averages over more leaves per set). Five sets, as before, were off by up to 0.036 (0.436 for
// vmstore 16K: 0.7 leaf, 34K on disk at ashift 12). Cost: about 60 ms of CPU per table size.
constexpr uint64_t kSimulatedEntries = uint64_t{1} << 20;
constexpr uint64_t kMinSeeds = 5;
constexpr uint64_t kMaxSeeds = 256;
// Both classes together; larger tables are simulated at 1/2^k of their entries.
constexpr uint64_t kMaxSimulatedEntries = 1 << 14;

// One DDT ZAP during the drain: its leaves (extendible hashing on the hash's top bits, as
// zap_expand_leaf / zap_leaf_split), and per block (0 the header, then one per leaf) the txg of
// its last write and whether that write was uncompressed.
class ZapDrain {
 public:
  explicit ZapDrain(uint64_t capacity) : capacity_(capacity) {
    leaves_.push_back(Leaf{0, {}, 1});
    blocks_.resize(2);
  }

  void Add(uint64_t h) {
    Dirty(0);  // zap_num_entries lives in the header
    while (true) {
      const uint64_t idx = shift_ == 0 ? 0 : h >> (64 - shift_);
      const uint32_t li = table_[idx];
      if (leaves_[li].hashes.size() < capacity_ || ZapLeafCannotSplit(leaves_[li].hashes, h)) {
        leaves_[li].hashes.push_back(h);
        Dirty(leaves_[li].block);
        return;
      }
      if (leaves_[li].prefix_len == shift_) {  // zap_grow_ptrtbl
        std::vector<uint32_t> doubled(table_.size() * 2);
        for (size_t j = 0; j < table_.size(); ++j) doubled[2 * j] = doubled[2 * j + 1] = table_[j];
        table_.swap(doubled);
        ++shift_;
        continue;
      }
      const int plen = leaves_[li].prefix_len + 1;
      const int bit = 64 - plen;
      Leaf fresh{plen, {}, blocks_.size()};
      blocks_.emplace_back();  // a hole until its first write
      std::vector<uint64_t> keep;
      for (uint64_t x : leaves_[li].hashes) ((x >> bit) & 1 ? fresh.hashes : keep).push_back(x);
      leaves_[li].hashes.swap(keep);
      leaves_[li].prefix_len = plen;
      Dirty(leaves_[li].block);
      Dirty(fresh.block);
      const uint32_t ni = static_cast<uint32_t>(leaves_.size());
      leaves_.push_back(std::move(fresh));
      const uint64_t span = uint64_t{1} << (shift_ - plen + 1);
      const uint64_t first = (idx / span) * span;
      for (uint64_t j = first + span / 2; j < first + span; ++j) table_[j] = ni;
    }
  }

  // dsl_pool_sync of sync pass `pass` of `txg` writes the blocks changed since the last write.
  void Write(uint64_t txg, int pass) {
    if (dirty_.empty()) return;
    for (size_t b : dirty_) Store(&blocks_[b], txg, pass);
    Store(&indirect_, txg, pass);  // the indirect block above changed blocks
    dirty_.clear();
  }

  uint64_t leaves() const { return leaves_.size(); }
  uint64_t raw_leaves() const {
    uint64_t n = 0;
    for (const Leaf& l : leaves_) n += blocks_[l.block].raw ? 1 : 0;
    return n;
  }
  bool header_raw() const { return blocks_[0].raw; }
  bool indirect_raw() const { return indirect_.raw; }

 private:
  struct Leaf {
    int prefix_len = 0;
    std::vector<uint64_t> hashes;
    size_t block = 0;
  };
  struct Block {
    uint64_t birth = 0;  // 0: a hole
    bool raw = false;
    bool dirty = false;
  };

  void Dirty(size_t b) {
    if (!blocks_[b].dirty) {
      blocks_[b].dirty = true;
      dirty_.push_back(b);
    }
  }
  // zio_write_compress: compression is off for a block rewritten in its birth txg from sync
  // pass zfs_sync_pass_dont_compress on.
  static void Store(Block* b, uint64_t txg, int pass) {
    b->raw = b->birth == txg && pass >= kSyncPassDontCompress;
    b->birth = txg;
    b->dirty = false;
  }

  uint64_t capacity_;
  std::vector<Leaf> leaves_;
  std::vector<uint32_t> table_ = std::vector<uint32_t>(1, 0);
  int shift_ = 0;
  std::vector<Block> blocks_;
  Block indirect_;
  std::vector<size_t> dirty_;
};

// The flush of ddt_sync_flush_log_incremental: each txg `per_txg` entries in key order, pass p
// taking what is left of them / (passes_max + 1 - p) (at least one), until the log is empty.
// `hashes`: each class's entries (0 unique, 1 duplicate), each sorted; the log holds them merged.
DdtLogDrain RunDrain(const std::span<const uint64_t> (&hashes)[2], uint64_t capacity,
                     uint64_t per_txg) {
  ZapDrain zaps[2] = {ZapDrain(capacity), ZapDrain(capacity)};
  size_t next[2] = {0, 0};
  const size_t total = hashes[0].size() + hashes[1].size();
  size_t pos = 0;
  for (uint64_t txg = 1; pos < total; ++txg) {
    uint64_t left = per_txg;
    for (int pass = 1; pass <= kDdtLogFlushPassesMax && pos < total; ++pass) {
      const uint64_t want = std::max<uint64_t>(1, left / (kDdtLogFlushPassesMax + 1 - pass));
      const size_t take = static_cast<size_t>(std::min<uint64_t>(want, total - pos));
      for (size_t i = 0; i < take; ++i) {
        // The smaller of the two classes' next keys (ddt_log_take_first: the tree's first).
        const int c = next[0] == hashes[0].size()               ? 1
                      : next[1] == hashes[1].size()             ? 0
                      : hashes[1][next[1]] < hashes[0][next[0]] ? 1
                                                                : 0;
        zaps[c].Add(hashes[c][next[c]++]);
      }
      pos += take;
      left -= std::min<uint64_t>(left, take);
      for (ZapDrain& z : zaps) z.Write(txg, pass + 1);
    }
  }
  // What this one table left raw (a class without entries: one empty leaf, nothing raw).
  DdtLogDrain out;
  DdtRawBlocks* cls[2] = {&out.unique, &out.duplicate};
  for (int c = 0; c < 2; ++c) {
    cls[c]->leaf_share =
        static_cast<double>(zaps[c].raw_leaves()) / static_cast<double>(zaps[c].leaves());
    cls[c]->header_raw = zaps[c].header_raw();
    cls[c]->indirects_raw = zaps[c].indirect_raw();
  }
  return out;
}

// One seeded key set of `unique` + `duplicate` uniform hashes.
DdtLogDrain RunSeededDrain(uint64_t unique, uint64_t duplicate, uint64_t capacity, uint64_t per_txg,
                           uint64_t seed_index) {
  std::vector<uint64_t> keys[2];
  keys[0].reserve(unique);
  keys[1].reserve(duplicate);
  uint64_t seed = 0xD1A1A5EDull + 0x1000193ull * seed_index;  // fixed: deterministic
  for (uint64_t i = 0; i < unique + duplicate; ++i) {
    keys[i < unique ? 0 : 1].push_back(Mix64(seed += kGoldenGamma));
  }
  for (std::vector<uint64_t>& k : keys) std::sort(k.begin(), k.end());
  const std::span<const uint64_t> spans[2] = {keys[0], keys[1]};
  return RunDrain(spans, capacity, per_txg);
}

// The mean over seeds; header and indirect raw when most runs had them raw.
DdtLogDrain MeanDrain(uint64_t unique, uint64_t duplicate, uint64_t capacity, uint64_t per_txg) {
  using Key = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>;
  static SimulationCache<Key, DdtLogDrain> cache(4096);
  return cache.GetOrCompute(Key{unique, duplicate, capacity, per_txg}, [&] {
    double share[2] = {0, 0};
    uint64_t header[2] = {0, 0}, indirect[2] = {0, 0};
    const uint64_t seeds = std::clamp<uint64_t>(
        kSimulatedEntries / std::max<uint64_t>(1, unique + duplicate), kMinSeeds, kMaxSeeds);
    for (uint64_t s = 0; s < seeds; ++s) {
      const DdtLogDrain r = RunSeededDrain(unique, duplicate, capacity, per_txg, s);
      const DdtRawBlocks* run[2] = {&r.unique, &r.duplicate};
      for (int c = 0; c < 2; ++c) {
        share[c] += run[c]->leaf_share;
        header[c] += run[c]->header_raw ? 1 : 0;
        indirect[c] += run[c]->indirects_raw ? 1 : 0;
      }
    }
    DdtLogDrain out;
    DdtRawBlocks* cls[2] = {&out.unique, &out.duplicate};
    for (int c = 0; c < 2; ++c) {
      cls[c]->leaf_share = share[c] / static_cast<double>(seeds);
      cls[c]->header_raw = 2 * header[c] > seeds;
      cls[c]->indirects_raw = 2 * indirect[c] > seeds;
    }
    return out;
  });
}

}  // namespace

int LastFlushPass(uint64_t entries, uint64_t per_txg) {
  if (entries == 0) return 0;
  uint64_t rest = entries % per_txg;
  if (rest == 0) rest = per_txg;
  uint64_t left = per_txg;
  for (int pass = 1; pass < kDdtLogFlushPassesMax; ++pass) {
    const uint64_t take = std::max<uint64_t>(1, left / (kDdtLogFlushPassesMax + 1 - pass));
    if (rest <= take) return pass;
    rest -= take;
    left -= std::min(left, take);
  }
  return kDdtLogFlushPassesMax;
}

DdtLogDrain SimulateDdtLogDrain(uint64_t unique, uint64_t duplicate, uint64_t leaf_capacity,
                                uint64_t per_txg) {
  uint64_t u = unique, d = duplicate;
  bool scaled = false;
  while (u + d > kMaxSimulatedEntries) {
    u = (u + 1) / 2;
    d = (d + 1) / 2;
    scaled = true;
  }
  DdtLogDrain out = MeanDrain(u, d, leaf_capacity, per_txg);
  if (scaled) {
    // The last txg of the real drain decides the header and the indirect blocks: raw when it
    // reached pass 7 (written again in pass 8) and the class had entries in more than one pass.
    const bool late = LastFlushPass(unique + duplicate, per_txg) >= kSyncPassDontCompress - 1;
    const uint64_t per_pass = per_txg / kDdtLogFlushPassesMax;
    const uint64_t counts[2] = {unique, duplicate};
    DdtRawBlocks* cls[2] = {&out.unique, &out.duplicate};
    for (int c = 0; c < 2; ++c) {
      const bool busy = counts[c] * per_pass >= unique + duplicate;  // ~1 entry per pass
      cls[c]->header_raw = cls[c]->indirects_raw = late && busy;
    }
  }
  return out;
}

DdtLogDrain DdtLogDrainOfKeys(std::span<const uint64_t> unique_hashes,
                              std::span<const uint64_t> duplicate_hashes, uint64_t leaf_capacity,
                              uint64_t per_txg) {
  // Sorted copies only of a class given out of order (a report's are sorted already).
  std::vector<uint64_t> sorted[2];
  std::span<const uint64_t> spans[2] = {unique_hashes, duplicate_hashes};
  for (int c = 0; c < 2; ++c) {
    if (std::is_sorted(spans[c].begin(), spans[c].end())) continue;
    sorted[c].assign(spans[c].begin(), spans[c].end());
    std::sort(sorted[c].begin(), sorted[c].end());
    spans[c] = sorted[c];
  }
  return RunDrain(spans, leaf_capacity, per_txg);
}

}  // namespace zsim::zfs
