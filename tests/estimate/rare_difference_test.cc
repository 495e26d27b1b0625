// The rare-difference bounds of a near anchor's follower (estimate/rare_difference.h): the count
// bound is the one-sided 97.5% Clopper-Pearson bound of a Bernoulli sample, and the bounds of the
// total hold on generated populations where a sample of half the blocks often sees no
// difference at all (the case whose linearised variance is 0).

#include "engine/estimate/rare_difference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/estimate/ratio_estimator.h"
#include "engine/estimate/sample_level.h"
#include "tests/util/test_util.h"

namespace zsim::estimate {
namespace {

TEST(RareDifferenceTest, CountBoundIsTheOneSidedClopperPearsonBound) {
  // Half sampled, none seen: P(Binomial(K, 1/2) = 0) = 2^-K >= 2.5% up to K = 5.
  EXPECT_EQ(DifferingCountUpperBound(0, 75, 150), 5u);
  // 1% sampled, none seen: 0.99^K >= 2.5% up to K = 367 (the rule of three's 3.69 / f).
  EXPECT_EQ(DifferingCountUpperBound(0, 10000, 1000000), 367u);
  // One seen in half: P(K = 0 or 1) = (K + 1) 2^-K >= 2.5% up to K = 8.
  EXPECT_EQ(DifferingCountUpperBound(1, 75, 150), 8u);
  // Everything sampled: the count seen. Nothing sampled: everything may differ.
  EXPECT_EQ(DifferingCountUpperBound(4, 150, 150), 4u);
  EXPECT_EQ(DifferingCountUpperBound(0, 0, 150), 150u);
  // Never more than the unsampled blocks, and more seen never lowers it.
  EXPECT_EQ(DifferingCountUpperBound(0, 2, 150), 148u);
  // 148 of 150 sampled, none seen: one differing block would have been seen at 98.7%.
  EXPECT_EQ(DifferingCountUpperBound(0, 148, 150), 0u);
  uint64_t last = 0;
  for (uint64_t k = 0; k < 40; ++k) {
    const uint64_t u = DifferingCountUpperBound(k, 500, 1000);
    EXPECT_GE(u, last);
    EXPECT_GE(u, k);
    last = u;
  }
}

TEST(RareDifferenceTest, BoundsAddTheLargestRisesAndFallsOfTheUnsampledBlocks) {
  RareDifferenceBound b;
  for (int i = 0; i < 75; ++i) b.AddSampled(4096, 4096);  // none differs
  // 75 unsampled blocks, rise (lsize - anchor) i and fall (anchor) 100 - i: the 5 largest count.
  std::vector<int> order;
  for (int i = 0; i < 75; ++i) order.push_back(i);
  std::reverse(order.begin() + 10, order.end());  // not in order: the same bounds
  for (int i : order) b.AddUnsampled(double(i), double(100 - i));
  EXPECT_EQ(b.differing(), 0u);
  EXPECT_EQ(b.UnsampledDifferingBound(), 5u);
  const std::array<double, 2> d = b.Bounds();
  EXPECT_DOUBLE_EQ(d[0], 100 + 99 + 98 + 97 + 96);
  EXPECT_DOUBLE_EQ(d[1], 74 + 73 + 72 + 71 + 70);
}

TEST(RareDifferenceTest, PastTheKeptValuesTheSmallestKeptOneBoundsTheRest) {
  RareDifferenceBound b;  // nothing sampled: every unsampled block may differ
  const size_t n = RareDifferenceBound::kKept + 10;
  for (size_t i = 0; i < n; ++i) b.AddUnsampled(i < 10 ? 1.0 : 2.0, 3.0);
  EXPECT_EQ(b.UnsampledDifferingBound(), n);
  const std::array<double, 2> d = b.Bounds();
  EXPECT_DOUBLE_EQ(d[0], 3.0 * double(n));
  EXPECT_GE(d[1], 2.0 * double(n - 10) + 10.0);  // every value, or more
}

// 600 blocks at 4 KiB sectors, a near anchor's psize of one sector each; the follower's is two
// on 6 of them (1%). Half the blocks sampled by key bits: the sample often holds none of the 6,
// where the ratio's linearised interval has a width of 0 and misses. The bounds hold the true
// total in at least 97.5% of 400 samples less chance (95%), and the normal interval does not.
TEST(RareDifferenceTest, BoundsHoldTheTotalWhereTheLinearisedIntervalHasNoWidth) {
  constexpr int kBlocks = 600;
  constexpr double kUnit = 4096, kLsize = 131072;
  int held = 0, normal_held = 0, none_seen = 0;
  constexpr int kSeeds = 400;
  for (int seed = 0; seed < kSeeds; ++seed) {
    RareDifferenceBound b;
    RatioEstimator r;
    double truth = 0, known = 0, anchor_total = 0;
    for (int i = 0; i < kBlocks; ++i) {
      const double x = kUnit, y = i % 100 == 3 ? 2 * kUnit : kUnit;
      truth += y;
      anchor_total += x;
      if (SampleLevel(testing::SplitMix64(uint64_t(seed), uint64_t(i))) >= 1) {
        b.AddSampled(y, x);
        r.Add(x, y);
        known += y;
      } else {
        b.AddUnsampled(kLsize - x, x);
        known += x;
      }
    }
    none_seen += b.differing() == 0;
    const std::array<double, 2> d = b.Bounds();
    held += known - d[0] <= truth && truth <= known + d[1];
    const double est = r.Ratio() * anchor_total;
    const double rel = r.RelativeHalfWidth95(double(kBlocks));
    normal_held += est * (1 - rel) <= truth && truth <= est * (1 + rel);
  }
  EXPECT_GE(none_seen, 1);
  EXPECT_GE(held, kSeeds * 95 / 100);
  EXPECT_LT(normal_held, kSeeds * 95 / 100);
}

}  // namespace
}  // namespace zsim::estimate
