#include "engine/estimate/codec_budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"
#include "engine/estimate/top_up.h"
#include "zsim/scan_options.h"

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
  EXPECT_EQ(BudgetLevelOf(Plan{uint64_t{3} << 30}, 128 * 1024), BudgetLevel(24576));
  EXPECT_EQ(BudgetLevelOf(Plan{uint64_t{3} << 30}, 0), 0);
}

// The list the caps are measured against (off, lz4, zstd-3, gzip-6, lzjb, zle: the default list
// of earlier versions).
std::vector<Compression> ReferenceList() {
  const std::vector<Compression>& list = CostReferenceCompressions();
  EXPECT_EQ(list.size(), 6u);
  return list;
}

// A long list like --compression all: every gzip and zstd level, lz4, lzjb, zle.
std::vector<Compression> LongList() {
  std::vector<Compression> v = {{CompressionAlgorithm::kLz4, 0},
                                {CompressionAlgorithm::kLzjb, 0},
                                {CompressionAlgorithm::kZle, 0}};
  for (int l = 1; l <= 9; ++l) v.push_back({CompressionAlgorithm::kGzip, l});
  for (int l = 1; l <= 19; ++l) v.push_back({CompressionAlgorithm::kZstd, l});
  return v;
}

ScanOptions WithCodecs(std::vector<Compression> codecs, std::vector<uint64_t> recordsizes) {
  ScanOptions o;
  o.compressions = std::move(codecs);
  o.recordsizes = std::move(recordsizes);
  return o;
}

// The nominal CPU seconds of the codecs at `levels` over a tree of `bytes`.
double NominalSeconds(const ScanOptions& o, const std::vector<int>& levels, uint64_t bytes) {
  double s = 0;
  for (size_t r = 0; r < o.recordsizes.size(); ++r) {
    for (size_t c = 0; c < o.compressions.size(); ++c) {
      const double speed = NominalCodecBytesPerSecond(o.compressions[c]);
      if (speed <= 0) continue;
      const uint64_t blocks = bytes / o.recordsizes[r];
      s += double(blocks >> levels[r * o.compressions.size() + c]) * double(o.recordsizes[r]) /
           speed;
    }
  }
  return s;
}

// The reference codecs (CostReferenceCompressions, the default list of earlier versions) but off.
TEST(CodecBudgetTest, TheReferenceCodecsKeepTheirBudgetUpToLargeTrees) {
  const ScanOptions o = WithCodecs({{CompressionAlgorithm::kLz4, 0},
                                    {CompressionAlgorithm::kZstd, 3},
                                    {CompressionAlgorithm::kGzip, 6},
                                    {CompressionAlgorithm::kLzjb, 0},
                                    {CompressionAlgorithm::kZle, 0}},
                                   {128 * 1024});
  const std::vector<bool> sampled(o.compressions.size(), true);
  for (uint64_t gib : {uint64_t{1}, uint64_t{3}, uint64_t{20}, uint64_t{100}}) {
    const uint64_t bytes = gib << 30;
    const std::vector<int> levels = BudgetLevels(o, sampled, Plan{bytes});
    for (size_t c = 0; c < o.compressions.size(); ++c) {
      EXPECT_EQ(levels[c], BudgetLevelOf(Plan{bytes}, 128 * 1024)) << gib << " GiB, " << c;
    }
  }
}

TEST(CodecBudgetTest, ALongListCostsTheCapAndItsCostliestCodecsGiveWay) {
  const ScanOptions o = WithCodecs(LongList(), {16 * 1024, 128 * 1024, 1024 * 1024});
  const std::vector<bool> sampled(o.compressions.size(), true);
  for (uint64_t mib : {uint64_t{90}, uint64_t{3000}, uint64_t{200000}}) {
    const uint64_t bytes = mib << 20;
    const std::vector<int> levels = BudgetLevels(o, sampled, Plan{bytes});
    // Within twice the cap: a granted wish is a budget of blocks, coded at a level that keeps
    // up to twice as many.
    EXPECT_LE(NominalSeconds(o, levels, bytes), 2 * kCapSeconds) << mib << " MiB";
    bool raised = false;
    const size_t n = o.compressions.size();
    for (size_t r = 0; r < 3; ++r) {
      const int budget = BudgetLevelOf(Plan{bytes}, o.recordsizes[r]);
      const int zle = levels[r * n + 2];  // LongList()[2]
      for (size_t c = 0; c < n; ++c) {
        const int lv = levels[r * n + c];
        EXPECT_GE(lv, budget);
        raised |= lv > budget;
        // The cheapest codec (zle) gives way last: a costlier one is never coded more.
        EXPECT_GE(lv, zle) << mib << " MiB, row " << r << ", setting " << c;
      }
    }
    EXPECT_TRUE(raised) << mib << " MiB: the cap did not bind";
  }
}

