// Finish(state, report options) against a direct scan: the report made from a scan's state under
// other allocation options (vdev, copies, ashift where the codes allow, RAM, DDT format) gives
// the figures a scan run with those options gives; options the state cannot answer are refused.

#include "engine/finish/finish.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "engine/ddt/dedup_table.h"
#include "engine/ddt/fingerprint.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/breakdown_report.h"
#include "engine/finish/settled_codes.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/write_rules.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

using testing::ExpectSameFigures;

// A tree with what the figures depend on: compressible and incompressible records, duplicates
// within and across directories, small files, all-zero records, an empty file, many blocks.
void BuildTree(testing::TempDir& dir) {
  const std::vector<uint8_t> shared = testing::GenerateBlock(300 * 1024, 0.7, 11);
  for (int i = 0; i < 6; ++i) {
    dir.WriteFile("a/" + testing::NumberedName("f", i),
                  testing::GenerateBlock(90000 + i * 7000, 0.6, i));
    dir.WriteFile("b/" + testing::NumberedName("s", i),
                  testing::GenerateBlock(700 + i * 900, 0.5, 100 + i));
  }
  dir.WriteFile("a/shared.bin", shared);
  dir.WriteFile("b/deep/shared.copy", shared);
  dir.WriteFile("b/random.bin", testing::Xorshift64Bytes(5, 200 * 1024));
  std::vector<uint8_t> zeros(512 * 1024, 0);
  for (size_t i = 0; i < 1000; ++i) zeros[256 * 1024 + i] = static_cast<uint8_t>(i);
  dir.WriteFile("c/zeros.img", zeros);
  dir.WriteFile("c/empty", {});
}

ScanOptions BaseOptions(const testing::TempDir& dir) {
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.recordsizes = {16 * 1024, 128 * 1024};
  o.threads = 2;
  o.exact = true;
  return o;
}

finish::ReportOptions Report(const ScanOptions& o) { return finish::ReportOptionsOf(o); }

TEST(FinishTest, ScanEqualsFinishOfItsOwnState) {
  testing::TempDir dir;
  BuildTree(dir);
  auto fs = io::PosixFileSystem();
  ScanOptions o = BaseOptions(dir);
  o.exact = false;  // the sampled codecs' estimates come from the state too
  Result<state::ScanState> s = ScanToState(o, fs.get());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Result<ScanResult> direct = RunScan(o, fs.get());
  ASSERT_TRUE(direct.ok());
  ExpectSameFigures(finish::Finish(*s, Report(s->options)), *direct);
}

// A sampled codec whose sample holds no block of a row (by chance, or a row whose unique blocks
// fell short of its plan and could not be topped up) has no ratio to estimate with: each entry
// is taken as stored as its anchor, inside the certain bounds, where it had come out psize 0.
TEST(FinishTest, AnEmptyCodecSampleIsTakenAsItsAnchorWithinCertainBounds) {
  testing::TempDir dir;
  BuildTree(dir);
  auto fs = io::PosixFileSystem();
  ScanOptions o = BaseOptions(dir);
  o.compressions = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kGzip, 6}};
  Result<ScanResult> exact = RunScan(o, fs.get());
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  o.exact = false;
  Result<state::ScanState> s = ScanToState(o, fs.get());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  state::SamplingState& sampling = s->sampling;
  ASSERT_FALSE(sampling.sampled[0]);  // lz4, the anchor: every unique block
  ASSERT_TRUE(sampling.sampled[1]);
  // No unique block's level reaches the highest: gzip-6's sample of the first row is empty.
  if (sampling.setting_levels.empty()) {
    sampling.setting_levels.assign(o.recordsizes.size() * o.compressions.size(),
                                   sampling.complete_level);
  }
  sampling.setting_levels[1] = estimate::kMaxSampleLevel;
  const ScanResult r = finish::Finish(*s, Report(s->options));
  const SettingResult& lz4 = r.results[0];
  const SettingResult& gzip = r.results[1];
  const SettingResult& gzip_exact = exact->results[1];
  ASSERT_EQ(gzip.recordsize, 16 * 1024u);
  ASSERT_EQ(gzip.compression.algorithm, CompressionAlgorithm::kGzip);
  EXPECT_FALSE(gzip.exact);
  // Stored as lz4 stores it but where a census (rare anchor classes, entries referenced often)
  // coded gzip-6 at any level: between the exact gzip-6, which beats lz4 on this data, and lz4.
  EXPECT_LE(gzip.psize, lz4.psize);
  EXPECT_GT(gzip.psize, gzip_exact.psize);
  // Allocated as lz4's psize is (4K sectors here), not as its bytes.
  EXPECT_LE(gzip.dedup.total.referenced.dsize, lz4.dedup.total.referenced.dsize);
  EXPECT_GT(gzip.dedup.total.referenced.dsize, gzip_exact.dedup.total.referenced.dsize);
  EXPECT_EQ(gzip.dedup.total.referenced.dsize % 4096, 0u);
  ASSERT_TRUE(gzip.ci95.has_value());
  EXPECT_LE((*gzip.ci95)[0], gzip_exact.compressratio_unrounded);
  EXPECT_GE((*gzip.ci95)[1], gzip_exact.compressratio_unrounded);
  // The second row's sample is untouched: an estimate as before.
  EXPECT_GT(r.results[3].compressratio_unrounded, lz4.compressratio_unrounded * 0.9);
}

