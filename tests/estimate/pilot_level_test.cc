#include "engine/estimate/pilot_level.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/regression_estimator.h"
#include "zsim/scan_options.h"

namespace zsim::estimate::pilot_level_test {  // named: the module's test files build together
namespace {

constexpr double kBlock = 131072;

// `m` full records whose psize is 0.6 of the anchor's plus `noise(i)` bytes.
template <typename Noise>
std::vector<PilotPoint> Points(size_t m, Noise noise) {
  std::vector<PilotPoint> out;
  for (size_t i = 0; i < m; ++i) {
    const double anchor = 20000 + double(i % 17) * 3000;
    out.push_back({kBlock, anchor, 0.6 * anchor + noise(i)});
  }
  return out;
}

// A deterministic spread of +-`amplitude` bytes about zero.
auto Spread(double amplitude) {
  return [amplitude](size_t i) { return amplitude * std::sin(double(i) * 1.7); };
}

TEST(PilotLevelTest, WantedOnlyWhereTheBudgetsSampleIsLarge) {
  EXPECT_FALSE(PilotWanted(2 * kPilotMinSample - 1, 0));
  EXPECT_TRUE(PilotWanted(2 * kPilotMinSample, 0));
  // 24,000 blocks at the budget's level 2: 6,000 sampled, worth a pilot.
  EXPECT_TRUE(PilotWanted(24000, 2));
  EXPECT_FALSE(PilotWanted(24000, 4));  // 1,500 left
  EXPECT_FALSE(PilotWanted(1 << 20, -1));
  EXPECT_FALSE(PilotWanted(1 << 20, kMaxSampleLevel));
}

// psize on the line exactly: no spread, so the floor decides. 24,000 unique blocks at the budget's
// level 2: level 4 leaves 1,500 >= kPilotMinSample, level 5 750 < it.
TEST(PilotLevelTest, NoSpreadRaisesToTheFloor) {
  const std::vector<PilotPoint> points = Points(256, [](size_t) { return 0.0; });
  ASSERT_TRUE(PilotBlocks(points).has_value());
  EXPECT_NEAR(*PilotBlocks(points), 0, 1e-6);
  EXPECT_EQ(PilotLevel(points, 24000, 2), 4);
  EXPECT_EQ(PilotLevel(points, 24000, 5), 5);  // never below the budget's level
}

// The blocks asked for follow the spread: (1.96 sd / (ybar h))^2 with h = kPilotHalfWidth.
TEST(PilotLevelTest, BlocksFollowTheResidualSpread) {
  const std::vector<PilotPoint> points = Points(256, Spread(2100));
  double y = 0;
  for (const PilotPoint& p : points) y += p.psize;
  y /= double(points.size());
  // The residuals of the fitted line are the spread itself (the line is the one generated).
  double e2 = 0, e = 0;
  for (size_t i = 0; i < points.size(); ++i) e += Spread(2100)(i);
  e /= double(points.size());
  for (size_t i = 0; i < points.size(); ++i) e2 += std::pow(Spread(2100)(i) - e, 2);
  const double sd = std::sqrt(e2 / double(points.size() - 3));
  const double want = std::pow(1.96 * sd / (y * kPilotHalfWidth), 2);
  ASSERT_TRUE(PilotBlocks(points).has_value());
  EXPECT_NEAR(*PilotBlocks(points) / want, 1.0, 0.02);
  // A spread of some 1,500 bytes (sd) on some 26K: about 1,950 blocks. 100,000 unique blocks at
  // level 3 (12,500): level 5 leaves 3,125, level 6 1,562 (fewer than asked).
  EXPECT_GT(want, 1562);
  EXPECT_LT(want, 3125);
  EXPECT_EQ(PilotLevel(points, 100000, 3), 5);
}

// At the blocks the pilot asks for, the estimate's own interval (RegressionEstimator, the
// estimator finish/tally.cc uses) is kPilotHalfWidth wide: the points taken k times as a sample
// of n = 256 k blocks of a population a million times larger (no finite-population gain).
TEST(PilotLevelTest, AtTheBlocksAskedTheEstimatesIntervalHasThePilotsWidth) {
  const std::vector<PilotPoint> points = Points(256, Spread(2100));
  ASSERT_TRUE(PilotBlocks(points).has_value());
  const double want = *PilotBlocks(points);
  RegressionEstimator est;
  double s = 0, x = 0;
  constexpr int kTimes = 8;
  for (int k = 0; k < kTimes; ++k) {
    for (const PilotPoint& p : points) {
      est.Add(p.lsize, p.anchor, p.psize);
      s += p.lsize;
      x += p.anchor;
    }
  }
  const double n = double(est.n()), scale = 1e6;
  const double width = est.RelativeHalfWidth95(n * scale, s * scale, x * scale);
  // The width falls as 1 / sqrt(n): at `want` blocks it is width * sqrt(n / want).
  EXPECT_NEAR(width * std::sqrt(n / want) / kPilotHalfWidth, 1.0, 0.02) << width << " at " << n;
}

// Points standing for more blocks count more: a spread on points of weight 4 among points on
// the line asks for more blocks than the same spread at weight 1.
TEST(PilotLevelTest, PointsCountByTheBlocksTheyStandFor) {
  std::vector<PilotPoint> light = Points(256, [](size_t i) { return i % 8 ? 0.0 : 3000.0; });
  std::vector<PilotPoint> heavy = light;
  for (size_t i = 0; i < heavy.size(); i += 8) heavy[i].weight = 4;
  ASSERT_TRUE(PilotBlocks(light) && PilotBlocks(heavy));
  EXPECT_GT(*PilotBlocks(heavy), 1.5 * *PilotBlocks(light));
  // Every weight alike: the same as unweighted.
  std::vector<PilotPoint> alike = light;
  for (PilotPoint& p : alike) p.weight = 7;
  EXPECT_NEAR(*PilotBlocks(alike) / *PilotBlocks(light), 1.0, 1e-9);
}

TEST(PilotLevelTest, WideSpreadKeepsTheBudgetsLevel) {
  const std::vector<PilotPoint> points = Points(256, Spread(8000));
  // About 28,000 blocks asked for: 24,000 unique blocks cannot give them at a higher level; a
  // tree of 1e9 can up to level 15 (30,518).
  EXPECT_EQ(PilotLevel(points, 24000, 2), 2);
  EXPECT_EQ(PilotLevel(points, 1e9, 2), 15);
}

TEST(PilotLevelTest, TooFewPointsOrUnknownBlocksRaiseNothing) {
  const std::vector<PilotPoint> few = Points(kPilotMinPoints - 1, [](size_t) { return 0.0; });
  EXPECT_FALSE(PilotBlocks(few).has_value());
  EXPECT_EQ(PilotLevel(few, 24000, 2), 2);
  const std::vector<PilotPoint> enough = Points(kPilotMinPoints, [](size_t) { return 0.0; });
  EXPECT_EQ(PilotLevel(enough, 0, 2), 2);
  // Nothing stored at all (every block embedded): no ratio to size.
  std::vector<PilotPoint> none(100, PilotPoint{kBlock, 50, 0});
  EXPECT_FALSE(PilotBlocks(none).has_value());
}

// Without an anchor (the anchor is lsize: a ratio estimate), the spread is psize's own.
TEST(PilotLevelTest, WithoutAnAnchorTheSpreadIsPsizes) {
  std::vector<PilotPoint> points;
  for (size_t i = 0; i < 128; ++i) points.push_back({kBlock, kBlock, i % 2 ? 40000.0 : 60000.0});
  // sd 10,000 on a mean of 50,000 (with the estimate's n - 3 degrees of freedom):
  // (1.96 * 0.2 / 0.0025)^2 * 128 / 125, about 25,200 blocks.
  ASSERT_TRUE(PilotBlocks(points).has_value());
  EXPECT_NEAR(*PilotBlocks(points), std::pow(1.96 * 0.2 / kPilotHalfWidth, 2) * 128 / 125, 30);
}

TEST(PilotLevelTest, SettledOnlyAtWholeStepsAndOnlyWhenNoRaiseCanFollow) {
  const std::vector<PilotPoint> wide = Points(kPilotSettleStep, Spread(8000));
  EXPECT_TRUE(PilotSettled(wide, 24000, 2));
  EXPECT_TRUE(PilotSettled(Points(2 * kPilotSettleStep, Spread(8000)), 24000, 2));
  std::vector<PilotPoint> short_of_a_step(wide.begin(), wide.end() - 1);
  EXPECT_FALSE(PilotSettled(short_of_a_step, 24000, 2));
  const std::vector<PilotPoint> tight = Points(kPilotSettleStep, Spread(50));
  EXPECT_FALSE(PilotSettled(tight, 24000, 2));
  // Settled means the level stays the budget's: the prefix gives budget_level.
  EXPECT_EQ(PilotLevel(wide, 24000, 2), 2);
}

ScanOptions Options(std::vector<Compression> compressions, int ashift) {
  ScanOptions o;
  o.paths = {"/x"};
  o.compressions = std::move(compressions);
  o.recordsizes = {131072};
  o.ashift = ashift;
  o.threads = 2;
  return o;
}

TEST(PilotLevelTest, BudgetLevelsOnlyForSampledCodecsOfALargeEnoughFirstRow) {
  const Compression off{CompressionAlgorithm::kOff, 0}, lz4{CompressionAlgorithm::kLz4, 0},
      zstd3{CompressionAlgorithm::kZstd, 3}, gzip6{CompressionAlgorithm::kGzip, 6};
  ScanOptions o = Options({off, lz4, zstd3, gzip6}, 12);
  const std::vector<bool> sampled = {false, false, true, true};
  const uint64_t big = uint64_t{24000} * 131072;  // budget level 2
  EXPECT_EQ(PilotBudgetLevels(o, sampled, true, Plan{big}), (std::vector<int>{-1, -1, 2, 2}));
  // Too small a tree, --exact, --sample, not adaptive: none.
  EXPECT_EQ(PilotBudgetLevels(o, sampled, true, Plan{uint64_t{2000} * 131072}),
            (std::vector<int>(4, -1)));
  EXPECT_EQ(PilotBudgetLevels(o, sampled, false, Plan{big}), (std::vector<int>(4, -1)));
  o.exact = true;
  EXPECT_EQ(PilotBudgetLevels(o, sampled, true, Plan{big}), (std::vector<int>(4, -1)));
  o.exact = false;
  o.sample_modulus = 4;
  EXPECT_EQ(PilotBudgetLevels(o, sampled, true, Plan{big}), (std::vector<int>(4, -1)));
}

// gzip-9 follows gzip-6 where psize rounds to 512 bytes (ashift 9) and gzip-6 is coded whole:
// neither is the pilot's, as a follower's estimate rests on its root coded whole.
TEST(PilotLevelTest, NearAnchorsAreLeftAlone) {
  const Compression lz4{CompressionAlgorithm::kLz4, 0}, gzip6{CompressionAlgorithm::kGzip, 6},
      gzip9{CompressionAlgorithm::kGzip, 9};
  const ScanOptions o = Options({lz4, gzip6, gzip9}, 9);
  const std::vector<bool> sampled = {false, true, true};
  // A tree whose gzip-6 budget codes it whole (level 0) but that is large enough for a pilot.
  const uint64_t bytes = uint64_t{6000} * 131072;
  const std::vector<int> budget = BudgetLevels(o, sampled, Plan{bytes});
  ASSERT_EQ(budget[1], 0);
  const std::vector<int> near = NearAnchors(o.compressions, {true, true, false});
  ASSERT_EQ(near[2], 1);
  EXPECT_EQ(PilotBudgetLevels(o, sampled, true, Plan{bytes}), (std::vector<int>{-1, -1, -1}));
}

// Several recordsizes: each row of blocks at least the first's is piloted where its own budget
// samples enough of it (row-major, as BudgetLevels); a row of smaller blocks than the first is
// not (the probe's unique bytes, counted in the first row's blocks, could overstate its blocks).
// The cap on codec work gives a 1M row few blocks: no pilot there.
TEST(PilotLevelTest, RowsOfBlocksAtLeastTheFirstsArePilotedWhereLargeEnough) {
  const Compression lz4{CompressionAlgorithm::kLz4, 0}, gzip6{CompressionAlgorithm::kGzip, 6};
  ScanOptions o = Options({lz4, gzip6}, 12);
  const std::vector<bool> sampled = {false, true};
  o.recordsizes = {16384, 131072, 1 << 20, 4096};
  const uint64_t bytes = uint64_t{24000} * 131072;
  const std::vector<int> budget = BudgetLevels(o, sampled, Plan{bytes});
  ASSERT_EQ(budget.size(), 8u);
  ASSERT_TRUE(PilotWanted(bytes / 16384, budget[1]));
  ASSERT_TRUE(PilotWanted(bytes / 131072, budget[3]));
  ASSERT_FALSE(PilotWanted(bytes / (1 << 20), budget[5]));
  ASSERT_TRUE(PilotWanted(bytes / 4096, budget[7]));
  EXPECT_EQ(PilotBudgetLevels(o, sampled, true, Plan{bytes}),
            (std::vector<int>{-1, budget[1], -1, budget[3], -1, -1, -1, -1}));
  // A first row of 4K blocks: the 128K row is piloted with it.
  o.recordsizes = {4096, 131072};
  ASSERT_TRUE(PilotWanted(bytes / 131072, BudgetLevels(o, sampled, Plan{bytes})[3]));
  EXPECT_EQ(PilotBudgetLevels(o, sampled, true, Plan{bytes})[3],
            BudgetLevels(o, sampled, Plan{bytes})[3]);
}
}  // namespace
}  // namespace zsim::estimate::pilot_level_test
