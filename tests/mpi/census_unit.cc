// PlanCensus (engine/mpi/census.h): each rank counts its own references to ceil(8/N) with the
// shipped-keys filter while that is 2 or more; from N = 8 on, 8 own references and no filter
// and the heavy keys left without codes coded after the exchange (heavy_census.h), never a census
// at 1 reference, which no duplicate would reach. And the origins' limits (heavy_census.h).

#include <gtest/gtest.h>

#include "engine/ddt/dedup_table.h"
#include "engine/mpi/census.h"
#include "engine/mpi/heavy_census.h"

namespace zsim::mpi {
namespace {

TEST(PlanCensusTest, CountsOwnReferencesToCeilEightOverNBelowEightRanks) {
  const uint32_t want[] = {0, 8, 4, 3, 2, 2, 2, 2};  // by N
  for (int n = 2; n < 8; ++n) {
    const CensusPlan p = PlanCensus(n, 0);
    EXPECT_EQ(p.refcount, want[n]) << "N=" << n;
    EXPECT_TRUE(p.own_count) << "N=" << n;
    EXPECT_FALSE(p.reread) << "N=" << n;
  }
}

TEST(PlanCensusTest, FromEightRanksKeepsEightOwnReferencesWithoutFilter) {
  for (int n : {8, 9, 16, 64, 1000}) {
    const CensusPlan p = PlanCensus(n, 0);
    EXPECT_EQ(p.refcount, ddt::kHeavyRefcount) << "N=" << n;
    EXPECT_FALSE(p.own_count) << "N=" << n;
    EXPECT_TRUE(p.reread) << "N=" << n;
  }
}

TEST(PlanCensusTest, OneRankIsTheWholeCensus) {
  const CensusPlan p = PlanCensus(1, 0);
  EXPECT_EQ(p.refcount, ddt::kHeavyRefcount);
  EXPECT_FALSE(p.own_count);
  EXPECT_FALSE(p.reread);
}

TEST(PlanCensusTest, TheTestOverrideSetsTheCountWithinTwoToEight) {
  EXPECT_EQ(PlanCensus(2, 8).refcount, ddt::kHeavyRefcount);
  EXPECT_FALSE(PlanCensus(2, 8).own_count);
  EXPECT_FALSE(PlanCensus(8, 8).reread);  // the census before the fix, at any N
  EXPECT_EQ(PlanCensus(4, 3).refcount, 3u);
  EXPECT_TRUE(PlanCensus(4, 3).own_count);
  EXPECT_EQ(PlanCensus(3, 100).refcount, ddt::kHeavyRefcount);  // capped
  EXPECT_EQ(PlanCensus(16, 1).refcount, ddt::kHeavyRefcount);   // 1: ignored
  EXPECT_FALSE(PlanCensus(16, 1).own_count);
}

// Past 32,767 ranks the origins run out on the higher ranks: the census's error names that limit,
// not the per-rank item limit it named before.
TEST(OriginsShortBecauseTest, NamesTheLimitThatWasReached) {
  EXPECT_NE(BlockOrigins(32767).Add("f", 0, 4096, false), 0u);
  BlockOrigins past(32768);
  EXPECT_EQ(past.Add("f", 0, 4096, false), 0u);
  EXPECT_TRUE(past.overflowed());
  EXPECT_NE(OriginsShortBecause(32769).find("ranks 0 to 32767 only"), std::string::npos);
  EXPECT_EQ(OriginsShortBecause(32768).find("ranks 0 to"), std::string::npos);
  EXPECT_NE(OriginsShortBecause(32768).find("268435456 items"), std::string::npos);
}

}  // namespace
}  // namespace zsim::mpi
