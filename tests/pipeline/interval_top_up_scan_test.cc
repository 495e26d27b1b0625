// The interval top-up through the C++ API (estimate/interval_top_up.h): a sampled codec whose
// interval on the budget's sample is wider than +-0.5%, in a row small enough to be topped up, is
// coded on every unique block after the scan (exact, the --exact scan's figures); one whose
// sample meets the target keeps it. The same figures for any thread count, from a saved state,
// and from the merged states of two parts.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/state/merge.h"
#include "engine/state/state_file.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline::interval_top_up_scan_test {  // named: the module's test files build
                                                       // together
namespace {

constexpr size_t kRecord = 1024;
constexpr int kRecords = 24000;  // 23 MiB in 12 files

// 1 KiB records, each unique: random bytes, then 300 bytes of a repeated word, then zeros. Two
// records in three hold 300-347 random bytes, which lzjb stores in one 512-byte sector, the third
// 600-639, which it stores in two: psize spread so far that no level of lzjb's sample (level 2
// of 24,000 blocks, some 6,000) meets +-0.5%. zle stores every record in two sectors (it packs
// only the zeros): one psize, an interval of zero width.
void WriteTree(testing::TempDir& tmp, const std::string& prefix, int first, int records,
               int files) {
  testing::WriteRecordFiles(tmp, prefix, first, first + records, files, [](int i) {
    const size_t random = i % 3 == 0 ? size_t{600} + size_t(i % 40) : size_t{300} + size_t(i % 48);
    std::vector<uint8_t> r = testing::Xorshift64Bytes(static_cast<uint64_t>(i) * 31 + 5, random);
    for (size_t k = 0; k < 300; ++k) r.push_back(uint8_t("zsim"[k % 4]));
    r.resize(kRecord, 0);
    return r;
  });
}

ScanOptions Options(std::vector<std::string> paths, bool exact, int threads) {
  ScanOptions o;
  o.paths = std::move(paths);
  o.compressions = {{CompressionAlgorithm::kLzjb, 0}, {CompressionAlgorithm::kZle, 0}};
  o.recordsizes = {kRecord};
  o.ashift = 9;
  o.exact = exact;
  o.threads = threads;
  return o;
}

ScanControl Control(bool interval) {
  ScanControl control;
  control.interval_top_up = interval;
  return control;
}

ScanResult Scan(const std::vector<std::string>& paths, bool exact, int threads, bool interval) {
  auto fs = io::PosixFileSystem();
  Result<ScanResult> r = RunScan(Options(paths, exact, threads), fs.get(), Control(interval));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ScanResult{};
}

double HalfWidth(const SettingResult& s) {
  return ((*s.ci95)[1] - (*s.ci95)[0]) / 2 / s.compressratio;
}

TEST(IntervalTopUpScanTest, AWideCodecIsCodedWholeANarrowOneKeepsItsSample) {
  ASSERT_EQ(estimate::BudgetLevel(kRecords), 2);
  testing::TempDir tmp;
  WriteTree(tmp, "f", 0, kRecords, 12);
  const std::vector<std::string> paths = {tmp.path().string()};
  const ScanResult exact = Scan(paths, true, 2, true);
  const ScanResult budget = Scan(paths, false, 2, false);
  const ScanResult topped = Scan(paths, false, 2, true);
  ASSERT_EQ(budget.results.size(), 2u);
  ASSERT_EQ(topped.results.size(), 2u);

  // On the budget's sample alone: lzjb wider than the target, zle within it.
  ASSERT_FALSE(budget.results[0].exact);
  ASSERT_TRUE(budget.results[0].ci95.has_value());
  EXPECT_GT(HalfWidth(budget.results[0]), estimate::kTargetRelativeHalfWidth);
  ASSERT_TRUE(budget.results[1].ci95.has_value());
  EXPECT_LT(HalfWidth(budget.results[1]), estimate::kTargetRelativeHalfWidth);
  EXPECT_LT(budget.results[0].codec_bytes, exact.results[0].codec_bytes / 3);

  // Topped up: lzjb is the exact scan's, coded on every unique block once.
  const SettingResult& l = topped.results[0];
  EXPECT_TRUE(l.exact);
  EXPECT_FALSE(l.ci95.has_value());
  EXPECT_EQ(l.psize, exact.results[0].psize);
  EXPECT_EQ(l.asize, exact.results[0].asize);
  EXPECT_EQ(l.pool_alloc, exact.results[0].pool_alloc);
  EXPECT_EQ(l.codec_bytes, exact.results[0].codec_bytes);
  // zle keeps its sample, as without the interval top-up.
  const SettingResult& z = topped.results[1];
  EXPECT_FALSE(z.exact);
  EXPECT_EQ(z.psize, budget.results[1].psize);
  EXPECT_EQ(*z.ci95, *budget.results[1].ci95);
  // The report says the row was topped up, and what was read again: the blocks lzjb skipped,
  // at most the three quarters its level left (fewer where the first chunks, read before the
  // plan, were coded, or where the pilot foresaw the top-up and the scan coded every block
  // from its answer on: estimate/interval_top_up.h ForeseenWhole).
  ASSERT_EQ(topped.input.top_up.size(), 1u);
  EXPECT_TRUE(topped.input.top_up[0].topped);
  EXPECT_TRUE(topped.input.top_up[0].for_interval);  // not a row of few unique blocks
  EXPECT_LT(topped.input.top_up[0].blocks, uint64_t(kRecords) * 3 / 4 + 200);
  EXPECT_EQ(topped.input.top_up[0].bytes, topped.input.top_up[0].blocks * kRecord);
  EXPECT_TRUE(budget.input.top_up.empty());

  // The same figures for any thread count.
  for (int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    testing::ExpectSameFigures(Scan(paths, false, threads, true), topped);
  }

  // A saved state reports the same.
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> s = ScanToState(Options(paths, false, 2), fs.get());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->sampling.setting_levels.size(), 2u);
  EXPECT_EQ(s->sampling.setting_levels[0], 0);
  EXPECT_GE(s->sampling.setting_levels[1], 2);  // the budget's, or the pilot's above it
  testing::TempDir states;                      // not in the tree scanned
  const std::string path = (states.path() / "s.zsim").string();
  ASSERT_TRUE(state::SaveState(*s, path).ok());
  Result<state::ScanState> loaded = state::LoadState(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  testing::ExpectSameFigures(finish::Finish(*loaded, finish::ReportOptionsOf(loaded->options)),
                             topped);
}

// The pilot foresees the top-up (estimate/interval_top_up.h ForeseenWhole): where its points put
// a codec's budget sample at more than twice the target's width, the scan codes it on every block
// from the pilot's answer on, and the top-up reads again only the blocks met before it. Through
// RunScan, whose options are resolved as the command line's (--max-memory defaults to half the
// RAM): the foresight's condition wanted no --max-memory at all and never held in a real scan
// (database-large, lzjb alone: 18,467 blocks read again, every one lzjb skipped; now 900-1,050).
// 12,000 records of 4 KiB, half of them random (stored whole, 4096 bytes) and the others 400
// random bytes then zeros (one 512-byte sector): a spread twice the other tree's, lzjb's budget
// sample (level 1, some 6,000) near +-1.4%. The reading is throttled (--max-rate) so that the
// pilot, which reads ahead of it, answers well before its end; the figures are the same either
// way.
TEST(IntervalTopUpScanTest, ThePilotForeseesTheTopUpInAResolvedScan) {
  constexpr int kWide = 12000;
  constexpr size_t kWideRecord = 4096;
  ASSERT_EQ(estimate::BudgetLevel(kWide), 1);
  testing::TempDir tmp;
  testing::WriteRecordFiles(tmp, "w", 0, kWide, 12, [](int i) {
    // Which kind by a hash of i: the probe draws records by stride, and a stride of the
    // parity of i would see one kind only.
    const bool whole = ((static_cast<uint32_t>(i) * 2654435761u) >> 15) & 1;
    std::vector<uint8_t> r =
        testing::Xorshift64Bytes(static_cast<uint64_t>(i) * 17 + 3, whole ? kWideRecord : 400);
    r.resize(kWideRecord, 0);
    return r;
  });
  ScanOptions o = Options({tmp.path().string()}, false, 2);
  o.compressions = {{CompressionAlgorithm::kLzjb, 0}};
  o.recordsizes = {kWideRecord};
  o.max_read_bytes_per_second = 12 << 20;  // about 4 s for the 47 MiB
  auto fs = io::PosixFileSystem();
  Result<ScanResult> r = RunScan(o, fs.get(), Control(true));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->results[0].exact);
  ASSERT_EQ(r->input.top_up.size(), 1u);
  EXPECT_TRUE(r->input.top_up[0].topped);
  // lzjb skipped half the blocks at its budget's level 1: 6,000 read again without the
  // foresight; with it, those met before the pilot's answer (allowed: the first three quarters
  // of the reading, for a loaded machine).
  EXPECT_LT(r->input.top_up[0].blocks, uint64_t(kWide) * 3 / 8) << "the pilot did not foresee";
}

