#include "engine/walk/walker.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>

#include "tests/util/faulty_file_system.h"
#include "tests/util/test_util.h"

namespace zsim::walk {
namespace {

struct Walked {
  std::vector<std::string> files;              // relative paths
  std::map<std::string, std::string> skipped;  // relative path -> reason
  std::map<std::string, StatusCode> errors;
  std::vector<std::string> dirs;
};

Walked WalkAll(io::FileSystem* fs, const std::filesystem::path& root, WalkOptions options = {}) {
  Walker walker(fs, {root.string()}, std::move(options));
  Walked w;
  const std::string prefix = root.string();
  auto rel = [&](const std::string& p) {
    return p.size() > prefix.size() ? p.substr(prefix.size() + 1) : ".";
  };
  while (auto item = walker.Next()) {
    switch (item->kind) {
      case WalkItem::Kind::kFile:
        w.files.push_back(rel(item->path));
        break;
      case WalkItem::Kind::kZvol:
        w.files.push_back("zvol:" + rel(item->path));
        break;
      case WalkItem::Kind::kDirectory:
        w.dirs.push_back(rel(item->path));
        break;
      case WalkItem::Kind::kSkipped:
        w.skipped[rel(item->path)] = std::string(SkipReasonName(item->skip_reason));
        break;
      case WalkItem::Kind::kError:
        w.errors[rel(item->path)] = item->error.code();
        break;
    }
  }
  std::sort(w.files.begin(), w.files.end());
  return w;
}

TEST(WalkerTest, FilesOnceHardLinksSymlinksAndSpecialFilesSkippedByReason) {
  testing::TempDir tmp;
  tmp.WriteFile("a.txt", {1, 2, 3});
  tmp.WriteFile("sub/b.bin", {4});
  tmp.WriteFile("sub/deeper/c", {});
  ASSERT_EQ(::link((tmp.path() / "a.txt").c_str(), (tmp.path() / "sub/a-link").c_str()), 0);
  ASSERT_EQ(::symlink("a.txt", (tmp.path() / "sym").c_str()), 0);
  ASSERT_EQ(::mkfifo((tmp.path() / "fifo").c_str(), 0644), 0);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = (tmp.path() / "sock").string();
  ASSERT_LT(sock_path.size(), sizeof(addr.sun_path));
  std::strcpy(addr.sun_path, sock_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(sock);

  auto fs = io::PosixFileSystem();
  const Walked w = WalkAll(fs.get(), tmp.path());
  // Exactly one of the two names of the hard-linked file is a file; the other is a hard_link skip.
  ASSERT_EQ(w.files.size(), 3u);
  EXPECT_TRUE(std::count(w.files.begin(), w.files.end(), "sub/b.bin"));
  EXPECT_TRUE(std::count(w.files.begin(), w.files.end(), "sub/deeper/c"));
  const bool a_first = std::count(w.files.begin(), w.files.end(), "a.txt") == 1;
  EXPECT_EQ(w.skipped.at(a_first ? "sub/a-link" : "a.txt"), "hard_link");
  EXPECT_EQ(w.skipped.at("sym"), "symlink");
  EXPECT_EQ(w.skipped.at("fifo"), "fifo");
  EXPECT_EQ(w.skipped.at("sock"), "socket");
  EXPECT_EQ(w.skipped.size(), 4u);
  EXPECT_TRUE(w.errors.empty());
  EXPECT_EQ(w.dirs.size(), 3u);  // ., sub, sub/deeper
}

TEST(WalkerTest, UnreadableDirectoryIsAnErrorAndTheWalkGoesOn) {
  testing::TempDir tmp;
  tmp.WriteFile("ok/1", {1});
  tmp.WriteFile("locked/2", {2});
  tmp.WriteFile("z/3", {3});
  testing::FaultyFileSystem fs;
  fs.FailList((tmp.path() / "locked").string(), EACCES);
  fs.FailStat((tmp.path() / "z/3").string(), EIO);
  const Walked w = WalkAll(&fs, tmp.path());
  EXPECT_EQ(w.files, std::vector<std::string>{"ok/1"});
  ASSERT_EQ(w.errors.size(), 2u);
  EXPECT_EQ(w.errors.at("locked"), StatusCode::kPermissionDenied);
  EXPECT_EQ(w.errors.at("z/3"), StatusCode::kIoError);
}

TEST(WalkerTest, ExcludeGlobsMatchNamesAndPaths) {
  testing::TempDir tmp;
  tmp.WriteFile("keep.txt", {1});
  tmp.WriteFile("drop.log", {1});
  tmp.WriteFile("cache/x", {1});
  WalkOptions options;
  options.excludes = {"*.log", "*/cache"};
  auto fs = io::PosixFileSystem();
  const Walked w = WalkAll(fs.get(), tmp.path(), options);
  EXPECT_EQ(w.files, std::vector<std::string>{"keep.txt"});
  EXPECT_EQ(w.skipped.at("drop.log"), "excluded");
  EXPECT_EQ(w.skipped.at("cache"), "excluded");
}

TEST(WalkerTest, FollowingSymlinksVisitsTargetsOnceAndReportsLoops) {
  testing::TempDir tmp;
  tmp.WriteFile("d/f", {1});
  ASSERT_EQ(::symlink("..", (tmp.path() / "d/up").c_str()), 0);     // a loop back to the root
  ASSERT_EQ(::symlink("d/f", (tmp.path() / "f-link").c_str()), 0);  // a second name of d/f
  WalkOptions options;
  options.follow_symlinks = true;
  auto fs = io::PosixFileSystem();
  const Walked w = WalkAll(fs.get(), tmp.path(), options);
  // d/f is counted once: through one of its names; the loop is reported, not followed forever.
  EXPECT_EQ(w.files.size(), 1u);
  EXPECT_EQ(w.errors.count("d/up"), 1u);
}

TEST(WalkerTest, RootThatIsAFileAndMissingRoot) {
  testing::TempDir tmp;
  const auto f = tmp.WriteFile("single", {1, 2});
  auto fs = io::PosixFileSystem();
  Walker walker(fs.get(), {f.string(), (tmp.path() / "missing").string()}, {});
  auto first = walker.Next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->kind, WalkItem::Kind::kFile);
  EXPECT_EQ(first->info.size, 2u);
  auto second = walker.Next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->kind, WalkItem::Kind::kError);
  EXPECT_EQ(second->error.code(), StatusCode::kNotFound);
  EXPECT_FALSE(walker.Next());
}

}  // namespace
}  // namespace zsim::walk
