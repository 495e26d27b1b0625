// Finish(state, report options) against a direct scan: the report made from a scan's state under
// other allocation options (vdev, copies, ashift where the codes allow, RAM, DDT format) gives
// the figures a scan run with those options gives; options the state cannot answer are refused.

#include "engine/finish/finish.h"

#include <gtest/gtest.h>

#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
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

TEST(FinishTest, OptionsTheStateCannotAnswerAreRefused) {
  testing::TempDir dir;
  BuildTree(dir);
  auto fs = io::PosixFileSystem();
  ScanOptions o = BaseOptions(dir);
  Result<state::ScanState> s = ScanToState(o, fs.get());
  ASSERT_TRUE(s.ok());
  const finish::ReportOptions same = Report(s->options);
  EXPECT_TRUE(finish::CheckReportOptions(*s, same).ok());

  finish::ReportOptions r = same;
  r.profile = Profile::kZfs22;
  Status st = finish::CheckReportOptions(*s, r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--profile 2.2"), std::string::npos) << st.message();

  r = same;
  r.ashift = 13;  // 2.4 rounds psize to the sector: other codes
  st = finish::CheckReportOptions(*s, r);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("ashift"), std::string::npos) << st.message();

  r = same;
  r.vdev = *ParseVdev("draid1:4:7");  // dRAID allocates rows of 4 sectors
  EXPECT_EQ(finish::CheckReportOptions(*s, r).code(), StatusCode::kInvalidArgument);

  r = same;
  r.copies = 4;
  EXPECT_EQ(finish::CheckReportOptions(*s, r).code(), StatusCode::kInvalidArgument);

  // A sampled table's calibration carries the scan's allocation.
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

}  // namespace
}  // namespace zsim::pipeline