// A sampled codec's allocation follows its psize estimate, not the share of small blocks among
// the few it sampled: sector rounding makes a 1K block's allocation four times its psize and a
// 128K one's barely more, and a ratio of allocation to psize put gzip-9's asize 12% off where its
// psize was 0.7% off (/var/lib/dpkg, --compression all at four recordsizes). On a tree of many
// small files and a few large ones, with gzip-9 sampled at one block in 4, 8 and 16: the
// allocation's error stays within a point of what psize's error gives it (measured: 0.1 to 0.65
// points; with the ratio of allocation to psize, 1.6 to 3.3).
TEST(FinishTest, ASampledCodecsAllocationIsAsCloseAsItsPsize) {
  testing::TempDir dir;
  for (int i = 0; i < 1200; ++i) {
    dir.WriteFile("small/" + testing::NumberedName("s", i),
                  testing::GenerateBlock(300 + (i * 37) % 3000, 0.5, 1000 + i));
  }
  for (int i = 0; i < 24; ++i) {
    dir.WriteFile("large/" + testing::NumberedName("l", i),
                  testing::GenerateBlock(1 << 20, 0.6, 5000 + i));
  }
  auto fs = io::PosixFileSystem();
  ScanOptions o = BaseOptions(dir);
  o.recordsizes = {128 * 1024};
  o.compressions = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kGzip, 9}};
  Result<ScanResult> exact = RunScan(o, fs.get());
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  Result<state::ScanState> s = ScanToState(o, fs.get());  // every block coded: levels set below
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  s->sampling.sampled = {false, true};
  s->sampling.anchors = {-1, 0};
  for (int level : {2, 3, 4}) {
    SCOPED_TRACE(level);
    s->sampling.setting_levels = {0, level};
    const ScanResult r = finish::Finish(*s, Report(s->options));
    const SettingResult& est = r.results[1];
    const SettingResult& truth = exact->results[1];
    ASSERT_FALSE(est.exact);
    const double psize_error = double(est.psize) / double(truth.psize) - 1;
    const double asize_error = double(est.asize) / double(truth.asize) - 1;
    const double used_error = double(est.used) / double(truth.used) - 1;
    EXPECT_LT(std::abs(psize_error), 0.05);
    EXPECT_LT(std::abs(asize_error - psize_error * double(truth.psize) / double(truth.asize)), 0.01)
        << "psize " << psize_error << ", asize " << asize_error;
    EXPECT_LT(std::abs(used_error - asize_error), 0.005);
  }
}

// The breakdowns' rows add up to the table's psize for every setting, also where each rests on
// another sample (the table's keys kept 1 in 4, the references with them, a sampled codec): a
// report whose directories add up to another total than its table contradicts itself.
TEST(FinishTest, BreakdownRowsAddUpToTheTablesPsize) {
  testing::TempDir dir;
  BuildTree(dir);
  auto fs = io::PosixFileSystem();
  for (uint64_t m : {uint64_t{1}, uint64_t{4}}) {
    ScanOptions o = BaseOptions(dir);
    o.exact = m == 1;
    o.sample_modulus = m;
    o.compressions = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kGzip, 6}};
    Result<state::ScanState> s = ScanToState(o, fs.get());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    const ScanResult r = finish::Finish(*s, Report(s->options));
    ASSERT_EQ(r.breakdowns.size(), r.results.size());
    int compared = 0;
    for (size_t i = 0; i < r.breakdowns.size(); ++i) {
      SCOPED_TRACE(testing::NumberedName("m", int(m)) + " setting " + std::to_string(i));
      const Breakdowns& b = r.breakdowns[i];
      ASSERT_LT(b.directories.size(), 50u);  // no row left out
      for (const std::vector<BreakdownRow>* rows : {&b.directories, &b.extensions}) {
        uint64_t sum = 0;
        bool known = true;
        for (const BreakdownRow& row : *rows) {
          sum += row.psize;
          known &= row.psize_known;
        }
        if (!known) continue;
        EXPECT_EQ(sum, r.results[i].psize);
        ++compared;
      }
    }
    EXPECT_GE(compared, 4);
  }
}