TEST(CodecBudgetTest, AllCodecsAtThreeRecordsizesCostAtMostTenReferenceScans) {
  // Issue 19's bound on the file-server sample (84 MB of data, every block of it coded by the
  // reference codecs): `--compression all --recordsize 16k,128k,1M` plans at most ten times a
  // reference scan's nominal codec work, the sampled codecs' levels from the plan and lz4 (their
  // regression anchor) on every block.
  const uint64_t bytes = uint64_t{84} << 20;
  // zsim::AllCompressions of 2.4 (engine/zfs) and the reference list.
  std::vector<Compression> every = LongList();
  every.push_back({CompressionAlgorithm::kOff, 0});
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 500, 1000}) {
    every.push_back({CompressionAlgorithm::kZstd, -n});
  }
  const ScanOptions all = WithCodecs(every, {16 * 1024, 128 * 1024, 1024 * 1024});
  const ScanOptions def = WithCodecs({{CompressionAlgorithm::kOff, 0},
                                      {CompressionAlgorithm::kLz4, 0},
                                      {CompressionAlgorithm::kZstd, 3},
                                      {CompressionAlgorithm::kGzip, 6},
                                      {CompressionAlgorithm::kLzjb, 0},
                                      {CompressionAlgorithm::kZle, 0}},
                                     {128 * 1024});
  const double all_seconds = NominalSeconds(
      all, BudgetLevels(all, PlanSampling(all.compressions, false).sampled, Plan{bytes}), bytes);
  const double default_seconds = NominalSeconds(
      def, BudgetLevels(def, PlanSampling(def.compressions, false).sampled, Plan{bytes}), bytes);
  EXPECT_GT(default_seconds, 0);
  EXPECT_LE(all_seconds, 10 * default_seconds) << all_seconds << " vs " << default_seconds;
}

// The cap never thins a codec below kCapFloorBlocks of its row's planned blocks: with the cap
// alone, `--compression all` at 1M on a 50 MiB tree coded zstd-16..19 on none of its blocks, and
// their psize came out 0.
TEST(CodecBudgetTest, TheCapLeavesEveryCodecSomeBlocksOfEachRow) {
  const ScanOptions o = WithCodecs(LongList(), {16 * 1024, 128 * 1024, 1024 * 1024});
  const std::vector<bool> sampled(o.compressions.size(), true);
  const size_t n = o.compressions.size();
  bool floored = false;
  for (uint64_t mib : {uint64_t{3}, uint64_t{50}, uint64_t{900}, uint64_t{70000}}) {
    const Plan plan{mib << 20};
    const std::vector<int> levels = BudgetLevels(o, sampled, plan);
    for (size_t r = 0; r < o.recordsizes.size(); ++r) {
      const uint64_t blocks = PlannedBlocks(plan, o.recordsizes[r]);
      for (size_t c = 0; c < n; ++c) {
        const int lv = levels[r * n + c];
        if (lv == 0) continue;  // every block
        EXPECT_GE(blocks >> lv, kCapFloorBlocks) << mib << " MiB, row " << r << ", " << c;
        // The highest such level, where the cap wanted more: the floor stopped it there.
        floored |= (blocks >> (lv + 1)) < kCapFloorBlocks;
      }
    }
  }
  EXPECT_TRUE(floored) << "no codec was held by the floor: the test no longer reaches it";
}

