// The pilot through the C++ API (estimate/pilot_level.h): where the cost probe's records show a
// sampled codec's psize following its anchor's closely, the scan codes it at a higher level than
// the budget's, the same level for any thread count, with an interval that still holds the
// exact value; where they show a wide spread, the budget's level stays; a merge keeps the higher
// level of its parts.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/pilot_level.h"
#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/state/merge.h"
#include "engine/state/state_file.h"
#include "tests/util/forwarding_file_system.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline::pilot_scan_test {  // named: the module's test files build together
namespace {

constexpr size_t kRecord = 4096;
constexpr int kRecords = 8192;  // 32 MiB: the budget's level 1 leaves 4,096 blocks

// Record i: `random(i)` random bytes, `letters(i)` letters of ACGT, then zeros to 4K.
template <typename Random, typename Letters>
void WriteTree(testing::TempDir& tmp, const std::string& prefix, int first, int last, Random random,
               Letters letters) {
  testing::WriteRecordFiles(tmp, prefix, first, last, 8, [&](int i) {
    std::vector<uint8_t> r = testing::Xorshift64Bytes(uint64_t(i) * 977 + 3, random(i));
    std::vector<uint8_t> acgt = testing::Xorshift64Bytes(uint64_t(i) * 131 + 7, letters(i));
    for (uint8_t& c : acgt) c = "ACGT"[c & 3];
    r.insert(r.end(), acgt.begin(), acgt.end());
    r.resize(kRecord, 0);
    return r;
  });
}

// Alike: 1,300 random bytes in each (lz4 and gzip-1 store 3 sectors of 512 on every block).
void WriteAlike(testing::TempDir& tmp, const std::string& prefix, int first, int last) {
  WriteTree(
      tmp, prefix, first, last, [](int) { return size_t{1300}; }, [](int) { return 0; });
}
// Spread: 200 to 1,699 random bytes and 0 to 1,999 letters, drawn apart: lz4 stores the letters
// nearly whole, gzip-1 in a quarter (2 bits a letter), so lz4's psize cannot tell gzip-1's.
void WriteSpread(testing::TempDir& tmp, const std::string& prefix, int first, int last) {
  WriteTree(
      tmp, prefix, first, last,
      [](int i) { return size_t{200} + size_t(int64_t{i} * 104729 % 1500); },
      [](int i) { return size_t(int64_t{i} * 7919 % 2000); });
}

ScanOptions Options(std::vector<std::string> paths, bool exact, int threads) {
  ScanOptions o;
  o.paths = std::move(paths);
  o.compressions = {kLz4, kGzip1};
  o.recordsizes = {kRecord};
  o.ashift = 9;
  o.exact = exact;
  o.threads = threads;
  return o;
}

Result<state::ScanState> ScanState(const std::vector<std::string>& paths, int threads) {
  auto fs = io::PosixFileSystem();
  return ScanToState(Options(paths, false, threads), fs.get());
}

ScanResult ExactScan(const std::vector<std::string>& paths) {
  auto fs = io::PosixFileSystem();
  Result<ScanResult> r = RunScan(Options(paths, true, 2), fs.get());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ScanResult{};
}

void ExpectHolds(const SettingResult& s, const SettingResult& e) {
  ASSERT_FALSE(s.exact);
  ASSERT_TRUE(s.ci95.has_value());
  EXPECT_LE((*s.ci95)[0], e.compressratio + 0.01);
  EXPECT_GE((*s.ci95)[1], e.compressratio - 0.01);
  EXPECT_NEAR(double(s.psize) / double(e.psize), 1.0, 0.005);
}

TEST(PilotScanTest, AlikeBlocksAreCodedAtThePilotsLevelWhateverTheThreads) {
  ASSERT_EQ(estimate::BudgetLevel(kRecords), 1);
  ASSERT_TRUE(estimate::PilotWanted(kRecords, 1));
  testing::TempDir tmp;
  WriteAlike(tmp, "f", 0, kRecords);
  const std::string root = tmp.path().string();
  const ScanResult exact = ExactScan({root});
  std::vector<ScanResult> results;
  testing::TempDir states;
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(threads);
    Result<state::ScanState> st = ScanState({root}, threads);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    // No spread: the floor decides. 8,192 unique blocks leave kPilotMinSample at level 3.
    EXPECT_EQ(st->sampling.LevelOf(0, 1), 3);
    results.push_back(finish::Finish(*st, finish::ReportOptionsOf(st->options)));
    ExpectHolds(results.back().results[1], exact.results[1]);
    // Saved and loaded, the same figures: the level is in the state.
    const std::string path = (states.path() / testing::NumberedName("s", threads)).string();
    ASSERT_TRUE(state::SaveState(*st, path).ok());
    Result<state::ScanState> loaded = state::LoadState(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_EQ(loaded->sampling.LevelOf(0, 1), 3);
    testing::ExpectSameFigures(finish::Finish(*loaded, finish::ReportOptionsOf(loaded->options)),
                               results.back());
  }
  testing::ExpectSameFigures(results[0], results[1]);
  testing::ExpectSameFigures(results[2], results[1]);
}

// Two recordsizes: the 8K row's blocks (two alike records each) are piloted too, by the blocks
// that hold the probe's 4K records, read again in 8K. 4,096 unique 8K blocks leave
// kPilotMinSample at level 2.
TEST(PilotScanTest, ARowOfLargerBlocksIsPilotedToo) {
  testing::TempDir tmp;
  WriteAlike(tmp, "f", 0, kRecords);
  ScanOptions options = Options({tmp.path().string()}, true, 2);
  options.recordsizes = {kRecord, 2 * kRecord};
  auto fs = io::PosixFileSystem();
  Result<ScanResult> exact = RunScan(options, fs.get());
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  options.exact = false;
  std::vector<ScanResult> results;
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    options.threads = threads;
    Result<state::ScanState> st = ScanToState(options, fs.get());
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(st->sampling.LevelOf(0, 1), 3);
    EXPECT_EQ(st->sampling.LevelOf(1, 1), 2);
    results.push_back(finish::Finish(*st, finish::ReportOptionsOf(st->options)));
    ASSERT_EQ(results.back().results.size(), 4u);
    ASSERT_EQ(results.back().results[3].recordsize, 2 * kRecord);
    ExpectHolds(results.back().results[1], exact->results[1]);
    ExpectHolds(results.back().results[3], exact->results[3]);
  }
  testing::ExpectSameFigures(results[0], results[1]);
}