BreakdownRow PsizeRow(const std::string& name, uint64_t lsize, uint64_t psize, bool known) {
  BreakdownRow row;
  row.name = name;
  row.lsize = lsize;
  row.psize = psize;
  row.psize_known = known;
  return row;
}

// A row without a psize (a tiny file whose block a sampled codec did not code) no longer leaves
// the others uncalibrated: they add up to the total less its lsize's share, at one ratio. (Left
// as drawn, the VM-store sample's images showed 1.89x against the table's 1.62x.)
TEST(FinishTest, RowsWithoutPsizeLeaveTheOthersCalibrated) {
  std::vector<BreakdownRow> rows = {PsizeRow("b", 600000, 200000, true),
                                    PsizeRow("a", 390000, 100000, true),
                                    PsizeRow("tiny", 10000, 0, false)};
  finish::CalibratePsize(500000, &rows);
  EXPECT_EQ(rows[0].psize + rows[1].psize, 495000u);  // 99% of the lsize is known
  EXPECT_EQ(rows[0].psize, 330000u);                  // each keeps its share: 2/3 and 1/3
  EXPECT_EQ(rows[1].psize, 165000u);
  EXPECT_EQ(rows[2].psize, 0u);
  EXPECT_FALSE(rows[2].psize_known);

  // Every row known: they add up to the total exactly, shares kept to the byte.
  rows = {PsizeRow("x", 100, 333, true), PsizeRow("y", 100, 333, true),
          PsizeRow("z", 100, 334, true)};
  finish::CalibratePsize(1001, &rows);
  EXPECT_EQ(rows[0].psize + rows[1].psize + rows[2].psize, 1001u);

  // An unknown row without data takes nothing; rows all unknown, or of no psize, stay as they
  // are.
  rows = {PsizeRow("x", 100, 50, true), PsizeRow("empty", 0, 0, false)};
  finish::CalibratePsize(80, &rows);
  EXPECT_EQ(rows[0].psize, 80u);
  rows = {PsizeRow("x", 100, 0, false)};
  finish::CalibratePsize(80, &rows);
  EXPECT_EQ(rows[0].psize, 0u);
  rows = {PsizeRow("x", 100, 0, true)};
  finish::CalibratePsize(80, &rows);
  EXPECT_EQ(rows[0].psize, 0u);
}

// No row is scaled above its lsize (a block that does not compress is stored as is): what it
// cannot take goes to the others. (A 512-byte row showed 557 bytes stored, 0.92x.)
TEST(FinishTest, CalibratedRowsStoreAtMostTheirLsize) {
  std::vector<BreakdownRow> rows = {PsizeRow("big", 100000, 40000, true),
                                    PsizeRow("small", 512, 500, true)};
  finish::CalibratePsize(50000, &rows);  // a factor of 1.23: 615 for the small row
  EXPECT_EQ(rows[1].psize, 512u);
  EXPECT_EQ(rows[0].psize, 50000u - 512u);
  // A row capped makes room that may cap another: taken again until none is over.
  rows = {PsizeRow("a", 1000, 900, true), PsizeRow("b", 1200, 1000, true),
          PsizeRow("c", 100000, 10000, true)};
  finish::CalibratePsize(15000, &rows);
  EXPECT_EQ(rows[0].psize, 1000u);
  EXPECT_EQ(rows[1].psize, 1200u);
  EXPECT_EQ(rows[0].psize + rows[1].psize + rows[2].psize, 15000u);
  // More than every row's lsize (the table's total counting what no row does): the rows still
  // add up, the last by name taking the rest.
  rows = {PsizeRow("a", 100, 90, true), PsizeRow("b", 100, 90, true)};
  finish::CalibratePsize(300, &rows);
  EXPECT_EQ(rows[0].psize, 100u);
  EXPECT_EQ(rows[1].psize, 200u);
}