TEST(CodecBudgetTest, NoLevelFallsAsTheTreeGrows) {
  // The scan follows the sizing walk's running sum: a level used early must be at or below the
  // whole tree's, for every codec, also where the cap binds.
  const ScanOptions o = WithCodecs(LongList(), {16 * 1024, 1024 * 1024});
  const std::vector<bool> sampled(o.compressions.size(), true);
  std::vector<int> previous = BudgetLevels(o, sampled, Plan{0});
  for (uint64_t bytes = 1 << 20; bytes < (uint64_t{1} << 42); bytes += bytes / 7 + 12345) {
    const std::vector<int> levels = BudgetLevels(o, sampled, Plan{bytes});
    for (size_t i = 0; i < levels.size(); ++i)
      ASSERT_GE(levels[i], previous[i]) << bytes << " " << i;
    previous = levels;
  }
}

// A file smaller than the block size is one block: a tree of small files plans its files, not
// its bytes over the block size (source-large at 128K: 78,579 files of 1.3 GB, 9,908 blocks by
// the bytes, which coded half of every sampled codec's blocks where the budget asks 4,096 to
// 8,192). A tree of large files plans its bytes, as before; a state without the count (format
// 20 and older, files 0) too.
TEST(CodecBudgetTest, SmallFilesArePlannedAsTheirBlocks) {
  EXPECT_EQ(PlannedBlocks(Plan{uint64_t{1298682509}, 78579}, 128 * 1024), 78579u);
  EXPECT_EQ(PlannedBlocks(Plan{uint64_t{1298682509}, 0}, 128 * 1024), 9908u);
  EXPECT_EQ(PlannedBlocks(Plan{uint64_t{3200616445}, 1284}, 128 * 1024), 24418u);
  EXPECT_EQ(PlannedBlocks(Plan{uint64_t{3200616445}, 1284}, 0), 0u);
  EXPECT_EQ(BudgetLevelOf(Plan{uint64_t{1298682509}, 78579}, 128 * 1024), 4);
  EXPECT_EQ(BudgetLevelOf(Plan{uint64_t{1298682509}, 0}, 128 * 1024), 1);
  const ScanOptions o = WithCodecs(ReferenceList(), {128 * 1024});
  const std::vector<bool> sampled = PlanSampling(o.compressions, false).sampled;
  const std::vector<int> levels = BudgetLevels(o, sampled, Plan{uint64_t{1298682509}, 78579});
  for (size_t c = 0; c < levels.size(); ++c) EXPECT_EQ(levels[c], sampled[c] ? 4 : 0) << c;

  // The cap counts a small file's codec time as its bytes': 4,000 files of 8K under zstd-16 cost
  // what 32 MB does, as they did counted by their bytes (a whole 128K block each would be 512
  // MB, and the cap would sample a costly codec the tree codes whole in moments).
  const ScanOptions costly = WithCodecs({{CompressionAlgorithm::kLz4, 0},
                                         {CompressionAlgorithm::kZstd, 1},
                                         {CompressionAlgorithm::kZstd, 16}},
                                        {128 * 1024});
  const std::vector<bool> costly_sampled = PlanSampling(costly.compressions, false).sampled;
  EXPECT_EQ(BudgetLevels(costly, costly_sampled, Plan{uint64_t{4000} * 8192, 4000}),
            BudgetLevels(costly, costly_sampled, Plan{uint64_t{4000} * 8192, 0}));
}

TEST(CodecBudgetTest, NoLevelFallsAsFilesOrBytesGrow) {
  // Bytes and files grow apart while the sizing walk runs (a directory of small files, then a
  // large one): no level may fall as either grows, where the cap binds too.
  for (const std::vector<Compression>& list : {ReferenceList(), LongList()}) {
    const ScanOptions o = WithCodecs(list, {16 * 1024, 128 * 1024, 1024 * 1024});
    const std::vector<bool> sampled(o.compressions.size(), true);
    Plan plan;
    std::vector<int> previous = BudgetLevels(o, sampled, plan);
    uint64_t step = 1;
    for (int k = 0; plan.bytes < (uint64_t{1} << 48); ++k) {
      if (k % 3 == 0) {
        plan.files += 17 * step;  // small files: a few KiB each
        plan.bytes += 17 * step * 3000;
      } else {
        plan.bytes += step << 20;  // a large file
        plan.files += 1;
      }
      step += step / 50 + 1;
      const std::vector<int> levels = BudgetLevels(o, sampled, plan);
      for (size_t i = 0; i < levels.size(); ++i) {
        ASSERT_GE(levels[i], previous[i]) << plan.bytes << " " << plan.files << " " << i;
      }
      previous = levels;
    }
  }
}

