// `zsim scan --html FILE` on the command line: the file is written next to the usual report, an
// empty name is bad usage (exit 2), and so is a file that cannot be written, found before the scan
// (tests/robustness/output_file_test.cc has the other unsafe paths).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/report/html_report.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

using testing::ReadText;

Outcome RunZsim(const testing::TempDir& dir, const std::string& args) {
  const fs::path out = dir.path() / "stdout.txt";
  const fs::path err = dir.path() / "stderr.txt";
  const std::string command =
      std::string(ZSIM_BINARY) + " " + args + " > " + out.string() + " 2> " + err.string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadText(out), ReadText(err)};
}

class HtmlCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(ZSIM_BINARY)) << ZSIM_BINARY << " is missing: build the zsim target";
    tree_ = dir_.path() / "tree";
    std::vector<uint8_t> text(300'000);
    for (size_t i = 0; i < text.size(); ++i) text[i] = uint8_t("the pool dataset "[i % 17]);
    dir_.WriteFile("tree/a.txt", text);
    dir_.WriteFile("tree/copy/a.txt", text);
    dir_.WriteFile("tree/<b>&'.txt", testing::Xorshift64Bytes(7, 100'000));
  }
  testing::TempDir dir_;
  fs::path tree_;
};

TEST_F(HtmlCliTest, WritesTheHtmlReportBesideTheTextReport) {
  const fs::path html = dir_.path() / "report.html";
  const Outcome o =
      RunZsim(dir_, "scan " + tree_.string() + " -q --ram 8G --html " + html.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("Verdict: "));
  const std::string page = ReadText(html);
  EXPECT_THAT(page, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(page, HasSubstr("</html>\n"));
  for (const char* id : report::kChartIds) EXPECT_THAT(page, HasSubstr(id));
  EXPECT_EQ(report::ValidUtf8(page), page);
}

TEST_F(HtmlCliTest, JsonAndHtmlTogether) {
  const fs::path html = dir_.path() / "r.html";
  const Outcome o = RunZsim(dir_, "scan " + tree_.string() + " -q --json --html " + html.string());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("\"advice\""));
  EXPECT_TRUE(fs::exists(html));
}

TEST_F(HtmlCliTest, EmptyFileNameIsBadUsage) {
  const Outcome o = RunZsim(dir_, "scan " + tree_.string() + " -q --html ''");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("--html needs a file name"));
  EXPECT_TRUE(o.out.empty());
}

TEST_F(HtmlCliTest, UnwritableFileIsBadUsageBeforeTheScan) {
  const fs::path html = dir_.path() / "no-such-dir" / "report.html";
  const Outcome o = RunZsim(dir_, "scan " + tree_.string() + " -q --html " + html.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_THAT(o.err, HasSubstr("--html " + html.string()));
  EXPECT_THAT(o.err, HasSubstr("No such file or directory"));
  EXPECT_TRUE(o.out.empty());  // refused before the scan: no report
}

}  // namespace
}  // namespace zsim
