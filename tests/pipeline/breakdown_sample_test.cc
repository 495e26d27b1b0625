// Which references a breakdown keeps depends on the input alone: the settled shift is the
// smallest that keeps at most the cap; a collector fed from several threads in any order keeps
// what one pass in order keeps; and a merge of parts keeps what a collector of the whole keeps,
// also when the union holds more references than the cap and each part fewer. The same for the
// whole-file contents, and their duplicates scaled up by the share kept.

#include "engine/state/breakdown_sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "engine/finish/breakdown_report.h"
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

// Whole-file content number i (one 128K record, or `lsize`).
state::BreakdownState::Content ContentOf(uint64_t i, uint64_t lsize = 128 * 1024) {
  const ddt::Fingerprint k = KeyOf(i);
  return state::BreakdownState::Content{k.lo, k.hi, {lsize}};
}
constexpr uint64_t kImage = uint64_t{1} << 30;  // a 1 GiB file: kept whatever the shift

std::vector<std::pair<uint64_t, uint64_t>> KeptContents(const state::BreakdownState& bd) {
  std::vector<std::pair<uint64_t, uint64_t>> v;
  for (const auto& [c, copies] : bd.contents) v.emplace_back(c.lo, copies);
  return v;
}

// Files with contents `ids` (a repeated id is a copy; ids from kFirstImage on are 1 GiB files),
// in the order given, into a collector of content cap `cap`.
constexpr uint64_t kFirstImage = uint64_t{1} << 40;
state::BreakdownState::Content FileContent(uint64_t id) {
  return id >= kFirstImage ? ContentOf(id, kImage) : ContentOf(id);
}
state::BreakdownState CollectFiles(const std::vector<uint64_t>& ids, size_t cap) {
  BreakdownCollector collector(state::kBreakdownMaxRefs, cap);
  const FileGroups groups = collector.Groups("/data", "/data/x/file.bin");
  for (uint64_t id : ids) {
    const state::BreakdownState::Content c = FileContent(id);
    collector.AddFile(groups, 128 * 1024, c.lsize, {}, {}, ddt::Fingerprint{c.lo, c.hi}, true,
                      true);
  }
  state::BreakdownState out;
  collector.MoveInto({}, &out);
  return out;
}

TEST(BreakdownSampleTest, ContentsSettleOnTheSmallestShiftThatKeepsAtMostTheCap) {
  state::BreakdownState bd;
  for (uint64_t i = 0; i < 10000; ++i) bd.contents[ContentOf(i)] = 1 + i % 2;
  // 2,000 large files: all kept, and not counted against the cap.
  for (uint64_t i = 10000; i < 12000; ++i) bd.contents[ContentOf(i, kImage)] = 2;
  state::SettleContentSample(&bd, 1000);
  auto kept_under = [](uint32_t shift) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < 10000; ++i) n += state::ContentKept(ContentOf(i), shift) ? 1 : 0;
    return n;
  };
  ASSERT_GT(bd.content_shift, 0u);
  EXPECT_LE(kept_under(bd.content_shift), 1000u);
  EXPECT_GT(kept_under(bd.content_shift - 1), 1000u);
  EXPECT_EQ(bd.contents.size(), kept_under(bd.content_shift) + 2000);
  for (uint64_t i = 10000; i < 12000; ++i) EXPECT_EQ(bd.contents.count(ContentOf(i, kImage)), 1u);
  // Each kept content with its copies.
  for (uint64_t i = 0; i < 10000; ++i) {
    const auto it = bd.contents.find(ContentOf(i));
    if (!state::ContentKept(ContentOf(i), bd.content_shift)) {
      EXPECT_EQ(it, bd.contents.end());
    } else if (it == bd.contents.end()) {
      ADD_FAILURE() << "content " << i << " dropped";
    } else {
      EXPECT_EQ(it->second, 1 + i % 2);
    }
  }
}