// The six settings of a v23 comparison (issue 19): zfs-fuse has no lz4.
std::vector<Compression> V23List() {
  return {{CompressionAlgorithm::kOff, 0},  {CompressionAlgorithm::kLzjb, 0},
          {CompressionAlgorithm::kZle, 0},  {CompressionAlgorithm::kGzip, 1},
          {CompressionAlgorithm::kGzip, 6}, {CompressionAlgorithm::kGzip, 9}};
}

TEST(NearAnchorsTest, ACostlyLevelFollowsTheCostliestLevelOfItsCodecTwoAndAHalfTimesAsFast) {
  // gzip-9 (15 MB/s nominal) follows gzip-6 (40); gzip-6 follows nothing, gzip-1 being only
  // 2.25 times as fast; no codec follows another codec.
  EXPECT_EQ(NearAnchors(V23List(), std::vector<bool>(6, true)),
            (std::vector<int>{-1, -1, -1, -1, -1, 4}));
  // ... and only an anchor coded whole in the row: then the next costliest root, gzip-1.
  EXPECT_EQ(NearAnchors(V23List(), {true, true, true, true, false, true}),
            (std::vector<int>{-1, -1, -1, -1, -1, 3}));
  EXPECT_EQ(NearAnchors(V23List(), {true, true, true, false, false, true}),
            (std::vector<int>(6, -1)));
  const std::vector<Compression> all = LongList();  // lz4, lzjb, zle, gzip-1..9, zstd-1..19
  auto at = [&](CompressionAlgorithm a, int level) {
    for (size_t c = 0; c < all.size(); ++c) {
      if (all[c].algorithm == a && all[c].level == level) return c;
    }
    return all.size();
  };
  const size_t gzip6 = at(CompressionAlgorithm::kGzip, 6);
  const size_t zstd1 = at(CompressionAlgorithm::kZstd, 1);
  const size_t zstd2 = at(CompressionAlgorithm::kZstd, 2);
  const size_t zstd3 = at(CompressionAlgorithm::kZstd, 3);
  std::vector<bool> whole(all.size(), true);
  std::vector<int> near = NearAnchors(all, whole);
  for (int l = 1; l <= 6; ++l) EXPECT_EQ(near[at(CompressionAlgorithm::kGzip, l)], -1) << l;
  for (int l = 7; l <= 9; ++l) EXPECT_EQ(near[at(CompressionAlgorithm::kGzip, l)], int(gzip6));
  for (int l = 1; l <= 3; ++l) EXPECT_EQ(near[at(CompressionAlgorithm::kZstd, l)], -1) << l;
  for (int l = 4; l <= 6; ++l) EXPECT_EQ(near[at(CompressionAlgorithm::kZstd, l)], int(zstd1));
  for (int l = 7; l <= 19; ++l) EXPECT_EQ(near[at(CompressionAlgorithm::kZstd, l)], int(zstd3));
  for (size_t c = 0; c < 3; ++c) EXPECT_EQ(near[c], -1);  // lz4, lzjb, zle
  // A root the cap samples is passed over for the next costliest whole one; a follower is never
  // an anchor.
  whole[zstd3] = false;
  near = NearAnchors(all, whole);
  EXPECT_EQ(near[at(CompressionAlgorithm::kZstd, 19)], int(zstd2));
  whole[zstd1] = whole[zstd2] = false;
  near = NearAnchors(all, whole);
  EXPECT_EQ(near[at(CompressionAlgorithm::kZstd, 19)], -1);
}

