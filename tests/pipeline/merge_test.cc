// Merge(scan(A), scan(B)) against scan(A, B): a tree split into parts by directory, with
// duplicate blocks and whole files across the parts, gives the same figures merged as scanned
// at once, in any merge order, exact, with sampled codecs and under --sample 1/M; the bundled
// tiny sample split by its top directories too. States that cannot merge are refused.

#include "engine/state/merge.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

using testing::ExpectSameFigures;

// Three parts: a/ and b/ share a file and some records, c/ holds a copy of a file of a/ under
// another name, small files, a sparse-ish image and an empty file.
void BuildParts(testing::TempDir& dir) {
  const std::vector<uint8_t> shared = testing::GenerateBlock(400 * 1024, 0.7, 1);
  dir.WriteFile("a/shared.bin", shared);
  dir.WriteFile("b/x/shared.copy", shared);
  for (int i = 0; i < 5; ++i) {
    dir.WriteFile("a/" + testing::NumberedName("f", i) + ".txt",
                  testing::GenerateBlock(60000 + i * 30000, 0.6, 10 + i));
    dir.WriteFile("b/" + testing::NumberedName("s", i) + ".log",
                  testing::GenerateBlock(300 + i * 1100, 0.5, 20 + i));
  }
  // b/mixed.bin: the first 256K are a/f4.txt's first records (a duplicate of part of a file).
  std::vector<uint8_t> mixed = testing::GenerateBlock(180000, 0.6, 14);
  mixed.resize(262144 + 100000);
  const std::vector<uint8_t> tail = testing::Xorshift64Bytes(3, 100000);
  std::copy(tail.begin(), tail.end(), mixed.begin() + 262144);
  dir.WriteFile("b/mixed.bin", mixed);
  dir.WriteFile("c/renamed.txt", testing::GenerateBlock(60000, 0.6, 10));
  std::vector<uint8_t> zeros(600 * 1024, 0);
  for (size_t i = 0; i < 3000; ++i) zeros[300 * 1024 + i] = static_cast<uint8_t>(i * 7);
  dir.WriteFile("c/zeros.img", zeros);
  dir.WriteFile("c/empty", {});
}

ScanOptions OptionsFor(std::vector<std::string> paths) {
  ScanOptions o;
  o.paths = std::move(paths);
  o.recordsizes = {8 * 1024, 128 * 1024};
  o.threads = 2;
  return o;
}

// Scans each part alone, merges the states in the parts' order and reports the merge.
ScanResult MergedParts(const std::vector<std::string>& parts, const ScanOptions& base,
                       io::FileSystem* fs) {
  std::optional<state::ScanState> merged;
  for (const std::string& p : parts) {
    ScanOptions o = base;
    o.paths = {p};
    Result<state::ScanState> s = ScanToState(o, fs);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return {};
    if (!merged) {
      merged = std::move(*s);
      continue;
    }
    const Status ok = state::CheckMergeable(*merged, *s);
    EXPECT_TRUE(ok.ok()) << ok.ToString();
    state::Merge(*merged, *s);
  }
  return finish::Finish(*merged, finish::ReportOptionsOf(merged->options));
}

void ExpectMergeEqualsScan(const std::vector<std::string>& parts, ScanOptions base) {
  auto fs = io::PosixFileSystem();
  base.paths = parts;
  Result<ScanResult> whole = RunScan(base, fs.get());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ExpectSameFigures(MergedParts(parts, base, fs.get()), *whole);
}

std::vector<std::string> Parts(const testing::TempDir& dir,
                               std::initializer_list<const char*> names) {
  std::vector<std::string> v;
  for (const char* n : names) v.push_back((dir.path() / n).string());
  return v;
}

TEST(MergeTest, MergedPartsEqualOneScanExact) {
  testing::TempDir dir;
  BuildParts(dir);
  ScanOptions o = OptionsFor({});
  o.exact = true;
  ExpectMergeEqualsScan(Parts(dir, {"a", "b", "c"}), o);
  // The test means something only if dedup crosses the parts: no part alone has a duplicate
  // whole file, the three together have two (b/x/shared.copy, c/renamed.txt), and block dedup.
  auto fs = io::PosixFileSystem();
  for (const std::string& p : Parts(dir, {"a", "b", "c"})) {
    Result<ScanResult> alone = RunScan(OptionsFor({p}), fs.get());
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ(alone->dedup_sources.duplicate_files, 0u) << p;
  }
  o.paths = Parts(dir, {"a", "b", "c"});
  Result<ScanResult> whole = RunScan(o, fs.get());
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->dedup_sources.duplicate_files, 2u);
  EXPECT_GT(whole->results[0].dedup.duplicate_entries, 40u);
}

TEST(MergeTest, MergedPartsEqualOneScanWithSampledCodecsInAnyOrder) {
  testing::TempDir dir;
  BuildParts(dir);
  const ScanOptions o = OptionsFor({});
  ExpectMergeEqualsScan(Parts(dir, {"a", "b", "c"}), o);
  ExpectMergeEqualsScan(Parts(dir, {"c", "a", "b"}), o);
  ExpectMergeEqualsScan(Parts(dir, {"b", "c"}), o);
}

