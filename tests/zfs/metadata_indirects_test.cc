// zfs/metadata.h AddFile with the indirect blocks the read stage counted (zfs/indirect_ranges.h):
// a file without holes costs what it cost without them; a sparse file pays for its ranges with
// data only (the same L1 blocks as a contiguous file of as many full ranges, plus the L2 its
// spread needs), far less than the spread-out bound used without counts; counts no file can
// have are clamped to what its blocks allow.

#include <gtest/gtest.h>

#include <vector>

#include "engine/zfs/indirect_ranges.h"
#include "engine/zfs/metadata.h"

namespace zsim::zfs {
namespace {

MetadataTally Tally() {
  MetadataContext ctx;
  ctx.profile = Profile::kV23;
  ctx.ashift = 12;
  return MetadataTally(ctx);
}

std::vector<uint64_t> Counts(const std::vector<uint64_t>& data, uint64_t blocks) {
  IndirectRanges r;
  r.StartPart(0, blocks, blocks, BlockPointerShift(Profile::kV23));
  for (uint64_t b : data) r.Add(b);
  return r.Counts();
}

// The dataset metadata of one file, beyond an empty tally's.
uint64_t FileAsize(uint64_t blocks, uint64_t data_blocks, const std::vector<uint64_t>& indirects) {
  MetadataTally empty = Tally();
  MetadataTally t = Tally();
  t.AddFile(blocks, data_blocks, indirects);
  empty.AddFile(0, 0);  // the same number of dnodes
  return t.DatasetMetadataAsize() - empty.DatasetMetadataAsize();
}

constexpr uint64_t kBlocks = 40960;  // a 160 MiB image at 4K: 320 L1 ranges, 3 L2, 1 L3

// Without counts (states of format < 6) the model takes the data as spread over the whole file:
// for a file without holes that is its layout, and the counts change nothing.
TEST(MetadataIndirectsTest, AFileWithoutHolesCostsWhatItCostWithoutCounts) {
  for (uint64_t n : {2u, 127u, 128u, 129u, 20000u, 40960u}) {
    std::vector<uint64_t> data;
    for (uint64_t b = 0; b < n; ++b) data.push_back(b);
    EXPECT_EQ(FileAsize(n, n, Counts(data, n)), FileAsize(n, n, {})) << n;
  }
}

TEST(MetadataIndirectsTest, ASparseFilePaysOnlyForRangesWithData) {
  // 20480 blocks: 160 L1 ranges filled every other one, or the first 160.
  std::vector<uint64_t> sparse, dense;
  for (uint64_t range = 0; range < 320; range += 2) {
    for (uint64_t b = range * 128; b < range * 128 + 128; ++b) sparse.push_back(b);
  }
  for (uint64_t b = 0; b < 20480; ++b) dense.push_back(b);
  const std::vector<uint64_t> counts = Counts(sparse, kBlocks);
  EXPECT_EQ(counts, (std::vector<uint64_t>{160, 3, 1}));
  EXPECT_EQ(Counts(dense, kBlocks), (std::vector<uint64_t>{160, 2, 1}));
  const uint64_t with_counts = FileAsize(kBlocks, 20480, counts);
  const uint64_t contiguous = FileAsize(kBlocks, 20480, Counts(dense, kBlocks));
  const uint64_t spread = FileAsize(kBlocks, 20480, {});  // 320 half-full L1s
  // The same 160 full L1 blocks; the sparse file needs one L2 block more (3 against 2): 16K of
  // which a few K compressed, 2 copies at ashift 12.
  EXPECT_GT(with_counts, contiguous);
  EXPECT_LE(with_counts - contiguous, 2 * 8192u);
  EXPECT_LT(with_counts + 100 * 8192, spread);

  // Ten blocks: spread over the file (as the model takes them without counts), or in one range.
  std::vector<uint64_t> ten_ranges, one_range;
  for (uint64_t k = 0; k < 10; ++k) {
    ten_ranges.push_back(k * 4096);  // over the 3 L2 ranges too
    one_range.push_back(k);
  }
  EXPECT_EQ(Counts(ten_ranges, kBlocks), (std::vector<uint64_t>{10, 3, 1}));
  EXPECT_EQ(FileAsize(kBlocks, 10, Counts(ten_ranges, kBlocks)), FileAsize(kBlocks, 10, {}));
  EXPECT_LT(FileAsize(kBlocks, 10, Counts(one_range, kBlocks)), FileAsize(kBlocks, 10, {}));
}

TEST(MetadataIndirectsTest, CountsNoFileCanHaveAreClamped) {
  // More L1s than ranges or than blocks: the spread bound; fewer than the blocks need: dense.
  EXPECT_EQ(FileAsize(kBlocks, 1000, {5000, 9, 9}), FileAsize(kBlocks, 1000, {}));
  std::vector<uint64_t> data;
  for (uint64_t b = 0; b < 1000; ++b) data.push_back(b);
  EXPECT_EQ(FileAsize(kBlocks, 1000, {1, 1, 1}), FileAsize(kBlocks, 1000, Counts(data, kBlocks)));
}

}  // namespace
}  // namespace zsim::zfs