// A sampled breakdown row whose only kept references are all-zero records (holes under lz4:
// the row's zero_lsize, not its lsize) does not know its data's psize: it says so, and does not
// show its data stored in 0 bytes. (--sample 1/4 on the tiny sample: the .img row, 256 KiB of
// data and 384 KiB of zero records, read "all of it saved".)
TEST(FinishTest, ARowSampledOnlyThroughItsZeroRecordsDoesNotKnowItsPsize) {
  constexpr size_t kRecord = 128 * 1024;
  const std::vector<uint8_t> zero(kRecord, 0);
  // A checksum and a modulus under which the all-zero record's key is kept, and a data record
  // whose key is not.
  ChecksumKind kind = ChecksumKind::kXxh128;
  ddt::Fingerprint zero_key = ddt::ComputeFingerprint(kind, zero);
  if ((zero_key.hi & 1) != 0) {
    kind = ChecksumKind::kSha256;
    zero_key = ddt::ComputeFingerprint(kind, zero);
  }
  ASSERT_EQ(zero_key.hi & 1, 0u) << "neither checksum keeps the zero record at 1/2";
  const uint64_t modulus = uint64_t{1} << std::min(3, std::countr_zero(zero_key.hi));
  std::vector<uint8_t> data;
  for (uint64_t seed = 1;; ++seed) {
    data = testing::GenerateBlock(kRecord, 0.6, int(seed));
    if ((ddt::ComputeFingerprint(kind, data).hi & (modulus - 1)) != 0) break;
  }
  std::vector<uint8_t> image = data;
  image.insert(image.end(), 3 * kRecord, 0);
  testing::TempDir dir;
  dir.WriteFile("img/disk.img", image);
  for (int i = 0; i < 40; ++i) {  // rows with kept data, and a table of some size
    dir.WriteFile("other/" + testing::NumberedName("f", i),
                  testing::GenerateBlock(kRecord, 0.5, 500 + i));
  }
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
  o.checksum = kind;
  o.sample_modulus = modulus;
  o.threads = 1;
  auto fs = io::PosixFileSystem();
  Result<ScanResult> r = RunScan(o, fs.get());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->breakdowns.size(), 1u);
  bool seen = false;
  for (const std::vector<BreakdownRow>* rows :
       {&r->breakdowns[0].directories, &r->breakdowns[0].extensions}) {
    for (const BreakdownRow& row : *rows) {
      if (row.name != (dir.path() / "img").string() && row.name != ".img") continue;
      seen = true;
      EXPECT_EQ(row.lsize, kRecord) << row.name;
      EXPECT_EQ(row.zero_lsize, 3 * kRecord) << row.name;
      EXPECT_FALSE(row.psize_known) << row.name << ": psize " << row.psize;
      EXPECT_EQ(row.psize, 0u) << row.name;
    }
  }
  EXPECT_TRUE(seen);
}

TEST(FinishTest, ReportFromStateEqualsDirectScanAcrossAllocationOptions) {
  testing::TempDir dir;
  BuildTree(dir);
  auto fs = io::PosixFileSystem();
  for (Profile profile : {Profile::kZfs24, Profile::kZfs21, Profile::kV23}) {
    ScanOptions o = BaseOptions(dir);
    o.profile = profile;
    if (profile == Profile::kV23) o.recordsizes = {16 * 1024, 128 * 1024};
    Result<state::ScanState> s = ScanToState(o, fs.get());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    struct Alloc {
      const char* vdev;
      int ashift, copies;
      std::optional<DdtFormat> format;
      uint64_t ram;
    };
    std::vector<Alloc> matrix = {{"disk", 12, 1, std::nullopt, 0},
                                 {"mirror:2", 12, 1, std::nullopt, 0},
                                 {"raidz1:4", 12, 2, std::nullopt, 0},
                                 {"raidz2:6", 12, 3, DdtFormat::kLegacy, 1ull << 30},
                                 {"raidz3:11", 12, 1, std::nullopt, 64ull << 30}};
    // v23 rounds psize to 512 bytes whatever the pool: its state answers any ashift.
    if (profile == Profile::kV23) {
      matrix.push_back({"disk", 9, 1, std::nullopt, 0});
      matrix.push_back({"raidz2:6", 13, 2, std::nullopt, 0});
    }
    for (const Alloc& a : matrix) {
      SCOPED_TRACE(std::string(ProfileName(profile)) + " " + a.vdev + " ashift " +
                   std::to_string(a.ashift) + " copies " + std::to_string(a.copies));
      ScanOptions want = o;
      want.vdev = *ParseVdev(a.vdev);
      want.ashift = a.ashift;
      want.copies = a.copies;
      want.ddt_format = a.format;
      want.ram_bytes = a.ram;
      Result<ScanResult> direct = RunScan(want, fs.get());
      ASSERT_TRUE(direct.ok()) << direct.status().ToString();
      finish::ReportOptions r = Report(s->options);
      r.vdev = want.vdev;
      r.ashift = a.ashift;
      r.copies = a.copies;
      if (a.format) r.ddt_format = a.format;
      if (a.ram) r.ram_bytes = a.ram;
      ASSERT_TRUE(finish::CheckReportOptions(*s, r).ok())
          << finish::CheckReportOptions(*s, r).ToString();
      const ScanResult from_state = finish::Finish(*s, r);
      ExpectSameFigures(from_state, *direct);
      EXPECT_EQ(from_state.options.ram_bytes, direct->options.ram_bytes);
    }
  }
}

