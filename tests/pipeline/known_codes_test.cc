// Which codes of a sampled codec the block-size histogram and the breakdowns use
// (finish/known_codes.h): two tables holding the same keys, one of which also has codes for
// blocks below the final level (met before the level rose, or a merged part of a smaller plan),
// give the same figures.

#include "engine/finish/known_codes.h"

#include <gtest/gtest.h>

#include <array>

#include "engine/base/mix.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/block_sizes.h"
#include "engine/zfs/allocation.h"

namespace zsim::finish {
namespace {

// A scan of 4K records over `planned` bytes with one sampled codec (lz4).
ScanOptions OneCodec() {
  ScanOptions o;
  o.recordsizes = {4096};
  o.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
  return o;
}

TEST(KnownCodeLevelTest, ThePlanAloneIsTakenAsRecorded) {
  state::SamplingState s;
  s.sampled = {true};
  s.complete_level = 3;
  s.planned_bytes = uint64_t{1} << 40;  // not used: the levels did not follow the budget
  EXPECT_EQ(KnownCodeLevels(OneCodec(), s, 0), std::vector<int>{3});
}

TEST(KnownCodeLevelTest, TheBudgetOfTheWholePlanAndNeverBelowTheRecordedLevel) {
  state::SamplingState s;
  s.sampled = {true};
  s.adaptive = true;
  s.planned_bytes = 8191 * 4096;  // under twice kBudgetBlocks: every block
  EXPECT_EQ(KnownCodeLevels(OneCodec(), s, 0), std::vector<int>{-1});
  s.planned_bytes = 24000 * 4096;  // 6,000 blocks at level 2 and up
  EXPECT_EQ(KnownCodeLevels(OneCodec(), s, 0), std::vector<int>{2});
  s.complete_level = 5;
  EXPECT_EQ(KnownCodeLevels(OneCodec(), s, 0), std::vector<int>{5});
  s.sampled = {false};
  EXPECT_EQ(KnownCodeLevels(OneCodec(), s, 0), std::vector<int>{-1});
}

// A key of level `level` (estimate::SampleLevel) from `seed`.
ddt::Fingerprint KeyOfLevel(uint64_t seed, int level) {
  uint64_t lo = Mix64(seed * 2 + 1);
  lo &= ~(((uint64_t{1} << level) - 1) << 40);  // `level` trailing zeros above bit 40
  lo |= uint64_t{1} << (40 + level);
  return ddt::Fingerprint{lo, Mix64(seed * 2 + 2)};
}

TEST(KnownCodesTest, CodesBelowTheLevelEveryRunReachesDoNotChangeTheHistogram) {
  const std::vector<ddt::SettingStorage> layout = {
      ddt::SettingStorage{ddt::SettingStorage::Kind::kSide, true}};
  ddt::DedupTable all(layout), late(layout);
  // 24,000 unique 4K blocks, levels as random keys have them (half level 0, a quarter 1, ...):
  // 6000 at level 2 and up, 3000 at 3 and up; the budget's level of 24,000 blocks is 2.
  std::array<int, 4> share = {12000, 6000, 3000, 3000};
  uint64_t seed = 0;
  std::vector<std::pair<ddt::Fingerprint, ddt::PsizeCode>> keys;
  for (int level = 0; level < 4; ++level) {
    for (int i = 0; i < share[size_t(level)]; ++i, ++seed) {
      const ddt::PsizeCode code = ddt::EncodeAllocated(512 * (1 + seed % 8));
      keys.emplace_back(KeyOfLevel(seed, level == 3 ? 3 + int(seed % 4) : level), code);
    }
  }
  for (const auto& [key, code] : keys) {
    for (ddt::DedupTable* t : {&all, &late})
      ASSERT_EQ(t->Insert(key, 4096), ddt::InsertOutcome::kFirst);
    // `all` coded every block (its level never rose); `late` only those at level 2 and up,
    // and a third of the lower ones (met before its level rose).
    all.SetCodes(key, std::span(&code, 1));
    if (estimate::SampleLevel(key.lo) >= 2 || key.hi % 3 == 0)
      late.SetCodes(key, std::span(&code, 1));
  }
  state::SamplingState sampling;
  sampling.sampled = {true};
  sampling.adaptive = true;
  sampling.planned_bytes = 24000 * 4096;
  sampling.complete_level = 0;  // `all`'s recorded level (a merged part of a smaller plan)
  state::SamplingState late_sampling = sampling;
  late_sampling.complete_level = 2;
  const std::vector<int> all_levels = KnownCodeLevels(OneCodec(), sampling, 0);
  const std::vector<int> late_levels = KnownCodeLevels(OneCodec(), late_sampling, 0);
  EXPECT_EQ(all_levels, std::vector<int>{2});
  EXPECT_EQ(late_levels, std::vector<int>{2});

  const zfs::AllocationModel alloc = zfs::AllocationModel::For(VdevLayout{}, 12);
  auto histogram = [&](const ddt::DedupTable& t, const std::vector<int>& levels) {
    std::vector<SettingResult> s(1);
    // Codes taken as psize (rounded), so each size shows in the histogram.
    const CodeSettler as_psize(state::CodeKind::kRounded, OneCodec(), OneCodec(), 4096);
    FillBlockSizes(t, as_psize, 4096, alloc, 1, levels, &s);
    std::vector<std::array<uint64_t, 4>> out;
    for (const BlockSizeBucket& b : s[0].block_sizes) {
      out.push_back({b.size, b.blocks, b.psize, b.unique_asize});
    }
    return out;
  };
  EXPECT_EQ(histogram(all, all_levels), histogram(late, late_levels));
  // Every code found (the old rule) differs: the low-level codes `late` lacks weigh in.
  EXPECT_NE(histogram(all, {-1}), histogram(late, {-1}));

  // Under dedup sampling (a quarter of the keys kept) both still agree.
  all.RaiseSampleShift(2);
  late.RaiseSampleShift(2);
  const std::vector<int> all_sampled = KnownCodeLevels(OneCodec(), sampling, 0);
  EXPECT_EQ(all_sampled, KnownCodeLevels(OneCodec(), late_sampling, 0));
  EXPECT_EQ(all_sampled[0], 2);
  EXPECT_EQ(histogram(all, all_sampled), histogram(late, all_sampled));
}

}  // namespace
}  // namespace zsim::finish
