// ZFS's budget / acceptance / rounding per profile (docs/zfs_model.md §2.2), case by case.

#include "engine/zfs/write_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "tests/util/test_util.h"

namespace zsim::zfs {
namespace {

using A = CompressionAlgorithm;

WritePolicy Policy(Profile profile, uint64_t min_alloc, uint64_t gcd_alloc, bool dedup = false) {
  WritePolicy p;
  p.profile = profile;
  p.geometry = {min_alloc, gcd_alloc, 12};
  p.dedup = dedup;
  return p;
}

TEST(WriteRulesTest, BudgetPerProfile) {
  struct Case {
    Profile profile;
    uint64_t sector;
    Compression c;
    uint64_t lsize;
    uint64_t budget;
  };
  const Case cases[] = {
      // v23: P2ALIGN(lsize - lsize/8, 512); 512-byte blocks get 0 (never compressed).
      {Profile::kV23, 512, kLz4, 512, 0},
      {Profile::kV23, 512, kLz4, 1536, 1024},
      {Profile::kV23, 512, kLz4, 36864, 32256},
      {Profile::kV23, 4096, kLz4, 131072, 114688},
      // 2.1 / 2.2: lsize - lsize/8, no alignment.
      {Profile::kZfs21, 4096, kLz4, 512, 448},
      {Profile::kZfs22, 4096, kLz4, 1536, 1344},
      {Profile::kZfs22, 4096, kLz4, 36864, 32256},
      // 2.3+: aligned down to gcd_alloc, below min_alloc -> 112; zle keeps lsize - lsize/8.
      {Profile::kZfs23, 4096, kLz4, 36864, 28672},
      {Profile::kZfs24, 4096, kLz4, 4096, 112},
      {Profile::kZfs24, 4096, kLz4, 8192, 4096},
      {Profile::kZfs24, 4096, kZle, 4096, 3584},
      {Profile::kZfs24, 512, kLz4, 512, 112},
      {Profile::kZfs24, 512, kLz4, 1536, 1024},
      {Profile::kZfs24, 4096, kLz4, 1 << 20, 917504},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(ProfileName(k.profile)) + " lsize " + std::to_string(k.lsize));
    EXPECT_EQ(CompressionBudget(Policy(k.profile, k.sector, k.sector), k.c, k.lsize), k.budget);
  }
  EXPECT_EQ(CompressionBudget(Policy(Profile::kZfs24, 4096, 4096), {A::kOff, 0}, 4096), 0u);
}

// The bound zstd early abort's probe leans on (codec::EarlyAbortLeastBudget): every budget but 0
// and 112 bytes lies at or above LeastLargeCompressionBudget, over every profile, ashift, vdev
// (dRAID data widths that are no power of two too) and block size from 128K to 16M; and the bound
// is not loose beyond use: some pool's budget comes within 15% of it (ashift 16 at 128K: 65,536
// against 57,345).
TEST(WriteRulesTest, EveryBudgetAbove112LiesAtOrAboveTheLeastLargeOne) {
  const char* vdevs[] = {"disk",        "mirror:2",     "raidz1:5",    "raidz3:11",
                         "draid1:2:4",  "draid1:3:5",   "draid2:5:8",  "draid1:6:8",
                         "draid2:7:10", "draid1:13:16", "draid3:24:28"};
  size_t budgets = 0;
  uint64_t closest = ~uint64_t{0};
  for (Profile profile :
       {Profile::kV23, Profile::kZfs21, Profile::kZfs22, Profile::kZfs23, Profile::kZfs24}) {
    for (const char* vdev : vdevs) {
      for (int ashift = 9; ashift <= 16; ++ashift) {
        const WritePolicy policy = DedupPolicyOf(profile, *ParseVdev(vdev), ashift);
        for (uint64_t lsize = 128 * 1024; lsize <= (16u << 20); lsize += 128 * 1024) {
          for (Compression c : {kLz4, Compression{A::kZstd, 3}, kGzip1, kZle}) {
            const uint64_t budget = CompressionBudget(policy, c, lsize);
            if (budget == 0 || budget == kEmbeddedPayloadBytes) continue;
            ++budgets;
            const uint64_t bound = LeastLargeCompressionBudget(lsize);
            ASSERT_GE(budget, bound) << ProfileName(profile) << " " << vdev << " ashift " << ashift
                                     << " lsize " << lsize;
            if (lsize == 128 * 1024) closest = std::min(closest, budget);
          }
        }
      }
    }
  }
  EXPECT_GT(budgets, 10000u);
  EXPECT_LE(closest, LeastLargeCompressionBudget(128 * 1024) * 115 / 100);
  EXPECT_EQ(LeastLargeCompressionBudget(128 * 1024), 57345u);
}

TEST(WriteRulesTest, AcceptanceAndRoundingPerProfile) {
  struct Case {
    Profile profile;
    uint64_t min_alloc, gcd_alloc, lsize;
    std::optional<uint64_t> c;
    BlockKind kind;
    uint64_t psize;
  };
  const Case cases[] = {
      {Profile::kV23, 4096, 4096, 131072, 5000, BlockKind::kCompressed, 5120},  // 512 always
      {Profile::kV23, 4096, 4096, 4096, 100, BlockKind::kCompressed, 512},      // no embedding
      {Profile::kZfs21, 4096, 4096, 131072, 5000, BlockKind::kCompressed, 8192},
      {Profile::kZfs21, 4096, 4096, 8192, 4097, BlockKind::kUncompressed, 8192},  // rounds to 8K
      // 2.2+: min_alloc when c <= min_alloc, else roundup to the GCD (mixed ashift 9 + 12).
      {Profile::kZfs22, 4096, 512, 131072, 5000, BlockKind::kCompressed, 5120},
      {Profile::kZfs22, 4096, 512, 131072, 3000, BlockKind::kCompressed, 4096},
      {Profile::kZfs21, 512, 512, 131072, 5000, BlockKind::kCompressed, 5120},
      // The 36K example of docs/zfs_model.md §2.2: 2.2 accepts 32256 (stored as 32K).
      {Profile::kZfs22, 4096, 4096, 36864, 32256, BlockKind::kCompressed, 32768},
      // Embedded: c <= 112, before rounding.
      {Profile::kZfs24, 4096, 4096, 4096, 112, BlockKind::kEmbedded, 112},
      {Profile::kZfs24, 4096, 4096, 4096, 113, BlockKind::kUncompressed, 4096},
      {Profile::kZfs24, 4096, 4096, 8192, 113, BlockKind::kCompressed, 4096},
      // Failure or no gain.
      {Profile::kZfs24, 4096, 4096, 8192, std::nullopt, BlockKind::kUncompressed, 8192},
      {Profile::kZfs24, 4096, 4096, 4096, 4096, BlockKind::kUncompressed, 4096},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(ProfileName(k.profile)) + " lsize " + std::to_string(k.lsize) + " c " +
                 (k.c ? std::to_string(*k.c) : "fail"));
    const BlockWrite w =
        AcceptCompressed(Policy(k.profile, k.min_alloc, k.gcd_alloc), k.lsize, k.c);
    EXPECT_EQ(w.kind, k.kind);
    EXPECT_EQ(w.psize, k.psize);
  }
}