TEST(BreakdownSampleTest, OrderDoesNotChangeWhichContentsACollectorKeeps) {
  constexpr size_t kCap = 2000;
  // 100,000 distinct contents, every fifth in three copies, in three orders.
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < 100000; ++i) {
    for (int k = 0; k < (i % 5 == 0 ? 3 : 1); ++k) ids.push_back(i);
  }
  for (uint64_t i = kFirstImage; i < kFirstImage + 3000; ++i) ids.push_back(i);  // all kept
  state::BreakdownState whole;
  for (uint64_t id : ids) ++whole.contents[FileContent(id)];
  state::SettleContentSample(&whole, kCap);
  ASSERT_GE(whole.content_shift, 5u);  // the collector must raise its shift on the way
  for (uint64_t seed : {0u, 1u, 2u}) {
    std::vector<uint64_t> order = ids;
    if (seed) std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    const state::BreakdownState got = CollectFiles(order, kCap);
    EXPECT_EQ(got.content_shift, whole.content_shift) << "order " << seed;
    EXPECT_EQ(KeptContents(got), KeptContents(whole)) << "order " << seed;
    EXPECT_EQ(got.contents.count(FileContent(kFirstImage + 2999)), 1u) << "order " << seed;
  }
}

TEST(BreakdownSampleTest, AMergeKeepsTheContentsOneCollectorOfTheUnionKeeps) {
  // Each part holds fewer distinct contents than the cap, the union more, and the parts share
  // some (copies across hosts): the merge raises the shift as one scan of both would.
  const uint64_t part = state::kBreakdownMaxContents / 2 + 1000;
  std::vector<uint64_t> a_ids, b_ids;
  for (uint64_t i = 0; i < part; ++i) a_ids.push_back(i);
  for (uint64_t i = part - 1000; i < 2 * part - 1000; ++i) b_ids.push_back(i);
  state::ScanState a, b;
  a.breakdown = CollectFiles(a_ids, state::kBreakdownMaxContents);
  b.breakdown = CollectFiles(b_ids, state::kBreakdownMaxContents);
  EXPECT_EQ(a.breakdown.content_shift, 0u);
  EXPECT_EQ(b.breakdown.content_shift, 0u);
  state::Merge(a, b);

  std::vector<uint64_t> all = a_ids;
  all.insert(all.end(), b_ids.begin(), b_ids.end());
  const state::BreakdownState whole = CollectFiles(all, state::kBreakdownMaxContents);
  EXPECT_EQ(whole.content_shift, 1u);
  EXPECT_EQ(a.breakdown.content_shift, whole.content_shift);
  EXPECT_EQ(KeptContents(a.breakdown), KeptContents(whole));

  // A third part, at shift 0, into the merge at shift 1: only what shift 1 keeps of it comes
  // in, as one collector of all three keeps.
  std::vector<uint64_t> c_ids;
  for (uint64_t i = 2 * part; i < 2 * part + 5000; ++i) c_ids.push_back(i);
  state::ScanState c;
  c.breakdown = CollectFiles(c_ids, state::kBreakdownMaxContents);
  EXPECT_EQ(c.breakdown.content_shift, 0u);
  state::Merge(a, c);
  all.insert(all.end(), c_ids.begin(), c_ids.end());
  const state::BreakdownState three = CollectFiles(all, state::kBreakdownMaxContents);
  EXPECT_EQ(a.breakdown.content_shift, three.content_shift);
  EXPECT_EQ(KeptContents(a.breakdown), KeptContents(three));
}

TEST(BreakdownSampleTest, SampledContentsStandForTheirShareOfTheDuplicates) {
  // 300,000 distinct contents, every third in two copies: 100,000 duplicate files of 128K.
  state::BreakdownState bd;
  for (uint64_t i = 0; i < 300000; ++i) bd.contents[ContentOf(i)] = i % 3 == 0 ? 2 : 1;
  bd.contents[ContentOf(300000, kImage)] = 2;  // one disk image and its copy: counted once
  state::SettleContentSample(&bd, 20000);
  ASSERT_EQ(bd.content_shift, 4u);  // 300,000 / 16 = 18,750 kept
  ScanResult result;
  finish::FinishBreakdowns(bd, {}, {}, {}, {128 * 1024}, {}, 0, &result);
  ASSERT_EQ(result.dedup_sources.size(), 1u);
  const DedupSources& d = result.dedup_sources[0];
  EXPECT_EQ(d.sample_modulus, 16u);
  // The kept duplicates times 16: within 5% of the 100,000 (about 6,250 kept, +-1.3% each way
  // at one standard deviation).
  EXPECT_NEAR(double(d.duplicate_files), 100001.0, 5000.0);
  EXPECT_EQ(d.duplicate_file_bytes, (d.duplicate_files - 1) * 128 * 1024 + kImage);
  EXPECT_EQ((d.duplicate_files - 1) % 16, 0u);
}

}  // namespace
}  // namespace zsim::pipeline
