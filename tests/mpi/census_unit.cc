// PlanCensus (engine/mpi/census.h): each rank counts its own references to ceil(8/N) with the
// shipped-keys filter while that is 2 or more; from N = 8 on (from 2 for costly codecs), 8 own
// references, no repeated sighting after a ship, and the heavy keys left without codes coded
// after the exchange (heavy_census.h), never a census at 1 reference, which no duplicate would
// reach. And the origins' limits (heavy_census.h).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engine/ddt/dedup_table.h"
#include "engine/mpi/census.h"
#include "engine/mpi/heavy_census.h"
#include "zsim/scan_options.h"

namespace zsim::mpi {
namespace {

TEST(PlanCensusTest, CountsOwnReferencesToCeilEightOverNBelowEightRanks) {
  const uint32_t want[] = {0, 8, 4, 3, 2, 2, 2, 2};  // by N
  for (int n = 2; n < 8; ++n) {
    const CensusPlan p = PlanCensus(n, 0, false);
    EXPECT_EQ(p.refcount, want[n]) << "N=" << n;
    EXPECT_TRUE(p.own_count) << "N=" << n;
    EXPECT_FALSE(p.reread) << "N=" << n;
  }
}

TEST(PlanCensusTest, FromEightRanksKeepsEightOwnReferencesWithoutFilter) {
  for (int n : {8, 9, 16, 64, 1000}) {
    const CensusPlan p = PlanCensus(n, 0, false);
    EXPECT_EQ(p.refcount, ddt::kHeavyRefcount) << "N=" << n;
    EXPECT_FALSE(p.own_count) << "N=" << n;
    EXPECT_TRUE(p.reread) << "N=" << n;
  }
}

// Costly sampled codecs: the count at ceil(8/N) would run them on keys heavy on no rank, so
// from 2 ranks on the ranks count 8 of their own references and the owners reread the rest.
TEST(PlanCensusTest, CostlyCodecsRereadFromTwoRanks) {
  for (int n : {2, 3, 4, 7, 8, 64}) {
    const CensusPlan p = PlanCensus(n, 0, true);
    EXPECT_EQ(p.refcount, ddt::kHeavyRefcount) << "N=" << n;
    EXPECT_FALSE(p.own_count) << "N=" << n;
    EXPECT_TRUE(p.reread) << "N=" << n;
  }
  EXPECT_FALSE(PlanCensus(1, 0, true).reread);  // one process codes its own census
  EXPECT_FALSE(PlanCensus(2, 8, true).reread);  // the test override still wins
  EXPECT_TRUE(PlanCensus(2, 3, true).own_count);
}

// A scan's options with the comma-separated `list` ("all": every codec), as the CLI resolves it.
ScanOptions Listed(const std::string& list, bool exact = false) {
  ScanOptions o;
  o.exact = exact;
  if (list == "all") {
    o.compressions = AllCompressions(o.profile);
    return o;
  }
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    Result<Compression> c = ParseCompression(list.substr(at, comma - at), o.profile);
    EXPECT_TRUE(c.ok()) << list;
    if (c.ok()) o.compressions.push_back(*c);
    at = comma + 1;
  }
  return o;
}

TEST(CensusCodecsCostlyTest, LongOrSlowListsOnly) {
  ScanOptions defaults;
  defaults.compressions = DefaultCompressions(defaults.profile);
  EXPECT_FALSE(CensusCodecsCostly(defaults));
  EXPECT_FALSE(CensusCodecsCostly(Listed("lz4,zstd-3")));
  EXPECT_FALSE(CensusCodecsCostly(Listed("gzip-6")));
  EXPECT_TRUE(CensusCodecsCostly(Listed("all")));
  EXPECT_TRUE(CensusCodecsCostly(Listed("zstd-19")));
  EXPECT_TRUE(CensusCodecsCostly(Listed("lz4,gzip-9")));
  EXPECT_FALSE(CensusCodecsCostly(Listed("all", /*exact=*/true)));  // nothing sampled
  EXPECT_FALSE(CensusCodecsCostly(Listed("off")));
}

TEST(PlanCensusTest, OneRankIsTheWholeCensus) {
  const CensusPlan p = PlanCensus(1, 0, false);
  EXPECT_EQ(p.refcount, ddt::kHeavyRefcount);
  EXPECT_FALSE(p.own_count);
  EXPECT_FALSE(p.reread);
}

TEST(PlanCensusTest, TheTestOverrideSetsTheCountWithinTwoToEight) {
  EXPECT_EQ(PlanCensus(2, 8, false).refcount, ddt::kHeavyRefcount);
  EXPECT_FALSE(PlanCensus(2, 8, false).own_count);
  EXPECT_FALSE(PlanCensus(8, 8, false).reread);  // the census before the fix, at any N
  EXPECT_EQ(PlanCensus(4, 3, false).refcount, 3u);
  EXPECT_TRUE(PlanCensus(4, 3, false).own_count);
  EXPECT_EQ(PlanCensus(3, 100, false).refcount, ddt::kHeavyRefcount);  // capped
  EXPECT_EQ(PlanCensus(16, 1, false).refcount, ddt::kHeavyRefcount);   // 1: ignored
  EXPECT_FALSE(PlanCensus(16, 1, false).own_count);
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