// The state keeps what each codec produced (state format 9), so a report may change the ashift,
// the vdev and the profile: its figures equal a direct scan with those options, or, when the
// state cannot tell a block's fate (zstd early abort, zero blocks with compression=off, a block
// compressed under another budget whose outcome under this one is not known), it is refused.
// Where every budget is the scan's (2.1 and 2.2 at any ashift and vdev, v23 at any, 2.3 and 2.4
// at the same allocation unit), the report is never refused.
TEST(FinishTest, ReportFromStateEqualsDirectScanAcrossAshiftsAndProfiles) {
  testing::TempDir dir;
  BuildTree(dir);
  auto fs = io::PosixFileSystem();
  struct Scanned {
    Profile profile;
    std::vector<Compression> compressions;
    std::vector<Profile> reports;  // profiles sharing the codec list
  };
  const Compression lz4{CompressionAlgorithm::kLz4, 0}, gzip6{CompressionAlgorithm::kGzip, 6},
      zstd1{CompressionAlgorithm::kZstd, 1}, lzjb{CompressionAlgorithm::kLzjb, 0},
      zle{CompressionAlgorithm::kZle, 0};
  const std::vector<Profile> modern = {Profile::kZfs21, Profile::kZfs22, Profile::kZfs23,
                                       Profile::kZfs24};
  const std::vector<Scanned> scans = {
      {Profile::kZfs21, {lz4, gzip6, zstd1}, modern},
      {Profile::kZfs24, {lz4, gzip6, zstd1}, modern},
      {Profile::kV23,
       {lzjb, gzip6, zle},
       {Profile::kV23, Profile::kZfs21, Profile::kZfs23, Profile::kZfs24}},
  };
  struct Alloc {
    const char* vdev;
    int copies;
  };
  const std::vector<Alloc> allocs = {{"disk", 1}, {"raidz2:6", 2}, {"mirror:3", 3}};
  int answered = 0, refused = 0;
  for (const Scanned& sc : scans) {
    ScanOptions o = BaseOptions(dir);
    o.profile = sc.profile;
    o.compressions = sc.compressions;
    Result<state::ScanState> s = ScanToState(o, fs.get());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_EQ(s->code_kind, state::CodeKind::kEarlyAbort);
    for (Profile profile : sc.reports) {
      for (int ashift : {9, 12, 13}) {
        for (const Alloc& a : allocs) {
          const std::string what = std::string(ProfileName(sc.profile)) + " -> " +
                                   std::string(ProfileName(profile)) + " ashift " +
                                   std::to_string(ashift) + " " + a.vdev;
          SCOPED_TRACE(what);
          finish::ReportOptions r = Report(s->options);
          r.profile = profile;
          r.ashift = ashift;
          r.vdev = *ParseVdev(a.vdev);
          r.copies = a.copies;
          if (profile != sc.profile) r.ddt_format.reset();
          const Status st = finish::CheckReportOptions(*s, r);
          ScanOptions want = o;
          want.profile = profile;
          want.ashift = ashift;
          want.vdev = r.vdev;
          want.copies = a.copies;
          // Every budget the scan's: nothing can be unknown.
          const bool must =
              !finish::CodeSettler(s->code_kind, s->options, want, o.recordsizes.back())
                   .may_be_unknown();
          if (!st.ok()) {
            EXPECT_FALSE(must) << st.ToString();
            EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
            EXPECT_NE(st.message().find("cannot be answered"), std::string::npos) << st.message();
            ++refused;
            continue;
          }
          ++answered;
          Result<ScanResult> direct = RunScan(want, fs.get());
          ASSERT_TRUE(direct.ok()) << direct.status().ToString();
          ExpectSameFigures(finish::Finish(*s, r), *direct);
        }
      }
    }
  }
  // Format 7 (every codec's output under the scan's budget) answered 33 of 108; format 8 (least
  // budgets for lz4, gzip, lzjb, zle) 60, the rest refused for zstd-1's blocks; format 9 keeps
  // zstd's least budget too where early abort does not apply (zstd-1 never has it): all 108.
  EXPECT_EQ(answered, 108);
  EXPECT_EQ(refused, 0);
  std::printf("reports answered %d, refused %d\n", answered, refused);
}

