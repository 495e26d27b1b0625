// Fault injection through the FileSystem seam (tests/util/faulty_file_system.h): each case puts
// one faulty path beside the same good files and checks that the scan finishes, that the path is
// counted once, under the right reason, in input.errors, and that the good files' figures are
// exactly those of a scan of the good files alone. A result with errors and not partial is what
// the command turns into exit code 1 (engine/cli/messages.cc FinishMessages; the CLI cases in
// real_files_test.cc check the exit code itself).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "engine/pipeline/scan.h"
#include "tests/util/faulty_file_system.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

// The good files: compressible, random, a duplicate pair, an empty file.
void WriteGoodFiles(testing::TempDir& dir) {
  dir.WriteFile("good/text", testing::GenerateBlock(300 * K, 0.7, 1));
  dir.WriteFile("good/random", testing::Xorshift64Bytes(2, 200 * K));
  dir.WriteFile("good/copy1", testing::Xorshift64Bytes(3, 256 * K));
  dir.WriteFile("good/copy2", testing::Xorshift64Bytes(3, 256 * K));
  dir.WriteFile("good/empty", {});
}

ScanOptions Options(const std::filesystem::path& root, int threads = 2) {
  ScanOptions o;
  o.paths = {root.string()};
  o.compressions = {kLz4};
  o.threads = threads;
  return o;
}

// The figures that come from the data read (every one is a sum over the dedup tables).
void ExpectSameDataFigures(const ScanResult& got, const ScanResult& want) {
  ASSERT_EQ(got.results.size(), want.results.size());
  for (size_t i = 0; i < got.results.size(); ++i) {
    const SettingResult& g = got.results[i];
    const SettingResult& w = want.results[i];
    EXPECT_EQ(g.lsize, w.lsize);
    EXPECT_EQ(g.psize, w.psize);
    EXPECT_EQ(g.blocks.data, w.blocks.data);
    EXPECT_EQ(g.blocks.embedded, w.blocks.embedded);
    EXPECT_EQ(g.dedup.unique_entries, w.dedup.unique_entries);
    EXPECT_EQ(g.dedup.duplicate_entries, w.dedup.duplicate_entries);
    EXPECT_EQ(g.dedup.histogram, w.dedup.histogram);
    EXPECT_EQ(g.dedup.total, w.dedup.total);
  }
}

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteGoodFiles(good_);
    WriteGoodFiles(tmp_);
    Result<ScanResult> base = pipeline::RunScan(Options(good_.path()), posix_.get());
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    baseline_ = std::move(*base);
    ASSERT_TRUE(baseline_.input.errors.empty());
    ASSERT_EQ(baseline_.input.files, 5u);
  }

  // Scans tmp_ through fs_; checks the one error and the unchanged figures; returns the result.
  // `size_known`: the walk can stat the bad path (its error then carries its size).
  ScanResult ScanExpectingOneError(const std::filesystem::path& bad, const std::string& reason,
                                   uint64_t files, int threads = 2, bool size_known = true) {
    // Its size as the walk will list it (the faults strike at the open or the reads).
    std::error_code ec;
    const bool is_file = std::filesystem::is_regular_file(bad, ec);
    const uint64_t listed = is_file ? std::filesystem::file_size(bad, ec) : 0;
    Result<ScanResult> r = pipeline::RunScan(Options(tmp_.path(), threads), &fs_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    EXPECT_FALSE(r->partial);
    EXPECT_EQ(r->input.files, files);
    // A file that could not be read is not in `files` (issue 18); the logical bytes hold what
    // of it the figures hold, and its error the rest: the summary never reads an unread byte as
    // a hole, and never counts one the tables lack.
    EXPECT_LE(r->input.bytes_read, r->input.bytes_logical);
    if (files == baseline_.input.files && !r->input.errors.empty()) {
      const PathError& e = r->input.errors[0];
      EXPECT_EQ(r->input.bytes_logical, baseline_.input.bytes_logical + e.bytes_in_figures);
      // A file's size is known from the walk, unless the walk could not stat it.
      if (is_file && size_known) {
        EXPECT_EQ(e.bytes + e.bytes_in_figures, listed) << e.error;
      }
    }
    EXPECT_EQ(r->input.errors.size(), 1u);
    if (!r->input.errors.empty()) {
      EXPECT_EQ(r->input.errors[0].path, bad.string());
      // The reason is the first word of the error: "<reason>: <what>: <strerror>".
      EXPECT_EQ(r->input.errors[0].error.substr(0, reason.size() + 1), reason + ":")
          << r->input.errors[0].error;
    }
    return std::move(*r);
  }

  testing::TempDir good_, tmp_;
  std::shared_ptr<io::FileSystem> posix_ = io::PosixFileSystem();
  testing::FaultyFileSystem fs_;
  ScanResult baseline_;
};

