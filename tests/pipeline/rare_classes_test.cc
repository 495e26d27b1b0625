// The rare-class census (estimate/anchor_class.h, state/rare_classes.h): a codec that regresses
// on lz4 also runs on every block of an lz4 class of at most 16 blocks, whatever the thread
// count, in each part of a merge, and the estimate takes those blocks exactly.

#include "engine/state/rare_classes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/base/mix.h"
#include "engine/estimate/anchor_class.h"
#include "engine/estimate/codec_budget.h"
#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/state/merge.h"
#include "engine/state/state_file.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline::rare_classes_test {  // named: the module's test files build together
namespace {

// --- RareClasses over a table made by hand ---------------------------------------------------

// A table of 4K blocks with lz4 (exact, inline) and gzip-1 (sampled, side) codes.
struct HandTable {
  HandTable()
      : table({ddt::SettingStorage{ddt::SettingStorage::Kind::kInline, true},
               ddt::SettingStorage{ddt::SettingStorage::Kind::kSide, true}}) {
    options.compressions = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kGzip, 1}};
    options.recordsizes = {4096};
    sampling.sampled = {false, true};
    sampling.anchors = {-1, 0};
    sampling.adaptive = true;
    sampling.planned_bytes = 100 * 4096;  // the cap far away: the census runs
    sampling.rare_class_blocks = estimate::kRareClassBlocks;
  }
  // Adds `n` entries whose lz4 output is `lz4_units` 512-byte units; gzip-1's code where `coded`.
  std::vector<ddt::Fingerprint> Add(int n, uint64_t lz4_units, bool coded) {
    std::vector<ddt::Fingerprint> keys;
    for (int i = 0; i < n; ++i, ++seed) {
      const ddt::Fingerprint key{Mix64(seed * 2 + 1), Mix64(seed * 2 + 2) & 0xFF000000FFFFFFFFull};
      EXPECT_EQ(table.Insert(key, 4096), ddt::InsertOutcome::kFirst);
      const ddt::PsizeCode codes[2] = {ddt::EncodeRawLength(lz4_units * 512 - 10),
                                       coded ? ddt::EncodeRawLength(300) : ddt::kPendingCode};
      table.SetCodes(key, codes);
      keys.push_back(key);
    }
    return keys;
  }
  ddt::DedupTable table;
  ScanOptions options;
  state::SamplingState sampling;
  uint64_t seed = 0;
};

TEST(RareClassesTest, ClassesOfAtMost16EntriesAllCodedAreACensus) {
  HandTable t;
  ASSERT_EQ(estimate::kRareClassBlocks, 16u);
  const std::vector<ddt::Fingerprint> rare = t.Add(16, 1, true);    // class 4: rare, whole
  const std::vector<ddt::Fingerprint> common = t.Add(17, 3, true);  // class 12: common
  const std::vector<ddt::Fingerprint> other = t.Add(5, 7, true);    // class 28: rare, whole
  const state::RareClasses classes(t.table, t.sampling, t.options, 0);
  EXPECT_TRUE(classes.complete());
  EXPECT_EQ(classes.census_entries(1), 21u);
  EXPECT_EQ(classes.census_entries(0), 0u);  // lz4 is exact: nothing to take whole
  for (const auto& k : rare) EXPECT_TRUE(classes.Census(1, k));
  for (const auto& k : other) EXPECT_TRUE(classes.Census(1, k));
  for (const auto& k : common) EXPECT_FALSE(classes.Census(1, k));
  EXPECT_FALSE(classes.Census(0, rare[0]));
}

TEST(RareClassesTest, ARareClassMissingACodeIsNoCensusAndIncomplete) {
  // What a --since rescan's kept entries can hold: their old scan saw the class larger.
  HandTable t;
  const std::vector<ddt::Fingerprint> whole = t.Add(10, 1, true);
  const std::vector<ddt::Fingerprint> coded = t.Add(9, 5, true);
  t.Add(1, 5, false);
  const state::RareClasses classes(t.table, t.sampling, t.options, 0);
  EXPECT_FALSE(classes.complete());
  EXPECT_EQ(classes.census_entries(1), 10u);
  EXPECT_TRUE(classes.Census(1, whole[0]));
  EXPECT_FALSE(classes.Census(1, coded[0]));
}