// Blocks whose early abort is decided near every budget: bytes drawn from alphabets of 4 to 256
// values (entropy coding, which zstd has and lz4 lacks: lz4 fails where zstd-1 fits) with some
// repeated runs (matches, which both find), of 128K, 256K and 1M.
void BuildEarlyAbortTree(testing::TempDir& dir) {
  int n = 0;
  for (uint64_t alphabet : {16, 64, 108, 128}) {
    for (int step = 0; step < 16; ++step) {
      const size_t size = n % 8 == 7 ? 256 * 1024 : 128 * 1024;
      dir.WriteFile(testing::NumberedName("e", n),
                    testing::AlphabetBlock(size, alphabet, 0.0015 * step, 40 + n));
      ++n;
    }
  }
  dir.WriteFile("big.bin", testing::GenerateBlock(1024 * 1024, 0.3, 17));
}

// zstd early abort (2.2+, zstd-3 and up, blocks of 128K and more) runs lz4, then zstd-1, against
// the budget first. Since state format 10 the state keeps the least budget that lets a block
// through (ddt::EncodeProbe), so a report may change the profile (2.1 against 2.2+), the ashift
// (15 and 16: a 128K block's 2.3+ budget is 96K or 64K, not 112K) and the dRAID width (3 data
// disks: gcd_alloc 12K, budget 108K): every report is answered and equals the direct scan.
// Format 9 refused every one of these but the same-profile ones at ashift 12. (A direct scan
// derives its figures from the same codes: early_abort_code_test.cc checks the codes against
// ZFS's path run at each budget.)
TEST(FinishTest, ZstdEarlyAbortIsAnsweredUnderEveryProfileAndBudget) {
  testing::TempDir dir;
  BuildEarlyAbortTree(dir);
  auto fs = io::PosixFileSystem();
  const std::vector<Compression> comps = {{CompressionAlgorithm::kLz4, 0},
                                          {CompressionAlgorithm::kZstd, 1},
                                          {CompressionAlgorithm::kZstd, 3}};
  struct Alloc {
    int ashift;
    const char* vdev;
  };
  const std::vector<Alloc> allocs = {{12, "disk"}, {15, "disk"}, {16, "disk"}, {12, "draid2:3:7"}};
  int answered = 0;
  for (Profile scanned : {Profile::kZfs24, Profile::kZfs21}) {
    ScanOptions o = BaseOptions(dir);
    o.recordsizes = {128 * 1024, 1024 * 1024};
    o.compressions = comps;
    o.profile = scanned;
    Result<state::ScanState> s = ScanToState(o, fs.get());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_EQ(s->code_kind, state::CodeKind::kEarlyAbort);
    // The data makes early abort decide: blocks that lz4 or zstd-1 let through only above
    // zstd's own least budget, and blocks it stores as is where zstd would fit.
    const std::vector<size_t> probes = state::ProbeColumns(s->code_kind, comps);
    ASSERT_EQ(s->rows[0].table->settings(), comps.size() + 1);
    uint64_t later = 0, never = 0, decides = 0;
    s->rows[0].table->ForEach([&](const ddt::EntryView& e) {
      if (e.lsize < zfs::kZstdEarlyAbortBytes || e.is_zero) return;
      const ddt::PsizeCode code = e.codes[2], probe = e.codes[probes[2]];
      if (code == ddt::kNoFitCode) return;
      if (probe == ddt::kNoFitCode) {
        ++never;
      } else if (ddt::ProbeOf(probe).at_most > ddt::LeastBudgetOf(code).at_most) {
        ++later;
        // Early abort stores it as is under one of the budgets below, where zstd fits.
        for (uint64_t budget : {64 << 10, 96 << 10, 108 << 10, 112 << 10}) {
          decides += e.lsize == 128 * 1024 && ddt::LeastBudgetOf(code).at_most <= budget &&
                     ddt::ProbeOf(probe).above >= budget;
        }
      }
    });
    EXPECT_GT(decides, 0u);
    std::printf(
        "zstd-3 blocks let through above their own least budget %llu (early abort decides at "
        "one of the budgets %llu), never %llu\n",
        static_cast<unsigned long long>(later), static_cast<unsigned long long>(decides),
        static_cast<unsigned long long>(never));
    for (Profile profile : {Profile::kZfs21, Profile::kZfs22, Profile::kZfs23, Profile::kZfs24}) {
      for (const Alloc& a : allocs) {
        SCOPED_TRACE(std::string(ProfileName(scanned)) + " -> " +
                     std::string(ProfileName(profile)) + " ashift " + std::to_string(a.ashift) +
                     " " + a.vdev);
        finish::ReportOptions r = Report(s->options);
        r.profile = profile;
        r.ashift = a.ashift;
        r.vdev = *ParseVdev(a.vdev);
        r.ddt_format.reset();
        const Status st = finish::CheckReportOptions(*s, r);
        ASSERT_TRUE(st.ok()) << st.ToString();
        ScanOptions want = o;
        want.profile = profile;
        want.ashift = a.ashift;
        want.vdev = r.vdev;
        Result<ScanResult> direct = RunScan(want, fs.get());
        ASSERT_TRUE(direct.ok()) << direct.status().ToString();
        ExpectSameFigures(finish::Finish(*s, r), *direct);
        ++answered;
      }
    }
  }
  EXPECT_EQ(answered, 32);
}