TEST_F(FaultTest, OpenFailingWithEaccesIsPermissionDeniedOnceForEveryChunk) {
  // 20 MiB: three 8 MiB chunks, each of which opens the file and fails.
  const auto bad = tmp_.WriteFile("bad/locked", testing::Xorshift64Bytes(10, 20 * M));
  fs_.FailOpen(bad.string(), EACCES);
  const ScanResult r = ScanExpectingOneError(bad, "permission_denied", 5);
  ExpectSameDataFigures(r, baseline_);
  EXPECT_EQ(fs_.opens(bad.string()), 1u);  // one open for all its chunks
}

TEST_F(FaultTest, OpenFailingWithEpermIsPermissionDenied) {
  const auto bad = tmp_.WriteFile("bad/immutable", testing::Xorshift64Bytes(11, 64 * K));
  fs_.FailOpen(bad.string(), EPERM);
  ExpectSameDataFigures(ScanExpectingOneError(bad, "permission_denied", 5), baseline_);
}

TEST_F(FaultTest, ReadFailingWithEioAtByteNIsAnIoError) {
  const auto bad = tmp_.WriteFile("bad/failing-disk", testing::Xorshift64Bytes(12, 1 * M));
  fs_.FailReadAt(bad.string(), 300 * K + 17, EIO);
  ExpectSameDataFigures(ScanExpectingOneError(bad, "io_error", 5), baseline_);
}

TEST_F(FaultTest, ReadFailingWithEnomemIsOutOfMemory) {
  const auto bad = tmp_.WriteFile("bad/enomem", testing::Xorshift64Bytes(13, 64 * K));
  fs_.FailReadAt(bad.string(), 0, ENOMEM);
  ExpectSameDataFigures(ScanExpectingOneError(bad, "out_of_memory", 5), baseline_);
}

TEST_F(FaultTest, AllocationFailureWhileProcessingIsACountedErrorNotACrash) {
  // std::bad_alloc thrown inside the parallel stage: what a buffer or codec allocation failure
  // looks like to the pipeline.
  const auto bad = tmp_.WriteFile("bad/bad-alloc", testing::Xorshift64Bytes(14, 512 * K));
  fs_.ThrowBadAllocAt(bad.string(), 0);
  ExpectSameDataFigures(ScanExpectingOneError(bad, "out_of_memory", 5), baseline_);
}

TEST_F(FaultTest, ShortReadsAreNotErrorsAndGiveTheSameFigures) {
  const auto odd = tmp_.WriteFile("good/odd", testing::GenerateBlock(3 * M + 5, 0.5, 15));
  good_.WriteFile("good/odd", testing::GenerateBlock(3 * M + 5, 0.5, 15));
  Result<ScanResult> want = pipeline::RunScan(Options(good_.path()), posix_.get());
  ASSERT_TRUE(want.ok());
  fs_.ShortReads(odd.string(), 4093);  // never a whole record at once
  Result<ScanResult> got = pipeline::RunScan(Options(tmp_.path()), &fs_);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->input.errors.empty());
  EXPECT_EQ(got->input.bytes_read, want->input.bytes_read);
  ExpectSameDataFigures(*got, *want);
}

