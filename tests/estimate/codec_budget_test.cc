#include "engine/estimate/codec_budget.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"
#include "zsim/scan_options.h"

namespace zsim::estimate {
namespace {

// The expected blocks at or above a level: planned >> level.
TEST(CodecBudgetTest, LevelLeavesTheBudgetBlocks) {
  EXPECT_EQ(BudgetLevel(0), 0);
  EXPECT_EQ(BudgetLevel(kBudgetBlocks * 2 - 1), 0);  // half would be fewer than the budget
  EXPECT_EQ(BudgetLevel(kBudgetBlocks * 2), 1);
  // 24,000 blocks (3 GB at 128K): level 2, 6,000 expected, a quarter of the tree.
  EXPECT_EQ(BudgetLevel(24000), 2);
  for (uint64_t n : {uint64_t{9000}, uint64_t{50000}, uint64_t{300000}}) {
    const int lv = BudgetLevel(n);
    EXPECT_GE(n >> lv, kBudgetBlocks) << n;
    EXPECT_LT(n >> lv, 2 * kBudgetBlocks) << n;
  }
}

TEST(CodecBudgetTest, LargeTreesAreCodedAtAFixedFraction) {
  const uint64_t big = kBudgetBlocks << kBudgetFractionLevel;
  EXPECT_EQ(BudgetLevel(big), kBudgetFractionLevel);
  EXPECT_EQ(BudgetLevel(big * 1000), kBudgetFractionLevel);  // 1 in 128 however large
}

TEST(CodecBudgetTest, MoreBytesNeverLowerTheLevel) {
  // What lets a scan follow the sizing walk's running sum: every level it used is at or below
  // the whole plan's, and a merge's (the sum of the parts') is at or above each part's.
  int previous = 0;
  for (uint64_t n = 0; n < (kBudgetBlocks << 9); n += 997) {
    const int lv = BudgetLevel(n);
    ASSERT_GE(lv, previous) << n;
    previous = lv;
  }
  EXPECT_EQ(BudgetLevelOfBytes(uint64_t{3} << 30, 128 * 1024), BudgetLevel(24576));
  EXPECT_EQ(BudgetLevelOfBytes(uint64_t{3} << 30, 0), 0);
}

// A long list like --compression all: every gzip and zstd level, lz4, lzjb, zle.
std::vector<Compression> LongList() {
  std::vector<Compression> v = {{CompressionAlgorithm::kLz4, 0},
                                {CompressionAlgorithm::kLzjb, 0},
                                {CompressionAlgorithm::kZle, 0}};
  for (int l = 1; l <= 9; ++l) v.push_back({CompressionAlgorithm::kGzip, l});
  for (int l = 1; l <= 19; ++l) v.push_back({CompressionAlgorithm::kZstd, l});
  return v;
}

ScanOptions WithCodecs(std::vector<Compression> codecs, std::vector<uint64_t> recordsizes) {
  ScanOptions o;
  o.compressions = std::move(codecs);
  o.recordsizes = std::move(recordsizes);
  return o;
}

// The nominal CPU seconds of the codecs at `levels` over a tree of `bytes`.
double NominalSeconds(const ScanOptions& o, const std::vector<int>& levels, uint64_t bytes) {
  double s = 0;
  for (size_t r = 0; r < o.recordsizes.size(); ++r) {
    for (size_t c = 0; c < o.compressions.size(); ++c) {
      const double speed = NominalCodecBytesPerSecond(o.compressions[c]);
      if (speed <= 0) continue;
      const uint64_t blocks = bytes / o.recordsizes[r];
      s += double(blocks >> levels[r * o.compressions.size() + c]) * double(o.recordsizes[r]) /
           speed;
    }
  }
  return s;
}

// The default codecs of 2.3 (zsim/scan_options.h DefaultCompressions) but off.
TEST(CodecBudgetTest, TheDefaultCodecsKeepTheirBudgetUpToLargeTrees) {
  const ScanOptions o = WithCodecs({{CompressionAlgorithm::kLz4, 0},
                                    {CompressionAlgorithm::kZstd, 3},
                                    {CompressionAlgorithm::kGzip, 6},
                                    {CompressionAlgorithm::kLzjb, 0},
                                    {CompressionAlgorithm::kZle, 0}},
                                   {128 * 1024});
  const std::vector<bool> sampled(o.compressions.size(), true);
  for (uint64_t gib : {uint64_t{1}, uint64_t{3}, uint64_t{20}, uint64_t{100}}) {
    const uint64_t bytes = gib << 30;
    const std::vector<int> levels = BudgetLevels(o, sampled, bytes);
    for (size_t c = 0; c < o.compressions.size(); ++c) {
      EXPECT_EQ(levels[c], BudgetLevelOfBytes(bytes, 128 * 1024)) << gib << " GiB, " << c;
    }
  }
}

TEST(CodecBudgetTest, ALongListCostsTheCapAndItsCostliestCodecsGiveWay) {
  const ScanOptions o = WithCodecs(LongList(), {16 * 1024, 128 * 1024, 1024 * 1024});
  const std::vector<bool> sampled(o.compressions.size(), true);
  for (uint64_t mib : {uint64_t{90}, uint64_t{3000}, uint64_t{200000}}) {
    const uint64_t bytes = mib << 20;
    const std::vector<int> levels = BudgetLevels(o, sampled, bytes);
    // Within twice the cap: a granted wish is a budget of blocks, coded at a level that keeps
    // up to twice as many.
    EXPECT_LE(NominalSeconds(o, levels, bytes), 2 * kCapSeconds) << mib << " MiB";
    bool raised = false;
    const size_t n = o.compressions.size();
    for (size_t r = 0; r < 3; ++r) {
      const int budget = BudgetLevelOfBytes(bytes, o.recordsizes[r]);
      const int zle = levels[r * n + 2];  // LongList()[2]
      for (size_t c = 0; c < n; ++c) {
        const int lv = levels[r * n + c];
        EXPECT_GE(lv, budget);
        raised |= lv > budget;
        // The cheapest codec (zle) gives way last: a costlier one is never coded more.
        EXPECT_GE(lv, zle) << mib << " MiB, row " << r << ", setting " << c;
      }
    }
    EXPECT_TRUE(raised) << mib << " MiB: the cap did not bind";
  }
}

TEST(CodecBudgetTest, AllCodecsAtThreeRecordsizesCostAtMostTenDefaultScans) {
  // Issue 19's bound on the file-server sample (84 MB of data, every block of it coded by the
  // default codecs): `--compression all --recordsize 16k,128k,1M` plans at most ten times the
  // default scan's nominal codec work, the sampled codecs' levels from the plan and lz4 (their
  // regression anchor) on every block.
  const uint64_t bytes = uint64_t{84} << 20;
  // zsim::AllCompressions and DefaultCompressions of 2.4 (engine/zfs, not linked here).
  std::vector<Compression> every = LongList();
  every.push_back({CompressionAlgorithm::kOff, 0});
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 500, 1000}) {
    every.push_back({CompressionAlgorithm::kZstd, -n});
  }
  const ScanOptions all = WithCodecs(every, {16 * 1024, 128 * 1024, 1024 * 1024});
  const ScanOptions def = WithCodecs({{CompressionAlgorithm::kOff, 0},
                                      {CompressionAlgorithm::kLz4, 0},
                                      {CompressionAlgorithm::kZstd, 3},
                                      {CompressionAlgorithm::kGzip, 6},
                                      {CompressionAlgorithm::kLzjb, 0},
                                      {CompressionAlgorithm::kZle, 0}},
                                     {128 * 1024});
  const double all_seconds = NominalSeconds(
      all, BudgetLevels(all, PlanSampling(all.compressions, false).sampled, bytes), bytes);
  const double default_seconds = NominalSeconds(
      def, BudgetLevels(def, PlanSampling(def.compressions, false).sampled, bytes), bytes);
  EXPECT_GT(default_seconds, 0);
  EXPECT_LE(all_seconds, 10 * default_seconds) << all_seconds << " vs " << default_seconds;
}

TEST(CodecBudgetTest, NoLevelFallsAsTheTreeGrows) {
  // The scan follows the sizing walk's running sum: a level used early must be at or below the
  // whole tree's, for every codec, also where the cap binds.
  const ScanOptions o = WithCodecs(LongList(), {16 * 1024, 1024 * 1024});
  const std::vector<bool> sampled(o.compressions.size(), true);
  std::vector<int> previous = BudgetLevels(o, sampled, 0);
  for (uint64_t bytes = 1 << 20; bytes < (uint64_t{1} << 42); bytes += bytes / 7 + 12345) {
    const std::vector<int> levels = BudgetLevels(o, sampled, bytes);
    for (size_t i = 0; i < levels.size(); ++i)
      ASSERT_GE(levels[i], previous[i]) << bytes << " " << i;
    previous = levels;
  }
}

TEST(CodecBudgetTest, ExactSettingsHaveNoLevel) {
  const ScanOptions o = WithCodecs(LongList(), {128 * 1024});
  const std::vector<bool> exact(o.compressions.size(), false);
  for (int lv : BudgetLevels(o, exact, uint64_t{1} << 40)) EXPECT_EQ(lv, 0);
}

}  // namespace
}  // namespace zsim::estimate