// zstd early abort decides only at the lsizes the state's tables hold, not at every lsize up to
// the recordsize: a state of small zstd-3 blocks (all under 128K) answers another allocation
// unit (2.4, ashift 16: a 128K block's budget would be 64K, not 112K), and so does a state of
// 256K blocks in a 1M row at ashift 13 (256K's budget is 224K at 4K and 8K alike, though other
// lsizes from 128K to 1M would change). Where a held lsize's budget changes, it is refused.
TEST(FinishTest, ZstdEarlyAbortIsTestedAtTheLsizesTheStateHolds) {
  testing::TempDir dir;
  for (int i = 0; i < 40; ++i) {
    dir.WriteFile("small/" + testing::NumberedName("s", i),
                  testing::GenerateBlock(512 + i * 196, 0.5, 200 + i));
  }
  auto fs = io::PosixFileSystem();
  const auto answers = [&](const ScanOptions& o, int ashift) {
    SCOPED_TRACE("ashift " + std::to_string(ashift));
    Result<state::ScanState> s = ScanToState(o, fs.get());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    finish::ReportOptions r = Report(s->options);
    r.ashift = ashift;
    const Status st = finish::CheckReportOptions(*s, r);
    if (!st.ok()) return st;
    ScanOptions want = o;
    want.ashift = ashift;
    Result<ScanResult> direct = RunScan(want, fs.get());
    EXPECT_TRUE(direct.ok()) << direct.status().ToString();
    if (direct.ok()) ExpectSameFigures(finish::Finish(*s, r), *direct);
    return st;
  };
  ScanOptions o = BaseOptions(dir);
  o.recordsizes = {128 * 1024};
  o.compressions = {Compression{CompressionAlgorithm::kZstd, 3},
                    Compression{CompressionAlgorithm::kLz4, 0}};
  o.profile = Profile::kZfs24;
  o.ashift = 12;
  EXPECT_TRUE(answers(o, 16).ok());
  dir.WriteFile("big.bin", testing::GenerateBlock(256 * 1024, 0.6, 7));
  o.recordsizes = {128 * 1024, 1024 * 1024};
  EXPECT_TRUE(answers(o, 13).ok());
  // Format 9 refused this one (256K's budget is 192K at ashift 16); format 10 keeps early
  // abort's least budget.
  EXPECT_TRUE(answers(o, 16).ok());
}