TEST(MergeTest, MergedPartsEqualOneScanUnderKeySampling) {
  testing::TempDir dir;
  BuildParts(dir);
  ScanOptions o = OptionsFor({});
  o.sample_modulus = 4;
  ExpectMergeEqualsScan(Parts(dir, {"a", "b", "c"}), o);
}

TEST(MergeTest, StatesOfTwoSamplingModuliMergeAtTheCoarser) {
  testing::TempDir dir;
  BuildParts(dir);
  auto fs = io::PosixFileSystem();
  ScanOptions fine = OptionsFor({(dir.path() / "a").string()});
  fine.sample_modulus = 2;
  ScanOptions coarse = OptionsFor({(dir.path() / "b").string()});
  coarse.sample_modulus = 8;
  Result<state::ScanState> a = ScanToState(fine, fs.get());
  Result<state::ScanState> b = ScanToState(coarse, fs.get());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(state::CheckMergeable(*a, *b).ok());
  state::Merge(*a, *b);
  ScanOptions both = coarse;
  both.paths = {(dir.path() / "a").string(), (dir.path() / "b").string()};
  Result<ScanResult> whole = RunScan(both, fs.get());
  ASSERT_TRUE(whole.ok());
  const ScanResult merged = finish::Finish(*a, finish::ReportOptionsOf(a->options));
  EXPECT_EQ(merged.results[0].dedup.sample_modulus, 8u);
  // The kept keys and their refcounts are those of the coarser sample: the tables agree.
  for (size_t i = 0; i < merged.results.size(); ++i) {
    EXPECT_EQ(merged.results[i].dedup.histogram, whole->results[i].dedup.histogram) << i;
    EXPECT_EQ(merged.results[i].lsize, whole->results[i].lsize) << i;
  }
}

TEST(MergeTest, TinySampleSplitByDirectoryMergesToTheWholeScan) {
  const std::filesystem::path tiny = testing::SampleDir("ZSIM_SAMPLE_TINY");
  if (tiny.empty()) GTEST_SKIP() << "the tiny sample is not built (ctest -R sample_tiny)";
  std::vector<std::string> parts;
  for (const auto& e : std::filesystem::directory_iterator(tiny)) {
    if (e.is_directory()) parts.push_back(e.path().string());
  }
  std::sort(parts.begin(), parts.end());
  ASSERT_GE(parts.size(), 3u);
  ExpectMergeEqualsScan(parts, OptionsFor({}));
  ScanOptions exact = OptionsFor({});
  exact.exact = true;
  exact.recordsizes = {4096, 1 << 20};
  ExpectMergeEqualsScan(parts, exact);
}

// A file reached from two states (a hard link across the trees, the same tree twice) cannot be
// counted once by a merge: Merge says how many there were, for states of one host only.
TEST(MergeTest, FilesInBothStatesOfOneHostAreCounted) {
  testing::TempDir dir;
  BuildParts(dir);
  std::filesystem::create_hard_link(dir.path() / "a" / "shared.bin", dir.path() / "c" / "link.bin");
  auto fs = io::PosixFileSystem();
  auto scan = [&](const char* part) {
    Result<state::ScanState> s = ScanToState(OptionsFor({(dir.path() / part).string()}), fs.get());
    EXPECT_TRUE(s.ok());
    return std::move(*s);
  };
  state::ScanState a = scan("a");
  EXPECT_FALSE(a.host.empty());
  EXPECT_EQ(a.file_ids.size(), a.input.files);
  EXPECT_EQ(state::Merge(a, scan("b")), 0u);  // disjoint trees
  EXPECT_EQ(state::Merge(a, scan("c")), 1u);  // c/link.bin is a/shared.bin
  state::ScanState again = scan("a");
  const uint64_t files_a = again.input.files;
  EXPECT_EQ(state::Merge(a, again), files_a);  // the same tree twice
  // Device and inode numbers of another host say nothing.
  state::ScanState other = scan("a");
  other.host = "another-host";
  EXPECT_EQ(state::Merge(a, other), 0u);
}

TEST(MergeTest, StatesOfOtherSettingsAreRefused) {
  testing::TempDir dir;
  BuildParts(dir);
  auto fs = io::PosixFileSystem();
  ScanOptions o = OptionsFor({(dir.path() / "a").string()});
  Result<state::ScanState> base = ScanToState(o, fs.get());
  ASSERT_TRUE(base.ok());
  auto refused = [&](ScanOptions other, const std::string& word) {
    Result<state::ScanState> s = ScanToState(other, fs.get());
    ASSERT_TRUE(s.ok());
    const Status st = state::CheckMergeable(*base, *s);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << word;
    EXPECT_NE(st.message().find(word), std::string::npos) << st.message();
  };
  ScanOptions x = o;
  x.recordsizes = {8 * 1024};
  refused(x, "recordsizes");
  x = o;
  x.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
  refused(x, "compression");
  x = o;
  x.checksum = ChecksumKind::kSha256;
  refused(x, "checksum");
  x = o;
  x.ashift = 13;
  refused(x, "rounding");
  x = o;
  x.profile = Profile::kZfs22;
  refused(x, "profile");
}

}  // namespace
}  // namespace zsim::pipeline
