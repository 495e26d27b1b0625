// An interrupted scan, through the binary: SIGINT or SIGTERM ends it with exit code 130 and the
// message, the --html and --save targets written whole (a partial report and a state marked
// partial); the same signal delivered twice at once is one interrupt; and a second signal a
// while later, while the report is still being written, ends it at once (exit code 3) with no
// output file left behind: neither the --html target nor its temporary file (created before
// the scan starts). The waits are guards against a hang, not speed assertions.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/util/child_process.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

namespace fs = std::filesystem;

using testing::Child;
using testing::Collect;
using testing::ReadUntil;
using testing::Spawn;
using testing::WaitExit;

std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Runs zsim with `args`, sends `sig` once stderr shows `under_way`, and returns its exit code
// (WaitExit's) with all it wrote on stderr. Fails the test if it ends before saying it.
// `times` > 1: the signal again at once, as `timeout` sends it (to the command, then to its
// process group). `out`, when given, receives stdout.
std::pair<int, std::string> Interrupted(const std::vector<std::string>& args,
                                        const std::string& under_way, int sig, int times = 1,
                                        std::string* out = nullptr) {
  Child c = Spawn(args);
  EXPECT_GT(c.pid, 0);
  if (c.pid <= 0) return {-1, ""};
  std::string err;
  const bool seen = ReadUntil(c.err, under_way, &err);
  EXPECT_TRUE(seen) << err;
  for (int i = 0; i < times; ++i) kill(c.pid, sig);
  std::string stdout_text;
  const int code = Collect(c, std::chrono::seconds(60), &stdout_text, &err);
  if (out) *out = std::move(stdout_text);
  return {code, err};
}

// Sparse files of 2 GiB with a little data in every 8 MiB chunk: each chunk is opened and read,
// so the scan lasts long enough to be interrupted.
void WriteSlowTree(const fs::path& dir, int files) {
  fs::create_directories(dir);
  const std::vector<uint8_t> block = testing::Xorshift64Bytes(99, 4096);
  for (int i = 0; i < files; ++i) {
    const fs::path path = dir / testing::NumberedName("img", i);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t{2} << 30), 0);
    for (uint64_t off = 0; off < (2ull << 30); off += 8ull << 20) {
      ASSERT_EQ(pwrite(fd, block.data(), block.size(), static_cast<off_t>(off + uint64_t(i) * 64)),
                static_cast<ssize_t>(block.size()));
    }
    close(fd);
  }
}