TEST(RareClassesTest, NoCensusWhereTheScanRanNone) {
  HandTable t;
  t.Add(3, 1, true);
  t.sampling.rare_class_blocks = 0;  // a state of format 15 or older, or a merge with one
  EXPECT_EQ(state::RareClasses(t.table, t.sampling, t.options, 0).census_entries(1), 0u);
  t.sampling.rare_class_blocks = estimate::kRareClassBlocks;
  t.sampling.anchors = {-1, -1};  // gzip-1 on lsize (no lz4 in the list)
  EXPECT_EQ(state::RareClasses(t.table, t.sampling, t.options, 0).census_entries(1), 0u);
  t.sampling.anchors = {-1, 0};
  EXPECT_EQ(state::RareClasses(t.table, t.sampling, t.options, 0).census_entries(1), 3u);
}

TEST(RareClassesTest, NoCensusWhereItWouldCostMoreThanAQuarterOfTheCapsShare) {
  // The default codecs at 128K: each codec on lz4 has its census (gzip-6's costs at most 528 x
  // 128K at 40 MB/s nominal, 1.7 s), on a small tree and on 1 TiB, where the cap binds and
  // shares 28 s among the costliest; lz4 (exact) has none.
  ScanOptions o;
  o.compressions = {{CompressionAlgorithm::kLz4, 0},
                    {CompressionAlgorithm::kZstd, 3},
                    {CompressionAlgorithm::kGzip, 6},
                    {CompressionAlgorithm::kZle, 0}};
  o.recordsizes = {128 * 1024};
  const std::vector<bool> sampled = estimate::PlanSampling(o.compressions, false).sampled;
  for (uint64_t bytes : {uint64_t{64} << 20, uint64_t{1} << 40}) {
    EXPECT_EQ(estimate::RareClassCensus(o, sampled, estimate::Plan{bytes}),
              (std::vector<bool>{false, true, true, true}))
        << bytes;
  }
  // zstd-19 at 1M: its census alone would be 528 MiB at 6 MB/s nominal, about 90 s: never;
  // gzip-6's (14 s) neither, more than a quarter of the whole cap.
  o.compressions.push_back({CompressionAlgorithm::kZstd, 19});
  o.recordsizes = {1024 * 1024};
  const std::vector<bool> with19 = estimate::PlanSampling(o.compressions, false).sampled;
  EXPECT_EQ(estimate::RareClassCensus(o, with19, estimate::Plan{uint64_t{64} << 20}),
            (std::vector<bool>{false, true, false, true, false}));
  // On 3 GiB the cap binds: gzip-6, zstd-3 and zstd-19 share what zle leaves of 28 s (under
  // 9 s each), and zstd-3's census at 1M (528 MiB at 250 MB/s, 2.2 s) is then more than a
  // quarter of that.
  EXPECT_EQ(estimate::RareClassCensus(o, with19, estimate::Plan{uint64_t{3} << 30}),
            (std::vector<bool>{false, false, false, true, false}));
  // Never back on as the tree grows.
  for (const std::vector<uint64_t>& rows :
       {std::vector<uint64_t>{16 * 1024, 128 * 1024, 1024 * 1024}, std::vector<uint64_t>{4096}}) {
    o.recordsizes = rows;
    std::vector<bool> previous = estimate::RareClassCensus(o, with19, estimate::Plan{0});
    for (uint64_t bytes = 1 << 20; bytes < (uint64_t{1} << 44); bytes += bytes / 7 + 12345) {
      const std::vector<bool> now = estimate::RareClassCensus(o, with19, estimate::Plan{bytes});
      for (size_t i = 0; i < now.size(); ++i) ASSERT_FALSE(now[i] && !previous[i]) << bytes;
      previous = now;
    }
  }
}

// --- Scans --------------------------------------------------------------------------------------

constexpr size_t kRecord = 4096;
constexpr int kRecords = 8192;  // 32 MiB, every record unique