// A --since rescan of an unchanged tree from a base the interval top-up took whole: the base's
// codes cover every block, the rule takes lzjb whole again with nothing to read (the blocks
// below its level count whether or not a scan coded them), and the figures are the full scan's.
TEST(IntervalTopUpScanTest, ARescanSinceAnIntervalToppedBaseIsToppedAgain) {
  testing::TempDir tmp;
  WriteTree(tmp, "f", 0, kRecords, 12);
  // Stamps older than the base's start, so that its records vouch for the files.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::vector<std::string> paths = {tmp.path().string()};
  auto fs = io::PosixFileSystem();
  ScanControl control;
  control.record_files = true;
  Result<state::ScanState> base = ScanToState(Options(paths, false, 2), fs.get(), control);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  ASSERT_EQ(base->sampling.setting_levels[0], 0);
  SinceSummary summary;
  Result<state::ScanState> since =
      ScanSince(Options(paths, false, 2), std::move(*base), fs.get(), control, &summary);
  ASSERT_TRUE(since.ok()) << since.status().ToString();
  EXPECT_EQ(summary.read, 0u);
  EXPECT_FALSE(summary.full_rescan);
  EXPECT_EQ(since->sampling.setting_levels[0], 0);
  EXPECT_EQ(since->rows[0].top_up.blocks, 0u);
  const ScanResult rescan = finish::Finish(*since, finish::ReportOptionsOf(since->options));
  ASSERT_EQ(rescan.results.size(), 2u);
  EXPECT_TRUE(rescan.results[0].exact);
  const ScanResult full = Scan(paths, false, 2, true);
  for (size_t c = 0; c < 2; ++c) {
    SCOPED_TRACE(c);
    EXPECT_EQ(rescan.results[c].exact, full.results[c].exact);
    EXPECT_EQ(rescan.results[c].psize, full.results[c].psize);
    EXPECT_EQ(rescan.results[c].asize, full.results[c].asize);
  }
}