TEST(CodecBudgetTest, AFollowerOfANearAnchorCodedWholeCodesHalfItsRow) {
  // The database sample: 92 MB, 702 planned 128K blocks (465 unique), below the 8,192 that
  // budget level 1 needs: every codec used to code every block, gzip-9 four fifths of the CPU.
  // Now gzip-9 codes half of them, its estimate a ratio to gzip-6 (coded whole).
  // v23 rounds psize to 512 bytes (on any pool).
  ScanOptions o = WithCodecs(V23List(), {128 * 1024});
  o.profile = Profile::kV23;
  const std::vector<bool> sampled = PlanSampling(o.compressions, false).sampled;
  EXPECT_EQ(BudgetLevels(o, sampled, Plan{uint64_t{92} << 20}),
            (std::vector<int>{0, 0, 0, 0, 0, kNearAnchorLevel}));
  // Below kNearAnchorMinBlocks planned blocks half would be too few: coded whole.
  EXPECT_EQ(BudgetLevels(o, sampled, Plan{(kNearAnchorMinBlocks - 1) * 128 * 1024}),
            (std::vector<int>{0, 0, 0, 0, 0, 0}));
  // From 8,192 blocks gzip-6 is sampled too (the cap raises both): gzip-9 codes no more blocks
  // than gzip-6.
  const std::vector<int> large = BudgetLevels(o, sampled, Plan{uint64_t{1} << 30});
  EXPECT_GE(large[4], 1);
  EXPECT_GE(large[5], large[4]);
  // --exact: nothing sampled, nothing raised.
  for (int lv : BudgetLevels(o, std::vector<bool>(6, false), Plan{uint64_t{92} << 20}))
    EXPECT_EQ(lv, 0);
}

TEST(CodecBudgetTest, AFollowerIsCodedWholeWherePsizeRoundsToMoreThan512Bytes) {
  // At 4K sectors (2.4, ashift 12: the default) a follower's psize equals its anchor's on almost
  // every block: half a row would hold too few differences. Coded whole, as the budget alone says.
  ScanOptions o = WithCodecs(V23List(), {128 * 1024});
  const std::vector<bool> sampled = PlanSampling(o.compressions, false).sampled;
  EXPECT_EQ(BudgetLevels(o, sampled, Plan{uint64_t{92} << 20}), std::vector<int>(6, 0));
  EXPECT_FALSE(NearAnchorsLowerLevels(o));
  o.ashift = 9;  // 2.x at 512-byte sectors: lowered
  EXPECT_TRUE(NearAnchorsLowerLevels(o));
  EXPECT_EQ(BudgetLevels(o, sampled, Plan{uint64_t{92} << 20}),
            (std::vector<int>{0, 0, 0, 0, 0, kNearAnchorLevel}));
  o.profile = Profile::kV23;  // 512 bytes whatever the pool
  for (int ashift : {9, 12, 16}) {
    o.ashift = ashift;
    EXPECT_TRUE(NearAnchorsLowerLevels(o)) << ashift;
  }
  // --compression all at 16K on the file-server sample (84 MB, 5,376 planned blocks): zstd-4..19
  // and gzip-7..9 coded whole at ashift 12 as the budget alone says.
  ScanOptions all = WithCodecs(LongList(), {16 * 1024});
  const std::vector<bool> all_sampled = PlanSampling(all.compressions, false).sampled;
  const std::vector<int> budget_only = BudgetLevels(all, all_sampled, Plan{uint64_t{84} << 20});
  all.ashift = 9;
  const std::vector<int> lowered = BudgetLevels(all, all_sampled, Plan{uint64_t{84} << 20});
  bool any_lowered = false;
  for (size_t i = 0; i < lowered.size(); ++i) {
    EXPECT_GE(lowered[i], budget_only[i]) << i;
    any_lowered = any_lowered || lowered[i] > budget_only[i];
  }
  EXPECT_TRUE(any_lowered);
}

TEST(CodecBudgetTest, NoLevelOfANearAnchorsFollowerFallsAsTheTreeGrows) {
  // The follower's level is 1 while its anchor is coded whole; the anchor stops being coded
  // whole at budget level 1, or when the cap raises it, and the follower is then at 1 or above.
  // At 512-byte rounding (ashift 9) and at 4K (ashift 12, no follower lowered).
  for (const std::vector<uint64_t>& recordsizes :
       {std::vector<uint64_t>{128 * 1024}, std::vector<uint64_t>{16 * 1024, 1024 * 1024}}) {
    for (const std::vector<Compression>& list : {V23List(), LongList()}) {
      for (int ashift : {9, 12}) {
        ScanOptions o = WithCodecs(list, recordsizes);
        o.ashift = ashift;
        const std::vector<bool> sampled = PlanSampling(o.compressions, false).sampled;
        std::vector<int> previous = BudgetLevels(o, sampled, Plan{0});
        for (uint64_t bytes = 1 << 20; bytes < (uint64_t{1} << 42); bytes += bytes / 13 + 12345) {
          const std::vector<int> levels = BudgetLevels(o, sampled, Plan{bytes});
          for (size_t i = 0; i < levels.size(); ++i)
            ASSERT_GE(levels[i], previous[i]) << bytes << " " << i;
          previous = levels;
        }
      }
    }
  }
}

