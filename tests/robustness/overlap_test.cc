// The same data reached twice must be counted once (issue 18), as du and zdb count each
// (device, inode) once: an input named twice by any spelling, an input inside another, a file
// named twice, a bind mount looping back into the tree. Each overlap is a skip under
// "overlap", and every figure equals that of the tree scanned once. Both walkers are held to it
// (the parallel one, and the serial one --follow-symlinks uses).

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/pipeline/scan.h"
#include "tests/util/report_json.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

namespace fs = std::filesystem;

class OverlapTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    tmp_.WriteFile("D/a", testing::GenerateBlock(300 * K, 0.6, 1));
    tmp_.WriteFile("D/b", testing::Xorshift64Bytes(2, 200 * K));
    tmp_.WriteFile("D/sub/c", testing::Xorshift64Bytes(3, 256 * K));
    tmp_.WriteFile("D/sub/deeper/d", testing::GenerateBlock(100 * K, 0.3, 4));
    tmp_.WriteFile("x/.keep", {});
    d_ = (tmp_.path() / "D").string();
    Result<ScanResult> once = Scan({d_});
    ASSERT_TRUE(once.ok());
    once_ = std::move(*once);
    ASSERT_EQ(once_.input.files, 4u);
    ASSERT_EQ(once_.input.directories, 3u);
  }

  // GetParam(): the serial walker (--follow-symlinks), else the parallel one.
  Result<ScanResult> Scan(std::vector<std::string> paths) {
    ScanOptions o;
    o.paths = std::move(paths);
    o.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
    o.threads = 2;
    o.follow_symlinks = GetParam();
    return pipeline::RunScan(o, io::PosixFileSystem().get());
  }

  // The figures of `paths` are those of D scanned once, with `overlaps` overlap skips.
  void ExpectCountedOnce(const std::vector<std::string>& paths, uint64_t overlaps) {
    std::string what;
    for (const std::string& p : paths) what += p + " ";
    Result<ScanResult> r = Scan(paths);
    ASSERT_TRUE(r.ok()) << what;
    EXPECT_TRUE(r->input.errors.empty()) << what;
    EXPECT_EQ(r->input.files, once_.input.files) << what;
    EXPECT_EQ(r->input.directories, once_.input.directories) << what;
    EXPECT_EQ(r->input.bytes_logical, once_.input.bytes_logical) << what;
    EXPECT_EQ(r->input.bytes_read, once_.input.bytes_read) << what;
    const auto it = r->input.skipped.find("overlap");
    EXPECT_EQ(it == r->input.skipped.end() ? 0 : it->second, overlaps) << what;
    ASSERT_EQ(r->results.size(), once_.results.size());
    for (size_t i = 0; i < r->results.size(); ++i) {
      EXPECT_EQ(r->results[i].lsize, once_.results[i].lsize) << what;
      EXPECT_EQ(r->results[i].dedup.total, once_.results[i].dedup.total) << what;
      EXPECT_EQ(r->results[i].dedup.ratio, 1.0) << what;  // no dedup made of the overlap
      EXPECT_EQ(r->results[i].used, once_.results[i].used) << what;
    }
  }

  testing::TempDir tmp_;
  std::string d_;
  ScanResult once_;
};

TEST_P(OverlapTest, AnInputNamedTwiceByAnySpellingIsCountedOnce) {
  ExpectCountedOnce({d_, d_}, 1);
  ExpectCountedOnce({d_ + "/", d_}, 1);
  ExpectCountedOnce({d_, d_ + "/."}, 1);
  ExpectCountedOnce({d_, (tmp_.path() / "x" / ".." / "D").string()}, 1);
  ExpectCountedOnce({d_, d_, d_}, 2);
  const fs::path link = tmp_.path() / "link-to-D";
  fs::create_directory_symlink(d_, link);
  ExpectCountedOnce({link.string(), d_}, 1);
}

TEST_P(OverlapTest, AnInputInsideAnotherIsCountedOnceWhicheverComesFirst) {
  ExpectCountedOnce({d_, d_ + "/sub"}, 1);
  ExpectCountedOnce({d_ + "/sub", d_}, 1);
  ExpectCountedOnce({d_ + "/sub/deeper", d_ + "/sub", d_}, 2);
}

TEST_P(OverlapTest, AFileNamedTwiceOrInsideAnInputIsCountedOnce) {
  const std::string a = d_ + "/a";
  ExpectCountedOnce({d_, a}, 1);
  ExpectCountedOnce({a, d_}, 1);
  Result<ScanResult> twice = Scan({a, a});
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->input.files, 1u);
  EXPECT_EQ(twice->input.skipped.at("overlap"), 1u);
  EXPECT_EQ(twice->results[0].dedup.ratio, 1.0);
}

TEST_P(OverlapTest, ABindMountLoopingBackIntoTheTreeIsCountedOnce) {
  const fs::path loop = fs::path(d_) / "sub" / "loop";
  fs::create_directory(loop);
  if (::mount(d_.c_str(), loop.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    GTEST_SKIP() << "bind mount: " << std::strerror(errno) << " (needs root)";
  }
  // The empty mount point counts as a directory of D once scanned...
  Result<ScanResult> r = Scan({d_});
  ::umount2(loop.c_str(), MNT_DETACH);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->input.errors.empty());
  // ...but through the bind mount it is D itself: skipped, the rest counted once.
  EXPECT_EQ(r->input.files, once_.input.files);
  EXPECT_EQ(r->input.bytes_logical, once_.input.bytes_logical);
  EXPECT_EQ(r->input.skipped.at("overlap"), 1u);
  EXPECT_EQ(r->results[0].dedup.total, once_.results[0].dedup.total);
  EXPECT_EQ(r->results[0].dedup.ratio, 1.0);
}

INSTANTIATE_TEST_SUITE_P(BothWalkers, OverlapTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "SerialWalk" : "ParallelWalk";
                         });

// The report says what was skipped and why: "overlap" in the text and in JSON input.skipped.
TEST(OverlapReportTest, TheSkippedOverlapIsInTheTextAndJsonReports) {
  testing::TempDir tmp;
  tmp.WriteFile("D/f", testing::Xorshift64Bytes(9, 100 * K));
  const std::string d = (tmp.path() / "D").string();
  const testing::CommandResult json = testing::RunZsim({"scan", d, d + "/.", "-q", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json report = testing::ParseReportJson(json);
  EXPECT_EQ(report["input"]["files"], 1);
  EXPECT_EQ(report["input"]["skipped"]["overlap"], 1);
  const testing::CommandResult text = testing::RunZsim({"scan", d, d, "-q"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("1 file in 1 directory"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Skipped: 1 overlap"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace zsim