// Record i, then zeros to 4K. Most hold 1,300 random bytes (lz4 and gzip-1 store 3 units: lz4's
// class 12); records 5, 555, ... (15 of them) 4,096 letters of ACGT (lz4 6 units, class 24;
// gzip-1 3: its Huffman codes see 2 bits a letter, lz4 only the repeats); records 7, 807, ...
// (11) 2,200 random bytes (5 units for both, class 20); records 9, 209, ... (41) 3,300 random
// bytes (7 units for both, class 28: more than 16 blocks). gzip-1's psize equals lz4's on every
// block but the 15 ACGT ones, which the regression on lz4 cannot predict from the others: a
// sample holding k of them expands k times its level's 2 blocks (never 15), the census counts
// them exactly.
std::vector<uint8_t> Record(int i) {
  const uint64_t seed = static_cast<uint64_t>(i) * 131 + 17;
  std::vector<uint8_t> r;
  if (i % 550 == 5) {
    r = testing::Xorshift64Bytes(seed, kRecord);
    for (uint8_t& c : r) c = "ACGT"[c & 3];
  } else if (i % 800 == 7) {
    r = testing::Xorshift64Bytes(seed, 2200);
  } else if (i % 200 == 9) {
    r = testing::Xorshift64Bytes(seed, 3300);
  } else {
    r = testing::Xorshift64Bytes(seed, 1300);
  }
  r.resize(kRecord, 0);
  return r;
}

void WriteTree(testing::TempDir& tmp, const std::string& prefix, int first, int last, int files) {
  testing::WriteRecordFiles(tmp, prefix, first, last, files, Record);
}

ScanOptions Options(std::vector<std::string> paths, bool exact, int threads) {
  ScanOptions o;
  o.paths = std::move(paths);
  o.compressions = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kGzip, 1}};
  o.recordsizes = {kRecord};
  o.ashift = 9;
  o.exact = exact;
  o.threads = threads;
  return o;
}

// A saved state's bytes before its run section (the last frame before the end frame), which
// hold the data and the options only (docs/state.md).
std::string BytesBeforeTheRun(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (int k = 3; k >= 0; --k) v = v << 8 | uint8_t(b[at + size_t(k)]);
    return v;
  };
  size_t at = testing::StateFramesBegin(reinterpret_cast<const uint8_t*>(b.data()), b.size());
  size_t last = 0;
  while (at + 4 <= b.size() && u32(at) != 0) {
    last = at;
    at += 4 + u32(at) + 8;
  }
  return b.substr(0, last);
}

TEST(RareClassesScanTest, EveryBlockOfARareClassIsCodedWhateverTheThreads) {
  // The budget of 8,192 planned blocks codes half of them (level 1).
  ASSERT_EQ(estimate::BudgetLevel(kRecords), 1);
  testing::TempDir tmp;
  WriteTree(tmp, "f", 0, kRecords, 8);
  tmp.WriteFile("zeros", std::vector<uint8_t>(16 * kRecord, 0));  // all-zero blocks: holes
  auto fs = io::PosixFileSystem();
  const ScanOptions exact_options = Options({tmp.path().string()}, true, 2);
  Result<ScanResult> exact = RunScan(exact_options, fs.get());
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  std::vector<ScanResult> sampled;
  std::vector<std::string> saved;
  std::vector<int> levels;
  testing::TempDir states;  // not in the tree scanned
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    Result<state::ScanState> st =
        ScanToState(Options({tmp.path().string()}, false, threads), fs.get());
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(st->sampling.rare_class_blocks, estimate::kRareClassBlocks);
    // The pilot's, above the budget's 1: gzip-1's psize follows lz4's on nearly every block,
    // and 8,192 unique blocks leave estimate::kPilotMinSample at level 3.
    EXPECT_EQ(st->sampling.LevelOf(0, 1), 3);
    levels.push_back(st->sampling.LevelOf(0, 1));
    // The 15 + 11 blocks of the two rare classes, each coded although most are below the
    // level; not the 41 of the larger class.
    const state::RareClasses classes(*st->rows[0].table, st->sampling, st->options, 0);
    EXPECT_TRUE(classes.complete());
    EXPECT_EQ(classes.census_entries(1), 26u);
    sampled.push_back(finish::Finish(*st, finish::ReportOptionsOf(st->options)));
    // Saved, the state reports the same figures, and its bytes are the data's: the blocks of
    // the larger classes each thread happened to code first are not in them.
    const std::string path = (states.path() / testing::NumberedName("state", threads)).string();
    ASSERT_TRUE(state::SaveState(*st, path).ok());
    Result<state::ScanState> loaded = state::LoadState(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    testing::ExpectSameFigures(finish::Finish(*loaded, finish::ReportOptionsOf(loaded->options)),
                               sampled.back());
    saved.push_back(BytesBeforeTheRun(path));
    ASSERT_GT(saved.back().size(), 1000u);
    // Without the census (as a state of format 15 reads) the same state's estimate is off: the
    // ACGT blocks are then a sample like any other.
    state::ScanState without = std::move(*st);
    without.sampling.rare_class_blocks = 0;
    const ScanResult r = finish::Finish(without, finish::ReportOptionsOf(without.options));
    const double off = double(r.results[1].psize) / double(exact->results[1].psize) - 1;
    EXPECT_GT(std::abs(off), 0.0005) << r.results[1].psize;
  }
  EXPECT_EQ(levels[0], levels[1]);
  EXPECT_EQ(levels[2], levels[1]);
  testing::ExpectSameFigures(sampled[0], sampled[1]);
  testing::ExpectSameFigures(sampled[2], sampled[1]);
  EXPECT_TRUE(saved[0] == saved[1]);
  EXPECT_TRUE(saved[2] == saved[1]);
  const SettingResult& s = sampled[1].results[1];
  const SettingResult& e = exact->results[1];
  ASSERT_FALSE(s.exact);
  ASSERT_TRUE(s.ci95.has_value());
  EXPECT_LE((*s.ci95)[0], e.compressratio + 0.01);
  EXPECT_GE((*s.ci95)[1], e.compressratio - 0.01);
  EXPECT_LT(double(s.codec_bytes), 0.6 * double(e.codec_bytes));
  // With the census every block the regression cannot predict is counted: the estimate is the
  // exact psize (the others lie on gzip-1 = lz4).
  EXPECT_NEAR(double(s.psize) / double(e.psize), 1.0, 1e-6) << s.psize << " vs " << e.psize;
}

