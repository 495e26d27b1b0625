// The built zsim on real trees that hold what a storage server holds besides plain files: fifos,
// sockets, device nodes, /proc and /sys files whose size lies, empty files, names that are not
// UTF-8 or hold newlines and escape sequences, a 1 TB sparse file, mount points, excluded paths;
// that it never writes (mtimes, atimes, contents unchanged); Ctrl-C, a closed stdout, and bad
// arguments. The tests run as root (as CI does); cases that need a capability this machine lacks
// are skipped with the reason.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/util/child_process.h"
#include "tests/util/report_json.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

using nlohmann::json;
using testing::RunZsim;
namespace fs = std::filesystem;

json ParseJson(const testing::CommandResult& r) { return testing::ParseReportJson(r); }
using testing::ResultFor;

using testing::Child;
using testing::Collect;
using testing::ReadAll;
using testing::ReadUntil;
using testing::Spawn;
using testing::WaitExit;

// A sparse file of `size` bytes with `data` written at `offset`.
void WriteSparse(const fs::path& path, uint64_t size, uint64_t offset,
                 const std::vector<uint8_t>& data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
  if (!data.empty()) {
    ASSERT_EQ(pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(data.size()));
  }
  close(fd);
}

TEST(RealFilesTest, FifosSocketsAndDeviceNodesAreSkippedWithoutBlocking) {
  testing::TempDir tmp;
  tmp.WriteFile("data", testing::Xorshift64Bytes(1, 64 * K));
  ASSERT_EQ(mkfifo((tmp.path() / "fifo").c_str(), 0644), 0);  // no writer: opening would block
  const int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = (tmp.path() / "sock").string();
  ASSERT_LT(sock_path.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock_path.c_str());
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  bool have_nodes = mknod((tmp.path() / "zero").c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0 &&
                    mknod((tmp.path() / "loop").c_str(), S_IFBLK | 0644, makedev(7, 250)) == 0;
  const auto r = RunZsim({"scan", tmp.path().string(), "--compression", "off", "--json"});
  close(sock);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_EQ(j["input"]["files"], 1);
  EXPECT_EQ(j["input"]["skipped"]["fifo"], 1);
  EXPECT_EQ(j["input"]["skipped"]["socket"], 1);
  if (have_nodes) {
    EXPECT_EQ(j["input"]["skipped"]["char_device"], 1);
    EXPECT_EQ(j["input"]["skipped"]["block_device"], 1);
  }
  EXPECT_TRUE(j["input"]["errors"].empty());
  EXPECT_EQ(ResultFor(j, 128 * K, "off")["lsize"], 64 * K);

  // A fifo named on the command line is not opened, and stderr says so at once. Beside a file,
  // the file is scanned and the fifo counted as skipped; alone (or with a socket), there is
  // nothing to scan: bad usage before any read, as for a path that does not exist (it was exit
  // 0 with an empty "nothing to advise" report).
  const std::string fifo = (tmp.path() / "fifo").string();
  const auto f = RunZsim({"scan", fifo, (tmp.path() / "data").string(), "--json"});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(ParseJson(f)["input"]["skipped"]["fifo"], 1);
  EXPECT_EQ(ParseJson(f)["input"]["files"], 1);
  EXPECT_NE(f.err.find("fifo is a fifo: not scanned"), std::string::npos) << f.err;
  for (const std::vector<std::string>& paths :
       {std::vector<std::string>{fifo}, {fifo, (tmp.path() / "sock").string()}}) {
    std::vector<std::string> args = {"scan", "--json"};
    args.insert(args.end(), paths.begin(), paths.end());
    const auto alone = RunZsim(args);
    EXPECT_EQ(alone.exit_code, 2) << alone.err;
    EXPECT_EQ(alone.out, "");
    EXPECT_NE(alone.err.find("fifo is a fifo"), std::string::npos) << alone.err;
    EXPECT_NE(alone.err.find("nothing to scan (zsim reads files, directories and block devices)"),
              std::string::npos)
        << alone.err;
  }
}

// Paths named that do not exist: all of them, nothing to scan, bad usage before any read (it was
// exit 1 with a whole "nothing to advise" report); one among others, said at once on stderr, the
// others scanned and the missing one listed with the errors (exit 1).
TEST(RealFilesTest, NamedPathsThatDoNotExist) {
  testing::TempDir tmp;
  tmp.WriteFile("data", testing::Xorshift64Bytes(1, 64 * K));
  const std::string gone = (tmp.path() / "no-such-dir").string();
  for (const std::vector<std::string>& paths :
       {std::vector<std::string>{gone}, {gone, gone + "2"}}) {
    std::vector<std::string> args = {"scan"};
    args.insert(args.end(), paths.begin(), paths.end());
    const auto r = RunZsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(gone + ": No such file or directory"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing to scan"), std::string::npos) << r.err;
  }
  // A symbolic link that loops resolves to nothing either (it was exit 1, an io_error).
  const std::filesystem::path loop = tmp.path() / "loop";
  std::filesystem::create_symlink(tmp.path() / "loop2", loop);
  std::filesystem::create_symlink(loop, tmp.path() / "loop2");
  const auto looping = RunZsim({"scan", loop.string()});
  EXPECT_EQ(looping.exit_code, 2) << looping.err;
  EXPECT_EQ(looping.out, "");
  EXPECT_NE(
      looping.err.find(loop.string() + ": Too many levels of symbolic links: nothing to scan"),
      std::string::npos)
      << looping.err;
  const auto some = RunZsim({"scan", gone, (tmp.path() / "data").string(), "--json"});
  EXPECT_EQ(some.exit_code, 1) << some.err;
  EXPECT_EQ(some.err.find("zsim: " + gone + ": No such file or directory; scanning the other"), 0u)
      << some.err;
  const json j = ParseJson(some);
  EXPECT_EQ(j["input"]["files"], 1);
  EXPECT_EQ(j["input"]["errors"].size(), 1u);
}

TEST(RealFilesTest, ProcFilesWhoseSizeLiesNeitherHangNorCrash) {
  // /proc files say 0 bytes and hold more: modelled as empty, never read past what stat said.
  const auto proc = RunZsim({"scan", "/proc/self/status", "/proc/version", "--json"});
  EXPECT_EQ(proc.exit_code, 0) << proc.err;
  const json p = ParseJson(proc);
  EXPECT_EQ(p["input"]["files"], 2);
  EXPECT_EQ(p["input"]["bytes_logical"], 0);
  // A /sys attribute says 4096 bytes and holds a few: the short file is an error, not a crash.
  const char* kSys = "/sys/kernel/mm/ksm/run";
  struct stat st;
  if (stat(kSys, &st) != 0 || st.st_size != 4096) GTEST_SKIP() << kSys << " absent here";
  const auto sys = RunZsim({"scan", kSys, "--json"});
  EXPECT_EQ(sys.exit_code, 1) << sys.err;
  const json s = ParseJson(sys);
  ASSERT_EQ(s["input"]["errors"].size(), 1u);
  EXPECT_EQ(s["input"]["errors"][0]["error"].get<std::string>().rfind("changed_while_read", 0), 0u);
}

// Makes `depth` nested directories of `name` under the directory `parent` (an fd, closed), a
// file of `bytes` bytes at the levels in `files_at`; returns false where the file system refused.
bool MakeDeepTree(int parent, const std::string& name, int depth, const std::vector<int>& files_at,
                  size_t bytes) {
  int dir = parent;
  for (int level = 1; level <= depth; ++level) {
    if (::mkdirat(dir, name.c_str(), 0755) != 0) return ::close(dir), false;
    const int next = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(dir);
    if (next < 0) return false;
    dir = next;
    if (std::find(files_at.begin(), files_at.end(), level) != files_at.end()) {
      const int f = ::openat(dir, "data", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (f < 0) return ::close(dir), false;
      const std::vector<uint8_t> content = testing::GenerateBlock(bytes, 0.5, level);
      const bool written = ::write(f, content.data(), content.size()) == ssize_t(content.size());
      ::close(f);
      if (!written) return ::close(dir), false;
    }
  }
  ::close(dir);
  return true;
}

// Removes the chain of directories `names[i..]` under `parent` (an fd, kept), however deep
// (no path of it is ever spelled whole), with the files the tests put in them: "data" at any
// level, "sub/data" at the deepest.
void RemoveChain(int parent, const std::vector<std::string>& names, size_t i) {
  const int dir =
      ::openat(parent, names[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir >= 0) {
    ::unlinkat(dir, "data", 0);
    if (i + 1 < names.size()) {
      RemoveChain(dir, names, i + 1);
    } else {
      ::unlinkat(dir, "sub/data", 0);
      ::unlinkat(dir, "sub", AT_REMOVEDIR);
    }
    ::close(dir);
  }
  ::unlinkat(parent, names[i].c_str(), AT_REMOVEDIR);
}

// A tree deeper than PATH_MAX (ZFS has no such limit): every file is read, at any depth. The
// walk lost all below its first 4,096 bytes of path to one "lstat: File name too long" error.
TEST(RealFilesTest, PathsLongerThanPathMaxAreScanned) {
  testing::TempDir tmp;
  const std::string name(200, 'd');  // 30 levels: a path of over 6,000 bytes
  const int root = ::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(root, 0);
  ASSERT_TRUE(MakeDeepTree(::dup(root), name, 30, {2, 19, 21, 30}, 20000));
  const auto r = RunZsim({"scan", tmp.path().string(), "--compression", "lz4", "--json"});
  RemoveChain(root, std::vector<std::string>(30, name), 0);
  ::close(root);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_TRUE(j["input"]["errors"].empty()) << j["input"]["errors"].dump();
  EXPECT_EQ(j["input"]["files"], 4);
  EXPECT_EQ(j["input"]["directories"], 31);  // the root and 30 levels
  EXPECT_EQ(j["input"]["bytes_logical"], 4 * 20000);
  EXPECT_EQ(j["input"]["bytes_read"], 4 * 20000);
}

// A long path typed with a doubled '/' where it is cut (a part of 3,999 bytes, then "//"): the
// rest is below that part, not below the root (it was taken from "/": the directory named was
// "not found", and a path that exists from "/" was read instead).
TEST(RealFilesTest, ALongPathWithADoubledSlashAtItsCutStaysBelowIt) {
  testing::TempDir tmp;
  std::vector<std::string> names;
  size_t length = tmp.path().string().size();
  while (3999 - length > 256) names.push_back(std::string(200, 'e')), length += 201;
  names.push_back(std::string(3999 - length - 1, 'f'));
  std::string base = tmp.path().string();
  int dir = ::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  const int root = ::dup(dir);
  for (const std::string& name : names) {
    ASSERT_EQ(::mkdirat(dir, name.c_str(), 0755), 0);
    const int next = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(dir);
    ASSERT_GE(next, 0);
    dir = next;
    base += "/" + name;
  }
  ASSERT_EQ(base.size(), 3999u);
  ASSERT_EQ(::mkdirat(dir, "sub", 0755), 0);
  const int f = ::openat(dir, "sub/data", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(f, 0);
  const std::vector<uint8_t> content = testing::GenerateBlock(5000, 0.5, 3);
  ASSERT_EQ(::write(f, content.data(), content.size()), ssize_t(content.size()));
  ::close(f);
  ::close(dir);
  const auto r = RunZsim({"scan", base + "//sub", "--compression", "lz4", "--json"});
  RemoveChain(root, names, 0);
  ::close(root);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_TRUE(j["input"]["errors"].empty()) << j["input"]["errors"].dump().substr(0, 300);
  EXPECT_EQ(j["input"]["files"], 1);
  EXPECT_EQ(j["input"]["bytes_logical"], 5000);
}

TEST(RealFilesTest, ZeroLengthFilesCountAsFilesWithNoBlock) {
  testing::TempDir tmp;
  for (int i = 0; i < 300; ++i) tmp.WriteFile(testing::NumberedName("empty/e", i), {});
  const auto r = RunZsim({"scan", tmp.path().string(), "--compression", "off,lz4", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_EQ(j["input"]["files"], 300);
  EXPECT_EQ(j["input"]["bytes_logical"], 0);
  for (const char* c : {"off", "lz4"}) {
    EXPECT_EQ(ResultFor(j, 128 * K, c)["lsize"], 0);
    EXPECT_EQ(ResultFor(j, 128 * K, c)["dedup"]["entries"]["unique"], 0);
    EXPECT_EQ(ResultFor(j, 128 * K, c)["blocks"]["data"], 0);
  }
}

// Names that are hostile to each output: not UTF-8, a newline, terminal escapes, HTML markup.
class HostileNames : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<uint8_t> data = testing::GenerateBlock(300 * K, 0.6, 3);
    for (const std::string& dir : {kNotUtf8, kNewline, kEscape, kMarkup}) {
      tmp_.WriteFile(dir + "/file", data);  // the same content: every row has duplicates
    }
    // Symlink loops named alike, so the names also show up in the error lists.
    for (const std::string& dir : {kNotUtf8, kNewline, kEscape, kMarkup}) {
      EXPECT_EQ(symlink(".", (tmp_.path() / dir / (dir + "-loop")).c_str()), 0);
    }
  }
  testing::CommandResult Run(std::vector<std::string> extra) {
    std::vector<std::string> args = {"scan", tmp_.path().string(), "--compression", "lz4",
                                     "--follow-symlinks"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunZsim(args);
  }
  const std::string kNotUtf8 = "bad\xff\xfe\xc3(name";
  const std::string kNewline = "two\nlines";
  const std::string kEscape = "esc\x1b]0;owned\x07\x1b[31m\rred";
  const std::string kMarkup = "<img src=x onerror=alert(1)>&amp";
  testing::TempDir tmp_;
};

TEST_F(HostileNames, JsonStaysValidAndEscapesControlCharacters) {
  const auto r = Run({"--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the 4 loops are errors
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.out.find('\xff'), std::string::npos);  // invalid UTF-8 never reaches the JSON
  const json j = ParseJson(r);
  ASSERT_EQ(j["input"]["errors"].size(), 4u);
  std::vector<std::string> paths;
  for (const json& e : j["input"]["errors"]) paths.push_back(e["path"].get<std::string>());
  const std::string root = tmp_.path().string();
  EXPECT_NE(std::find(paths.begin(), paths.end(), root + "/" + kNewline + "/" + kNewline + "-loop"),
            paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), root + "/" + kMarkup + "/" + kMarkup + "-loop"),
            paths.end());
  EXPECT_NE(r.out.find("two\\nlines"), std::string::npos);
  EXPECT_NE(r.out.find("esc\\u001b]0;owned\\u0007"), std::string::npos);
  EXPECT_EQ(j["input"]["files"], 4);
}

TEST_F(HostileNames, TextReportAndStderrShowEveryNameOnOneLineWithoutControlBytes) {
  const auto r = Run({});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  for (const std::string* text : {&r.out, &r.err}) {
    for (char c : *text) {
      const auto u = static_cast<unsigned char>(c);
      // Only newlines of the report's own layout; no escape, bell or carriage return.
      EXPECT_TRUE(u >= 0x20 || c == '\n') << "control byte " << int(u);
      if (u < 0x20 && c != '\n') break;
    }
  }
  // No line of either output starts with the second half of a name that held a newline.
  EXPECT_EQ(r.out.find("\nlines"), std::string::npos);
  EXPECT_EQ(r.err.find("\nlines"), std::string::npos);
  // stderr lists the unreadable paths escaped: \n, \xNN.
  EXPECT_NE(r.err.find("two\\nlines"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("esc\\x1b]0;owned\\x07\\x1b[31m\\rred"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad\\xff\\xfe\\xc3(name"), std::string::npos) << r.err;
}

TEST_F(HostileNames, HtmlReportEscapesMarkup) {
  testing::TempDir out;
  const fs::path html = out.path() / "report.html";
  const auto r = Run({"--html", html.string(), "-q"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::ifstream in(html, std::ios::binary);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(page.find("<img src=x"), std::string::npos);
  EXPECT_NE(page.find("&lt;img src=x onerror=alert(1)&gt;&amp;amp"), std::string::npos);
}

// Control bytes of names (ESC, BEL, CR) never reach the page raw: shown as '?', as in text.
TEST_F(HostileNames, HtmlReportHasNoRawControlBytes) {
  testing::TempDir out;
  const fs::path html = out.path() / "report.html";
  const auto r = Run({"--html", html.string(), "-q"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::ifstream in(html, std::ios::binary);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
  EXPECT_EQ(page.find('\x07'), std::string::npos);
  EXPECT_EQ(page.find('\r'), std::string::npos);
}

TEST(RealFilesTest, TerabyteSparseFileReadsOnlyItsData) {
  testing::TempDir tmp;
  const fs::path path = tmp.path() / "huge.img";
  const std::vector<uint8_t> data = testing::Xorshift64Bytes(7, 1 * M);
  WriteSparse(path, 1ull << 40, 300ull << 30, data);  // 1 TiB, 1 MiB of data at 300 GiB
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  if (static_cast<uint64_t>(st.st_blocks) * 512 > 4 * M) GTEST_SKIP() << "no sparse files here";
  const auto r = RunZsim({"scan", path.string(), "--compression", "off", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_EQ(j["input"]["bytes_logical"], 1ull << 40);
  EXPECT_EQ(j["input"]["bytes_read"], 1 * M);  // holes are never read
  const json& off = ResultFor(j, 128 * K, "off");
  EXPECT_EQ(off["lsize"], 1 * M);  // 8 records of data; the rest are holes
  EXPECT_EQ(off["blocks"]["data"], 8);
}

TEST(RealFilesTest, OneFileSystemStopsAtMountPoints) {
  testing::TempDir tmp;
  tmp.WriteFile("here", testing::Xorshift64Bytes(8, 64 * K));
  const fs::path mnt = tmp.path() / "mnt";
  fs::create_directory(mnt);
  if (mount("zsim-test", mnt.c_str(), "tmpfs", 0, "size=4m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  }
  {
    std::ofstream f(mnt / "there", std::ios::binary);
    const std::vector<uint8_t> d = testing::Xorshift64Bytes(9, 128 * K);
    f.write(reinterpret_cast<const char*>(d.data()), static_cast<std::streamsize>(d.size()));
  }
  const auto one =
      RunZsim({"scan", tmp.path().string(), "--compression", "off", "--json", "--one-file-system"});
  const auto all = RunZsim({"scan", tmp.path().string(), "--compression", "off", "--json"});
  umount2(mnt.c_str(), MNT_DETACH);
  EXPECT_EQ(one.exit_code, 0) << one.err;
  const json o = ParseJson(one);
  EXPECT_EQ(o["input"]["files"], 1);
  EXPECT_EQ(o["input"]["skipped"]["other_file_system"], 1);
  EXPECT_EQ(ResultFor(o, 128 * K, "off")["lsize"], 64 * K);
  const json a = ParseJson(all);
  EXPECT_EQ(a["input"]["files"], 2);
  EXPECT_EQ(ResultFor(a, 128 * K, "off")["lsize"], 192 * K);
}

TEST(RealFilesTest, ExcludedPathsAreSkippedAndLeaveTheFiguresOfTheRest) {
  testing::TempDir tmp, kept;
  const std::vector<uint8_t> keep = testing::Xorshift64Bytes(10, 200 * K);
  tmp.WriteFile("keep.dat", keep);
  kept.WriteFile("keep.dat", keep);
  tmp.WriteFile("a.log", testing::Xorshift64Bytes(11, 64 * K));
  tmp.WriteFile("sub/b.log", testing::Xorshift64Bytes(12, 64 * K));
  tmp.WriteFile("cache/c.dat", testing::Xorshift64Bytes(13, 64 * K));
  const auto r = RunZsim({"scan", tmp.path().string(), "--compression", "off", "--json",
                          "--exclude", "*.log", "--exclude", "cache"});
  const auto want = RunZsim({"scan", kept.path().string(), "--compression", "off", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  const json w = ParseJson(want);
  EXPECT_EQ(j["input"]["files"], 1);
  EXPECT_EQ(j["input"]["skipped"]["excluded"], 3);  // a.log, sub/b.log, cache/
  EXPECT_EQ(ResultFor(j, 128 * K, "off")["lsize"], ResultFor(w, 128 * K, "off")["lsize"]);
  EXPECT_EQ(ResultFor(j, 128 * K, "off")["dedup"], ResultFor(w, 128 * K, "off")["dedup"]);
}

// What a scan must leave as it found it: content, size, mtime, ctime, and the atime where
// O_NOATIME applies (root, or the owner).
struct Snapshot {
  std::map<std::string, std::vector<int64_t>> times;
  std::map<std::string, std::vector<uint8_t>> contents;
};

// The file's bytes, read with O_NOATIME so that taking the snapshot leaves the atime alone.
std::vector<uint8_t> ReadNoAtime(const fs::path& path) {
  std::vector<uint8_t> bytes;
  const int fd = open(path.c_str(), O_RDONLY | O_NOATIME | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  if (fd < 0) return bytes;
  uint8_t buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
  close(fd);
  return bytes;
}

// Times first (fs::recursive_directory_iterator reads the directories without O_NOATIME, so it
// lists them once up front), contents after.
Snapshot Take(const std::vector<fs::path>& paths) {
  Snapshot s;
  for (const fs::path& p : paths) {
    struct stat st;
    if (lstat(p.c_str(), &st) != 0) continue;
    s.times[p.string()] = {st.st_mtim.tv_sec,
                           st.st_mtim.tv_nsec,
                           st.st_atim.tv_sec,
                           st.st_atim.tv_nsec,
                           st.st_ctim.tv_sec,
                           st.st_ctim.tv_nsec,
                           static_cast<int64_t>(st.st_size)};
  }
  for (const fs::path& p : paths) {
    if (fs::is_regular_file(fs::symlink_status(p))) s.contents[p.string()] = ReadNoAtime(p);
  }
  return s;
}

TEST(RealFilesTest, ScanLeavesContentsMtimesAndAtimesUnchanged) {
  if (geteuid() != 0) GTEST_SKIP() << "O_NOATIME on every file needs root or ownership";
  testing::TempDir tmp;
  tmp.WriteFile("a", testing::GenerateBlock(300 * K, 0.5, 1));
  tmp.WriteFile("dir/b", testing::Xorshift64Bytes(2, 9 * M));
  tmp.WriteFile("dir/deeper/c", {'x'});
  tmp.WriteFile("dir/empty", {});
  WriteSparse(tmp.path() / "sparse", 64 * M, 10 * M, testing::Xorshift64Bytes(3, 200 * K));
  // atime before mtime: under relatime (and strictatime) any plain read would update it.
  const timespec old_atime = {1000000000, 0};
  std::vector<fs::path> paths = {tmp.path()};
  for (const auto& e : fs::recursive_directory_iterator(tmp.path())) paths.push_back(e.path());
  for (const fs::path& p : paths) {
    const timespec times[2] = {old_atime, {0, UTIME_OMIT}};
    ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  }
  const Snapshot before = Take(paths);
  ASSERT_EQ(before.times.size(), 8u);
  for (const auto& [path, t] : before.times) ASSERT_EQ(t[2], old_atime.tv_sec) << path;
  const auto r = RunZsim({"scan", tmp.path().string(), "--compression", "lz4,gzip", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Snapshot after = Take(paths);
  EXPECT_EQ(after.contents, before.contents);
  for (const auto& [path, t] : before.times) {
    EXPECT_EQ(after.times.at(path), t) << path << " (mtime, atime, ctime, size)";
  }
}

TEST(RealFilesTest, FirstInterruptPrintsAPartialReportAndExits130) {
  testing::TempDir tmp;
  // 200 sparse files of 2 GiB with 4 KiB of data in every 8 MiB chunk: zsim skips chunks that
  // hold no data, so each of these 51200 chunks must really be opened and read, which takes
  // long enough to be interrupted.
  const std::vector<uint8_t> block = testing::Xorshift64Bytes(99, 4 * K);
  for (int i = 0; i < 200; ++i) {
    const fs::path path = tmp.path() / testing::NumberedName("img", i);
    WriteSparse(path, 2ull << 30, 0, {});
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (uint64_t off = 0; off < (2ull << 30); off += 8 * M) {
      ASSERT_EQ(
          pwrite(fd, block.data(), block.size(), static_cast<off_t>(off + uint64_t(i) * 4 * K)),
          static_cast<ssize_t>(block.size()));
    }
    close(fd);
  }
  for (int sig : {SIGINT, SIGTERM}) {
    Child c = Spawn({"scan", tmp.path().string(), "--compression", "off", "--json", "--progress"});
    ASSERT_GT(c.pid, 0);
    std::string err;
    ASSERT_TRUE(ReadUntil(c.err, "scanned", &err)) << err;  // the scan is under way
    // The sizing walk has the total while the scan is still on its first files.
    ASSERT_TRUE(ReadUntil(c.err, " of 200 files", &err)) << err;
    kill(c.pid, sig);
    std::string out;
    EXPECT_EQ(Collect(c, std::chrono::seconds(120), &out, &err), 130) << err;
    const json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << out.substr(0, 300);
    EXPECT_EQ(j["partial"], true);
    EXPECT_LT(j["input"]["files"].get<int>(), 200);
    EXPECT_NE(err.find("interrupted"), std::string::npos) << err;
  }
}

TEST(RealFilesTest, SecondInterruptExitsAtOnceEvenWhileTheReportIsStuck) {
  testing::TempDir tmp;
  // 1500 symlink loops with long names (followed: each is an error listed in the JSON report,
  // which then outgrows a pipe's 64 KiB), then sparse files to be interrupted in.
  const std::string long_name(150, 'n');
  fs::create_directory(tmp.path() / "loops");
  for (int i = 0; i < 1500; ++i) {
    ASSERT_EQ(
        symlink(".", (tmp.path() / "loops" / testing::NumberedName(long_name.c_str(), i)).c_str()),
        0);
  }
  fs::create_directory(tmp.path() / "images");
  for (int i = 0; i < 200; ++i) {
    WriteSparse(tmp.path() / "images" / testing::NumberedName("img", i), 2ull << 30, 0, {1, 2, 3});
  }
  Child c = Spawn({"scan", (tmp.path() / "loops").string(), (tmp.path() / "images").string(),
                   "--follow-symlinks", "--compression", "off", "--json", "--progress"});
  ASSERT_GT(c.pid, 0);
  std::string err;
  ASSERT_TRUE(ReadUntil(c.err, "scanned", &err)) << err;
  const auto first = std::chrono::steady_clock::now();
  kill(c.pid, SIGINT);
  // stdout is never read: the report (> 64 KiB) blocks in write(). Wait for the pipe to fill.
  bool stuck = false;
  for (int i = 0; i < 1500 && !stuck; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int queued = 0;
    stuck = ioctl(c.out, FIONREAD, &queued) == 0 && queued >= 65536;
  }
  EXPECT_TRUE(stuck) << "the report never filled the pipe";
  // A second interrupt, later than the first delivered twice: stop at once (exit code 3).
  std::this_thread::sleep_until(first + std::chrono::milliseconds(1500));
  kill(c.pid, SIGINT);
  EXPECT_EQ(WaitExit(c.pid, std::chrono::seconds(60)), 3);
  close(c.out);
  close(c.err);
}

TEST(RealFilesTest, ClosedStdoutEndsQuietly) {
  testing::TempDir tmp;
  for (int i = 0; i < 20; ++i) {
    tmp.WriteFile(testing::NumberedName("f", i),
                  testing::GenerateBlock(100 * K, 0.5, static_cast<uint64_t>(i)));
  }
  Child c = Spawn({"scan", tmp.path().string(), "--compression", "lz4", "--no-progress"});
  ASSERT_GT(c.pid, 0);
  close(c.out);  // `zsim ... | head` after head has gone
  std::string err;
  ReadAll(c.err, &err);
  close(c.err);
  EXPECT_EQ(WaitExit(c.pid, std::chrono::seconds(120)), 0);  // not 141 (SIGPIPE)
  EXPECT_EQ(err, "");
}

// Started with stdout closed (`zsim scan DIR >&-`), the report, the help or the version would
// go nowhere: refused before any input is read (exit 2), where it exited 0, the report lost.
TEST(RealFilesTest, ClosedStdoutAtStartIsBadUsage) {
  testing::TempDir tmp;
  const std::string fifo = (tmp.path() / "fifo").string();  // read, it would block
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const auto closed = [](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"sh", "-c", "exec \"$0\" \"$@\" >&-", ZSIM_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunCommand(argv);
  };
  for (const std::vector<std::string>& args : {std::vector<std::string>{"scan", fifo},
                                               {"scan", fifo, "-q", "--json"},
                                               {"report", fifo},
                                               {"diff", fifo, fifo},
                                               {"--help"},
                                               {"scan", "--help"},
                                               {"--version"}}) {
    const testing::CommandResult r = closed(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1 % args.size()] << ": " << r.err;
    EXPECT_NE(r.err.find("standard output is closed"), std::string::npos) << r.err;
  }
  // To a file, even /dev/null, the report goes where it was sent.
  tmp.WriteFile("d/f", testing::Xorshift64Bytes(1, 10 * K));
  const testing::CommandResult null =
      testing::RunCommand({ZSIM_BINARY, "scan", (tmp.path() / "d").string(), "-q"}, "/dev/null");
  EXPECT_EQ(null.exit_code, 0) << null.err;
}

struct BadArgument {
  std::vector<std::string> args;
  std::string must_say;  // the allowed values or the conflict, as the message names them
};

TEST(BadArgumentsTest, EveryOptionIsCheckedBeforeAnyIoAndNamesTheAllowedValues) {
  testing::TempDir tmp;
  // A fifo as the path: if zsim touched its input before refusing, it would hang or count it.
  const std::string fifo = (tmp.path() / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const std::string html = (tmp.path() / "out.html").string();
  const std::vector<BadArgument> cases = {
      {{"--recordsize", "3000"}, "power of two from 512"},
      {{"--recordsize", "0"}, "power of two from 512"},
      {{"--recordsize", "lots"}, "suffix K, M, G"},
      {{"--recordsize", "99999999999999999999"}, "too large"},
      {{"--recordsize", "32M"},
       "recordsize 32M is not allowed: use a power of two from 512 to 16M"},
      {{"--volblocksize", "3k"}, "power of two"},
      {{"--compression", "brotli"}, "accepted: off, on, lzjb"},
      {{"--profile", "9.9"}, "v23, 2.1, 2.2, 2.3 or 2.4"},
      {{"--ashift", "20"}, "9 to 16"},
      {{"--vdev", "raidz9:2"}, "disk, mirror:N, raidzP:C, draidP:D:C"},
      {{"--copies", "4"}, "1, 2 or 3"},
      {{"--checksum", "md5"}, "xxh128 or sha256"},
      {{"--ddt-format", "huge"}, "legacy or fast"},
      {{"--ram", "0"}, "e.g. 64G"},
      {{"--sample", "1/3"}, "power of two"},
      {{"--sample", "1/99999999999"}, "power of two"},
      {{"--max-memory", "1k"}, "at least 1M"},
      {{"--threads", "-1"}, "0 (all cores) or more"},
      {{"--html", ""}, "needs a file name"},
      {{"--bogus"}, "--bogus"},
      {{"--progress", "--no-progress"}, "contradict"},
      {{"--exclude"}, "--exclude"},
      // An empty value is a mistake (an unset variable), not the default (issue 18).
      {{"--compression", ""}, "--compression was given an empty value"},
      {{"--sample", ""}, "--sample was given an empty value"},
      {{"--recordsize", ""}, "--recordsize was given an empty value"},
      {{"--exclude", "["}, "opens a '[' it never closes"},
      {{"--exclude", "*.tmp\\"}, "ends in a lone"},
      // An empty item of a list is a value left out, not a shorter list; an empty path is not
      // to be scanned around (`zsim scan '' DIR` scanned DIR, then said ": not_found").
      {{"--recordsize", "128k,,1M"}, "--recordsize 128k,,1M: an item of the list is empty"},
      {{"--recordsize", ",128k"}, "--recordsize ,128k: an item of the list is empty"},
      {{"--recordsize", "128k,"}, "--recordsize 128k,: an item of the list is empty"},
      {{"--compression", "lz4,,zstd"}, "--compression lz4,,zstd: an item of the list is empty"},
      {{"--compression", "lz4,"}, "an item of the list is empty"},
      {{"-o", "recordsize=128k,"}, "-o recordsize=128k,: an item of the list is empty"},
      {{""}, "an empty PATH was given"},
      // Said as the user typed it: not "At Most 1 required but received 2", and -o's property
      // rather than the long option it stands for.
      {{"--copies", "2", "--copies", "3"}, "--copies was given 2 times (2, then 3): give it once"},
      {{"--ram", "64G", "--ram", "1T"}, "--ram was given 2 times (64G, then 1T)"},
      {{"-o", "compression=foo"}, "-o compression=foo: "},
      {{"-o", "ashift=x"}, "-o ashift=x is not a whole number: use 9 to 16"},
      {{"-o", "recordsize=16k", "-o", "volblocksize=16k"},
       "-o volblocksize and -o recordsize both given: -o volblocksize cuts every input as a zvol"},
      {{"--volblocksize", "16k", "-o", "recsize=16k"}, "--volblocksize and -o recsize both given"},
  };
  for (const BadArgument& c : cases) {
    std::vector<std::string> args = {"scan", fifo, "--html", html};
    args.insert(args.end(), c.args.begin(), c.args.end());
    if (c.args[0] == "--html") args.erase(args.begin() + 2, args.begin() + 4);
    const auto r = RunZsim(args);
    std::string what;
    for (const std::string& a : c.args) what += a + " ";
    EXPECT_EQ(r.exit_code, 2) << what << r.err;
    EXPECT_EQ(r.out, "") << what;
    EXPECT_NE(r.err.find(c.must_say), std::string::npos) << what << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(html));  // refused before the report was written
}

// The same size twice, in two spellings, is one row (issue 18: it printed the row twice).
TEST(BadArgumentsTest, RepeatedRecordsizeIsOneRow) {
  testing::TempDir tmp;
  tmp.WriteFile("f", testing::Xorshift64Bytes(3, 300 * K));
  const auto r = RunZsim({"scan", tmp.path().string(), "--recordsize", "128K,128k,131072,16k",
                          "--compression", "lz4", "--json", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][0]["recordsize"], 128 * K);
  EXPECT_EQ(j["results"][1]["recordsize"], 16 * K);
}

// `--threads 100000` once passed validation and crashed inside TBB; it is refused now.
TEST(BadArgumentsTest, AbsurdThreadCountIsRefused) {
  const auto r = RunZsim({"scan", "/nonexistent", "--threads", "100000"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
}

// Whole-number options name the allowed values when given something else.
TEST(BadArgumentsTest, NonNumericNumbersNameTheAllowedValues) {
  const std::vector<BadArgument> cases = {{{"--ashift", "x"}, "9 to 16"},
                                          {{"--copies", "two"}, "1, 2 or 3"},
                                          {{"--threads", "many"}, "0 (all cores) or more"}};
  for (const BadArgument& c : cases) {
    std::vector<std::string> args = {"scan", "/nonexistent"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = RunZsim(args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.must_say), std::string::npos) << c.args[0] << ": " << r.err;
  }
}

}  // namespace
}  // namespace zsim