TEST(CodecBudgetTest, ExactSettingsHaveNoLevel) {
  const ScanOptions o = WithCodecs(LongList(), {128 * 1024});
  const std::vector<bool> exact(o.compressions.size(), false);
  for (int lv : BudgetLevels(o, exact, Plan{uint64_t{1} << 40})) EXPECT_EQ(lv, 0);
}

// `--compression all` (zsim::AllCompressions of 2.4: engine/zfs, not linked here).
std::vector<Compression> EveryCodec() {
  std::vector<Compression> every = LongList();
  every.push_back({CompressionAlgorithm::kOff, 0});
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 500, 1000}) {
    every.push_back({CompressionAlgorithm::kZstd, -n});
  }
  return every;
}

// The nominal seconds of row r's sampled codecs at `levels` on `bytes` of unique data.
double RowSampledSeconds(const ScanOptions& o, const std::vector<bool>& sampled,
                         const std::vector<int>& levels, size_t r, uint64_t bytes) {
  double s = 0;
  const size_t n = o.compressions.size();
  for (size_t c = 0; c < n; ++c) {
    const double speed = NominalCodecBytesPerSecond(o.compressions[c]);
    if (!sampled[c] || speed <= 0) continue;
    s += std::ldexp(double(bytes), -levels[r * n + c]) / speed;
  }
  return s;
}

// The reference list's codecs on `bytes` of unique data, every block (a tree under the budget).
double ReferenceScanSeconds(uint64_t bytes) {
  double s = 0;
  for (const Compression& c : CostReferenceCompressions()) {
    const double speed = NominalCodecBytesPerSecond(c);
    if (speed > 0) s += double(bytes) / speed;
  }
  return s;
}

// Issue 19's bound: the file-server sample (89 MB in 2,843 files; about 45 MB unique per row)
// under `--compression all --recordsize 16k,128k,1M` was topped up to the budget of its unique
// bytes, which the cap, a constant, let cost 25 CPU s of codecs where the reference scan's cost
// 1.5: 15 reference scans' time. A topped row's sampled codecs cost at most kListCostFactor / rows
// reference scans' codecs now, but where the floor holds a codec (a few blocks of the 1M row), and
// the reference codecs among them are not raised further by it.
TEST(ListCostTest, AToppedRowOfALongListCostsAtMostItsShareOfTenReferenceScans) {
  const ScanOptions all = WithCodecs(EveryCodec(), {16 * 1024, 128 * 1024, 1024 * 1024});
  const std::vector<bool> sampled = PlanSampling(all.compressions, false).sampled;
  const Plan plan{uint64_t{89} << 20, 2843};
  const uint64_t unique = uint64_t{45} << 20;
  const std::vector<int> levels = RowBudgetLevels(all, sampled, plan, {unique, unique, unique});
  const std::vector<int> planned = BudgetLevels(all, sampled, plan);
  const std::vector<int> budget = BudgetLevels(all, sampled, Plan{unique, 0});
  const size_t n = all.compressions.size();
  const double share = kListCostFactor / 3 * ReferenceScanSeconds(unique);
  bool raised = false;
  for (size_t r = 0; r < 3; ++r) {
    double held = 0;  // the floor's cells at the floor's level
    const uint64_t blocks = unique / all.recordsizes[r];
    for (size_t c = 0; c < n; ++c) {
      const size_t i = r * n + c;
      // Between the unique bytes' budget and the planned one, which the scan coded as it read.
      EXPECT_GE(levels[i], budget[i]) << r << " " << c;
      EXPECT_LE(levels[i], planned[i]) << r << " " << c;
      raised |= levels[i] > budget[i];
      // The reference codecs are not raised by the list's cap.
      const std::vector<Compression>& defaults = CostReferenceCompressions();
      if (std::find(defaults.begin(), defaults.end(), all.compressions[c]) != defaults.end()) {
        EXPECT_EQ(levels[i], budget[i]) << r << " " << c;
      }
      const double speed = NominalCodecBytesPerSecond(all.compressions[c]);
      if (sampled[c] && speed > 0 && (blocks >> (levels[i] + 1)) < kCapFloorBlocks) {
        held += std::ldexp(double(unique), -levels[i]) / speed;
      }
    }
    EXPECT_LE(RowSampledSeconds(all, sampled, levels, r, unique), share + held) << "row " << r;
  }
  EXPECT_TRUE(raised) << "the list's cap did not bind: the test no longer reaches it";
}

