// Merge(scan(A), scan(B)) against scan(A, B): a tree split into parts by directory, with
// duplicate blocks and whole files across the parts and files hard-linked across them, gives
// the same figures merged as scanned at once, in any merge order, exact, with sampled codecs and
// under --sample 1/M; the bundled tiny sample split by its top directories too (with links and a
// copy across the parts). Files in both states the links cannot match are counted and said;
// states that cannot merge are refused.

#include "engine/state/merge.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/state/since.h"
#include "engine/state/state_file.h"
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
    EXPECT_EQ(alone->dedup_sources[0].duplicate_files, 0u) << p;
  }
  o.paths = Parts(dir, {"a", "b", "c"});
  Result<ScanResult> whole = RunScan(o, fs.get());
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->dedup_sources[0].duplicate_files, 2u);
  EXPECT_GT(whole->results[0].dedup.duplicate_entries, 40u);
}

// A state of format < 14 knows whole-file contents and zero blocks for its first recordsize only
// (state::KeepFirstRowOnly gives a new one that form, as loading an old file does). Merged with a
// new state, both sides are taken to the first row: a copy spanning the two is still found (it
// was lost: the old content's key never met the new one's), and the form survives the file.
TEST(MergeTest, AStateOfTheFirstRowOnlyMergesWithANewOne) {
  testing::TempDir dir;
  BuildParts(dir);
  ScanOptions o = OptionsFor({});
  o.recordsizes = {16 * 1024, 128 * 1024};
  auto fs = io::PosixFileSystem();
  o.paths = Parts(dir, {"a"});
  Result<state::ScanState> a = ScanToState(o, fs.get());
  o.paths = Parts(dir, {"b"});
  Result<state::ScanState> b = ScanToState(o, fs.get());
  ASSERT_TRUE(a.ok() && b.ok());
  state::KeepFirstRowOnly(&a->breakdown);
  const std::string path = (dir.path() / "old.zstate").string();
  ASSERT_TRUE(state::SaveState(*a, path).ok());
  Result<state::ScanState> old = state::LoadState(path);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(old->breakdown.first_row_only);
  // New into old, and old into new.
  Result<state::ScanState> old_again = state::LoadState(path);
  ASSERT_TRUE(old_again.ok());
  Result<state::ScanState> b_again = ScanToState(o, fs.get());
  ASSERT_TRUE(b_again.ok());
  state::Merge(*old, *b);
  state::Merge(*b_again, *old_again);
  for (const state::ScanState* merged : {&*old, &*b_again}) {
    EXPECT_TRUE(merged->breakdown.first_row_only);
    const ScanResult r = finish::Finish(*merged, finish::ReportOptionsOf(merged->options));
    ASSERT_EQ(r.dedup_sources.size(), 2u);
    // a/shared.bin and b/x/shared.copy: one whole-file duplicate, at the first row's lsize.
    EXPECT_EQ(r.dedup_sources[0].duplicate_files, 1u);
    EXPECT_EQ(r.dedup_sources[1].duplicate_files, 1u);
    EXPECT_EQ(r.dedup_sources[1].duplicate_file_bytes, r.dedup_sources[0].duplicate_file_bytes);
  }
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

// Hard links across the parts of BuildParts: a/shared.bin also as c/link.bin; b/s1.log also as
// a/logs/s1.log and c/deep/er/s1.log (three names, three parts); a/f2.txt also as a/f2.again
// (a link inside one part). The files of the union scan count each once, under their smallest
// name, and the other names are `hard_link` skips.
void LinkAcrossParts(testing::TempDir& dir) {
  namespace fs = std::filesystem;
  const fs::path root = dir.path();
  fs::create_hard_link(root / "a" / "shared.bin", root / "c" / "link.bin");
  fs::create_directories(root / "a" / "logs");
  fs::create_directories(root / "c" / "deep" / "er");
  fs::create_hard_link(root / "b" / "s1.log", root / "a" / "logs" / "s1.log");
  fs::create_hard_link(root / "b" / "s1.log", root / "c" / "deep" / "er" / "s1.log");
  fs::create_hard_link(root / "a" / "f2.txt", root / "a" / "f2.again");
}

// Hard links across the parts count once, as one scan of the parts counts them: the merge
// equals the scan of the union, exact, with sampled codecs, at several recordsizes, under
// --sample 1/M, and in any order of the parts (the smallest name wins whichever part holds it).
TEST(MergeTest, FilesLinkedAcrossPartsCountOnce) {
  testing::TempDir dir;
  BuildParts(dir);
  LinkAcrossParts(dir);
  ScanOptions o = OptionsFor({});
  ExpectMergeEqualsScan(Parts(dir, {"a", "b", "c"}), o);
  ExpectMergeEqualsScan(Parts(dir, {"c", "b", "a"}), o);
  ExpectMergeEqualsScan(Parts(dir, {"b", "c"}), o);
  o.recordsizes = {4096, 16 * 1024, 1 << 20};
  ExpectMergeEqualsScan(Parts(dir, {"a", "b", "c"}), o);
  o.exact = true;
  ExpectMergeEqualsScan(Parts(dir, {"b", "a", "c"}), o);
  o = OptionsFor({});
  o.sample_modulus = 16;
  ExpectMergeEqualsScan(Parts(dir, {"a", "b", "c"}), o);
  ExpectMergeEqualsScan(Parts(dir, {"c", "a", "b"}), o);

  // The test means something only if the parts counted the linked files in each: the whole
  // counts fewer files and bytes than the parts together, and the merge found them.
  auto fs = io::PosixFileSystem();
  o = OptionsFor(Parts(dir, {"a", "b", "c"}));
  Result<ScanResult> whole = RunScan(o, fs.get());
  ASSERT_TRUE(whole.ok());
  uint64_t files = 0;
  std::optional<state::ScanState> merged;
  uint64_t linked = 0;
  for (const std::string& p : Parts(dir, {"a", "b", "c"})) {
    Result<state::ScanState> s = ScanToState(OptionsFor({p}), fs.get());
    ASSERT_TRUE(s.ok());
    files += s->input.files;
    if (!merged) {
      merged = std::move(*s);
      continue;
    }
    const state::MergeCounts counts = state::Merge(*merged, *s);
    EXPECT_EQ(counts.shared, 0u);
    EXPECT_EQ(counts.changed, 0u);
    linked += counts.linked;
  }
  EXPECT_EQ(linked, 3u);  // shared.bin once, s1.log twice
  EXPECT_EQ(files, whole->input.files + 3);
  EXPECT_EQ(whole->input.skipped.at("hard_link"), 4u);  // link.bin, two s1.log, f2.again
  // One link per file with several names, under the smallest name.
  ASSERT_EQ(merged->links.size(), 3u);
  std::vector<std::string> names;
  for (const state::LinkedFile& f : merged->links) names.push_back(f.path);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{(dir.path() / "a" / "f2.again").string(),
                                             (dir.path() / "a" / "logs" / "s1.log").string(),
                                             (dir.path() / "a" / "shared.bin").string()}));
  // Under --sample 1/16 what a linked file's sampled occurrences added is kept (and taken out).
  o = OptionsFor({(dir.path() / "c").string()});
  o.sample_modulus = 16;
  Result<state::ScanState> c = ScanToState(o, fs.get());
  ASSERT_TRUE(c.ok());
  size_t cells = 0;
  for (const state::LinkedFile& f : c->links) {
    for (const auto& row : f.occurrences) cells += row.size();
  }
  EXPECT_GT(cells, 0u);
}