TEST_F(FaultTest, FileVanishingBetweenWalkAndReadIsNotFound) {
  const auto bad = tmp_.WriteFile("bad/tmpfile", testing::Xorshift64Bytes(16, 64 * K));
  fs_.Vanish(bad.string());
  ExpectSameDataFigures(ScanExpectingOneError(bad, "not_found", 5), baseline_);
  EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST_F(FaultTest, FileShrinkingWhileReadIsChanged) {
  // Opened at 1 MiB, truncated to 100K by the time the first read runs: EOF comes early.
  const auto bad = tmp_.WriteFile("bad/shrinking", testing::Xorshift64Bytes(17, 1 * M));
  fs_.TruncateAtRead(bad.string(), 0, 100 * K);
  ExpectSameDataFigures(ScanExpectingOneError(bad, "changed_while_read", 5), baseline_);
}

// A file of several chunks cut short after it was opened: the chunks past its new end were never
// read, and are neither holes nor in the figures (SEEK_DATA past the end answered "only a hole
// follows", and they were counted as holes: a 30 MiB file cut to 10 MiB showed all 30 MiB "in
// the figures" and 20 MiB of holes). What it read before its end stays in the figures, as for
// any file read in part.
TEST_F(FaultTest, FileCutShortAfterItsOpenHasNoHolesPastItsNewEnd) {
  for (const int threads : {1, 2}) {
    const auto bad = tmp_.WriteFile("bad/cut", testing::Xorshift64Bytes(19, 40 * M));
    fs_.TruncateAfterOpen(bad.string(), 10 * M);
    Result<ScanResult> r = pipeline::RunScan(Options(tmp_.path(), threads), &fs_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->input.errors.size(), 1u) << threads;
    const PathError& e = r->input.errors[0];
    EXPECT_EQ(e.error.substr(0, 19), "changed_while_read:") << e.error;
    EXPECT_LE(e.bytes_in_figures, 10 * M) << e.error;
    EXPECT_EQ(e.bytes + e.bytes_in_figures, 40 * M) << e.error;
    for (size_t i = 0; i < r->results.size(); ++i) {
      EXPECT_EQ(r->results[i].blocks.holes, baseline_.results[i].blocks.holes) << threads;
      EXPECT_EQ(r->results[i].lsize - baseline_.results[i].lsize, e.bytes_in_figures) << threads;
    }
  }
}

TEST_F(FaultTest, FileWhoseSizeLiesIsChanged) {
  // A /proc-like file: opened, it claims more bytes than a read returns.
  const auto bad = tmp_.WriteFile("bad/liar", testing::Xorshift64Bytes(18, 4 * K));
  fs_.ReportSize(bad.string(), 4 * K);         // the open says what the walk said...
  fs_.TruncateAtRead(bad.string(), 0, 1 * K);  // ...the read finds 1K
  ExpectSameDataFigures(ScanExpectingOneError(bad, "changed_while_read", 5), baseline_);
}

TEST_F(FaultTest, FileGrowingWhileReadIsChanged) {
  // Two chunks; the file grows during the first chunk's read: the probe past the listed size
  // after the last chunk, and the stat of the open file then, see it. One thread: the second
  // chunk is read after the first.
  const std::vector<uint8_t> data = testing::Xorshift64Bytes(19, 8 * M + 100 * K);
  const auto bad = tmp_.WriteFile("bad/growing.log", data);
  fs_.AppendAtRead(bad.string(), 0, 4096);
  const ScanResult r = ScanExpectingOneError(bad, "changed_while_read", 5, /*threads=*/1);
  // The first chunk is in the figures, the last (which met the growth) is what was not read.
  ASSERT_EQ(r.input.errors.size(), 1u);
  EXPECT_EQ(r.input.errors[0].bytes, 100 * K);
  EXPECT_EQ(r.input.bytes_logical, baseline_.input.bytes_logical + 8 * M);
  // The first chunk was read before the change was seen: the figures are those of the good files
  // plus that chunk's 64 records.
  good_.WriteFile("bad/first-chunk",
                  std::vector<uint8_t>(data.begin(), data.begin() + static_cast<long>(8 * M)));
  Result<ScanResult> want = pipeline::RunScan(Options(good_.path(), 1), posix_.get());
  ASSERT_TRUE(want.ok());
  ExpectSameDataFigures(r, *want);
}

// A file that grows while its only (or last) chunk is read: the pipeline probes one byte past the
// listed size after the last read, so the growth is reported, not silently modelled short.
TEST_F(FaultTest, FileGrowingDuringItsLastChunkIsChanged) {
  const auto bad = tmp_.WriteFile("bad/growing-small.log", testing::Xorshift64Bytes(20, 64 * K));
  fs_.AppendAtRead(bad.string(), 0, 4096);
  ScanExpectingOneError(bad, "changed_while_read", 5);
}

// A file replaced by another of the same size (a rename over it) while its chunks are read: all
// its chunks come from the one descriptor opened first, never half from each file, and the
// file is reported (its inode's change time moved as its name went), not modelled as a mix.
TEST_F(FaultTest, FileReplacedByRenameWhileReadIsReportedNotMixed) {
  const auto bad = tmp_.WriteFile("bad/replaced.img", testing::Xorshift64Bytes(40, 20 * M));
  fs_.ReplaceAtRead(bad.string(), 9 * M, testing::Xorshift64Bytes(41, 20 * M));
  const ScanResult r = ScanExpectingOneError(bad, "changed_while_read", 5, /*threads=*/1);
  EXPECT_EQ(fs_.opens(bad.string()), 1u);  // one descriptor for the three chunks
  ASSERT_EQ(r.input.errors.size(), 1u);
  EXPECT_NE(r.input.errors[0].error.find("changed while read"), std::string::npos)
      << r.input.errors[0].error;
}

// Rewritten in place (same size, new bytes) while read: reported, not a silent mix.
TEST_F(FaultTest, FileRewrittenInPlaceWhileReadIsChanged) {
  const auto bad = tmp_.WriteFile("bad/database.db", testing::Xorshift64Bytes(42, 1 * M));
  fs_.RewriteAtRead(bad.string(), 0);
  ExpectSameDataFigures(ScanExpectingOneError(bad, "changed_while_read", 5), baseline_);
}

// Listed as a file, replaced by a symlink to another file before it is opened: the link is not
// followed (no --follow-symlinks), so the other file's data is never counted.
TEST_F(FaultTest, FileReplacedBySymlinkIsNotFollowed) {
  const auto bad = tmp_.WriteFile("bad/swapped", testing::Xorshift64Bytes(43, 256 * K));
  testing::TempDir elsewhere;
  const auto target = elsewhere.WriteFile("secret", testing::Xorshift64Bytes(44, 256 * K));
  fs_.SymlinkAtOpen(bad.string(), target.string());
  ExpectSameDataFigures(ScanExpectingOneError(bad, "io_error", 5), baseline_);
}

// --follow-symlinks follows a symlink to a directory (listing it through the link), once, and
// a root that is a symlink to a directory is scanned without it.
TEST_F(FaultTest, SymlinksToDirectoriesAreFollowedWhenAskedAndAsRoots) {
  testing::TempDir outside;
  WriteGoodFiles(outside);
  ASSERT_EQ(::symlink((outside.path() / "good").c_str(), (tmp_.path() / "linked").c_str()), 0);
  ScanOptions o = Options(tmp_.path());
  o.follow_symlinks = true;
  Result<ScanResult> r = pipeline::RunScan(o, &fs_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->input.errors.empty()) << r->input.errors[0].path << r->input.errors[0].error;
  EXPECT_EQ(r->input.files, 10u);  // tmp_/good and outside/good through the link
  EXPECT_EQ(r->input.bytes_logical, 2 * baseline_.input.bytes_logical);
  // Without --follow-symlinks the link is skipped; named as the root, it is the tree.
  Result<ScanResult> unfollowed = pipeline::RunScan(Options(tmp_.path()), &fs_);
  ASSERT_TRUE(unfollowed.ok());
  EXPECT_EQ(unfollowed->input.files, 5u);
  EXPECT_EQ(unfollowed->input.skipped.at("symlink"), 1u);
  Result<ScanResult> root = pipeline::RunScan(Options(tmp_.path() / "linked"), &fs_);
  ASSERT_TRUE(root.ok());
  EXPECT_TRUE(root->input.errors.empty());
  EXPECT_EQ(root->input.files, 5u);
  ExpectSameDataFigures(*root, baseline_);
  // Two links to one directory: followed once, the second route an overlap.
  ASSERT_EQ(::symlink((outside.path() / "good").c_str(), (tmp_.path() / "again").c_str()), 0);
  Result<ScanResult> twice = pipeline::RunScan(o, &fs_);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->input.files, 10u);
  EXPECT_EQ(twice->input.skipped.at("overlap"), 1u);
}