TEST(PilotScanTest, ASpreadKeepsTheBudgetsLevel) {
  testing::TempDir tmp;
  WriteSpread(tmp, "f", 0, kRecords);
  const std::string root = tmp.path().string();
  const ScanResult exact = ExactScan({root});
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    Result<state::ScanState> st = ScanState({root}, threads);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(st->sampling.LevelOf(0, 1), 1);
    const ScanResult r = finish::Finish(*st, finish::ReportOptionsOf(st->options));
    ExpectHolds(r.results[1], exact.results[1]);
  }
}

// Parts whose pilots differ (one alike, one spread): the merge keeps the higher level, which the
// spread part did not code below; its figures hold the exact value of both, and the merged
// interval is honest about the part coded at the budget's level only.
TEST(PilotScanTest, AMergeKeepsTheHigherLevelOfItsParts) {
  testing::TempDir tmp;
  WriteAlike(tmp, "a/f", 0, kRecords);
  WriteSpread(tmp, "b/f", kRecords, 2 * kRecords);
  const std::string a = (tmp.path() / "a").string(), b = (tmp.path() / "b").string();
  Result<state::ScanState> sa = ScanState({a}, 2);
  Result<state::ScanState> sb = ScanState({b}, 2);
  ASSERT_TRUE(sa.ok() && sb.ok());
  ASSERT_EQ(sa->sampling.LevelOf(0, 1), 3);
  ASSERT_EQ(sb->sampling.LevelOf(0, 1), 1);
  ASSERT_TRUE(state::CheckMergeable(*sa, *sb).ok());
  state::Merge(*sa, *sb);
  EXPECT_EQ(sa->sampling.LevelOf(0, 1), 3);
  const ScanResult merged = finish::Finish(*sa, finish::ReportOptionsOf(sa->options));
  ExpectHolds(merged.results[1], ExactScan({a, b}).results[1]);
}

// --since across a change of the pilot's level. The level is a draw of the tree's records, so
// a rescan can ask for another level than its base's. Either way the level and the figures are a
// full scan's of the tree as it is now. The base is saved and loaded, as `zsim scan --since`
// takes it: a saved state keeps no codes below its levels (state_write.cc KeepsSideCode), so a
// lower level is never covered and everything is read again (since.h CodesCover).
struct SinceRun {
  int base_level = 0, since_level = 0, full_level = 0;
  SinceSummary summary;
  ScanResult since, full;
};

using Writer = void (*)(testing::TempDir&, const std::string&, int, int);