// Upstream allows it from 2.3.3 / 2.4.0 (PR #17113); the 2.3 profile follows Debian's 2.3.2,
// which embeds with dedup=on (measured, tests/accuracy/openzfs23). 2.1 and 2.2 never did.
TEST(WriteRulesTest, EmbeddingWithDedupFrom23) {
  for (Profile p : {Profile::kZfs21, Profile::kZfs22, Profile::kZfs23, Profile::kZfs24}) {
    const BlockWrite off = AcceptCompressed(Policy(p, 4096, 4096, false), 8192, 50);
    const BlockWrite on = AcceptCompressed(Policy(p, 4096, 4096, true), 8192, 50);
    EXPECT_EQ(off.kind, BlockKind::kEmbedded) << ProfileName(p);
    const bool embeds = p == Profile::kZfs23 || p == Profile::kZfs24;
    EXPECT_EQ(on.kind, embeds ? BlockKind::kEmbedded : BlockKind::kCompressed) << ProfileName(p);
    if (on.kind == BlockKind::kCompressed) {
      EXPECT_EQ(on.psize, 4096u);
    }
  }
}

TEST(WriteRulesTest, ZeroBlocksAndEarlyAbort) {
  const WritePolicy v24 = Policy(Profile::kZfs24, 4096, 4096, true);
  const WritePolicy v23dedup = Policy(Profile::kZfs23, 4096, 4096, true);
  EXPECT_TRUE(ZeroBlockIsHole(Policy(Profile::kV23, 512, 512), kLz4));
  EXPECT_FALSE(ZeroBlockIsHole(Policy(Profile::kZfs24, 4096, 4096, false), {A::kOff, 0}));
  EXPECT_TRUE(ZeroBlockIsHole(v24, {A::kOff, 0}));
  EXPECT_FALSE(ZeroBlockIsHole(v23dedup, {A::kOff, 0}));
  // Only where dedup makes them holes and compression=off writes them otherwise (2.4, issue 18);
  // the policy's own dedup setting does not matter.
  EXPECT_TRUE(ZeroBlockWrittenOnlyWithoutDedup(v24, {A::kOff, 0}));
  EXPECT_TRUE(
      ZeroBlockWrittenOnlyWithoutDedup(Policy(Profile::kZfs24, 4096, 4096, false), {A::kOff, 0}));
  EXPECT_FALSE(ZeroBlockWrittenOnlyWithoutDedup(v24, kLz4));
  EXPECT_FALSE(ZeroBlockWrittenOnlyWithoutDedup(v23dedup, {A::kOff, 0}));

  EXPECT_TRUE(ZstdEarlyAbortApplies(v24, {A::kZstd, 3}, 131072));
  EXPECT_TRUE(ZstdEarlyAbortApplies(Policy(Profile::kZfs22, 4096, 4096), {A::kZstd, 19}, 1 << 20));
  EXPECT_FALSE(ZstdEarlyAbortApplies(v24, {A::kZstd, 2}, 131072));
  EXPECT_FALSE(ZstdEarlyAbortApplies(v24, {A::kZstd, -10}, 131072));
  EXPECT_FALSE(ZstdEarlyAbortApplies(v24, {A::kZstd, 3}, 65536));
  EXPECT_FALSE(ZstdEarlyAbortApplies(v24, {A::kGzip, 9}, 131072));
  EXPECT_FALSE(ZstdEarlyAbortApplies(Policy(Profile::kZfs21, 4096, 4096), {A::kZstd, 3}, 131072));
}

