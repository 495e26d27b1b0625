// The --html report of the real binary, opened in headless Chromium: the page loads without a
// script error, every chart is drawn (document.title becomes "zsim report: ok" only then, and each
// chart's <svg> carries data-drawn = the number of marks), and a screenshot is taken.
//
// Needs the `zsim` binary (build it first) and Chromium (Debian package `chromium`, installed by
// scripts/install-deps --all); without Chromium the test is skipped and says so. Set
// ZSIM_HTML_SCREENSHOT to a file path to keep the screenshot (CI archives it).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "engine/report/html_report.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// Runs a shell command; returns its exit status (-1 if it did not exit normally).
int RunShell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

using testing::ReadText;

// ZSIM_CHROMIUM, else chromium or chromium-browser on PATH; empty when none.
std::string FindChromium() {
  if (const char* env = std::getenv("ZSIM_CHROMIUM"); env != nullptr && *env != '\0') return env;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      const fs::path candidate = fs::path(dir) / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return "";
}

std::string ChromiumCommand(const std::string& chromium, const fs::path& profile) {
  return Quote(chromium) +
         " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
         " --disable-background-networking --disable-component-update --disable-sync"
         " --hide-scrollbars --user-data-dir=" +
         Quote(profile.string());
}

class HtmlChromiumTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(ZSIM_BINARY)) << ZSIM_BINARY << " is missing: build the zsim target";
    chromium_ = FindChromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "chromium is not installed (Debian package `chromium`; "
                      "scripts/install-deps --all installs it): HTML rendering not checked";
    }
    const fs::path tiny = dir_.path() / "tiny";
    ASSERT_EQ(RunShell("python3 " + Quote(std::string(ZSIM_SOURCE_DIR) + "/samples/build-tiny") +
                       " " + Quote(tiny.string()) + " > /dev/null"),
              0);
    html_ = dir_.path() / "report.html";
    ASSERT_EQ(
        RunShell(Quote(ZSIM_BINARY) + " scan " + Quote(tiny.string()) + " --ram 16G -q --html " +
                 Quote(html_.string()) + " > " + Quote((dir_.path() / "report.txt").string())),
        0);
  }

  testing::TempDir dir_;
  std::string chromium_;
  fs::path html_;
};

TEST_F(HtmlChromiumTest, TinySampleReportLoadsAndDrawsEveryChart) {
  const fs::path dom_path = dir_.path() / "dom.html";
  const fs::path log_path = dir_.path() / "chromium.log";
  ASSERT_EQ(
      RunShell("timeout 120 " + ChromiumCommand(chromium_, dir_.path() / "profile-dom") +
               " --enable-logging=stderr --v=0 --dump-dom " + Quote("file://" + html_.string()) +
               " > " + Quote(dom_path.string()) + " 2> " + Quote(log_path.string())),
      0)
      << ReadText(log_path);
  const std::string dom = ReadText(dom_path);
  const std::string log = ReadText(log_path);
  // The script ran to its end with no chart failing.
  EXPECT_THAT(dom, HasSubstr("<title>zsim report: ok</title>")) << log;
  EXPECT_THAT(log, Not(HasSubstr("Uncaught")));
  for (const char* id : report::kChartIds) {
    SCOPED_TRACE(id);
    std::smatch m;
    const std::regex drawn(std::string("<svg id=\"") + id + "\"[^>]*data-drawn=\"([0-9]+)\"");
    ASSERT_TRUE(std::regex_search(dom, m, drawn)) << "chart not drawn";
    EXPECT_GT(std::stoi(m[1].str()), 0);
    EXPECT_THAT(dom, Not(HasSubstr(std::string("<svg id=\"") + id + "\" data-error")));
  }
  // The verdict of the text report is the page's headline.
  const std::string text = ReadText(dir_.path() / "report.txt");
  const size_t at = text.find("Verdict: ");
  ASSERT_NE(at, std::string::npos);
  const std::string verdict = text.substr(at + 9, text.find('\n', at) - at - 9);
  EXPECT_THAT(dom, HasSubstr(report::HtmlEscape(verdict)));
}

TEST_F(HtmlChromiumTest, ScreenshotIsTaken) {
  const fs::path png = dir_.path() / "report.png";
  ASSERT_EQ(RunShell("timeout 120 " + ChromiumCommand(chromium_, dir_.path() / "profile-shot") +
                     " --window-size=1200,2200 --screenshot=" + Quote(png.string()) + " " +
                     Quote("file://" + html_.string()) + " > /dev/null 2>&1"),
            0);
  const std::string bytes = ReadText(png);
  ASSERT_GT(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // IHDR: width and height, big-endian, at bytes 16..23: the window size asked for.
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(bytes[at])) << 24) | (uint32_t(uint8_t(bytes[at + 1])) << 16) |
           (uint32_t(uint8_t(bytes[at + 2])) << 8) | uint32_t(uint8_t(bytes[at + 3]));
  };
  EXPECT_EQ(be32(16), 1200u);
  EXPECT_EQ(be32(20), 2200u);
  // A drawn page is far from blank: charts and tables make the PNG large.
  EXPECT_GT(bytes.size(), 50'000u);
  if (const char* keep = std::getenv("ZSIM_HTML_SCREENSHOT"); keep != nullptr && *keep != '\0') {
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace zsim
