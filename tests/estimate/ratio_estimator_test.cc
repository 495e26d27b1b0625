// Validation of the estimators on generated populations with known truth (issue 8): over many
// seeds, the 95% intervals must contain the true figure at least 90% of the time.

#include "engine/estimate/ratio_estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/estimate/sample_level.h"
#include "tests/util/test_util.h"

namespace zsim::estimate {
namespace {

// The "fingerprint" of unit i under a seed (sampling is by key bits, as in zsim).
uint64_t Key(uint64_t seed, uint64_t i) { return testing::SplitMix64(seed, i); }

TEST(RatioEstimatorTest, CensusIsExactAndHasNoError) {
  RatioEstimator e;
  e.Add(100, 50);
  e.Add(300, 90);
  EXPECT_DOUBLE_EQ(e.Ratio(), 140.0 / 400.0);
  EXPECT_EQ(e.StandardError(2), 0.0);
  EXPECT_TRUE(std::isinf(RatioEstimator().StandardError(10)));
  RatioEstimator a, b;
  a.Add(1, 2);
  b.Add(3, 4);
  a.Merge(b);
  EXPECT_EQ(a.n(), 2u);
  EXPECT_DOUBLE_EQ(a.Ratio(), 6.0 / 4.0);
}

// The relative unit variance carries a sample's spread to another sample of similar units:
// sqrt((1 - f) v / n) must be the relative standard error the estimator itself gives.
// Kish's effective units: n for equal weights; about 2 when two 1M blocks carry the bytes of a
// sample of forty small ones (the normal interval must not rest on n = 42 there).
TEST(RatioEstimatorTest, EffectiveUnitsCountAFewLargeBlocksAsFew) {
  RatioEstimator equal, mixed;
  for (int i = 0; i < 40; ++i) equal.Add(131072, 65536);
  EXPECT_DOUBLE_EQ(equal.EffectiveUnits(), 40.0);
  for (int i = 0; i < 40; ++i) mixed.Add(4096, 2048);
  mixed.Add(1048576, 524288);
  mixed.Add(1048576, 1048576);
  EXPECT_GT(mixed.EffectiveUnits(), 2.0);
  EXPECT_LT(mixed.EffectiveUnits(), 2.4);
  EXPECT_EQ(RatioEstimator().EffectiveUnits(), 0.0);
}

TEST(RatioEstimatorTest, RelativeUnitVarianceGivesTheRelativeStandardError) {
  RatioEstimator e;
  // Residuals y - R x with R = 0.5: +-1 around 10 per unit of x = 20.
  e.Add(20, 11);
  e.Add(20, 9);
  e.Add(20, 10);
  e.Add(20, 10);
  EXPECT_DOUBLE_EQ(e.Ratio(), 0.5);
  // sum of squared residuals 2, over n - 1 = 3; (x_mean R)^2 = 100.
  EXPECT_NEAR(e.RelativeUnitVariance(), 2.0 / 3.0 / 100.0, 1e-12);
  const double population = 1000;
  const double f = 4 / population;
  EXPECT_NEAR(std::sqrt((1 - f) * e.RelativeUnitVariance() / 4),
              e.StandardError(population) / e.Ratio(), 1e-12);
  // Units all alike, or too few: no spread, or an unknown one.
  RatioEstimator alike;
  alike.Add(10, 5);
  alike.Add(10, 5);
  EXPECT_EQ(alike.RelativeUnitVariance(), 0.0);
  RatioEstimator one;
  one.Add(10, 5);
  EXPECT_TRUE(std::isinf(one.RelativeUnitVariance()));
}

TEST(SampleLevelTest, LevelsHalveWithEachStep) {
  std::array<uint64_t, kMaxSampleLevel + 1> at_least{};
  constexpr uint64_t kKeys = 1 << 20;
  for (uint64_t i = 0; i < kKeys; ++i) {
    const int lv = SampleLevel(Key(1, i));
    for (int l = 0; l <= lv; ++l) ++at_least[static_cast<size_t>(l)];
  }
  EXPECT_EQ(at_least[0], kKeys);
  for (int l = 1; l <= 8; ++l) {
    const double expected = double(kKeys) / double(1 << l);
    EXPECT_NEAR(double(at_least[static_cast<size_t>(l)]), expected, 5 * std::sqrt(expected)) << l;
  }
}

TEST(SampleLevelTest, PlanLevelLeavesAtLeastThePlannedBlocks) {
  EXPECT_EQ(PlanLevel(0, 131072), 0);
  EXPECT_EQ(PlanLevel(uint64_t{3} << 30, 131072), 0);  // 24576 blocks: level 1 would leave 12288
  EXPECT_EQ(PlanLevel(uint64_t{4} << 30, 131072), 1);  // 32768 -> 16384 at level 1
  EXPECT_EQ(PlanLevel(uint64_t{8} << 30, 131072), 2);  // 65536 -> 16384 at level 2
  for (uint64_t tb = 1; tb <= 1024; tb *= 4) {
    const int level = PlanLevel(tb << 40, 131072);
    const uint64_t blocks = (tb << 40) / 131072;
    EXPECT_GE(blocks >> level, kPlanBlocks) << tb;
    EXPECT_LT(blocks >> (level + 1), kPlanBlocks) << tb;
  }
  EXPECT_EQ(PlanLevel(uint64_t{1} << 60, 512), kMaxSampleLevel);
}

TEST(SamplingPlanTest, LzCodecsRegressOnAnExactLz4OrLzjbAndTheRestOnLsize) {
  using A = CompressionAlgorithm;
  // The 2.4 default set: lz4 runs on every unique block and is the auxiliary of the others.
  const SamplingPlan d = PlanSampling(
      {{A::kOff, 0}, {A::kLz4, 0}, {A::kZstd, 3}, {A::kGzip, 6}, {A::kLzjb, 0}, {A::kZle, 0}},
      false);
  EXPECT_EQ(d.sampled, (std::vector<bool>{false, false, true, true, true, true}));
  EXPECT_EQ(d.anchors, (std::vector<int>{-1, -1, 1, 1, 1, 1}));
  // No lz4 in the list: every codec sampled on lsize.
  const SamplingPlan g = PlanSampling({{A::kGzip, 6}, {A::kZstd, -10}, {A::kZle, 0}}, false);
  EXPECT_EQ(g.sampled, (std::vector<bool>{true, true, true}));
  EXPECT_EQ(g.anchors, (std::vector<int>{-1, -1, -1}));
  // lz4 beside zle: zle regresses on it. lz4 (and off) alone: run on every block too, its
  // figures exact (sampled alone, it needed most blocks of a tree of mixed psizes for +-0.5%).
  const SamplingPlan z = PlanSampling({{A::kZle, 0}, {A::kLz4, 0}}, false);
  EXPECT_EQ(z.sampled, (std::vector<bool>{true, false}));
  EXPECT_EQ(z.anchors, (std::vector<int>{1, -1}));
  const SamplingPlan l = PlanSampling({{A::kOff, 0}, {A::kLz4, 0}}, false);
  EXPECT_EQ(l.sampled, (std::vector<bool>{false, false}));
  EXPECT_EQ(l.anchors, (std::vector<int>{-1, -1}));
  EXPECT_EQ(PlanSampling({{A::kLz4, 0}}, false).sampled, (std::vector<bool>{false}));
  // No lz4, but lzjb beside a codec at least 2.5 times as costly (the v23 default list): lzjb
  // runs on every unique block and is the auxiliary of the others, zle's too.
  const SamplingPlan v =
      PlanSampling({{A::kOff, 0}, {A::kGzip, 6}, {A::kLzjb, 0}, {A::kZle, 0}}, false);
  EXPECT_EQ(v.sampled, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(v.anchors, (std::vector<int>{-1, 2, -1, 2}));
  EXPECT_EQ(PlanSampling({{A::kZstd, 19}, {A::kLzjb, 0}}, false).anchors,
            (std::vector<int>{1, -1}));
  // The threshold: 2.5 times lzjb's nominal cost per byte (zstd-3 is twice it, zstd-4 four
  // times, gzip-1 5.6 times).
  EXPECT_EQ(PlanSampling({{A::kLzjb, 0}, {A::kZstd, 3}}, false).anchors,
            (std::vector<int>{-1, -1}));
  EXPECT_EQ(PlanSampling({{A::kLzjb, 0}, {A::kZstd, 4}}, false).anchors, (std::vector<int>{-1, 0}));
  EXPECT_EQ(PlanSampling({{A::kLzjb, 0}, {A::kGzip, 1}}, false).anchors, (std::vector<int>{-1, 0}));
  // lzjb with nothing costly to predict: sampled on lsize, as zle beside it.
  const SamplingPlan j = PlanSampling({{A::kLzjb, 0}, {A::kZle, 0}}, false);
  EXPECT_EQ(j.sampled, (std::vector<bool>{true, true}));
  EXPECT_EQ(j.anchors, (std::vector<int>{-1, -1}));
  // lz4 and lzjb: lz4 anchors, lzjb follows it.
  const SamplingPlan b = PlanSampling({{A::kLzjb, 0}, {A::kGzip, 6}, {A::kLz4, 0}}, false);
  EXPECT_EQ(b.sampled, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(b.anchors, (std::vector<int>{2, 2, -1}));
  // --exact: nothing sampled.
  const SamplingPlan e = PlanSampling({{A::kLz4, 0}, {A::kGzip, 6}}, true);
  EXPECT_EQ(e.sampled, (std::vector<bool>{false, false}));
  EXPECT_EQ(e.anchors, (std::vector<int>{-1, -1}));
}

enum class Shape { kUniform, kZipf, kMostlyUnique, kMostlyDuplicate };

// A population of DDT-like entries: per entry a size x (dsize or lsize) and a value y.
struct Population {
  std::vector<double> x, y;
};

Population Make(Shape shape, uint64_t seed, size_t n, bool compression) {
  std::mt19937_64 rng(seed);
  Population p;
  std::uniform_int_distribution<int> sectors(1, 32);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = 0; i < n; ++i) {
    const double x = 4096.0 * sectors(rng);
    double y = 0;
    if (compression) {
      // psize / lsize: a mixture of incompressible, text-like and near-empty blocks.
      const double pick = u(rng);
      const double ratio = pick < 0.3 ? 1.0 : pick < 0.9 ? 0.25 + 0.5 * u(rng) : 0.05;
      y = x * ratio;
    } else {
      // referenced = refcount x allocated.
      double refs = 1;
      switch (shape) {
        case Shape::kUniform:
          refs = 1 + std::floor(u(rng) * 8);
          break;
        case Shape::kZipf:
          refs = std::floor(1.0 / std::pow(u(rng) + 1e-9, 0.4));
          break;
        case Shape::kMostlyUnique:
          refs = u(rng) < 0.97 ? 1 : 2 + std::floor(u(rng) * 4);
          break;
        case Shape::kMostlyDuplicate:
          refs = u(rng) < 0.1 ? 1 : 10 + std::floor(u(rng) * 90);
          break;
      }
      y = x * std::max(1.0, refs);
    }
    p.x.push_back(x);
    p.y.push_back(y);
  }
  return p;
}

// Fraction of seeds whose 95% interval, from the units whose key falls in 1/2^shift of the key
// space (or at sample level >= shift), contains the true ratio.
double Coverage(Shape shape, bool compression, uint32_t shift, int seeds) {
  int covered = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const Population p = Make(shape, static_cast<uint64_t>(seed), 20000, compression);
    double sx = 0, sy = 0;
    RatioEstimator e;
    for (size_t i = 0; i < p.x.size(); ++i) {
      sx += p.x[i];
      sy += p.y[i];
      const uint64_t key = Key(static_cast<uint64_t>(seed) + 1000, i);
      const bool in = compression ? SampleLevel(key) >= static_cast<int>(shift)
                                  : (key & ((uint64_t{1} << shift) - 1)) == 0;
      if (in) e.Add(p.x[i], p.y[i]);
    }
    const std::array<double, 2> ci = e.Interval95(double(p.x.size()));
    const double truth = sy / sx;
    if (ci[0] <= truth && truth <= ci[1]) ++covered;
  }
  return double(covered) / seeds;
}

TEST(RatioEstimatorTest, CompressionIntervalsCoverTheTruth) {
  for (uint32_t level : {2u, 4u}) {
    SCOPED_TRACE(level);
    EXPECT_GE(Coverage(Shape::kUniform, /*compression=*/true, level, 200), 0.90);
  }
}

// The Zipf-like shape has refcount tail index 2.5 (P(r > t) ~ t^-2.5). With heavier tails the
// linearised interval undercovers: measured 76% at tail index 1.43 (a few blocks referenced
// thousands of times, missing from most samples). zsim states that limit in its report notes.
TEST(RatioEstimatorTest, DedupIntervalsCoverTheTruthForEveryShape) {
  for (Shape shape :
       {Shape::kUniform, Shape::kZipf, Shape::kMostlyUnique, Shape::kMostlyDuplicate}) {
    SCOPED_TRACE(static_cast<int>(shape));
    EXPECT_GE(Coverage(shape, /*compression=*/false, /*shift=*/4, 1000), 0.90);
  }
}

}  // namespace
}  // namespace zsim::estimate