// The reference codecs at any recordsizes, and the reference codecs with zstd-19 and gzip-9 at one
// (8.5 reference scans' codec work), are not held by the list's cap: a topped row codes them as
// the budget of its unique bytes asks, as before. At two recordsizes the costly list is held:
// 17 reference scans.
TEST(ListCostTest, TheDefaultAndReferenceListsAndAShortListKeepTheBudgetOfTheUniqueBytes) {
  std::vector<Compression> costly = CostReferenceCompressions();
  costly.push_back({CompressionAlgorithm::kZstd, 19});
  costly.push_back({CompressionAlgorithm::kGzip, 9});
  const std::vector<uint64_t> one = {128 * 1024}, two = {16 * 1024, 1024 * 1024};
  const std::vector<std::pair<std::vector<Compression>, std::vector<uint64_t>>> cases = {
      {CostReferenceCompressions(), one},
      {CostReferenceCompressions(), two},
      {DefaultCompressions(Profile::kZfs24), one},
      {DefaultCompressions(Profile::kZfs24), two},
      {DefaultCompressions(Profile::kV23), one},
      {DefaultCompressions(Profile::kV23), two},
      {costly, one}};
  for (const auto& [list, rows] : cases) {
    {
      const ScanOptions o = WithCodecs(list, rows);
      const std::vector<bool> sampled = PlanSampling(o.compressions, false).sampled;
      for (uint64_t mib : {uint64_t{1}, uint64_t{45}, uint64_t{700}, uint64_t{6000}}) {
        const Plan plan{(mib << 20) * 3, 0};
        const std::vector<uint64_t> unique(rows.size(), mib << 20);
        EXPECT_EQ(RowBudgetLevels(o, sampled, plan, unique),
                  BudgetLevels(o, sampled, Plan{mib << 20, 0}))
            << mib << " MiB, " << list.size() << " codecs, " << rows.size() << " rows";
      }
    }
  }
  const ScanOptions o = WithCodecs(costly, two);
  const std::vector<bool> sampled = PlanSampling(o.compressions, false).sampled;
  const uint64_t unique = uint64_t{45} << 20;
  EXPECT_NE(RowBudgetLevels(o, sampled, Plan{unique * 3, 0}, {unique, unique}),
            BudgetLevels(o, sampled, Plan{unique, 0}));
}

// The list's cap takes the reference codecs whatever the profile: a saved state reported at
// another profile keeps its scan's levels (finish/finish.cc CheckBudgetLevels would refuse a
// report whose levels fall below them). At ashift 9 near anchors lower the same levels under both.
TEST(ListCostTest, TheListsCapIsTheSameUnderEveryProfile) {
  ScanOptions v24 = WithCodecs(EveryCodec(), {16 * 1024, 128 * 1024, 1024 * 1024});
  v24.ashift = 9;
  ScanOptions v23 = v24;
  v23.profile = Profile::kV23;
  const std::vector<bool> sampled = PlanSampling(v24.compressions, false).sampled;
  const uint64_t unique = uint64_t{45} << 20;
  const Plan plan{uint64_t{89} << 20, 2843};
  const std::vector<int> levels = RowBudgetLevels(v24, sampled, plan, {unique, unique, unique});
  EXPECT_EQ(RowBudgetLevels(v23, sampled, plan, {unique, unique, unique}), levels);
  EXPECT_NE(levels, BudgetLevels(v24, sampled, Plan{unique, 0}));  // the list's cap binds
}

}  // namespace
}  // namespace zsim::estimate