TEST_F(FaultTest, DirectoryUnreadableMidWalkIsCountedOnceWithoutItsFiles) {
  tmp_.WriteFile("bad/sub/a", testing::Xorshift64Bytes(21, 64 * K));
  tmp_.WriteFile("bad/sub/b", testing::Xorshift64Bytes(22, 64 * K));
  const auto sub = tmp_.path() / "bad" / "sub";
  fs_.FailList(sub.string(), EACCES);
  const ScanResult r = ScanExpectingOneError(sub, "permission_denied", 5);
  ExpectSameDataFigures(r, baseline_);
}

TEST_F(FaultTest, DirectoryListingFailingWithEioIsAnIoError) {
  tmp_.WriteFile("bad/sub/a", testing::Xorshift64Bytes(23, 64 * K));
  const auto sub = tmp_.path() / "bad" / "sub";
  fs_.FailList(sub.string(), EIO);
  ExpectSameDataFigures(ScanExpectingOneError(sub, "io_error", 5), baseline_);
}

TEST_F(FaultTest, StatFailingWithEioIsAnIoError) {
  const auto bad = tmp_.WriteFile("bad/unstatable", testing::Xorshift64Bytes(24, 64 * K));
  fs_.FailStat(bad.string(), EIO);
  ExpectSameDataFigures(ScanExpectingOneError(bad, "io_error", 5, 2, /*size_known=*/false),
                        baseline_);
}