// Copies file f (of eight, 1,024 records each) of records [first, first + kRecords) written by
// `write` into `tmp`.
void CopyFiles(Writer write, int first, int from, int to, testing::TempDir& tmp) {
  testing::TempDir other;
  write(other, "f", first, first + kRecords);
  for (int f = from; f < to; ++f) {
    const std::string name = testing::NumberedName("f", f);
    tmp.WriteFile(name, testing::ReadFileBytes(other.path() / name));
  }
}

// The base scanned with file 0 written by `kept` and files 1-7 by `before`; the rescan after
// files 1-7 were rewritten by `after` (records the base never had), file 0 kept.
SinceRun RescanAfter(Writer kept, Writer before, Writer after) {
  testing::TempDir tmp;
  CopyFiles(kept, 0, 0, 1, tmp);
  CopyFiles(before, kRecords, 1, 8, tmp);
  // Stamps older than the base's start, so that its records vouch for the kept file.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto fs = io::PosixFileSystem();
  const ScanOptions options = Options({tmp.path().string()}, false, 2);
  ScanControl control;
  control.record_files = true;
  SinceRun run;
  Result<state::ScanState> base = ScanToState(options, fs.get(), control);
  EXPECT_TRUE(base.ok()) << base.status().ToString();
  if (!base.ok()) return run;
  run.base_level = base->sampling.LevelOf(0, 1);
  testing::TempDir states;
  const std::string saved = (states.path() / "base").string();
  EXPECT_TRUE(state::SaveState(*base, saved).ok());
  Result<state::ScanState> loaded = state::LoadState(saved);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return run;
  CopyFiles(after, 2 * kRecords, 1, 8, tmp);
  Result<state::ScanState> since =
      ScanSince(options, std::move(*loaded), fs.get(), control, &run.summary);
  Result<state::ScanState> full = ScanToState(options, fs.get(), control);
  EXPECT_TRUE(since.ok() && full.ok());
  if (!since.ok() || !full.ok()) return run;
  run.since_level = since->sampling.LevelOf(0, 1);
  run.full_level = full->sampling.LevelOf(0, 1);
  run.since = finish::Finish(*since, finish::ReportOptionsOf(since->options));
  run.full = finish::Finish(*full, finish::ReportOptionsOf(full->options));
  // What this run read is its own.
  run.since.input.bytes_read = run.full.input.bytes_read = 0;
  return run;
}

// A spread tree whose files but one become alike: the pilot asks for more than the base's
// level, which the base's codes cover (the kept file's blocks are alike too: no rare class
// would want more of them), so only the seven files are read.
TEST(PilotScanTest, ARescanWhosePilotAsksForMoreKeepsTheBase) {
  const SinceRun run = RescanAfter(WriteAlike, WriteSpread, WriteAlike);
  EXPECT_EQ(run.base_level, 1);
  ASSERT_GT(run.full_level, run.base_level);
  EXPECT_EQ(run.since_level, run.full_level);
  EXPECT_FALSE(run.summary.full_rescan);
  EXPECT_EQ(run.summary.kept, 1u);
  EXPECT_EQ(run.summary.read, 7u);
  testing::ExpectSameFigures(run.since, run.full);
}

// An alike tree whose files but one spread out: the pilot asks for less than the base's level,
// whose saved state has no codes below it: the rescan reads all eight files again.
TEST(PilotScanTest, ARescanWhosePilotAsksForLessReadsEverythingAgain) {
  const SinceRun run = RescanAfter(WriteAlike, WriteAlike, WriteSpread);
  EXPECT_EQ(run.base_level, 3);
  ASSERT_LT(run.full_level, run.base_level);
  EXPECT_EQ(run.since_level, run.full_level);
  EXPECT_TRUE(run.summary.full_rescan);
  EXPECT_EQ(run.summary.read, 8u);
  testing::ExpectSameFigures(run.since, run.full);
}

