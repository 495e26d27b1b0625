#include "engine/estimate/adaptive_level.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>

namespace zsim::estimate {
namespace {

// `count` unique blocks spread over levels as fingerprints spread them (half at level 0, a
// quarter at 1, ...): block i has the level of its trailing zero bits.
LevelCounts Blocks(uint64_t count) {
  LevelCounts counts{};
  for (uint64_t i = 1; i <= count; ++i)
    ++counts[size_t(std::min(kMaxSampleLevel, std::countr_zero(i)))];
  return counts;
}

TEST(AdaptiveLevelTest, BaseIsTheHighestLevelHoldingTheSampleBlocks) {
  // 100,000 blocks: 6,250 at level 4 and up, 3,125 at 5 and up: kSampleBlocks (4,000) at 4.
  EXPECT_EQ(BaseLevel(Blocks(100000)), 4);
  EXPECT_EQ(BaseLevel(Blocks(8000)), 1);   // 4,000 at level 1 and up
  EXPECT_EQ(BaseLevel(Blocks(7999)), 0);   // 3,999
  EXPECT_EQ(BaseLevel(LevelCounts{}), 0);  // nothing met: every block
}

TEST(AdaptiveLevelTest, MoreBlocksNeverLowerTheBase) {
  // A count only grows, so the base of the blocks met so far never exceeds the whole tree's:
  // what lets the estimate's level be at or above every level a scan rose to.
  int previous = 0;
  LevelCounts counts{};
  for (uint64_t i = 1; i <= 300000; ++i) {
    ++counts[size_t(std::min(kMaxSampleLevel, std::countr_zero(i * 2654435761u)))];
    const int base = BaseLevel(counts);
    ASSERT_GE(base, previous) << i;
    previous = base;
  }
  EXPECT_EQ(previous, BaseLevel(Blocks(300000)));
}

}  // namespace
}  // namespace zsim::estimate
