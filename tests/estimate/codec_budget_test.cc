#include "engine/estimate/codec_budget.h"

#include <gtest/gtest.h>

#include <cstdint>

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

}  // namespace
}  // namespace zsim::estimate