// A file system that holds back the pilot's answer: the probe reads each of its records once
// (4K reads) and the pilot reads its records again; a second 4K read of a record waits until
// every chunk of the scan is done (ChunkDone, from ScanControl::chunk_done), or, held, until
// Release(). So the pilot answers only after the reading, where the scan waits for it.
class PilotGate : public testing::ForwardingFileSystem {
 public:
  explicit PilotGate(int chunks) : chunks_(chunks) {}
  void Hold() { held_ = true; }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
    cv_.notify_all();
  }
  void ChunkDone() {
    std::lock_guard<std::mutex> lock(mu_);
    ++chunks_done_;
    cv_.notify_all();
  }
  // Whether a second read found the gate shut and waited.
  bool PilotWaited() {
    std::lock_guard<std::mutex> lock(mu_);
    return waited_;
  }
  // Every chunk is done and a second read waits at the gate: the scan waits for the pilot.
  bool ScanWaitsForThePilot() {
    std::lock_guard<std::mutex> lock(mu_);
    return chunks_done_ >= chunks_ && waiting_ > 0;
  }

  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    Result<std::unique_ptr<io::File>> f = ForwardingFileSystem::Open(path, follow);
    if (!f.ok()) return f;
    return std::unique_ptr<io::File>(new Gated(std::move(*f), this, path));
  }

 private:
  class Gated : public testing::ForwardingFile {
   public:
    Gated(std::unique_ptr<io::File> f, PilotGate* gate, std::string path)
        : ForwardingFile(std::move(f)), gate_(gate), path_(std::move(path)) {}
    Result<size_t> ReadAt(uint64_t offset, MutableByteView dst) override {
      if (dst.size() == kRecord) gate_->BeforeRecordRead(path_, offset);
      return ForwardingFile::ReadAt(offset, dst);
    }

   private:
    PilotGate* gate_;
    std::string path_;
  };

  void BeforeRecordRead(const std::string& path, uint64_t offset) {
    std::unique_lock<std::mutex> lock(mu_);
    if (read_once_.insert({path, offset}).second) return;  // the probe's first read
    auto open = [&] { return !held_ && chunks_done_ >= chunks_; };
    if (open()) return;
    waited_ = true;
    ++waiting_;
    cv_.wait(lock, open);
    --waiting_;
  }

  const int chunks_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  bool waited_ = false;
  int chunks_done_ = 0;
  int waiting_ = 0;
  std::set<std::pair<std::string, uint64_t>> read_once_;
};

// The tree's files (WriteTree), of 4 MiB each: one chunk each.
constexpr int kFiles = 8;

// The pilot's answer after the reading, where the scan waits for it, gives the level and the
// figures of an answer during the reading (the blocks met before it are coded at the budget's
// level; the estimate never uses them).
TEST(PilotScanTest, AnAnswerAfterTheReadingGivesTheSameFigures) {
  testing::TempDir tmp;
  WriteAlike(tmp, "f", 0, kRecords);
  const ScanOptions options = Options({tmp.path().string()}, false, 2);
  auto posix = io::PosixFileSystem();
  Result<state::ScanState> during = ScanToState(options, posix.get());
  PilotGate gate(kFiles);
  ScanControl control;
  control.chunk_done = [&] { gate.ChunkDone(); };
  Result<state::ScanState> after = ScanToState(options, &gate, control);
  ASSERT_TRUE(during.ok() && after.ok());
  EXPECT_TRUE(gate.PilotWaited());
  EXPECT_EQ(during->sampling.LevelOf(0, 1), 3);
  EXPECT_EQ(after->sampling.LevelOf(0, 1), 3);
  testing::ExpectSameFigures(finish::Finish(*after, finish::ReportOptionsOf(options)),
                             finish::Finish(*during, finish::ReportOptionsOf(options)));
}

// Ctrl-C while the scan waits for the pilot after the reading: the scan ends partial, with the
// budget's level, and does not take the pilot's answer. The cancel comes once every chunk is
// done and the pilot waits at the gate, which opens 1 s later; the scan sees the cancel within
// its 10 ms poll and stops the probe, which then ends at its next record without levels (the
// scan's end joins it).
TEST(PilotScanTest, CancelWhileWaitingForThePilotEndsTheScanPartial) {
  testing::TempDir tmp;
  WriteAlike(tmp, "f", 0, kRecords);
  const ScanOptions options = Options({tmp.path().string()}, false, 2);
  PilotGate gate(kFiles);
  gate.Hold();
  std::atomic<bool> cancel{false};
  ScanControl control;
  control.cancel = &cancel;
  control.chunk_done = [&] { gate.ChunkDone(); };
  std::future<Result<state::ScanState>> scan =
      std::async(std::launch::async, [&] { return ScanToState(options, &gate, control); });
  while (!gate.ScanWaitsForThePilot()) {
    if (scan.wait_for(std::chrono::milliseconds(5)) == std::future_status::ready) break;
  }
  ASSERT_TRUE(gate.ScanWaitsForThePilot());
  cancel.store(true);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  gate.Release();
  Result<state::ScanState> st = scan.get();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_TRUE(st->partial);
  EXPECT_EQ(st->sampling.LevelOf(0, 1), 1);
  // Every byte was read before the cancel: the scan was waiting for the pilot only.
  EXPECT_EQ(st->input.bytes_read, uint64_t(kRecords) * kRecord);
}
}  // namespace
}  // namespace zsim::pipeline::pilot_scan_test