TEST(RareClassesScanTest, MergedPartsGiveTheCensusOfBoth) {
  // Each part meets some of each rare class (and more than 16 of the class of 41), so each
  // codes them all by its own count; the union's census is what both parts coded. Not every
  // figure of the scan of both: each part's pilot raised its level by its own blocks
  // (estimate/pilot_level.h), and the merge keeps the higher; gzip-1's psize, counted exactly by
  // the census where the regression cannot predict it, is the same.
  testing::TempDir tmp;
  WriteTree(tmp, "a/f", 0, kRecords / 2, 4);
  WriteTree(tmp, "b/f", kRecords / 2, kRecords, 4);
  const std::string a = (tmp.path() / "a").string(), b = (tmp.path() / "b").string();
  auto fs = io::PosixFileSystem();
  Result<ScanResult> whole = RunScan(Options({a, b}, false, 2), fs.get());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  Result<state::ScanState> sa = ScanToState(Options({a}, false, 2), fs.get());
  Result<state::ScanState> sb = ScanToState(Options({b}, false, 1), fs.get());
  ASSERT_TRUE(sa.ok() && sb.ok());
  ASSERT_TRUE(state::CheckMergeable(*sa, *sb).ok());
  state::Merge(*sa, *sb);
  EXPECT_EQ(sa->sampling.rare_class_blocks, estimate::kRareClassBlocks);
  EXPECT_EQ(state::RareClasses(*sa->rows[0].table, sa->sampling, sa->options, 0).census_entries(1),
            26u);
  const ScanResult merged = finish::Finish(*sa, finish::ReportOptionsOf(sa->options));
  ASSERT_EQ(merged.results.size(), whole->results.size());
  for (size_t c = 0; c < merged.results.size(); ++c) {
    SCOPED_TRACE(c);
    EXPECT_NEAR(double(merged.results[c].psize) / double(whole->results[c].psize), 1.0, 1e-6);
    EXPECT_EQ(merged.results[c].lsize, whole->results[c].lsize);
    EXPECT_EQ(merged.results[c].dedup.unique_entries, whole->results[c].dedup.unique_entries);
  }
  // A part from a scan without the census (format 15) takes the merge's census away.
  Result<state::ScanState> sc = ScanToState(Options({b}, false, 1), fs.get());
  ASSERT_TRUE(sc.ok());
  sc->sampling.rare_class_blocks = 0;
  Result<state::ScanState> sd = ScanToState(Options({a}, false, 2), fs.get());
  ASSERT_TRUE(sd.ok());
  state::Merge(*sd, *sc);
  EXPECT_EQ(sd->sampling.rare_class_blocks, 0u);
}

}  // namespace
}  // namespace zsim::pipeline::rare_classes_test
