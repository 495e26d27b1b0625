// The rare-class census's classes (estimate/anchor_class.h).

#include "engine/estimate/anchor_class.h"

#include <gtest/gtest.h>

#include "engine/ddt/dedup_table.h"  // kNoFitUnits (a constant)

namespace zsim::estimate {
namespace {

TEST(AnchorClassTest, ThirtyTwoStepsOfTheBlockAndOneForWhatDidNotFit) {
  constexpr uint64_t k128 = 128 * 1024;
  // At 128K a class is 4K of output (8 units): the psize values of 4K sectors.
  EXPECT_EQ(AnchorClass(0, k128), 0);  // 112 bytes or less
  EXPECT_EQ(AnchorClass(7, k128), 0);
  EXPECT_EQ(AnchorClass(8, k128), 1);
  EXPECT_EQ(AnchorClass(24, k128), 3);  // lz4 = 12K: the large database sample's common class
  EXPECT_EQ(AnchorClass(255, k128), 31);
  EXPECT_EQ(AnchorClass(256, k128), kAnchorClasses - 1);  // the whole block
  EXPECT_EQ(AnchorClass(ddt::kNoFitUnits, k128), kAnchorClasses - 1);
  // Smaller blocks have fewer distinct classes, never more than 33.
  EXPECT_EQ(AnchorClass(1, 4096), 4);
  EXPECT_EQ(AnchorClass(7, 4096), 28);
  EXPECT_EQ(AnchorClass(8, 4096), kAnchorClasses - 1);
  EXPECT_EQ(AnchorClass(0, 512), 0);
  EXPECT_EQ(AnchorClass(1, 512), kAnchorClasses - 1);
  // 16M blocks: every class below the last is reachable.
  EXPECT_EQ(AnchorClass(1023, uint64_t{16} << 20), 0);
  EXPECT_EQ(AnchorClass(1024, uint64_t{16} << 20), 1);
  EXPECT_EQ(AnchorClass(32767, uint64_t{16} << 20), 31);
}

}  // namespace
}  // namespace zsim::estimate
