#include "engine/estimate/interval_top_up.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/pilot_level.h"
#include "engine/estimate/sample_level.h"
#include "engine/estimate/top_up.h"
#include "tests/util/test_util.h"
#include "zsim/scan_options.h"

namespace zsim::estimate {
namespace {

constexpr uint64_t kBlock = 128 * 1024;
// 24,000 blocks of 128K (3 GB, the bench's database-large): the plain budget's level is 2.
constexpr uint64_t kBlocks = 24000;
const Plan kPlan{kBlocks * kBlock, 0};

const Compression kOff{CompressionAlgorithm::kOff, 0};
const Compression kGzip6{CompressionAlgorithm::kGzip, 6};

ScanOptions WithCodecs(std::vector<Compression> codecs) {
  ScanOptions o;
  o.compressions = std::move(codecs);
  o.recordsizes = {kBlock};
  return o;
}

// A cell of the kBlocks >> `level` sampled blocks at or above `level` of kBlocks (half of them at
// `level`, a quarter one up, ...), each psize `small` or `large` (every `every`-th; all `small`
// from level `alike` up), and the blocks below the level not coded.
IntervalCell Cell(int level, double small, double large, int every,
                  int alike = kMaxSampleLevel + 1) {
  IntervalCell cell;
  const uint64_t n = kBlocks >> level;
  for (uint64_t i = 0; i < n; ++i) {
    const int lv = std::min(level + std::countr_zero(i + 1), kMaxSampleLevel);
    const bool large_one = i % uint64_t(every) == 0 && lv < alike;
    cell.per_level[size_t(lv)].Add(double(kBlock), large_one ? large : small);
  }
  cell.units = double(kBlocks);
  cell.below_bytes = double(kBlocks - n) * double(kBlock);
  return cell;
}

// Two lz4 sizes, as database-large's (12K on most blocks, 44K on one in seven): +-1.5% at
// 6,000 blocks.
IntervalCell Wide(int level = 2) { return Cell(level, 12 * 1024, 44 * 1024, 7); }
// One block in fifty 12K against 11.5K: far inside +-0.5%.
IntervalCell Narrow(int level = 2) { return Cell(level, 11.5 * 1024, 12 * 1024, 50); }

TEST(IntervalTopUpTest, TheCellsFixtureIsWideAndNarrowAsSaid) {
  EXPECT_EQ(BudgetLevelOf(kPlan, kBlock), 2);
  EXPECT_GT(Wide().HalfWidth(2), 0.01);
  EXPECT_EQ(LevelMeetingTheTarget(Wide().per_level, 2, kBlocks), -1);
  EXPECT_LE(Narrow().HalfWidth(2), kTargetRelativeHalfWidth);
}

// The estimate takes the highest level whose own blocks meet the target (finish/tally.cc): where
// the blocks of level 4 and up are alike, it reports the interval of those of level 5 and up
// (some 750: at least kMinSampledBlocks), within the target, and the rule leaves the setting,
// though all 6,000 sampled blocks together are wide.
TEST(IntervalTopUpTest, ALevelWhoseOwnBlocksMeetTheTargetIsWhatTheEstimateTakes) {
  const IntervalCell cell = Cell(2, 12 * 1024, 44 * 1024, 7, /*alike=*/4);
  EXPECT_EQ(LevelMeetingTheTarget(cell.per_level, 2, kBlocks), 5);
  EXPECT_EQ(cell.HalfWidth(2), kTargetRelativeHalfWidth);
  const ScanOptions o = WithCodecs({kLzjb});
  EXPECT_EQ(IntervalTopUpLevels(o, {true}, {-1}, kPlan, 0, {2}, {-1}, {cell}, kBlocks * kBlock),
            (std::vector<int>{-1}));
}

TEST(IntervalTopUpTest, AWideRatioOnLsizeGoesToEveryBlockANarrowOneStays) {
  const ScanOptions o = WithCodecs({kOff, kLzjb, kZle});
  const std::vector<bool> sampled = {false, true, true};
  const std::vector<int> anchors = {-1, -1, -1};
  const std::vector<int> levels = {0, 2, 2};
  const std::vector<int> to =
      IntervalTopUpLevels(o, sampled, anchors, kPlan, 0, levels, {-1, -1, -1},
                          {IntervalCell(), Wide(), Narrow()}, kBlocks * kBlock);
  EXPECT_EQ(to, (std::vector<int>{-1, 0, -1}));
}

TEST(IntervalTopUpTest, AnAnchoredSettingIsLeftToItsRegression) {
  // lz4 exact (not sampled), lzjb regressing on it: its own interval is the regression's.
  const ScanOptions o = WithCodecs({kLz4, kLzjb});
  const std::vector<int> to =
      IntervalTopUpLevels(o, {false, true}, {-1, 0}, kPlan, 0, {0, 2}, {-1, -1},
                          {IntervalCell(), Wide()}, kBlocks * kBlock);
  EXPECT_EQ(to, (std::vector<int>{-1, -1}));
}

TEST(IntervalTopUpTest, ALevelAboveThePlainBudgetIsLeft) {
  // Raised by the cap or the pilot (level 3 where the plan's is 2): the list's cost bound, or a
  // spread found small, is not overridden.
  const ScanOptions o = WithCodecs({kLzjb});
  EXPECT_EQ(IntervalTopUpLevels(o, {true}, {-1}, kPlan, 0, {3}, {-1}, {Wide(3)}, kBlocks * kBlock),
            (std::vector<int>{-1}));
  // Level 0 is every block already; the regular top-up's level is kept.
  EXPECT_EQ(IntervalTopUpLevels(o, {true}, {-1}, kPlan, 0, {0}, {-1}, {Wide(0)}, kBlocks * kBlock),
            (std::vector<int>{-1}));
  EXPECT_EQ(IntervalTopUpLevels(o, {true}, {-1}, kPlan, 0, {2}, {1}, {Wide()}, kBlocks * kBlock),
            (std::vector<int>{1}));
}

TEST(IntervalTopUpTest, CandidatesAreTheSettingsOnLsizeAtThePlainBudget) {
  // lz4 exact, lzjb anchored on it, zle on lsize at the plan's level, gzip-6 above it (the cap).
  const ScanOptions o = WithCodecs({kLz4, kLzjb, kZle, kGzip6});
  EXPECT_EQ(IntervalTopUpCandidates(o, {false, true, true, true}, {-1, 0, -1, -1}, kPlan, 0,
                                    {0, 2, 2, 3}),
            (std::vector<bool>{false, false, true, false}));
  // A row of another block size than the options have: none.
  EXPECT_EQ(IntervalTopUpCandidates(o, {false, true, true, true}, {-1, 0, -1, -1}, kPlan, 1,
                                    {0, 2, 2, 3}),
            (std::vector<bool>{false, false, false, false}));
}

TEST(IntervalTopUpTest, TheCheapestGoFirstWithinTheReferenceCodecsWishes) {
  // gzip-6 on the 18,000 blocks left costs more than the reference codecs' whole wish on the row;
  // lzjb and zle fit.
  const ScanOptions o = WithCodecs({kGzip6, kLzjb, kZle});
  const double reference = ReferenceCodecWishSeconds(kPlan, kBlock);
  const double left = double(kBlocks - (kBlocks >> 2)) * double(kBlock);
  ASSERT_GT(left / NominalCodecBytesPerSecond(kGzip6), reference);
  ASSERT_LT(left / NominalCodecBytesPerSecond(kLzjb) + left / NominalCodecBytesPerSecond(kZle),
            reference);
  const std::vector<int> to =
      IntervalTopUpLevels(o, {true, true, true}, {-1, -1, -1}, kPlan, 0, {2, 2, 2}, {-1, -1, -1},
                          {Wide(), Wide(), Wide()}, kBlocks * kBlock);
  EXPECT_EQ(to, (std::vector<int>{-1, 0, 0}));
  // A row of fewer unique bytes has smaller wishes: where they cover the cheaper codec's blocks
  // and half the other's, only the cheaper is taken.
  const bool zle_cheaper = NominalCodecBytesPerSecond(kZle) > NominalCodecBytesPerSecond(kLzjb);
  const double cheap =
      left / std::max(NominalCodecBytesPerSecond(kZle), NominalCodecBytesPerSecond(kLzjb));
  const double dear =
      left / std::min(NominalCodecBytesPerSecond(kZle), NominalCodecBytesPerSecond(kLzjb));
  uint64_t unique = kBlock;
  while (ReferenceCodecWishSeconds(Plan{unique, 0}, kBlock) < cheap + dear / 2) unique += kBlock;
  const std::vector<int> one =
      IntervalTopUpLevels(o, {true, true, true}, {-1, -1, -1}, kPlan, 0, {2, 2, 2}, {-1, -1, -1},
                          {Wide(), Wide(), Wide()}, unique);
  EXPECT_EQ(one, zle_cheaper ? (std::vector<int>{-1, -1, 0}) : (std::vector<int>{-1, 0, -1}));
}

TEST(IntervalTopUpTest, NothingWithoutAStatisticPerSetting) {
  const ScanOptions o = WithCodecs({kLzjb});
  EXPECT_EQ(IntervalTopUpLevels(o, {true}, {-1}, kPlan, 0, {2}, {-1}, {}, kBlocks * kBlock),
            (std::vector<int>{-1}));
  // A sample of psize 0 (every sampled block embedded) says nothing of the width.
  EXPECT_EQ(IntervalTopUpLevels(o, {true}, {-1}, kPlan, 0, {2}, {-1}, {Cell(2, 0, 0, 7)},
                                kBlocks * kBlock),
            (std::vector<int>{-1}));
}

// The pilot's points, as the probe gives them for a setting on lsize: lsize, lsize again (no
// anchor), psize.
std::vector<PilotPoint> Points(size_t n, double small, double large, int every) {
  std::vector<PilotPoint> points;
  for (size_t i = 0; i < n; ++i) {
    const double psize = i % size_t(every) == 0 ? large : small + double(i % 3) * 512;
    points.push_back({double(kBlock), double(kBlock), psize, 1});
  }
  return points;
}

TEST(IntervalTopUpTest, ThePilotForeseesAFarWiderSampleFromItsPoints) {
  // Database-large's two lz4 sizes: some +-1.5% at the budget's level 2 of 24,000 blocks.
  const std::vector<PilotPoint> wide = Points(64, 12 * 1024, 44 * 1024, 7);
  EXPECT_TRUE(PilotFindsItWide(wide, double(kBlocks), 2));
  // Alike blocks: far inside the target.
  EXPECT_FALSE(PilotFindsItWide(Points(64, 12 * 1024, 12 * 1024, 7), double(kBlocks), 2));
  // Level 0 is every block; too few points say nothing.
  EXPECT_FALSE(PilotFindsItWide(wide, double(kBlocks), 0));
  EXPECT_FALSE(
      PilotFindsItWide(Points(kPilotSettleStep - 1, 12 * 1024, 44 * 1024, 7), double(kBlocks), 2));
}

TEST(IntervalTopUpTest, TheForesightTakesWhatTheRuleCouldAfford) {
  const ScanOptions o = WithCodecs({kGzip6, kLzjb});
  const double bytes = double(kBlocks) * double(kBlock);
  // Both wide: lzjb's blocks left fit the reference codecs' wishes, gzip-6's do not.
  const double n = double(kBlocks);
  EXPECT_EQ(ForeseenWhole(o, {true, true}, {2, 2}, kBlock, n, n, bytes),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(ForeseenWhole(o, {true, false}, {2, 2}, kBlock, n, n, bytes),
            (std::vector<bool>{false, false}));
  // A row of few unique blocks (fewer than kTopUpMinSample at its level): the top-up of such
  // rows takes it whole anyway, and the foresight would only make its reads depend on timing.
  EXPECT_EQ(ForeseenWhole(o, {true, true}, {2, 2}, kBlock, n, 48, 48 * double(kBlock)),
            (std::vector<bool>{false, false}));
  // A row too large to be topped up: the rule could not take it at the end, nothing foreseen.
  EXPECT_EQ(ForeseenWhole(o, {true, true}, {2, 2}, kBlock, double(kTopUpMaxBlocks + 1), n, bytes),
            (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace zsim::estimate