// A file reached from two states that the links cannot match is counted in each, and Merge says
// how many: the same tree twice (names of one link), or states of another machine or boot.
TEST(MergeTest, FilesInBothStatesThatDoNotMatchAreCounted) {
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
  EXPECT_EQ(state::Merge(a, scan("b")).shared, 0u);   // disjoint trees
  state::MergeCounts c = state::Merge(a, scan("c"));  // c/link.bin is a/shared.bin
  EXPECT_EQ(c.shared, 0u);
  EXPECT_EQ(c.linked, 1u);
  state::ScanState again = scan("a");
  const uint64_t files_a = again.input.files;
  c = state::Merge(a, again);  // the same tree twice: only its linked file matches
  EXPECT_EQ(c.linked, 1u);
  EXPECT_EQ(c.shared, files_a - 1);
  // Another machine or boot: its file systems are others, device and inode numbers say nothing.
  state::ScanState other = scan("c");
  other.host = "another-host";
  for (state::LinkedFile& f : other.links) f.fs ^= 2;
  c = state::Merge(a, other);
  EXPECT_EQ(c.linked, 0u);
  EXPECT_EQ(c.shared, 0u);
  // The same file changed between the scans: counted in each, and said so.
  state::ScanState changed = scan("c");
  for (state::LinkedFile& f : changed.links) f.mtime_ns += 1;
  c = state::Merge(a, changed);
  EXPECT_EQ(c.linked, 0u);
  EXPECT_EQ(c.changed, 1u);
}

