// Where the built zsim writes (issue 18): never over or inside what it scans, never through a
// symlink, a bad --html path refused before anything is read (exit 2), and a report that cannot
// be written on stdout an error with a message (exit 1), except a closed pipe (quiet).

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/util/child_process.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

namespace fs = std::filesystem;
using testing::RunZsim;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(ZSIM_BINARY)) << ZSIM_BINARY << " is missing: build the zsim target";
    data_ = testing::Xorshift64Bytes(5, 100'000);
    file_ = tmp_.WriteFile("D/f", data_);
    tmp_.WriteFile("D/sub/g", testing::Xorshift64Bytes(6, 50'000));
    tmp_.WriteFile("out/.keep", {});
    tree_ = tmp_.path() / "D";
  }

  // Runs `zsim scan <inputs> -q --html <html>`; expects exit 2, nothing on stdout, a message
  // naming the path and saying `why`, and D/f unchanged.
  void ExpectRefused(const std::vector<std::string>& inputs, const std::string& html,
                     const std::string& why) {
    std::vector<std::string> args = {"scan"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.insert(args.end(), {"-q", "--html", html});
    const testing::CommandResult r = RunZsim(args);
    EXPECT_EQ(r.exit_code, 2) << html << ": " << r.err;
    EXPECT_EQ(r.out, "") << html;
    EXPECT_NE(r.err.find("--html " + html), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_EQ(testing::ReadFileBytes(file_), data_);
  }

  testing::TempDir tmp_;
  std::vector<uint8_t> data_;
  fs::path file_, tree_;
};

// True once a thread of process `pid` is blocked in write(2) or writev(2) on fd 2
// (/proc/PID/task/TID/syscall: the syscall number, then its first argument, in hex).
bool HeldWritingStderr(pid_t pid) {
  std::error_code ec;
  for (const fs::directory_entry& task :
       fs::directory_iterator(fs::path("/proc") / std::to_string(pid) / "task", ec)) {
    std::ifstream in(task.path() / "syscall");  // a thread that ended is simply not there
    std::string line;
    std::getline(in, line);
    line += ' ';
    for (long call : {long{SYS_write}, long{SYS_writev}}) {
      if (line.rfind(std::to_string(call) + " 0x2 ", 0) == 0) return true;
    }
  }
  return false;
}

// Whether this kernel tells a thread's current syscall (HeldWritingStderr needs it).
bool SyscallsVisible() {
  std::ifstream in("/proc/self/syscall");
  std::string line;
  return std::getline(in, line) && !line.empty();
}

// Runs zsim with `args`, which write --html into `dir`; once the HTML report's temporary file
// exists there (the outputs were checked: the scan or the report is under way), runs `meanwhile`
// while zsim is held at its first message on stderr, then lets it finish. stderr is returned
// without the filler that held it.
testing::CommandResult RunHeldAtFirstMessage(const std::vector<std::string>& args,
                                             const fs::path& dir,
                                             const std::function<void()>& meanwhile) {
  testing::CommandResult r;
  // Watched before zsim starts, so that the creation cannot be missed.
  const int watch = inotify_init1(IN_CLOEXEC);
  EXPECT_GE(watch, 0);
  EXPECT_GE(inotify_add_watch(watch, dir.c_str(), IN_CREATE), 0);
  size_t filler = 0;
  const testing::Child c = testing::SpawnWithStderrFull(args, &filler);
  EXPECT_GT(c.pid, 0);
  EXPECT_GT(filler, 0u);
  bool created = false;
  alignas(inotify_event) char events[4096];
  pollfd pfd = {watch, POLLIN, 0};
  while (!created && poll(&pfd, 1, 60'000) == 1) {  // a guard against a hang
    const ssize_t n = read(watch, events, sizeof events);
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(events + at);
      created = created || (e->len > 0 && std::string(e->name).find(".zsim-") != std::string::npos);
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
  close(watch);
  EXPECT_TRUE(created) << "no temporary file of --html appeared in " << dir;
  // The temporary file may appear while zsim still checks its other outputs (--save among them):
  // `meanwhile` must wait until zsim is held at the message (on a busy machine it ran before the
  // --save check, which then refused the directory it had made).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool held = false;
  while (!(held = HeldWritingStderr(c.pid)) && std::chrono::steady_clock::now() < until) {
    usleep(1000);
  }
  EXPECT_TRUE(held) << "zsim was not seen held at its first message";
  meanwhile();
  // The filler read first: what zsim writes on stderr from then on fits in the pipe while its
  // stdout is read.
  std::string err;
  char buf[4096];
  while (err.size() < filler) {
    const ssize_t n = read(c.err, buf, std::min(sizeof buf, filler - err.size()));
    if (n <= 0) break;
    err.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(err.size(), filler);
  r.exit_code = testing::Collect(c, std::chrono::seconds(120), &r.out, &r.err);
  return r;
}

TEST_F(OutputFileTest, HtmlOverAScannedFileIsRefusedAndTheFileKept) {
  ExpectRefused({tree_.string()}, file_.string(), "inside the input tree");
  // The file itself named as the input.
  ExpectRefused({file_.string()}, file_.string(), "is one of the inputs");
}

TEST_F(OutputFileTest, HtmlInsideAScannedTreeIsRefusedByAnyRoute) {
  const std::string d = tree_.string();
  ExpectRefused({d}, d + "/new.html", "inside the input tree");
  ExpectRefused({d + "/."}, d + "/sub/../new.html", "inside the input tree");
  ExpectRefused({d}, (tmp_.path() / "out" / ".." / "D" / "sub" / "x.html").string(),
                "inside the input tree");
  // The input named through a symlink, the report through the real path, and the reverse.
  const fs::path link = tmp_.path() / "link-to-D";
  fs::create_directory_symlink(tree_, link);
  ExpectRefused({link.string()}, d + "/sub/x.html", "inside the input tree");
  ExpectRefused({d}, (link / "x.html").string(), "inside the input tree");
  EXPECT_FALSE(fs::exists(tree_ / "new.html"));
  EXPECT_FALSE(fs::exists(tree_ / "sub" / "x.html"));
}

// A route the walk finds on its way to where the outputs go: a symlink it follows
// (--follow-symlinks) to the output's directory or one above it, or to the existing report.
// The scan stops there, exit 2, nothing written (neither the --html nor the --save file).
// Without --follow-symlinks the same link is not followed, and the outputs are written.
TEST_F(OutputFileTest, AFollowedSymlinkToWhereTheOutputsGoStopsTheScanAndWritesNothing) {
  const fs::path out = tmp_.path() / "out";
  const std::string html = (out / "r.html").string();
  const std::string save = (out / "s.zstate").string();
  const fs::path link = tree_ / "sub" / "link";
  for (const fs::path& target : {out, tmp_.path()}) {
    fs::remove(link);
    fs::create_directory_symlink(target, link);
    const testing::CommandResult r = RunZsim(
        {"scan", tree_.string(), "-q", "--follow-symlinks", "--html", html, "--save", save});
    EXPECT_EQ(r.exit_code, 2) << target << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(link.string() + " leads to where zsim writes"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(html));
    EXPECT_FALSE(fs::exists(save));
    EXPECT_EQ(std::vector<fs::path>(fs::directory_iterator(out), {}),
              std::vector<fs::path>{out / ".keep"});  // no temporary file left either
  }
  // A symlink to the existing report itself: it would be replaced under the scanned name.
  tmp_.WriteFile("out/r.html", {'o', 'l', 'd'});
  fs::remove(link);
  fs::create_symlink(html, link);
  testing::CommandResult r =
      RunZsim({"scan", tree_.string(), "-q", "--follow-symlinks", "--html", html});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--html " + html + " itself"), std::string::npos) << r.err;
  EXPECT_EQ(testing::ReadFileBytes(html), (std::vector<uint8_t>{'o', 'l', 'd'}));
  // Not followed: not scanned, and the report is written.
  fs::remove(link);
  fs::create_directory_symlink(out, link);
  r = RunZsim({"scan", tree_.string(), "-q", "--html", html, "--save", save});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(save));
  EXPECT_GT(fs::file_size(html), 3u);
}

// --save (the scan's state file) is held to the same rule.
TEST_F(OutputFileTest, SaveOverOrInsideAScannedTreeIsRefused) {
  for (const std::string& save : {file_.string(), tree_.string() + "/state.zsim"}) {
    const testing::CommandResult r = RunZsim({"scan", tree_.string(), "-q", "--save", save});
    EXPECT_EQ(r.exit_code, 2) << save << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("--save " + save), std::string::npos) << r.err;
  }
  EXPECT_EQ(testing::ReadFileBytes(file_), data_);
  EXPECT_FALSE(fs::exists(tree_ / "state.zsim"));
}

// --html and --save naming one file, by any spelling: the HTML report would replace the state
// the user asked to keep (it did, with exit 0). And the --since state is read: the HTML report
// may not replace it either. Both refused before the scan, the existing file kept.
TEST_F(OutputFileTest, HtmlOverTheSavedOrTheSinceStateIsRefused) {
  const fs::path out = tmp_.path() / "out";
  const fs::path state = out / "s.zstate";
  for (const auto& [html, save] :
       {std::pair<std::string, std::string>{state.string(), state.string()},
        {(out / "." / "s.zstate").string(), (out / ".." / "out" / "s.zstate").string()}}) {
    const testing::CommandResult r =
        RunZsim({"scan", tree_.string(), "-q", "--html", html, "--save", save});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("name the same file"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(state));
  }
  const testing::CommandResult saved = RunZsim({"scan", tree_.string(), "-q", "--save", state});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const std::vector<uint8_t> kept = testing::ReadFileBytes(state);
  // Existing now: compared by inode, through another spelling.
  const testing::CommandResult again = RunZsim(
      {"scan", tree_.string(), "-q", "--html", (out / "." / "s.zstate").string(), "--save", state});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  const testing::CommandResult since =
      RunZsim({"scan", tree_.string(), "-q", "--since", state, "--html", state});
  EXPECT_EQ(since.exit_code, 2) << since.err;
  EXPECT_NE(since.err.find("is one of the inputs"), std::string::npos) << since.err;
  EXPECT_EQ(testing::ReadFileBytes(state), kept);
  // Separate files are fine.
  const testing::CommandResult ok = RunZsim(
      {"scan", tree_.string(), "-q", "--since", state, "--save", state, "--html", out / "r.html"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(OutputFileTest, HtmlAtASymlinkIsRefusedAndItsTargetUntouched) {
  const fs::path link = tmp_.path() / "out" / "report.html";
  fs::create_symlink(file_, link);
  ExpectRefused({(tmp_.path() / "out" / ".keep").string()}, link.string(), "symbolic link");
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST_F(OutputFileTest, MissingDirectoryADirectoryOrAnUnwritablePathIsBadUsageBeforeTheScan) {
  // The input is a fifo: reading it would block, so exit 2 shows nothing was read first.
  const std::string fifo = (tmp_.path() / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ExpectRefused({fifo}, (tmp_.path() / "missing" / "r.html").string(), "No such file");
  ExpectRefused({fifo}, (tmp_.path() / "out").string(), "is a directory; give a file name, e.g. ");
  // A directory that is scanned, or inside what is: no file in it is suggested (one would be
  // refused as inside the input tree).
  ExpectRefused({tree_.string()}, tree_.string(),
                "is a directory, and inside what is scanned; give a file name outside the inputs");
  ExpectRefused({tmp_.path().string()}, (tmp_.path() / "out").string(),
                "is a directory, and inside what is scanned");
  // /proc refuses new files even to root.
  ExpectRefused({fifo}, "/proc/zsim-report.html", "cannot create a file in /proc");
  ExpectRefused({fifo}, "/dev/null", "not a regular file");
}

// --save is checked as --html is: /proc and /sys refuse new files even to root, whom access()
// tells yes, and the scan ran to its end before saying the state could not be saved (exit 1,
// the report on stdout). Now exit 2 and no report: nothing was scanned.
TEST_F(OutputFileTest, SaveWhereNoFileCanBeCreatedIsBadUsageBeforeTheScan) {
  for (const std::string save : {"/proc/zsim-state", "/sys/kernel/zsim-state"}) {
    const testing::CommandResult r = RunZsim({"scan", tree_.string(), "-q", "--save", save});
    EXPECT_EQ(r.exit_code, 2) << save << ": " << r.err;
    EXPECT_EQ(r.out, "") << save;
    EXPECT_NE(r.err.find("--save " + save + ": cannot create a file in /"), std::string::npos)
        << r.err;
  }
  // A writable directory keeps no probe behind.
  const fs::path out = tmp_.path() / "out";
  const testing::CommandResult ok =
      RunZsim({"scan", tree_.string(), "-q", "--save", (out / "s.zstate").string()});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".keep", "s.zstate"}));
}

TEST_F(OutputFileTest, HtmlReplacesAnExistingFileWholeAndNeverWritesThroughItsInode) {
  // The target has a second name (a hard link) elsewhere: replacing the target by rename leaves
  // that name's contents alone, where writing in place would have changed both.
  const fs::path target = tmp_.path() / "out" / "report.html";
  const std::vector<uint8_t> old(1000, 'x');
  tmp_.WriteFile("out/report.html", old);
  fs::create_hard_link(target, tmp_.path() / "out" / "other-name");
  const testing::CommandResult r = RunZsim({"scan", tree_.string(), "-q", "--html", target});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<uint8_t> page = testing::ReadFileBytes(target);
  EXPECT_EQ(std::string(page.begin(), page.begin() + 15), "<!DOCTYPE html>");
  EXPECT_EQ(testing::ReadFileBytes(tmp_.path() / "out" / "other-name"), old);
  // No temporary file is left beside it.
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(tmp_.path() / "out")) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 3u);  // .keep, report.html, other-name
}

// The --save state cannot be written at the end (here its path became a directory during the
// scan; a full disk does the same): the report is still written on stdout and to --html, the
// save's error said, exit code 1. (Nothing was written: the scan's report was lost.)
TEST_F(OutputFileTest, ASaveFailingAtTheEndStillWritesTheReport) {
  if (!SyscallsVisible()) GTEST_SKIP() << "/proc/self/syscall is not readable here";
  const fs::path out = tmp_.path() / "out";
  const fs::path html = out / "r.html", save = out / "s.zstate", base = out / "base.zstate";
  const auto expect_report_and_error = [&](const testing::CommandResult& r, const char* what) {
    EXPECT_EQ(r.exit_code, 1) << what << ": " << r.err;
    EXPECT_NE(r.out.find("\"results\""), std::string::npos) << what << ": " << r.out.substr(0, 200);
    const std::vector<uint8_t> page = testing::ReadFileBytes(html);
    EXPECT_EQ(std::string(page.begin(), page.begin() + std::min<size_t>(15, page.size())),
              "<!DOCTYPE html>")
        << what;
    EXPECT_NE(r.err.find("state was not saved: --save " + save.string() + " is a directory"),
              std::string::npos)
        << what << ": " << r.err;
    EXPECT_NE(r.err.find("(the report is written as asked)"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_directory(save)) << what;
    for (const fs::directory_entry& e : fs::directory_iterator(out)) {
      const std::string name = e.path().filename().string();
      EXPECT_TRUE(name.find(".tmp.") == std::string::npos && name.find(".zsim-") == name.npos)
          << what << ": " << e.path() << " left behind";
    }
    fs::remove_all(save);
    fs::remove(html);
  };
  // The scan's first message (--exclude matched nothing) comes after the scan, before the save.
  expect_report_and_error(
      RunHeldAtFirstMessage({"scan", tree_.string(), "--json", "--exclude", "no-such-name",
                             "--html", html.string(), "--save", save.string()},
                            out, [&] { fs::create_directories(save / "x"); }),
      "scan");
  // zsim report's (the note that the saved state keeps the first part's vdev) just before its
  // save.
  ASSERT_EQ(RunZsim({"scan", tree_.string(), "-q", "--save", base.string()}).exit_code, 0);
  expect_report_and_error(
      RunHeldAtFirstMessage({"report", base.string(), "--json", "--vdev", "mirror:2", "--html",
                             html.string(), "--save", save.string()},
                            out, [&] { fs::create_directories(save / "x"); }),
      "report");
}

// Lifts chattr's immutable and append-only attributes from its paths when the test ends, so
// that the temporary directory can be removed whatever the test did.
class AttributesLifted {
 public:
  explicit AttributesLifted(std::vector<fs::path> paths) : paths_(std::move(paths)) {}
  ~AttributesLifted() {
    for (const fs::path& p : paths_) testing::RunCommand({"chattr", "-i", "-a", p.string()});
  }
  AttributesLifted(const AttributesLifted&) = delete;
  AttributesLifted& operator=(const AttributesLifted&) = delete;

 private:
  std::vector<fs::path> paths_;
};

// A target the rename at the end could not replace is refused before anything is read (exit
// 2, naming the path and why), for --html and --save of scan and report: an immutable or
// append-only file, or one in an immutable or append-only directory. (They were accepted: the
// scan ran, and then the rename failed.)
TEST_F(OutputFileTest, AnImmutableOrAppendOnlyTargetIsRefusedBeforeTheScan) {
  const fs::path out = tmp_.path() / "out", locked = out / "locked";
  const fs::path old = tmp_.WriteFile("out/old", {'o', 'l', 'd'}), base = out / "base.zstate";
  fs::create_directory(locked);
  ASSERT_EQ(RunZsim({"scan", tree_.string(), "-q", "--save", base.string()}).exit_code, 0);
  const AttributesLifted lifted({old, locked});
  const auto chattr = [](const char* how, const fs::path& p) {
    return testing::RunCommand({"chattr", how, p.string()}).exit_code == 0;
  };
  if (!chattr("+i", old)) {
    GTEST_SKIP() << "chattr +i fails here (a file system without attributes, or no "
                    "CAP_LINUX_IMMUTABLE): nothing to test";
  }
  ASSERT_TRUE(chattr("-i", old));
  const auto expect_refused = [&](const fs::path& target, const std::string& why) {
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"scan", tree_.string()}, {"report", base.string()}}) {
      for (const char* flag : {"--html", "--save"}) {
        std::vector<std::string> args = command;
        args.insert(args.end(), {"-q", flag, target.string()});
        const testing::CommandResult r = RunZsim(args);
        EXPECT_EQ(r.exit_code, 2) << command[0] << " " << flag << " " << why << ": " << r.err;
        EXPECT_EQ(r.out, "");
        EXPECT_NE(r.err.find(std::string(flag) + " " + target.string() + ": " + why),
                  std::string::npos)
            << r.err;
      }
    }
  };
  for (const auto& [how, why] :
       {std::pair<const char*, std::string>{"+i", "is immutable"}, {"+a", "is append-only"}}) {
    ASSERT_TRUE(chattr(how, old)) << how;
    expect_refused(old, why + " (chattr " + how + "): it cannot be replaced");
    ASSERT_TRUE(chattr(how[1] == 'i' ? "-i" : "-a", old));
    EXPECT_EQ(testing::ReadFileBytes(old), (std::vector<uint8_t>{'o', 'l', 'd'}));
    // A directory so marked: a new file in it (an append-only one would keep the temporary
    // file for good: none may be left).
    ASSERT_TRUE(chattr(how, locked)) << how;
    expect_refused(locked / "new", "its directory " + locked.string() + " " + why);
    ASSERT_TRUE(chattr(how[1] == 'i' ? "-i" : "-a", locked));
    EXPECT_TRUE(fs::is_empty(locked)) << how;
  }
}

// Another user's file in a sticky directory (mode 1777, as /tmp) can be replaced only by its
// owner, the directory's owner or a process with CAP_FOWNER: for others it is refused before the
// scan (exit 2), for --html and --save. Run as nobody over a file of root's.
TEST_F(OutputFileTest, AnotherUsersFileInAStickyDirectoryIsRefusedBeforeTheScan) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run zsim as nobody over root's file";
  const fs::path sticky = tmp_.path() / "sticky";
  fs::create_directory(sticky);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);  // nobody reaches the tree and the directory
  const fs::path roots = tmp_.WriteFile("sticky/roots", {'o', 'l', 'd'});
  const fs::path nobodys = sticky / "nobodys";
  const auto as_nobody = [&](const char* flag, const fs::path& target) {
    return testing::RunZsimUnprivileged({"scan", tree_.string(), "-q", flag, target.string()});
  };
  for (const char* flag : {"--html", "--save"}) {
    fs::remove(nobodys);
    tmp_.WriteFile("sticky/nobodys", {'o', 'l', 'd'});
    ASSERT_EQ(::chown(nobodys.c_str(), 65534, 65534), 0);
    const testing::CommandResult r = as_nobody(flag, roots);
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(std::string(flag) + " " + roots.string() +
                         ": belongs to another user (uid 0) in " + sticky.string() +
                         ", a sticky directory (mode 1777)"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(testing::ReadFileBytes(roots), (std::vector<uint8_t>{'o', 'l', 'd'}));
    // Its own file there is replaced; so is nobody's by root (CAP_FOWNER).
    const testing::CommandResult own = as_nobody(flag, nobodys);
    EXPECT_EQ(own.exit_code, 0) << flag << ": " << own.err;
    const testing::CommandResult root = RunZsim({"scan", tree_.string(), "-q", flag, nobodys});
    EXPECT_EQ(root.exit_code, 0) << flag << ": " << root.err;
    EXPECT_GT(fs::file_size(nobodys), 3u);
  }
}

TEST_F(OutputFileTest, StdoutWriteErrorIsAnErrorWithAMessage) {
  const testing::CommandResult r =
      testing::RunCommand({ZSIM_BINARY, "scan", tree_.string(), "-q"}, "/dev/full");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot write the report to standard output: No space left on device"),
            std::string::npos)
      << r.err;
  const testing::CommandResult j =
      testing::RunCommand({ZSIM_BINARY, "scan", tree_.string(), "-q", "--json"}, "/dev/full");
  EXPECT_EQ(j.exit_code, 1);
}

TEST_F(OutputFileTest, HelpAndVersionNotDeliveredAreErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"},
                                               {"scan", "--help"},
                                               {"report", "--help"},
                                               {"--version"}}) {
    std::vector<std::string> argv{ZSIM_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    const testing::CommandResult r = testing::RunCommand(argv, "/dev/full");
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_NE(r.err.find("cannot write to standard output: No space left on device"),
              std::string::npos)
        << r.err;
  }
  const testing::CommandResult ok = testing::RunZsim({"--help"});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_NE(ok.out.find("scan"), std::string::npos);
}

}  // namespace
}  // namespace zsim