// Two parts each topped up (12,000 records: level 1 of their own plans, lzjb still wider than
// +-0.5%) merge into one scan of both (level 2 of the union's plan, topped up too): lzjb exact.
TEST(IntervalTopUpScanTest, TwoToppedPartsMergeIntoOneScanOfBoth) {
  testing::TempDir tmp;
  WriteTree(tmp, "a/f", 0, kRecords / 2, 6);
  WriteTree(tmp, "b/f", kRecords / 2, kRecords / 2, 6);
  const std::string a = (tmp.path() / "a").string(), b = (tmp.path() / "b").string();
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> sa = ScanToState(Options({a}, false, 2), fs.get());
  Result<state::ScanState> sb = ScanToState(Options({b}, false, 1), fs.get());
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(sa->sampling.setting_levels[0], 0);
  EXPECT_EQ(sb->sampling.setting_levels[0], 0);
  ASSERT_TRUE(state::CheckMergeable(*sa, *sb).ok());
  state::Merge(*sa, *sb);
  const ScanResult merged = finish::Finish(*sa, finish::ReportOptionsOf(sa->options));
  const ScanResult whole = Scan({a, b}, false, 2, true);
  testing::ExpectSameFigures(merged, whole);
  ASSERT_FALSE(merged.results.empty());
  EXPECT_TRUE(merged.results[0].exact);
  EXPECT_FALSE(merged.results[1].exact);
}

}  // namespace
}  // namespace zsim::pipeline::interval_top_up_scan_test