// The bundled tiny sample, copied, split by its top directories, with files hard-linked across
// the parts and a file copied into another part: the merge equals the scan of the whole.
TEST(MergeTest, TinySampleWithLinksAcrossPartsMergesToTheWholeScan) {
  const std::filesystem::path tiny = testing::SampleDir("ZSIM_SAMPLE_TINY");
  if (tiny.empty()) GTEST_SKIP() << "the tiny sample is not built (ctest -R sample_tiny)";
  namespace fs = std::filesystem;
  testing::TempDir dir;
  fs::copy(tiny, dir.path() / "t", fs::copy_options::recursive);
  std::vector<std::string> parts;
  for (const auto& e : fs::directory_iterator(dir.path() / "t")) {
    if (e.is_directory()) parts.push_back(e.path().string());
  }
  std::sort(parts.begin(), parts.end());
  ASSERT_GE(parts.size(), 3u);
  // The two largest files of each part get a name in the next part (and the first part's also
  // one in the part after), and the largest a copy there.
  int links = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    std::vector<std::pair<uintmax_t, fs::path>> files;
    for (const auto& e : fs::recursive_directory_iterator(parts[p])) {
      if (e.is_regular_file() && !e.is_symlink() && e.hard_link_count() == 1) {
        files.emplace_back(e.file_size(), e.path());
      }
    }
    std::sort(files.rbegin(), files.rend());
    for (size_t k = 0; k < files.size() && k < 2; ++k) {
      const fs::path next = fs::path(parts[(p + 1) % parts.size()]);
      fs::create_hard_link(files[k].second, next / ("linked" + std::to_string(links++)));
      if (p == 0)
        fs::create_hard_link(files[k].second, fs::path(parts[2]) / ("third" + std::to_string(k)));
      if (k == 0) fs::copy_file(files[k].second, next / ("copied" + std::to_string(p)));
    }
  }
  ASSERT_GE(links, 4);
  ExpectMergeEqualsScan(parts, OptionsFor({}));
  ScanOptions o = OptionsFor({});
  o.exact = true;
  o.recordsizes = {4096, 1 << 20};
  ExpectMergeEqualsScan(parts, o);
  o = OptionsFor({});
  o.sample_modulus = 16;
  ExpectMergeEqualsScan(parts, o);
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

// A state saved under an earlier sampling plan of the same options (the v23 default list sampled
// lzjb on lsize before lzjb anchored gzip-6 and zle) neither merges with a scan of the present
// plan nor serves as its --since base: its codes would be read as the other plan's.
TEST(MergeTest, AStateOfAnEarlierSamplingPlanIsRefused) {
  testing::TempDir dir;
  BuildParts(dir);
  auto fs = io::PosixFileSystem();
  ScanOptions o = OptionsFor({(dir.path() / "a").string()});
  o.profile = Profile::kV23;
  o.compressions = DefaultCompressions(Profile::kV23);  // off, gzip-6, lzjb, zle
  ScanControl records;                                  // as --save keeps them: a --since base
  records.record_files = true;
  Result<state::ScanState> now = ScanToState(o, fs.get(), records);
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  ASSERT_EQ(now->sampling.sampled, (std::vector<bool>{false, true, false, true}));
  ASSERT_EQ(now->sampling.anchors, (std::vector<int>{-1, 2, -1, 2}));
  Result<state::ScanState> earlier = ScanToState(o, fs.get(), records);
  ASSERT_TRUE(earlier.ok());
  earlier->sampling.sampled = {false, true, true, true};
  earlier->sampling.anchors = {-1, -1, -1, -1};
  for (const Status& st :
       {state::CheckMergeable(*now, *earlier), state::CheckMergeable(*earlier, *now)}) {
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("sampled other codecs"), std::string::npos) << st.message();
  }
  const Status since = state::CheckSince(*earlier, o);
  EXPECT_EQ(since.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(since.message().find("sampled other codecs"), std::string::npos) << since.message();
  EXPECT_TRUE(state::CheckSince(*now, o).ok());
}

