// zfs/indirect_ranges.h: the indirect blocks of a file are the ranges of E^level L0 blocks that
// hold a non-hole block, counted per level; counted in parts (any boundaries, merged in any
// order, through the flat form too) they equal a count over the whole file; levels follow
// the block count; the flat form refuses what no IndirectRanges gives.

#include "engine/zfs/indirect_ranges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace zsim::zfs {
namespace {

// Per level, the distinct ranges holding one of `blocks_with_data` (the definition).
std::vector<uint64_t> BruteForce(const std::vector<uint64_t>& blocks_with_data, uint64_t blocks,
                                 int bp_shift) {
  std::vector<uint64_t> out;
  for (int level = 1; level <= IndirectLevels(blocks, bp_shift); ++level) {
    std::set<uint64_t> ranges;
    for (uint64_t b : blocks_with_data) ranges.insert(b >> (level * bp_shift));
    out.push_back(ranges.size());
  }
  return out;
}

std::vector<uint64_t> Whole(const std::vector<uint64_t>& data, uint64_t blocks, int bp_shift) {
  IndirectRanges r;
  r.StartPart(0, blocks, blocks, bp_shift);
  for (uint64_t b : data) r.Add(b);
  return r.Counts();
}

TEST(IndirectRangesTest, BlockPointersPerIndirectBlockFollowTheProfile) {
  EXPECT_EQ(BlockPointerShift(Profile::kV23), 7);     // 16K indirect blocks (DN_MAX_INDBLKSHIFT 14)
  EXPECT_EQ(BlockPointerShift(Profile::kZfs23), 10);  // 128K from 0.7.0
  EXPECT_EQ(BlockPointerShift(Profile::kZfs24), 10);
}

TEST(IndirectRangesTest, LevelsCoverTheBlockCount) {
  EXPECT_EQ(IndirectLevels(0, 7), 0);
  EXPECT_EQ(IndirectLevels(1, 7), 0);  // the block pointer is in the dnode
  EXPECT_EQ(IndirectLevels(2, 7), 1);
  EXPECT_EQ(IndirectLevels(128, 7), 1);
  EXPECT_EQ(IndirectLevels(129, 7), 2);
  EXPECT_EQ(IndirectLevels(128 * 128, 7), 2);
  EXPECT_EQ(IndirectLevels(128 * 128 + 1, 7), 3);
  EXPECT_EQ(IndirectLevels(1025, 10), 2);
  EXPECT_EQ(IndirectLevels(uint64_t{1} << 55, 7), 8);  // 2^64 bytes in 512-byte blocks
}

TEST(IndirectRangesTest, OnlyRangesHoldingDataCount) {
  // 160 MiB at 4K in v23: 40960 blocks, 320 L1 ranges of 512K, 3 L2 ranges of 64M, one L3.
  const uint64_t blocks = 40960;
  std::vector<uint64_t> data;
  for (uint64_t b = 0; b < 200; ++b) data.push_back(b);         // L1 ranges 0 and 1
  data.push_back(128 * 128 + 5);                                // L1 128, L2 1
  for (uint64_t b = 40900; b < blocks; ++b) data.push_back(b);  // L1 319, L2 2
  EXPECT_EQ(Whole(data, blocks, 7), (std::vector<uint64_t>{4, 3, 1}));
  // A file of holes only has no indirect block; one block somewhere has one per level.
  EXPECT_EQ(Whole({}, blocks, 7), (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(Whole({30000}, blocks, 7), (std::vector<uint64_t>{1, 1, 1}));
  EXPECT_TRUE(Whole({}, 1, 7).empty());
}

TEST(IndirectRangesTest, PartsMergedInAnyOrderCountEachRangeOnce) {
  std::mt19937_64 rng(20);
  for (int trial = 0; trial < 200; ++trial) {
    const int bp_shift = trial % 2 ? 7 : 3;
    const uint64_t blocks = 1 + rng() % 5000;
    std::vector<uint64_t> data;
    const uint64_t runs = rng() % 12;
    for (uint64_t k = 0; k < runs; ++k) {
      const uint64_t start = rng() % blocks;
      const uint64_t len = 1 + rng() % 300;
      for (uint64_t b = start; b < std::min(blocks, start + len); ++b) data.push_back(b);
    }
    std::sort(data.begin(), data.end());
    data.erase(std::unique(data.begin(), data.end()), data.end());
    const std::vector<uint64_t> expected = BruteForce(data, blocks, bp_shift);
    ASSERT_EQ(Whole(data, blocks, bp_shift), expected) << "trial " << trial;

    // Parts at arbitrary boundaries, each counted alone, merged in a shuffled order.
    std::vector<uint64_t> cuts = {0, blocks};
    for (uint64_t k = rng() % 20; k > 0; --k) cuts.push_back(rng() % blocks);
    std::sort(cuts.begin(), cuts.end());
    std::vector<IndirectRanges> parts;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      IndirectRanges& p = parts.emplace_back();
      p.StartPart(cuts[i], cuts[i + 1], blocks, bp_shift);
      for (uint64_t b : data) {
        if (b >= cuts[i] && b < cuts[i + 1]) p.Add(b);
      }
    }
    std::shuffle(parts.begin(), parts.end(), rng);
    IndirectRanges merged, halves[2];
    for (size_t i = 0; i < parts.size(); ++i) halves[i % 2].Merge(parts[i]);
    // One half through the flat form (state file, MPI message).
    IndirectRanges flat;
    ASSERT_TRUE(flat.Assign(halves[1].inside(), halves[1].edges()));
    merged.Merge(flat);
    merged.Merge(halves[0]);
    std::vector<uint64_t> got = merged.Counts();
    got.resize(expected.size(), 0);  // a part count may not have met every level
    EXPECT_EQ(got, expected) << "trial " << trial << " blocks " << blocks;
    EXPECT_EQ(merged.empty(), data.empty());
  }
}

TEST(IndirectRangesTest, TheFlatFormRefusesWhatNoCountGives) {
  IndirectRanges r;
  const uint64_t level2 = uint64_t{2} << 56;
  EXPECT_TRUE(r.Assign({3, 1}, {level2 | 4, level2 | 9}));
  EXPECT_EQ(r.Counts(), (std::vector<uint64_t>{3, 3}));
  EXPECT_FALSE(r.Assign({3}, {level2 | 4}));                 // a level the file lacks
  EXPECT_FALSE(r.Assign({3, 1}, {level2 | 9, level2 | 4}));  // not sorted
  EXPECT_FALSE(r.Assign({3, 1}, {4}));                       // level 0
  EXPECT_FALSE(r.Assign(std::vector<uint64_t>(9, 1), {}));   // more levels than a file has
  EXPECT_TRUE(r.empty());
}

}  // namespace
}  // namespace zsim::zfs