TEST_F(FaultTest, SymlinkLoopsWithFollowSymlinksEndAndAreReportedOnce) {
  ASSERT_EQ(::symlink(".", (tmp_.path() / "good" / "self").c_str()), 0);
  ASSERT_EQ(::symlink("..", (tmp_.path() / "good" / "parent").c_str()), 0);
  ScanOptions o = Options(tmp_.path());
  o.follow_symlinks = true;
  Result<ScanResult> r = pipeline::RunScan(o, &fs_);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->partial);
  ASSERT_EQ(r->input.errors.size(), 2u);
  EXPECT_EQ(r->input.errors[0].path, (tmp_.path() / "good" / "parent").string());
  EXPECT_EQ(r->input.errors[1].path, (tmp_.path() / "good" / "self").string());
  for (const PathError& e : r->input.errors) {
    EXPECT_EQ(e.error.rfind("symlink_loop: ", 0), 0u) << e.error;  // its own kind, no io_error
  }
  EXPECT_EQ(r->input.files, 5u);
  ExpectSameDataFigures(*r, baseline_);
}

TEST_F(FaultTest, EveryFaultAtOnceStillFinishesWithEachCountedOnce) {
  const auto eacces = tmp_.WriteFile("bad/1-eacces", testing::Xorshift64Bytes(30, 20 * M));
  const auto eio = tmp_.WriteFile("bad/2-eio", testing::Xorshift64Bytes(31, 1 * M));
  const auto gone = tmp_.WriteFile("bad/3-gone", testing::Xorshift64Bytes(32, 64 * K));
  const auto shrink = tmp_.WriteFile("bad/4-shrink", testing::Xorshift64Bytes(33, 1 * M));
  const auto oom = tmp_.WriteFile("bad/5-oom", testing::Xorshift64Bytes(34, 64 * K));
  tmp_.WriteFile("bad/6-dir/x", testing::Xorshift64Bytes(35, 64 * K));
  const auto dir = tmp_.path() / "bad" / "6-dir";
  fs_.FailOpen(eacces.string(), EACCES);
  fs_.FailReadAt(eio.string(), 0, EIO);
  fs_.Vanish(gone.string());
  fs_.TruncateAtRead(shrink.string(), 0, 10);
  fs_.ThrowBadAllocAt(oom.string(), 0);
  fs_.FailList(dir.string(), EACCES);
  Result<ScanResult> r = pipeline::RunScan(Options(tmp_.path(), 4), &fs_);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->partial);
  ASSERT_EQ(r->input.errors.size(), 6u);
  const std::vector<std::pair<std::filesystem::path, std::string>> want = {
      {eacces, "permission_denied"},  {eio, "io_error"},      {gone, "not_found"},
      {shrink, "changed_while_read"}, {oom, "out_of_memory"}, {dir, "permission_denied"}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r->input.errors[i].path, want[i].first.string());
    EXPECT_EQ(r->input.errors[i].error.rfind(want[i].second + ":", 0), 0u)
        << r->input.errors[i].error;
  }
  EXPECT_EQ(r->input.files, 5u);  // the five good files; the failed ones are errors only
  EXPECT_EQ(r->input.bytes_logical, baseline_.input.bytes_logical);
  ExpectSameDataFigures(*r, baseline_);
}

// Ctrl-C must stop feeding even inside one large file (a multi-terabyte image would otherwise
// be read to its end first: 35 s for a 1 TiB sparse file here, hours for real data). NextChunk
// checks ScanControl.cancel before every chunk.
TEST(CancelTest, CancelStopsFeedingInsideALargeFile) {
  testing::TempDir tmp;
  const auto image = tmp.path() / "image.raw";
  std::filesystem::resize_file(tmp.WriteFile("image.raw", {}), 256 * M);  // 32 chunks, holes
  std::atomic<bool> cancel{false};
  pipeline::ScanControl control;
  control.cancel = &cancel;
  control.progress_interval_seconds = 0;
  control.progress = [&](const pipeline::Progress&) { cancel = true; };
  testing::FaultyFileSystem fs;
  Result<ScanResult> r = pipeline::RunScan(Options(tmp.path(), 1), &fs, control);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->partial);
  EXPECT_LT(fs.opens(image.string()), 32u);  // chunks fed after the cancel are never opened
}