// Merge's and --since's refusals name a list as --compression takes it: "all" for the profile's
// whole list (not another profile's), else the names.
TEST(MergeTest, CompressionListsAreNamedAsTheFlagTakesThem) {
  EXPECT_EQ(state::CompressionListText(AllCompressions(Profile::kZfs24), Profile::kZfs24), "all");
  EXPECT_EQ(state::CompressionListText(AllCompressions(Profile::kV23), Profile::kV23), "all");
  EXPECT_NE(state::CompressionListText(AllCompressions(Profile::kV23), Profile::kZfs24), "all");
  EXPECT_EQ(state::CompressionListText(DefaultCompressions(Profile::kZfs24), Profile::kZfs24),
            "off,lz4,zstd-3");
  EXPECT_EQ(state::CompressionListText(DefaultCompressions(Profile::kV23), Profile::kV23),
            "off,gzip-6,lzjb,zle");
}

// Codes of another kind (a state of format 9, 8, 7, or of 6 and older) do not merge with a
// format-10 scan's, and the refusal names the formats the two states hold.
TEST(MergeTest, StatesOfAnotherCodeKindAreRefusedNamingTheirFormats) {
  testing::TempDir dir;
  BuildParts(dir);
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> base = ScanToState(OptionsFor({(dir.path() / "a").string()}), fs.get());
  ASSERT_TRUE(base.ok());
  ASSERT_EQ(base->code_kind, state::CodeKind::kEarlyAbort);
  const struct {
    state::CodeKind kind;
    const char* holds;
  } kOlder[] = {{state::CodeKind::kLeastBudgetZstd, "format 9"},
                {state::CodeKind::kLeastBudget, "format 8"},
                {state::CodeKind::kRaw, "format 7"},
                {state::CodeKind::kRounded, "format 6"}};
  for (const auto& older : kOlder) {
    Result<state::ScanState> scanned =
        ScanToState(OptionsFor({(dir.path() / "b").string()}), fs.get());
    ASSERT_TRUE(scanned.ok());
    state::ScanState& other = *scanned;
    other.code_kind = older.kind;
    for (const Status& st :
         {state::CheckMergeable(*base, other), state::CheckMergeable(other, *base)}) {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(st.message().find(older.holds), std::string::npos) << st.message();
      EXPECT_NE(st.message().find("format 10"), std::string::npos) << st.message();
    }
  }
}

// Under --checksum sha256 the tables keep the DDT keys of compressed blocks (state::KeyColumns):
// merged parts carry them into one table whose figures, the DDT's leaves laid out on them
// included, are the whole scan's.
TEST(MergeTest, MergedPartsEqualOneScanWithWrittenKeys) {
  testing::TempDir dir;
  BuildParts(dir);
  ScanOptions o = OptionsFor({});
  o.checksum = ChecksumKind::kSha256;
  o.exact = true;
  o.compressions = {{CompressionAlgorithm::kOff, 0},
                    {CompressionAlgorithm::kLz4, 0},
                    {CompressionAlgorithm::kGzip, 6}};
  auto fs = io::PosixFileSystem();
  o.paths = Parts(dir, {"a", "b", "c"});
  Result<ScanResult> whole = RunScan(o, fs.get());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  for (const SettingResult& r : whole->results) {  // lz4 and gzip too, not only off
    for (const DdtFootprint& f : r.dedup.footprints) {
      EXPECT_TRUE(f.leaves_from_keys) << r.recordsize << " " << CompressionName(r.compression);
    }
  }
  ExpectSameFigures(MergedParts(o.paths, o, fs.get()), *whole);
}

TEST(MergeTest, AStateWithoutWrittenKeysIsRefusedWhereTheOtherHasThem) {
  testing::TempDir dir;
  BuildParts(dir);
  auto fs = io::PosixFileSystem();
  for (const ChecksumKind checksum : {ChecksumKind::kSha256, ChecksumKind::kXxh128}) {
    ScanOptions a = OptionsFor({(dir.path() / "a").string()});
    ScanOptions b = OptionsFor({(dir.path() / "b").string()});
    a.checksum = b.checksum = checksum;
    a.exact = b.exact = true;
    Result<state::ScanState> sa = ScanToState(a, fs.get());
    Result<state::ScanState> sb = ScanToState(b, fs.get());
    ASSERT_TRUE(sa.ok() && sb.ok());
    ASSERT_TRUE(sa->written_keys);
    sb->written_keys = false;  // as a state of format 11 reads
    for (const Status& st : {state::CheckMergeable(*sa, *sb), state::CheckMergeable(*sb, *sa)}) {
      if (checksum == ChecksumKind::kXxh128) {
        EXPECT_TRUE(st.ok()) << st.ToString();  // no key is kept without ZFS's checksum
        continue;
      }
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(st.message().find("format 12"), std::string::npos) << st.message();
    }
  }
}

}  // namespace
}  // namespace zsim::pipeline
