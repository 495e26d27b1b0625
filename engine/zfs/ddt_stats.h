// engine/zfs/ddt_stats.h
//
// The dedup table's statistics as ZFS keeps and prints them (docs/zfs_model.md §5.4;
// module/zfs/ddt_stats.c: ddt_stat_generate, ddt_stat_add, ddt_histogram_add;
// cmd/zdb/zdb.c: dump_dedup_ratio; module/zfs/ddt.c: ddt_get_pool_dedup_ratio):
//   - each DDT entry adds to the bucket floor(log2(refcount)): allocated = 1 block with its
//     lsize, psize and dsize (dsize summed over the entry's DVAs, all copies); referenced = the
//     same times refcount;
//   - the Total row sums the buckets;
//   - zdb's ratio line: dedup = ref_dsize / dsize, compress = ref_lsize / ref_psize,
//     copies = ref_dsize / ref_psize, total = dedup * compress / copies;
//   - `zpool list` DEDUP = floor(ref_dsize * 100 / dsize) / 100 (1.00 when nothing is stored).
// Also the dataset's `compressratio` rule (dsl_dataset.c: floor(lsize * 100 / psize) / 100).
//
// Thread safety: DdtStatsBuilder is a value with no locking: one thread at a time per object.
// The pipeline keeps one per thread or shard and merges them with Merge() at the end; the
// result does not depend on the order of AddEntry or Merge calls.

#ifndef ZSIM_ENGINE_ZFS_DDT_STATS_H_
#define ZSIM_ENGINE_ZFS_DDT_STATS_H_

#include <array>
#include <bit>
#include <cassert>
#include <cstdint>

#include "zsim/scan_result.h"

namespace zsim::zfs {

// Histogram bucket of a refcount: floor(log2(refcount)) (highbit64(refcount) - 1).
// REQUIRES: refcount >= 1.
inline int DdtBucket(uint64_t refcount) {
  assert(refcount >= 1);
  return static_cast<int>(std::bit_width(refcount)) - 1;
}

// floor(a * 100 / b) / 100, the 2-decimal truncation ZFS uses for `dedupratio` and
// `compressratio` (ratios stored as integer percent). 1.0 when b == 0.
double RatioPercentFloor(uint64_t a, uint64_t b);

class DdtStatsBuilder {
 public:
  // One DDT entry: the block's lsize and psize (from the DDT key), dsize = the sum of the dsize
  // of the entry's DVAs (AllocationModel::Block(psize, copies).dsize), and its total refcount.
  // REQUIRES: refcount >= 1.
  void AddEntry(uint64_t refcount, uint64_t lsize, uint64_t psize, uint64_t dsize);

  // Adds `count` entries that share refcount and sizes (a run of equal entries, cheaper).
  void AddEntries(uint64_t count, uint64_t refcount, uint64_t lsize, uint64_t psize,
                  uint64_t dsize);

  // Adds `count` entries of bucket `bucket` (0 = refcount 1) and sizes that hold `refs`
  // references together: as AddEntry of each (the histogram's sums are linear in the refcounts).
  void AddEntriesOfBucket(int bucket, uint64_t count, uint64_t refs, uint64_t lsize, uint64_t psize,
                          uint64_t dsize);

  // Adds whole bucket sums at once: `entries` entries of bucket `bucket` (0 = refcount 1) whose
  // allocated and referenced sums are given. For estimates built from a sample (the sums are
  // scaled up), where entries one by one are not known.
  void AddBucket(int bucket, uint64_t entries, const DdtStat& allocated, const DdtStat& referenced);

  // Multiplies every count and size by `factor` (dedup sampling: 1/M of the key space kept).
  void Scale(uint64_t factor);

  // Adds everything `other` holds (ddt_histogram_add).
  void Merge(const DdtStatsBuilder& other);

  uint64_t unique_entries() const { return unique_entries_; }
  uint64_t duplicate_entries() const { return duplicate_entries_; }
  // The Total row (refcnt 0).
  DdtHistogramRow Total() const;

  // The DedupResult fields this builder knows: histogram (non-empty buckets, ascending), total,
  // ratio, zdb ratio line, entry counts. `footprints` is left empty (see ddt_footprint.h).
  // With no entries: empty histogram, zero total, every ratio 1.0.
  DedupResult Result() const;

  // The same histogram with totals known better than the rows' sum (dedup sampling: the rows
  // are the sample's shape, the totals are calibrated to exact and sketch-counted figures);
  // ratio and the zdb line follow the given totals.
  DedupResult ResultWithTotals(const DdtStat& allocated, const DdtStat& referenced,
                               uint64_t unique_entries, uint64_t duplicate_entries) const;

 private:
  static constexpr int kBuckets = 64;
  std::array<DdtStat, kBuckets> allocated_{};
  std::array<DdtStat, kBuckets> referenced_{};
  uint64_t unique_entries_ = 0;
  uint64_t duplicate_entries_ = 0;
};

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_DDT_STATS_H_
