// Which references a breakdown keeps depends on the input alone: the settled shift is the
// smallest that keeps at most the cap; a collector fed from several threads in any order keeps
// what one pass in order keeps; and a merge of parts keeps what a collector of the whole keeps,
// also when the union holds more references than the cap and each part fewer.

#include "engine/state/breakdown_sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "engine/pipeline/breakdown.h"
#include "engine/state/merge.h"

namespace zsim::pipeline {
namespace {

// Well-mixed 128-bit keys (splitmix64), distinct for distinct i.
ddt::Fingerprint KeyOf(uint64_t i) {
  auto mix = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  return ddt::Fingerprint{mix(2 * i), mix(2 * i + 1)};
}

uint64_t KeptUnder(const std::vector<ddt::Fingerprint>& keys, uint32_t shift) {
  return static_cast<uint64_t>(std::count_if(keys.begin(), keys.end(), [&](const auto& k) {
    return std::countr_zero(k.hi) >= static_cast<int>(shift);
  }));
}

std::vector<ddt::Fingerprint> Keys(uint64_t first, uint64_t count) {
  std::vector<ddt::Fingerprint> v;
  for (uint64_t i = first; i < first + count; ++i) v.push_back(KeyOf(i));
  return v;
}

// The kept keys, sorted, for comparing two states.
std::vector<std::pair<uint64_t, uint64_t>> KeptKeys(const state::BreakdownState& bd) {
  std::vector<std::pair<uint64_t, uint64_t>> v;
  for (const auto& r : bd.references) v.emplace_back(r.key.hi, r.key.lo);
  std::sort(v.begin(), v.end());
  return v;
}

// Feeds `keys` to a collector of cap `cap` from `threads` threads, each its own share (a
// stride of the shuffled keys), all at once, and returns what it hands to the state.
state::BreakdownState Collect(std::vector<ddt::Fingerprint> keys, size_t cap, int threads,
                              uint64_t shuffle_seed) {
  if (shuffle_seed != 0) std::shuffle(keys.begin(), keys.end(), std::mt19937_64(shuffle_seed));
  BreakdownCollector collector(cap);
  const FileGroups groups = collector.Groups("/data", "/data/x/file.bin");  // one row of each
  std::vector<BreakdownCollector::Local> locals(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (size_t i = t; i < keys.size(); i += threads) {
        collector.Sample(keys[i], groups, 0, &locals[t]);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  std::vector<const BreakdownCollector::Local*> lists;
  for (const auto& l : locals) lists.push_back(&l);
  state::BreakdownState out;
  collector.MoveInto(lists, &out);
  return out;
}

TEST(BreakdownSampleTest, SettlesOnTheSmallestShiftThatKeepsAtMostTheCap) {
  const std::vector<ddt::Fingerprint> keys = Keys(0, 10000);
  state::BreakdownState bd;
  for (const auto& k : keys) bd.references.push_back({k, 0, 0, 0});
  state::SettleBreakdownSample(&bd, 1000);
  // 10,000 keys: about 1,250 under shift 3 and 625 under shift 4.
  ASSERT_GT(bd.shift, 0u);
  EXPECT_LE(KeptUnder(keys, bd.shift), 1000u);
  EXPECT_GT(KeptUnder(keys, bd.shift - 1), 1000u);
  EXPECT_EQ(bd.references.size(), KeptUnder(keys, bd.shift));
  for (const auto& r : bd.references) EXPECT_GE(std::countr_zero(r.key.hi), int(bd.shift));

  // Never below the shift it already has, even when fewer would fit.
  state::BreakdownState coarse;
  coarse.shift = 6;
  for (const auto& k : keys) {
    if (std::countr_zero(k.hi) >= 6) coarse.references.push_back({k, 0, 0, 0});
  }
  const size_t before = coarse.references.size();
  state::SettleBreakdownSample(&coarse, 1000);
  EXPECT_EQ(coarse.shift, 6u);
  EXPECT_EQ(coarse.references.size(), before);
}

TEST(BreakdownSampleTest, ThreadsAndOrderDoNotChangeWhatACollectorKeeps) {
  constexpr size_t kCap = 2000;
  const std::vector<ddt::Fingerprint> keys = Keys(1000, 200000);
  state::BreakdownState whole;
  for (const auto& k : keys) whole.references.push_back({k, 0, 0, 0});
  state::SettleBreakdownSample(&whole, kCap);
  ASSERT_GE(whole.shift, 6u);  // the collectors must raise M several times on the way

  const state::BreakdownState one = Collect(keys, kCap, 1, 0);
  EXPECT_EQ(one.shift, whole.shift);
  EXPECT_EQ(KeptKeys(one), KeptKeys(whole));
  for (int threads : {2, 3, 8}) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      const state::BreakdownState many = Collect(keys, kCap, threads, seed);
      EXPECT_EQ(many.shift, whole.shift) << threads << " threads, order " << seed;
      EXPECT_EQ(KeptKeys(many), KeptKeys(whole)) << threads << " threads, order " << seed;
    }
  }
}

TEST(BreakdownSampleTest, AMergeKeepsWhatOneCollectorOfTheUnionKeeps) {
  // Each part holds fewer references than the cap, the union more: the merge must raise M
  // as one scan of both would, and drop the references that M no longer keeps.
  const size_t part = state::kBreakdownMaxRefs * 3 / 4;
  const std::vector<ddt::Fingerprint> a_keys = Keys(0, part), b_keys = Keys(part, part);
  state::ScanState a, b;
  a.breakdown = Collect(a_keys, state::kBreakdownMaxRefs, 2, 7);
  b.breakdown = Collect(b_keys, state::kBreakdownMaxRefs, 2, 8);
  EXPECT_EQ(a.breakdown.shift, 0u);
  EXPECT_EQ(b.breakdown.shift, 0u);
  state::Merge(a, b);

  std::vector<ddt::Fingerprint> all = a_keys;
  all.insert(all.end(), b_keys.begin(), b_keys.end());
  const state::BreakdownState whole = Collect(all, state::kBreakdownMaxRefs, 2, 9);
  EXPECT_EQ(whole.shift, 1u);
  EXPECT_EQ(a.breakdown.shift, whole.shift);
  EXPECT_EQ(KeptKeys(a.breakdown), KeptKeys(whole));
}

}  // namespace
}  // namespace zsim::pipeline
