// The advice of the real binary on the sample datasets (samples/README.md). The tiny sample is
// built by the test (a second, no root); the others take minutes and root to build, so their
// tests run when the environment names a built OUTDIR and are skipped (saying so) otherwise:
//   ZSIM_SAMPLE_VMSTORE=DIR     samples/build-vmstore DIR     -> "dedup_pays"
//   ZSIM_SAMPLE_SOURCE=DIR      samples/build-source DIR      -> "compression_only"
//   ZSIM_SAMPLE_DATABASE=DIR    samples/build-database DIR    -> no dedup, compression advised
//   ZSIM_SAMPLE_FILESERVER=DIR  samples/build-fileserver DIR  -> no dedup table advised
// Needs the zsim binary (build the `zsim` target first).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/util/test_util.h"

namespace zsim::sample_advice_test {  // named: the module's test files build together
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::AnyOf;
using ::testing::Eq;

using testing::ReadText;

// Runs `zsim scan DIR --json` with 16 GiB of RAM; fails the test unless it exits 0.
json ScanJson(const fs::path& dir, const testing::TempDir& tmp) {
  const fs::path out = tmp.path() / "report.json";
  const std::string command = std::string(ZSIM_BINARY) + " scan '" + dir.string() +
                              "' --json -q --ram 16G > '" + out.string() + "'";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  return json::parse(ReadText(out));
}

const json& Item(const json& report, const std::string& kind) {
  for (const json& item : report["advice"]["items"]) {
    if (item["kind"] == kind) return item;
  }
  static const json kNone = json::object({{"verdict", "(absent)"}, {"figures", json::object()}});
  return kNone;
}

using testing::SampleDir;

class SampleAdviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(ZSIM_BINARY)) << ZSIM_BINARY << " is missing: build the zsim target";
  }
  testing::TempDir tmp_;
};

// Tiny: a project share with a whole-file copy, a revised copy, identical configs, 384 KiB of
// zeros plus one zero record: dedup 1.5x on a 44-entry table, compression about 2x.
TEST_F(SampleAdviceTest, TinySampleDedupPaysAndZeroBlocksAreHoles) {
  const fs::path tiny = tmp_.path() / "tiny";
  const std::string build = "python3 '" + std::string(ZSIM_SOURCE_DIR) + "/samples/build-tiny' '" +
                            tiny.string() + "' > /dev/null";
  ASSERT_EQ(std::system(build.c_str()), 0);
  const json r = ScanJson(tiny, tmp_);
  const json& advice = r["advice"];
  EXPECT_EQ(advice["verdict"], "dedup_pays") << advice["summary"];
  const int featured = advice["featured"]["index"].get<int>();
  const json& f = r["results"][featured];
  EXPECT_NE(f["compression"], "off");
  EXPECT_GE(f["compressratio"].get<double>(), 2.0);
  const json& dedup = Item(r, "dedup");
  EXPECT_EQ(dedup["verdict"], "dedup_pays");
  EXPECT_EQ(dedup["figures"]["dedup_ratio"], f["dedup"]["ratio"]);
  EXPECT_GE(f["dedup"]["ratio"].get<double>(), 1.4);
  EXPECT_EQ(Item(r, "ddt_memory")["verdict"], "ddt_fits_in_ram");
  // 3 records of the 384 KiB zero file + 1 zero record of the mixed file, at 128K.
  const json& zeros = Item(r, "dedup_without_ddt");
  EXPECT_EQ(zeros["verdict"], "zero_blocks_are_free");
  EXPECT_EQ(zeros["figures"]["zero_blocks"], 4);
  EXPECT_EQ(zeros["figures"]["zero_block_bytes"], 4 * 131072);
  EXPECT_FALSE(r["breakdown"]["directories"].empty());
}

TEST_F(SampleAdviceTest, VmStoreOfClonedImagesGetsDedupPays) {
  const fs::path dir = SampleDir("ZSIM_SAMPLE_VMSTORE");
  if (dir.empty()) GTEST_SKIP() << "set ZSIM_SAMPLE_VMSTORE to a samples/build-vmstore OUTDIR";
  const json r = ScanJson(dir, tmp_);
  EXPECT_EQ(r["advice"]["verdict"], "dedup_pays") << r["advice"]["summary"];
  const json& dedup = Item(r, "dedup");
  EXPECT_EQ(dedup["verdict"], "dedup_pays");
  EXPECT_GE(dedup["figures"]["dedup_ratio"].get<double>(), 2.0);  // template + 2 clones
  EXPECT_EQ(Item(r, "ddt_memory")["verdict"], "ddt_fits_in_ram");
}

TEST_F(SampleAdviceTest, SourceTreeGetsCompressionOnly) {
  const fs::path dir = SampleDir("ZSIM_SAMPLE_SOURCE");
  if (dir.empty()) GTEST_SKIP() << "set ZSIM_SAMPLE_SOURCE to a samples/build-source OUTDIR";
  const json r = ScanJson(dir, tmp_);
  EXPECT_EQ(r["advice"]["verdict"], "compression_only") << r["advice"]["summary"];
  EXPECT_EQ(Item(r, "dedup")["verdict"], "dedup_not_worth_it");
  EXPECT_LT(Item(r, "dedup")["figures"]["dedup_ratio"].get<double>(), 1.1);
  EXPECT_EQ(Item(r, "compression")["verdict"], "compress");
  EXPECT_GE(Item(r, "compression")["figures"]["compressratio"].get<double>(), 2.0);
}

TEST_F(SampleAdviceTest, DatabaseGetsNoDedupTable) {
  const fs::path dir = SampleDir("ZSIM_SAMPLE_DATABASE");
  if (dir.empty()) GTEST_SKIP() << "set ZSIM_SAMPLE_DATABASE to a samples/build-database OUTDIR";
  const json r = ScanJson(dir, tmp_);
  EXPECT_THAT(r["advice"]["verdict"].get<std::string>(),
              AnyOf(Eq("compression_only"), Eq("clone_instead_of_dedup")))
      << r["advice"]["summary"];
  EXPECT_EQ(Item(r, "compression")["verdict"], "compress");
}

TEST_F(SampleAdviceTest, FileServerGetsNoDedupTable) {
  const fs::path dir = SampleDir("ZSIM_SAMPLE_FILESERVER");
  if (dir.empty()) {
    GTEST_SKIP() << "set ZSIM_SAMPLE_FILESERVER to a samples/build-fileserver OUTDIR";
  }
  const json r = ScanJson(dir, tmp_);
  EXPECT_THAT(r["advice"]["verdict"].get<std::string>(),
              AnyOf(Eq("compression_only"), Eq("clone_instead_of_dedup")))
      << r["advice"]["summary"];
}

}  // namespace
}  // namespace zsim::sample_advice_test
