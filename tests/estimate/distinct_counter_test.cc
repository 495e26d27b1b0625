// DistinctCounter and DistinctBlocks against exact counts: the estimate's error across the whole
// range (empty, a handful, linear-counting range, far beyond the register count), duplicates and
// order change nothing, and merged sketches count the union.

#include "engine/estimate/distinct_counter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "engine/estimate/distinct_blocks.h"
#include "tests/util/test_util.h"

namespace zsim::estimate {
namespace {

uint64_t Hash(uint64_t seed, uint64_t i) { return testing::SplitMix64(seed, i); }

TEST(DistinctCounterTest, EmptyAndTinyCountsAreExact) {
  DistinctCounter c(16);
  EXPECT_EQ(c.Estimate(), 0.0);
  c.Add(Hash(1, 0));
  EXPECT_NEAR(c.Estimate(), 1.0, 0.01);
  for (uint64_t i = 1; i < 100; ++i) c.Add(Hash(1, i));
  EXPECT_NEAR(c.Estimate(), 100.0, 1.0);
}

TEST(DistinctCounterTest, ErrorStaysWithinThreeStandardErrorsAtEveryScale) {
  // Precision 12 (4096 registers, 1.6% standard error) so that the large range (x 100 the
  // register count) and the transition (about 2.5 x) are reached quickly.
  for (uint64_t n : {500ull, 4000ull, 10000ull, 40000ull, 400000ull, 2000000ull}) {
    for (uint64_t seed : {1ull, 2ull, 3ull}) {
      DistinctCounter c(12);
      for (uint64_t i = 0; i < n; ++i) c.Add(Hash(seed, i));
      const double rel = c.Estimate() / double(n) - 1;
      EXPECT_LT(std::fabs(rel), 3 * c.RelativeStandardError()) << n << " seed " << seed;
    }
  }
}

TEST(DistinctCounterTest, IntervalsCoverTheTruthAtTheStatedRate) {
  // Over 200 seeds at 60000 distinct hashes (the register-saturating middle range of p = 12),
  // +-1.96 standard errors must hold the truth at least 90% of the time.
  int covered = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    DistinctCounter c(12);
    for (uint64_t i = 0; i < 60000; ++i) c.Add(Hash(seed + 100, i));
    covered += std::fabs(c.Estimate() / 60000 - 1) <= 1.96 * c.RelativeStandardError();
  }
  EXPECT_GE(covered, 180);
}

TEST(DistinctCounterTest, DuplicatesOrderAndThreadsChangeNothing) {
  DistinctCounter once(14), thrice(14), threaded(14);
  for (uint64_t i = 0; i < 50000; ++i) once.Add(Hash(7, i));
  for (int round = 0; round < 3; ++round) {
    for (uint64_t i = 50000; i-- > 0;) thrice.Add(Hash(7, i));
  }
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 4; ++t) {
    threads.emplace_back([&threaded, t] {
      for (uint64_t i = t; i < 50000; i += 2) threaded.Add(Hash(7, i));  // overlapping halves
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(once.Estimate(), thrice.Estimate());
  EXPECT_EQ(once.Estimate(), threaded.Estimate());
}

TEST(DistinctCounterTest, MergeCountsTheUnion) {
  DistinctCounter a(14), b(14), both(14);
  for (uint64_t i = 0; i < 30000; ++i) {
    a.Add(Hash(9, i));
    both.Add(Hash(9, i));
  }
  for (uint64_t i = 20000; i < 60000; ++i) {
    b.Add(Hash(9, i));
    both.Add(Hash(9, i));
  }
  a.Merge(b);
  EXPECT_EQ(a.Estimate(), both.Estimate());
  EXPECT_NEAR(a.Estimate(), 60000, 60000 * 3 * a.RelativeStandardError());
}

TEST(DistinctBlocksTest, StrataCountKeysAndAuxiliaryBytes) {
  DistinctBlocks d(128 * 1024);
  uint64_t small_aux = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    d.Add(Hash(3, i), 128 * 1024, 256, false);
    d.Add(Hash(3, i), 128 * 1024, 256, false);  // a duplicate
    const uint64_t lsize = 512 * (1 + i % 100);
    const uint64_t units = (lsize + 4095) / 4096 * 8;  // ashift 12: whole sectors
    d.Add(Hash(4, i), lsize, units, false);
    small_aux += units * 512;
    d.Add(0, lsize, units, /*is_zero=*/true);  // never counted: the table keeps zero keys
  }
  EXPECT_NEAR(d.full_keys(), 20000, 20000 * 3 * d.full_keys_error());
  EXPECT_NEAR(d.small_keys(), 20000, 20000 * 3 * d.small_keys_error());
  EXPECT_NEAR(d.small_aux(), double(small_aux), double(small_aux) * 3 * d.small_aux_error());
  EXPECT_EQ(d.memory_bytes(), (64u + 16u + 128u) * 1024u);
}

}  // namespace
}  // namespace zsim::estimate