// The first SIGINT or SIGTERM: exit 130 with the message, the report and the state written
// whole, nothing else left in the output directory.
TEST(InterruptCliTest, SignalWritesThePartialOutputsWholeAndExits130) {
  testing::TempDir tmp;
  WriteSlowTree(tmp.path() / "in", 40);
  for (int sig : {SIGINT, SIGTERM}) {
    const fs::path out_dir = tmp.path() / ("out" + std::to_string(sig));
    fs::create_directories(out_dir);
    // Signalled once under way, the tree sized.
    const auto [code, err] = Interrupted(
        {"scan", (tmp.path() / "in").string(), "--compression", "off", "--progress", "--html",
         (out_dir / "r.html").string(), "--save", (out_dir / "s.state").string()},
        " of 40 files", sig);
    EXPECT_EQ(code, 130) << err;
    EXPECT_NE(err.find("zsim: interrupted"), std::string::npos) << err;
    EXPECT_EQ(Names(out_dir), (std::vector<std::string>{"r.html", "s.state"}));
    const testing::CommandResult report =
        testing::RunZsim({"report", (out_dir / "s.state").string(), "--json"});
    EXPECT_EQ(report.exit_code, 130) << report.err;  // reported as the interrupted scan was
    const nlohmann::json j = nlohmann::json::parse(report.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << report.out.substr(0, 300);
    EXPECT_EQ(j["partial"], true);
  }
}

// The weekly rescan, `--since base --save base`, interrupted: the baseline stays as it was (a
// partial state cannot serve a later --since; writing it there lost the baseline) and the
// partial state goes to base.partial, marked partial. --max-rate keeps the rescan under way.
TEST(InterruptCliTest, AnInterruptedRescanKeepsItsBaseline) {
  testing::TempDir tmp;
  const fs::path in = tmp.path() / "in";
  WriteSlowTree(in, 8);
  const std::string base = (tmp.path() / "base.zstate").string();
  const testing::CommandResult first =
      testing::RunZsim({"scan", in.string(), "--compression", "off", "-q", "--save", base});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::vector<uint8_t> baseline = testing::ReadFileBytes(base);
  for (const fs::directory_entry& e : fs::directory_iterator(in)) {
    fs::last_write_time(e.path(), fs::last_write_time(e.path()) + std::chrono::seconds(10));
  }
  const auto [code, err] = Interrupted({"scan", in.string(), "--compression", "off", "--progress",
                                        "--max-rate", "1M", "--since", base, "--save", base},
                                       " of 8 files", SIGINT);
  EXPECT_EQ(code, 130) << err;
  EXPECT_NE(err.find(base + " is kept as it was"), std::string::npos) << err;
  EXPECT_EQ(testing::ReadFileBytes(base), baseline);
  const testing::CommandResult kept = testing::RunZsim({"report", base, "--json", "-q"});
  EXPECT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(nlohmann::json::parse(kept.out, nullptr, false)["partial"], false);
  const testing::CommandResult partial =
      testing::RunZsim({"report", base + ".partial", "--json", "-q"});
  EXPECT_EQ(partial.exit_code, 130) << partial.err;
  EXPECT_EQ(nlohmann::json::parse(partial.out, nullptr, false)["partial"], true);
  // Reported later, it is said to come from an interrupted scan (this run was not interrupted),
  // and a diff against it says which side is partial.
  const testing::CommandResult later = testing::RunZsim({"report", base + ".partial"});
  EXPECT_NE(later.err.find("the state comes from an interrupted scan"), std::string::npos)
      << later.err;
  const testing::CommandResult diff = testing::RunZsim({"diff", base + ".partial", base});
  EXPECT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_NE(diff.out.find("PARTIAL: " + base + ".partial is of an interrupted scan"),
            std::string::npos)
      << diff.out;
  const testing::CommandResult diff_json =
      testing::RunZsim({"diff", base + ".partial", base, "--json"});
  EXPECT_EQ(nlohmann::json::parse(diff_json.out, nullptr, false)["partial"],
            nlohmann::json::array({true, false}));
  // The baseline still serves the next rescan.
  const testing::CommandResult next = testing::RunZsim(
      {"scan", in.string(), "--compression", "off", "-q", "--since", base, "--save", base});
  EXPECT_EQ(next.exit_code, 0) << next.err;
}

// The same signal twice at once (`timeout -s INT 1h zsim ...` sends it to zsim, then to its
// process group) is one interrupt: the partial report is printed, exit 130, not the abort a
// second Ctrl-C asks for.
TEST(InterruptCliTest, ASignalDeliveredTwiceAtOnceStillPrintsThePartialReport) {
  testing::TempDir tmp;
  WriteSlowTree(tmp.path() / "in", 40);
  for (int sig : {SIGINT, SIGTERM}) {
    std::string out;
    const auto [code, err] = Interrupted(
        {"scan", (tmp.path() / "in").string(), "--compression", "off", "--progress", "--json"},
        " of 40 files", sig, /*times=*/3, &out);
    EXPECT_EQ(code, 130) << err;
    const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << out.substr(0, 300) << err;
    EXPECT_EQ(j["partial"], true);
    EXPECT_EQ(err.find("interrupted again"), std::string::npos) << err;
  }
}

// A second SIGINT while the first one's report is still being written (stdout never read: the
// report, over 64 KiB with its 1500 errors, blocks in write()) ends the scan at once, and the
// --html target, not written yet, is left as it was: no file, no temporary file, at any time.
TEST(InterruptCliTest, SecondSignalLeavesNoOutputFileBehind) {
  testing::TempDir tmp;
  const std::string long_name(150, 'n');
  fs::create_directories(tmp.path() / "loops");
  for (int i = 0; i < 1500; ++i) {
    ASSERT_EQ(
        symlink(".", (tmp.path() / "loops" / testing::NumberedName(long_name.c_str(), i)).c_str()),
        0);
  }
  WriteSlowTree(tmp.path() / "images", 40);
  const fs::path out_dir = tmp.path() / "out";
  fs::create_directories(out_dir);
  Child c = Spawn({"scan", (tmp.path() / "loops").string(), (tmp.path() / "images").string(),
                   "--follow-symlinks", "--compression", "off", "--json", "--progress", "--html",
                   (out_dir / "r.html").string()});
  ASSERT_GT(c.pid, 0);
  std::string err;
  ASSERT_TRUE(ReadUntil(c.err, "scanned", &err)) << err;
  // Nothing beside the target while the scan runs: the --html temporary file is made when the
  // report is written (one made before the scan was left there by a SIGKILL or the OOM killer).
  EXPECT_EQ(Names(out_dir), std::vector<std::string>{});
  const auto first = std::chrono::steady_clock::now();
  kill(c.pid, SIGINT);
  bool stuck = false;
  for (int i = 0; i < 1500 && !stuck; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int queued = 0;
    stuck = ioctl(c.out, FIONREAD, &queued) == 0 && queued >= 65536;
  }
  ASSERT_TRUE(stuck) << "the report never filled the pipe";
  // Later than the same interrupt delivered twice (cli/messages.h kRepeatedSignalSeconds).
  std::this_thread::sleep_until(first + std::chrono::milliseconds(1500));
  kill(c.pid, SIGINT);
  EXPECT_EQ(WaitExit(c.pid, std::chrono::seconds(60)), 3);
  close(c.out);
  std::string rest;
  char buf[4096];
  for (ssize_t n; (n = read(c.err, buf, sizeof buf)) > 0;) rest.append(buf, size_t(n));
  close(c.err);
  EXPECT_NE(rest.find("zsim: interrupted again: stopped at once"), std::string::npos) << rest;
  EXPECT_EQ(Names(out_dir), std::vector<std::string>{});
}

}  // namespace
}  // namespace zsim