TEST(FinishTest, OptionsTheStateCannotAnswerAreRefused) {
  testing::TempDir dir;
  BuildTree(dir);
  auto fs = io::PosixFileSystem();
  ScanOptions o = BaseOptions(dir);
  Result<state::ScanState> s = ScanToState(o, fs.get());
  ASSERT_TRUE(s.ok());
  const finish::ReportOptions same = Report(s->options);
  EXPECT_TRUE(finish::CheckReportOptions(*s, same).ok());

  // compression=off: 2.4 makes all-zero blocks holes with dedup, 2.2 writes them.
  finish::ReportOptions r = same;
  r.profile = Profile::kZfs22;
  r.ddt_format.reset();
  Status st = finish::CheckReportOptions(*s, r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("all-zero"), std::string::npos) << st.message();

  r = same;
  r.copies = 4;
  EXPECT_EQ(finish::CheckReportOptions(*s, r).code(), StatusCode::kInvalidArgument);

  // A state of format 6 or older holds psize rounded for the scan's profile and unit.
  state::ScanState rounded = std::move(*s);
  rounded.code_kind = state::CodeKind::kRounded;
  EXPECT_TRUE(finish::CheckReportOptions(rounded, same).ok());
  r = same;
  r.profile = Profile::kZfs23;
  st = finish::CheckReportOptions(rounded, r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--profile 2.3"), std::string::npos) << st.message();
  r = same;
  r.ashift = 13;
  st = finish::CheckReportOptions(rounded, r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("format 6 or older"), std::string::npos) << st.message();
  r = same;
  r.vdev = *ParseVdev("draid1:4:7");  // dRAID allocates rows of 4 sectors
  EXPECT_EQ(finish::CheckReportOptions(rounded, r).code(), StatusCode::kInvalidArgument);

  // A sampled table's calibration carries the scan's allocation and profile.
  o.sample_modulus = 4;
  Result<state::ScanState> sampled = ScanToState(o, fs.get());
  ASSERT_TRUE(sampled.ok());
  r = Report(sampled->options);
  EXPECT_TRUE(finish::CheckReportOptions(*sampled, r).ok());
  r.ram_bytes = 1ull << 30;
  EXPECT_TRUE(finish::CheckReportOptions(*sampled, r).ok());
  r.copies = 2;
  st = finish::CheckReportOptions(*sampled, r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("sampled"), std::string::npos) << st.message();
}

// A file with holes between its blocks: the state counts its indirect blocks over the scan's
// indirect block size (v23 16K: 128 block pointers; 2.1 and later 128K: 1024), which another
// size cannot use; such a report is refused both ways, while profiles of one size answer it.
TEST(FinishTest, IndirectCountsKeepTheirIndirectBlockSize) {
  testing::TempDir dir;
  // 3000 blocks of 4K, random data in blocks 0, 150, ..., 900 and 2999: 8 L1s under v23 (one
  // per data block), 2 under 2.1 (of the 3 the file's size allows).
  std::vector<uint8_t> sparse(3000 * 4096, 0);
  for (size_t b : {0, 150, 300, 450, 600, 750, 900, 2999}) {
    const std::vector<uint8_t> block = testing::Xorshift64Bytes(b + 1, 4096);
    std::copy(block.begin(), block.end(), sparse.begin() + b * 4096);
  }
  dir.WriteFile("sparse.img", sparse);
  auto fs = io::PosixFileSystem();
  ScanOptions o = BaseOptions(dir);
  o.recordsizes = {4096};
  o.compressions = {Compression{CompressionAlgorithm::kLzjb, 0}};
  for (auto [scanned, other] :
       {std::pair{Profile::kZfs21, Profile::kV23}, std::pair{Profile::kV23, Profile::kZfs21}}) {
    SCOPED_TRACE(std::string(ProfileName(scanned)) + " -> " + std::string(ProfileName(other)));
    o.profile = scanned;
    Result<state::ScanState> s = ScanToState(o, fs.get());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    finish::ReportOptions r = Report(s->options);
    r.profile = other;
    r.ddt_format.reset();
    const Status st = finish::CheckReportOptions(*s, r);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("cannot be answered"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("indirect"), std::string::npos) << st.message();
    // The refusal matters: the counts made for the scan give other metadata than a direct scan.
    ScanOptions want = o;
    want.profile = other;
    Result<ScanResult> direct = RunScan(want, fs.get());
    ASSERT_TRUE(direct.ok()) << direct.status().ToString();
    EXPECT_NE(finish::Finish(*s, r).results[0].metadata_bytes, direct->results[0].metadata_bytes);
  }
  // 2.1 to 2.2: the same indirect block size, answered as a direct scan.
  o.profile = Profile::kZfs21;
  Result<state::ScanState> s = ScanToState(o, fs.get());
  ASSERT_TRUE(s.ok());
  finish::ReportOptions r = Report(s->options);
  r.profile = Profile::kZfs22;
  r.ddt_format.reset();
  ASSERT_TRUE(finish::CheckReportOptions(*s, r).ok())
      << finish::CheckReportOptions(*s, r).ToString();
  ScanOptions want = o;
  want.profile = Profile::kZfs22;
  Result<ScanResult> direct = RunScan(want, fs.get());
  ASSERT_TRUE(direct.ok());
  ExpectSameFigures(finish::Finish(*s, r), *direct);
}

}  // namespace
}  // namespace zsim::pipeline