// On a disk where every read takes seconds (or never returns), the partial result must come
// within a second of the cancel: reads still under way are abandoned and their files listed.
TEST(CancelTest, PartialResultComesWithinASecondWhenEveryReadTakesSeconds) {
  testing::TempDir tmp;
  // Outlives the test: abandoned reads finish on the scan's threads (WaitForAllScans below).
  static testing::FaultyFileSystem* fs = new testing::FaultyFileSystem;
  std::vector<std::string> slow;
  for (int i = 0; i < 6; ++i) {
    slow.push_back(tmp.WriteFile(testing::NumberedName("slow", i),
                                 testing::Xorshift64Bytes(50 + static_cast<uint64_t>(i), 64 * K))
                       .string());
    fs->SlowReads(slow.back(), 4.0);
  }
  std::atomic<bool> cancel{false};
  pipeline::ScanControl control;
  control.cancel = &cancel;
  Result<ScanResult> r = Status::Internal("not run");
  std::chrono::steady_clock::time_point cancelled_at, returned_at;
  std::thread scan([&] {
    r = pipeline::RunScan(Options(tmp.path(), 2), fs, control);
    returned_at = std::chrono::steady_clock::now();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // both workers inside a read
  cancelled_at = std::chrono::steady_clock::now();
  cancel = true;
  scan.join();
  const double seconds = std::chrono::duration<double>(returned_at - cancelled_at).count();
  // 1.5 s rather than the 1 s asked for: margin for a loaded test machine; a read takes 4 s.
  EXPECT_LT(seconds, 1.5);
  RecordProperty("seconds_from_cancel_to_result", std::to_string(seconds));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->partial);
  EXPECT_EQ(r->results[0].lsize, 0u);  // no read finished: nothing modelled
  ASSERT_GE(r->input.errors.size(), 1u);
  for (const PathError& e : r->input.errors) {
    EXPECT_NE(std::find(slow.begin(), slow.end(), e.path), slow.end()) << e.path;
    EXPECT_EQ(e.error.rfind("cancelled: abandoned", 0), 0u) << e.error;
  }
  pipeline::WaitForAllScans();  // the abandoned reads return, the scan's threads end
}

TEST(MemoryBudgetTest, TableThatWouldOutgrowMaxMemoryIsSampledNotKilled) {
  // 56 MiB in 512-byte records: 114688 references, 98304 distinct blocks, of which 16384 are
  // duplicated (dup is a copy of f0). At 28 bytes an entry the whole table needs ~2.7 MiB: a
  // 1 MiB budget must make the scan sample the key space instead of growing past it.
  testing::TempDir tmp;
  for (int i = 0; i < 6; ++i) {
    std::string name = "f";
    name += std::to_string(i);
    tmp.WriteFile(name, testing::Xorshift64Bytes(100 + static_cast<uint64_t>(i), 8 * M));
  }
  tmp.WriteFile("dup", testing::Xorshift64Bytes(100, 8 * M));
  ScanOptions o = Options(tmp.path());
  o.recordsizes = {512};
  o.compressions = {Compression{CompressionAlgorithm::kOff, 0}};
  auto fs = io::PosixFileSystem();
  Result<ScanResult> exact = pipeline::RunScan(o, fs.get());
  ASSERT_TRUE(exact.ok());
  const DedupResult& e = exact->results[0].dedup;
  ASSERT_EQ(e.sample_modulus, 1u);
  ASSERT_EQ(e.unique_entries, 81920u);
  ASSERT_EQ(e.duplicate_entries, 16384u);
  o.max_memory_bytes = 1 * M;
  Result<ScanResult> bounded = pipeline::RunScan(o, fs.get());
  ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
  EXPECT_TRUE(bounded->input.errors.empty());
  EXPECT_FALSE(bounded->partial);
  const DedupResult& d = bounded->results[0].dedup;
  EXPECT_GT(d.sample_modulus, 1u);
  // The scaled counts estimate the true ones.
  EXPECT_NEAR(static_cast<double>(d.unique_entries) / 81920.0, 1.0, 0.2);
  EXPECT_NEAR(static_cast<double>(d.duplicate_entries) / 16384.0, 1.0, 0.3);
}

}  // namespace
}  // namespace zsim