// SameBlockWrites says when a scan's codes hold under another pool: it must agree with the
// rules themselves, so it is checked against AcceptCompressed and CompressionBudget over sizes.
// A raw length above 112 stands for an output in (raw - 512, raw] that is also above 112 (a
// shorter one is kept exact): raw 512 (113 to 512 bytes) cannot fit a 112-byte budget.
TEST(WriteRulesTest, ReplayUnderTheEmbeddedBudget) {
  const WritePolicy scanned = Policy(Profile::kZfs23, 512, 512);   // budget 3584 at 4K
  const WritePolicy report = Policy(Profile::kZfs23, 4096, 4096);  // budget 112 at 4K
  ASSERT_EQ(CompressionBudget(report, kLz4, 4096), kEmbeddedPayloadBytes);
  for (uint64_t raw : {512u, 1024u, 3584u}) {
    SCOPED_TRACE(raw);
    const std::optional<BlockWrite> w = ReplayCompressed(scanned, report, kLz4, 4096, raw);
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->kind, BlockKind::kUncompressed);
    EXPECT_EQ(w->psize, 4096u);
  }
  // An exact length of 112 or less may or may not fit: compressors give up short of the end.
  EXPECT_FALSE(ReplayCompressed(scanned, report, kLz4, 4096, 112).has_value());
  EXPECT_FALSE(ReplayCompressed(scanned, report, kLz4, 4096, 60).has_value());
  // Under a budget of 512 or more, raw 512 may hold an output that fits.
  EXPECT_FALSE(ReplayCompressed(Policy(Profile::kZfs23, 512, 512),
                                Policy(Profile::kZfs23, 1024, 1024), kLz4, 4096, 512)
                   .has_value());
}

TEST(WriteRulesTest, SameBlockWritesAgreesWithTheRules) {
  auto same_everywhere = [](const WritePolicy& a, const WritePolicy& b) {
    for (uint64_t lsize : {512u, 4096u, 16384u, 131072u}) {
      if (CompressionBudget(a, kLz4, lsize) != CompressionBudget(b, kLz4, lsize)) return false;
      for (uint64_t c = 1; c < lsize; c += 37) {
        const BlockWrite x = AcceptCompressed(a, lsize, c), y = AcceptCompressed(b, lsize, c);
        if (x.kind != y.kind || x.psize != y.psize) return false;
      }
    }
    return true;
  };
  struct Case {
    WritePolicy a, b;
    bool same;
  };
  const Case cases[] = {
      {Policy(Profile::kV23, 512, 512), Policy(Profile::kV23, 8192, 8192), true},
      {Policy(Profile::kZfs21, 4096, 4096), Policy(Profile::kZfs21, 4096, 4096), true},
      {Policy(Profile::kZfs21, 4096, 4096), Policy(Profile::kZfs21, 8192, 8192), false},
      {Policy(Profile::kZfs24, 4096, 4096), Policy(Profile::kZfs24, 16384, 16384), false},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(SameBlockWrites(k.a, k.b), k.same);
    EXPECT_EQ(same_everywhere(k.a, k.b), k.same);
  }
  // Another profile is never taken as the same, even where the rules happen to agree (2.3 and
  // 2.4 without dedup): a report may only err towards refusing.
  EXPECT_FALSE(
      SameBlockWrites(Policy(Profile::kZfs22, 4096, 4096), Policy(Profile::kZfs21, 4096, 4096)));
  EXPECT_FALSE(SameBlockWrites(Policy(Profile::kZfs24, 4096, 4096, true),
                               Policy(Profile::kZfs24, 4096, 4096, false)));
}

}  // namespace
}  // namespace zsim::zfs
