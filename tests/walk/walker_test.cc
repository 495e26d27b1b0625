#include "engine/walk/walker.h"

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "engine/walk/block_devices.h"
#include "engine/walk/parallel_walker.h"
#include "engine/walk/walk_common.h"
#include "tests/util/faulty_file_system.h"
#include "tests/util/forwarding_file_system.h"
#include "tests/util/test_util.h"

namespace zsim::walk {
namespace {

struct Walked {
  std::vector<std::string> files;              // relative paths
  std::map<std::string, std::string> skipped;  // relative path -> reason
  std::map<std::string, StatusCode> errors;
  std::vector<std::string> dirs;
};

Walked Drain(WalkSource& walker, const std::filesystem::path& root) {
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
  std::sort(w.dirs.begin(), w.dirs.end());
  return w;
}

Walked WalkAll(io::FileSystem* fs, const std::filesystem::path& root, WalkOptions options = {}) {
  Walker walker(fs, {root.string()}, std::move(options));
  return Drain(walker, root);
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

// A directory's counts and the listing handed to directory_zap_bytes leave out what --exclude
// drops (a copy of the tree would not hold it), in both walks; the hook's result is the item's.
TEST(WalkerTest, DirectoryItemsLeaveExcludedNamesOut) {
  testing::TempDir tmp;
  tmp.WriteFile("keep.txt", {1});
  tmp.WriteFile("drop.log", {1});
  tmp.WriteFile("a-much-longer-name-that-is-excluded.log", {1});
  tmp.WriteFile("sub/x", {1});
  WalkOptions options;
  options.excludes = {"*.log"};
  std::mutex mu;
  std::map<std::string, std::vector<std::string>> seen;  // by first name
  options.directory_zap_bytes = [&](std::span<const io::DirEntry> entries) {
    std::vector<std::string> names;
    for (const io::DirEntry& e : entries) names.push_back(e.name);
    std::sort(names.begin(), names.end());
    std::lock_guard<std::mutex> lock(mu);
    seen[names.empty() ? "" : names.front()] = names;
    return uint64_t{1000} + entries.size();
  };
  auto fs = io::PosixFileSystem();
  auto check = [&](WalkSource& walker) {
    std::map<std::string, WalkItem> dirs;
    while (auto item = walker.Next()) {
      if (item->kind == WalkItem::Kind::kDirectory) dirs[item->path] = *item;
    }
    ASSERT_EQ(dirs.size(), 2u);
    const WalkItem& root = dirs.at(tmp.path().string());
    EXPECT_EQ(root.dir_entries, 2u);  // keep.txt, sub
    EXPECT_EQ(root.dir_name_bytes, 11u);
    EXPECT_EQ(root.dir_longest_name, 8u);
    EXPECT_EQ(root.dir_zap_bytes, 1002u);
    EXPECT_EQ(dirs.at((tmp.path() / "sub").string()).dir_zap_bytes, 1001u);
    EXPECT_EQ(seen.at("keep.txt"), (std::vector<std::string>{"keep.txt", "sub"}));
  };
  Walker serial(fs.get(), {tmp.path().string()}, options);
  check(serial);
  seen.clear();
  ParallelWalker parallel(fs.get(), {tmp.path().string()}, options, 2, 64);
  check(parallel);
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

// A tree of nested directories, files, hard links (names in different directories), symlinks,
// a fifo, an excluded name, an unreadable directory and a file whose stat fails.
void MakeTree(testing::TempDir& tmp, std::vector<std::string>* dirs) {
  std::mt19937_64 rng(42);
  dirs->push_back("");
  for (int d = 0; d < 120; ++d) {
    const std::string& parent = (*dirs)[rng() % dirs->size()];
    dirs->push_back((parent.empty() ? "" : parent + "/") + testing::NumberedName("d", d));
    std::filesystem::create_directories(tmp.path() / dirs->back());
  }
  std::vector<std::filesystem::path> files;
  for (int f = 0; f < 1500; ++f) {
    const std::string& dir = (*dirs)[rng() % dirs->size()];
    files.push_back(tmp.WriteFile((dir.empty() ? "" : dir + "/") + testing::NumberedName("f", f),
                                  std::vector<uint8_t>(rng() % 3000, 7)));
  }
  for (int l = 0; l < 40; ++l) {  // hard links: 20 files with two extra names each
    const std::string& dir = (*dirs)[rng() % dirs->size()];
    const std::filesystem::path name = tmp.path() / dir / testing::NumberedName("link", l);
    ASSERT_EQ(::link(files[static_cast<size_t>(l % 20)].c_str(), name.c_str()), 0);
  }
  ASSERT_EQ(::symlink("d0", (tmp.path() / "sym").c_str()), 0);
  ASSERT_EQ(::mkfifo((tmp.path() / "fifo").c_str(), 0644), 0);
  tmp.WriteFile("skip.log", {1});
}

TEST(ParallelWalkerTest, SameItemsAsTheSerialWalkForAnyThreadCount) {
  testing::TempDir tmp;
  std::vector<std::string> dirs;
  MakeTree(tmp, &dirs);
  testing::FaultyFileSystem fs;
  fs.FailList((tmp.path() / dirs[5]).string(), EACCES);
  fs.FailStat((tmp.path() / "skip.log").string(), EIO);  // excluded first: never stat'ed
  fs.FailStat((tmp.path() / "fifo").string(), EIO);
  WalkOptions options;
  options.excludes = {"*.log"};
  const Walked serial = WalkAll(&fs, tmp.path(), options);
  ASSERT_GT(serial.files.size(), 1000u);
  // Every name of every file with several names, by inode (the smallest name first).
  std::map<uint64_t, std::set<std::string>> linked;
  auto add_name = [&](const std::string& rel) {
    struct stat st;
    ASSERT_EQ(::lstat((tmp.path() / rel).c_str(), &st), 0) << rel;
    if (st.st_nlink > 1) linked[st.st_ino].insert(rel);
  };
  for (const std::string& f : serial.files) add_name(f);
  for (const auto& [path, reason] : serial.skipped) {
    if (reason == "hard_link") add_name(path);
  }
  ASSERT_FALSE(linked.empty());
  for (int threads : {1, 2, 4, 8}) {
    SCOPED_TRACE(threads);
    for (size_t queue : {size_t{1}, size_t{4096}}) {
      ParallelWalker walker(&fs, {tmp.path().string()}, options, threads, queue);
      const Walked w = Drain(walker, tmp.path());
      EXPECT_EQ(w.dirs, serial.dirs);
      EXPECT_EQ(w.errors, serial.errors);
      EXPECT_EQ(w.files.size(), serial.files.size());
      EXPECT_EQ(w.skipped.size(), serial.skipped.size());
      // Every name the serial walk counted or skipped as a hard link is one of the two here too,
      // and of each linked file the smallest name is the one counted.
      for (const auto& [path, reason] : serial.skipped) {
        if (reason != "hard_link") {
          EXPECT_EQ(w.skipped.count(path) ? w.skipped.at(path) : "", reason) << path;
        }
      }
      for (const auto& [ino, names] : linked) {
        EXPECT_TRUE(std::count(w.files.begin(), w.files.end(), *names.begin())) << *names.begin();
        for (auto it = std::next(names.begin()); it != names.end(); ++it) {
          EXPECT_EQ(w.skipped.count(*it) ? w.skipped.at(*it) : "", "hard_link") << *it;
        }
      }
    }
  }
}

// A hard-linked file is yielded as soon as all its names are met (a tree of hard-linked
// backups must not hold every name until the end), a file with a name outside the roots at the
// end, and a repeated root is an overlap skip, its names never met again.
TEST(ParallelWalkerTest, HardLinkedFilesAreYieldedOnceAllTheirNamesAreMet) {
  testing::TempDir tmp;
  const auto x = tmp.WriteFile("root/x", {1, 2, 3});
  ASSERT_EQ(::link(x.c_str(), (tmp.path() / "root/y").c_str()), 0);
  const auto outside = tmp.WriteFile("elsewhere/o", {4, 5});
  ASSERT_EQ(::link(outside.c_str(), (tmp.path() / "root/z").c_str()), 0);
  for (int f = 0; f < 300; ++f) tmp.WriteFile(testing::NumberedName("root/sub/f", f), {9});
  const std::string root = (tmp.path() / "root").string();
  auto fs = io::PosixFileSystem();
  for (int threads : {1, 4}) {
    SCOPED_TRACE(threads);
    ParallelWalker walker(fs.get(), {root}, {}, threads, /*queue_items=*/4096);
    std::vector<std::string> files;
    std::map<std::string, std::string> skipped;
    while (auto item = walker.Next()) {
      const std::string rel = item->path.substr(root.size());
      if (item->kind == WalkItem::Kind::kFile) files.push_back(rel);
      if (item->kind == WalkItem::Kind::kSkipped) skipped[rel] = SkipReasonName(item->skip_reason);
    }
    ASSERT_EQ(files.size(), 302u);
    // The root's own entries are classified before any subdirectory is listed.
    EXPECT_LT(std::find(files.begin(), files.end(), "/x") - files.begin(), 2);
    EXPECT_EQ(skipped["/y"], "hard_link");
    EXPECT_EQ(files.back(), "/z");  // its other name is never met: held to the end
  }
  ParallelWalker twice(fs.get(), {root, root}, {}, 2, /*queue_items=*/4096);
  int x_files = 0, x_skips = 0;
  while (auto item = twice.Next()) {
    const bool is_x = item->path == x.string() || item->path == root + "/y";
    x_files += is_x && item->kind == WalkItem::Kind::kFile;
    x_skips += is_x && item->kind == WalkItem::Kind::kSkipped;
  }
  EXPECT_EQ(x_files, 1);
  EXPECT_EQ(x_skips, 1);  // y; the second root is skipped whole (overlap)
}

TEST(ParallelWalkerTest, StoppingEarlyJoinsCleanly) {
  testing::TempDir tmp;
  std::vector<std::string> dirs;
  MakeTree(tmp, &dirs);
  auto fs = io::PosixFileSystem();
  for (int taken : {0, 1, 50}) {
    ParallelWalker walker(fs.get(), {tmp.path().string()}, {}, 4, /*queue_items=*/8);
    for (int i = 0; i < taken; ++i) ASSERT_TRUE(walker.Next().has_value());
  }  // destroyed with the walk under way: must not hang
}

TEST(ParallelWalkerTest, RootsThatAreFilesMissingOrRepeated) {
  testing::TempDir tmp;
  const auto f = tmp.WriteFile("single", {1, 2});
  auto fs = io::PosixFileSystem();
  ParallelWalker walker(fs.get(), {f.string(), (tmp.path() / "missing").string()}, {}, 2);
  int files = 0, errors = 0;
  while (auto item = walker.Next()) {
    files += item->kind == WalkItem::Kind::kFile;
    errors += item->kind == WalkItem::Kind::kError;
    if (item->kind == WalkItem::Kind::kError) {
      EXPECT_EQ(item->root, 1u);
    }
  }
  EXPECT_EQ(files, 1);
  EXPECT_EQ(errors, 1);
}

// A block device is the device its node stands for: two nodes of one device (/dev/loop0 and a
// node made for it elsewhere) are one input, as one node named twice is; another device is
// another. (They were two zvols: the device's data counted twice.)
TEST(ParallelWalkerTest, BlockDeviceNodesOfOneDeviceAreOneRoot) {
  testing::TempDir tmp;
  const std::string a = (tmp.path() / "loop-a").string(), b = (tmp.path() / "loop-b").string(),
                    c = (tmp.path() / "loop-c").string();
  if (::mknod(a.c_str(), S_IFBLK | 0600, makedev(7, 250)) != 0 ||
      ::mknod(b.c_str(), S_IFBLK | 0600, makedev(7, 250)) != 0 ||
      ::mknod(c.c_str(), S_IFBLK | 0600, makedev(7, 251)) != 0) {
    GTEST_SKIP() << "mknod of a block device node refused here: " << std::strerror(errno);
  }
  auto fs = io::PosixFileSystem();
  for (const int threads : {0, 2}) {  // 0: the serial walker
    std::unique_ptr<WalkSource> walker;
    if (threads == 0) {
      walker = std::make_unique<Walker>(fs.get(), std::vector<std::string>{a, b, c}, WalkOptions{});
    } else {
      walker = std::make_unique<ParallelWalker>(fs.get(), std::vector<std::string>{a, b, c},
                                                WalkOptions{}, threads);
    }
    const Walked w = Drain(*walker, tmp.path());
    EXPECT_EQ(w.files, (std::vector<std::string>{"zvol:loop-a", "zvol:loop-c"})) << threads;
    EXPECT_EQ(w.skipped.size(), 1u) << threads;
    EXPECT_EQ(w.skipped.count("loop-b") ? w.skipped.at("loop-b") : "", "overlap") << threads;
  }
}

// A block device 7:`minor_number` in a sysfs tree of the test's own under `sys`, laid out as
// Linux's: its directory `dir` holds `dev` (and `partition` for a partition), and
// sys/dev/block/7:N links to it.
void AddFakeBlockDevice(const std::filesystem::path& sys, const std::filesystem::path& dir,
                        int minor_number, bool partition) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::ofstream(dir / "dev") << "7:" << minor_number << "\n";
  if (partition) std::ofstream(dir / "partition") << "1\n";
  fs::create_directories(sys / "dev" / "block");
  fs::create_directory_symlink(fs::relative(dir, sys / "dev" / "block"),
                               sys / "dev" / "block" / ("7:" + std::to_string(minor_number)));
}

// A mapped device lies on the devices sysfs lists as its slaves, theirs in turn, and the disk of
// each that is a partition: an LVM volume (dm-0) on a partition (fakedisk1) of a disk, dm-crypt
// (dm-1) on that volume, an md mirror (md0) on two disks. Named with one of them, the pair is
// said (the CLI's note); a disk and its partition are not such a pair (the walk counts them once),
// nor is a device with itself.
TEST(BlockDevicesTest, AMappedDeviceLiesOnItsSlavesAndTheirDisks) {
  testing::TempDir tmp;
  namespace fs = std::filesystem;
  const fs::path sys = tmp.path() / "sys", virt = sys / "devices" / "virtual" / "block",
                 pci = sys / "devices" / "pci0000:00" / "block";
  const auto device = [&](const fs::path& dir, int minor_number, bool partition) {
    AddFakeBlockDevice(sys, dir, minor_number, partition);
  };
  const auto slave = [&](const fs::path& upper, const fs::path& lower) {
    fs::create_directories(upper / "slaves");
    fs::create_directory_symlink(fs::relative(lower, upper / "slaves"),
                                 upper / "slaves" / lower.filename());
  };
  device(pci / "fakedisk", 240, false);
  device(pci / "fakedisk" / "fakedisk1", 241, true);
  device(pci / "diska", 242, false);
  device(pci / "diskb", 243, false);
  device(virt / "dm-0", 250, false);
  device(virt / "dm-1", 251, false);
  device(virt / "md0", 252, false);
  slave(virt / "dm-0", pci / "fakedisk" / "fakedisk1");
  slave(virt / "dm-1", virt / "dm-0");
  slave(virt / "md0", pci / "diska");
  slave(virt / "md0", pci / "diskb");
  const auto dev = [](int minor_number) { return uint64_t{makedev(7, minor_number)}; };
  const auto sorted = [](std::vector<uint64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(DevicesUnder(sys.string(), dev(250))),
            (std::vector<uint64_t>{dev(240), dev(241)}));
  EXPECT_EQ(sorted(DevicesUnder(sys.string(), dev(251))),
            (std::vector<uint64_t>{dev(240), dev(241), dev(250)}));
  EXPECT_EQ(sorted(DevicesUnder(sys.string(), dev(252))),
            (std::vector<uint64_t>{dev(242), dev(243)}));
  EXPECT_TRUE(DevicesUnder(sys.string(), dev(241)).empty());  // a partition maps nothing
  EXPECT_TRUE(DevicesUnder(sys.string(), dev(240)).empty());
  EXPECT_TRUE(DevicesUnder(sys.string(), dev(260)).empty());  // unknown to sysfs
  EXPECT_TRUE(DevicesUnder((tmp.path() / "no-sysfs").string(), dev(250)).empty());

  using Pairs = std::vector<std::pair<size_t, size_t>>;
  // dm-1 named with the disk under its volume's partition, and md0 with one of its members.
  EXPECT_EQ(StackedDevices(sys.string(), {dev(251), dev(243), dev(240), dev(252)}),
            (Pairs{{0, 2}, {3, 1}}));
  EXPECT_TRUE(StackedDevices(sys.string(), {dev(240), dev(241)}).empty());
  EXPECT_TRUE(StackedDevices(sys.string(), {dev(250), dev(250)}).empty());
  EXPECT_TRUE(StackedDevices(sys.string(), {dev(250), dev(242)}).empty());
}

// A partition is a byte range of its disk: naming both counts the partition's data once, in the
// disk, whichever is named first; a partition whose disk is not named is read. Which device is a
// partition of which comes from sysfs (here a tree of the test's own, laid out as Linux's).
// (Both were read: the partition's data counted twice.)
TEST(ParallelWalkerTest, APartitionOfANamedDiskIsAnOverlap) {
  testing::TempDir tmp;
  namespace fs = std::filesystem;
  const fs::path sys = tmp.path() / "sys", block = sys / "devices" / "virtual" / "block";
  const auto device = [&](const fs::path& dir, int minor_number, bool partition) {
    AddFakeBlockDevice(sys, dir, minor_number, partition);
  };
  device(block / "fakedisk", 240, false);
  device(block / "fakedisk" / "fakedisk1", 241, true);
  device(block / "otherdisk", 244, false);
  device(block / "otherdisk" / "otherdisk1", 245, true);
  EXPECT_EQ(DiskOfPartition(sys.string(), makedev(7, 241)), makedev(7, 240));
  EXPECT_EQ(DiskOfPartition(sys.string(), makedev(7, 240)), std::nullopt);
  EXPECT_EQ(DiskOfPartition(sys.string(), makedev(7, 250)), std::nullopt);  // unknown to sysfs

  const auto node = [&](const std::string& name, int minor_number) {
    const std::string path = (tmp.path() / name).string();
    return ::mknod(path.c_str(), S_IFBLK | 0600, makedev(7, minor_number)) == 0 ? path : "";
  };
  const std::string disk = node("disk", 240), part = node("disk-part1", 241),
                    other_part = node("other-part1", 245);
  if (disk.empty() || part.empty() || other_part.empty()) {
    GTEST_SKIP() << "mknod of a block device node refused here: " << std::strerror(errno);
  }
  WalkOptions options;
  options.sysfs_root = sys.string();
  auto posix = io::PosixFileSystem();
  for (const auto& roots : {std::vector<std::string>{part, disk, other_part},
                            std::vector<std::string>{disk, other_part, part}}) {
    for (const int threads : {0, 2}) {  // 0: the serial walker
      std::unique_ptr<WalkSource> walker;
      if (threads == 0) {
        walker = std::make_unique<Walker>(posix.get(), roots, options);
      } else {
        walker = std::make_unique<ParallelWalker>(posix.get(), roots, options, threads);
      }
      const Walked w = Drain(*walker, tmp.path());
      std::vector<std::string> files = w.files;
      std::sort(files.begin(), files.end());
      EXPECT_EQ(files, (std::vector<std::string>{"zvol:disk", "zvol:other-part1"}))
          << threads << " " << roots[0];
      EXPECT_EQ(w.skipped.size(), 1u) << threads;
      EXPECT_EQ(w.skipped.count("disk-part1") ? w.skipped.at("disk-part1") : "", "overlap")
          << threads << " " << roots[0];
    }
  }
  // Without sysfs's word (not mounted, another kernel) the two are two devices, as before.
  options.sysfs_root = (tmp.path() / "no-sysfs").string();
  Walker serial(posix.get(), {disk, part}, options);
  EXPECT_EQ(Drain(serial, tmp.path()).files.size(), 2u);
}

TEST(WalkSizerTest, CountsWhatTheWalkYields) {
  testing::TempDir tmp;
  std::vector<std::string> dirs;
  MakeTree(tmp, &dirs);
  // A link to a directory outside the root: followed, its files count (serial walk in the sizer).
  tmp.WriteFile("outside/big", std::vector<uint8_t>(5000, 1));
  std::filesystem::create_directories(tmp.path() / "root");
  std::filesystem::rename(tmp.path() / "d0", tmp.path() / "root/d0");
  ASSERT_EQ(::symlink((tmp.path() / "outside").c_str(), (tmp.path() / "root/out").c_str()), 0);
  auto fs = io::PosixFileSystem();
  for (bool follow : {false, true}) {
    SCOPED_TRACE(follow);
    WalkOptions options;
    options.follow_symlinks = follow;
    const std::string root = (tmp.path() / "root").string();
    uint64_t files = 0, bytes = 0, data = 0;
    Walker serial(fs.get(), {root}, options);
    while (auto item = serial.Next()) {
      if (item->kind == WalkItem::Kind::kFile) {
        ++files;
        bytes += item->info.size;
        data += std::min(item->info.size, item->info.allocated);
      }
    }
    ASSERT_GT(files, 0u);
    WalkSizer sizer(fs.get(), {root}, options, 2);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!sizer.finished() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(sizer.finished());
    EXPECT_EQ(sizer.files(), files);
    EXPECT_EQ(sizer.bytes(), bytes);
    // What a scan reads: each file's allocated bytes up to its size. The small files' last
    // blocks are allocated in full, so the allocated sum is larger.
    EXPECT_EQ(sizer.data_bytes(), data);
    EXPECT_LE(sizer.data_bytes(), sizer.bytes());
    EXPECT_LT(sizer.data_bytes(), sizer.allocated_bytes());
  }
}

// A file system whose directory listings take a while, and that counts them.
class SlowListing : public io::FileSystem {
 public:
  Result<io::FileInfo> Stat(const std::string& path, bool follow) override {
    return real_->Stat(path, follow);
  }
  Result<std::vector<io::DirEntry>> ListDirectory(const std::string& path, bool follow) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ++listings;
    return real_->ListDirectory(path, follow);
  }
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    return real_->Open(path, follow);
  }
  std::atomic<int> listings{0};

 private:
  std::shared_ptr<io::FileSystem> real_ = io::PosixFileSystem();
};

TEST(WalkSizerTest, DestroyedMidWalkStopsAndJoins) {
  testing::TempDir tmp;
  std::vector<std::string> dirs;
  MakeTree(tmp, &dirs);  // 121 directories: over a second of listings
  for (bool follow : {false, true}) {
    SCOPED_TRACE(follow);
    SlowListing fs;
    WalkOptions options;
    options.follow_symlinks = follow;
    {
      WalkSizer sizer(&fs, {tmp.path().string()}, options, 2);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      EXPECT_FALSE(sizer.finished());
    }
    // Joined: no listing happens after the destructor returned, and the walk stopped early.
    const int at_stop = fs.listings.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(fs.listings.load(), at_stop);
    EXPECT_LT(at_stop, 60);
  }
}

// Nested roots meet some names twice: a repeated name must not count as one of the file's
// st_nlink names, or the name that counts would depend on which root got there first.
TEST(ParallelWalkerTest, NestedRootsDoNotChangeWhichHardLinkCounts) {
  testing::TempDir tmp;
  const auto a = tmp.WriteFile("t/a", {1});
  for (int f = 0; f < 50; ++f) tmp.WriteFile(testing::NumberedName("t/sub/f", f), {2});
  ASSERT_EQ(::link(a.c_str(), (tmp.path() / "t/sub/z").c_str()), 0);
  auto fs = io::PosixFileSystem();
  const std::string t = (tmp.path() / "t").string(), sub = (tmp.path() / "t/sub").string();
  for (int rep = 0; rep < 20; ++rep) {
    // {sub, sub, t} on one thread meets z twice before a: counting meetings would yield z.
    for (const std::vector<std::string>& roots :
         {std::vector<std::string>{t, sub}, std::vector<std::string>{sub, t},
          std::vector<std::string>{sub, sub, t}}) {
      ParallelWalker walker(fs.get(), roots, {}, 1 + rep % 4, /*queue_items=*/16);
      std::vector<std::string> counted;
      int skips = 0;
      while (auto item = walker.Next()) {
        const bool linked = item->path == a.string() || item->path == sub + "/z";
        if (linked && item->kind == WalkItem::Kind::kFile) counted.push_back(item->path);
        skips += linked && item->kind == WalkItem::Kind::kSkipped;
      }
      ASSERT_EQ(counted, std::vector<std::string>{a.string()}) << rep;
      // z, once: a root inside another, or repeated, is walked once (overlap skips).
      EXPECT_EQ(skips, 1);
    }
  }
}

// A root file of several names met under another name inside another root is a hard link, not
// an overlap: the walk counts it once under its smallest name, as a merge of scans of the parts
// does (a review found `zsim scan t/sub t/rand` skip t/sub/rand.hard as `overlap` where the merge
// of the two scans said `hard_link`). Met under the very entry that names the root (a root
// inside another), it stays an overlap.
TEST(ParallelWalkerTest, AnotherNameOfARootFileIsAHardLink) {
  testing::TempDir tmp;
  const auto rand = tmp.WriteFile("t/rand", {1, 2, 3});
  tmp.WriteFile("t/sub/other", {4});
  ASSERT_EQ(::link(rand.c_str(), (tmp.path() / "t/sub/rand.hard").c_str()), 0);
  const auto zroot = tmp.WriteFile("t/zz", {5});
  ASSERT_EQ(::link(zroot.c_str(), (tmp.path() / "t/sub/a-link").c_str()), 0);
  auto fs = io::PosixFileSystem();
  const std::filesystem::path t = tmp.path() / "t";
  auto walk = [&](const std::vector<std::string>& roots, int threads) {
    ParallelWalker walker(fs.get(), roots, {}, threads, /*queue_items=*/16);
    return Drain(walker, t);
  };
  for (int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    // t/sub first, then the roots t/rand and t/zz: each file counted once, under its smallest
    // name (t/rand, then t/sub/a-link, whose root t/zz is then the hard link skipped).
    Walked w = walk({(t / "sub").string(), rand.string(), zroot.string()}, threads);
    EXPECT_EQ(w.files, (std::vector<std::string>{"rand", "sub/a-link", "sub/other"}));
    EXPECT_EQ(w.skipped.at("sub/rand.hard"), "hard_link");
    EXPECT_EQ(w.skipped.at("zz"), "hard_link");
    // The root file inside a tree also named, under its own name: an overlap, as before.
    w = walk({t.string(), rand.string()}, threads);
    EXPECT_EQ(w.skipped.at("rand"), "overlap");
    EXPECT_EQ(w.skipped.at("sub/rand.hard"), "hard_link");
    EXPECT_EQ(std::count(w.files.begin(), w.files.end(), "rand"), 1);
  }
  // The serial walk (--follow-symlinks, where any file may be met twice) counts the first name
  // it meets, and skips the root's as a hard link.
  WalkOptions follow;
  follow.follow_symlinks = true;
  Walker serial(fs.get(), {(t / "sub").string(), rand.string()}, follow);
  const Walked w = Drain(serial, t);
  EXPECT_EQ(w.skipped, (std::map<std::string, std::string>{{"rand", "hard_link"}}));
}

// A root file reached under another spelling of its own name (a relative tree beside the file
// named by its absolute path) and under a hard link: more names than st_nlink. The file waits for
// the end of the walk and counts under the smallest name met, whatever the threads' timing (it
// was yielded once st_nlink names were met, which two depending on which thread came first).
TEST(ParallelWalkerTest, ARootFileSpelledTwoWaysCountsUnderOneNameWhateverTheTiming) {
  testing::TempDir tmp;
  const auto rand = tmp.WriteFile("t/rand", {1, 2, 3});
  for (int f = 0; f < 40; ++f) tmp.WriteFile(testing::NumberedName("t/sub/f", f), {4});
  ASSERT_EQ(::link(rand.c_str(), (tmp.path() / "t/sub/rand.hard").c_str()), 0);
  const testing::ScopedWorkingDirectory cwd(tmp.path());
  auto fs = io::PosixFileSystem();
  for (int rep = 0; rep < 20; ++rep) {
    ParallelWalker walker(fs.get(), {"t", rand.string()}, {}, 1 + rep % 4, /*queue_items=*/16);
    std::vector<std::string> counted;
    while (auto item = walker.Next()) {
      if (item->kind == WalkItem::Kind::kFile && item->path.find("rand") != std::string::npos) {
        counted.push_back(item->path);
      }
    }
    // The absolute name sorts first ('/' before 't').
    ASSERT_EQ(counted, std::vector<std::string>{rand.string()}) << rep;
  }
}

// A file system whose directories named `mount` are mount points of a file system of type
// `type` (another device).
class MountedAt : public testing::ForwardingFileSystem {
 public:
  MountedAt(std::string mount, uint64_t type) : mount_(std::move(mount)), type_(type) {}
  Result<io::FileInfo> Stat(const std::string& path, bool follow) override {
    Result<io::FileInfo> info = ForwardingFileSystem::Stat(path, follow);
    if (info.ok() && IsMount(path)) info->dev += 1000;
    return info;
  }
  uint64_t FileSystemType(const std::string& path) override {
    return IsMount(path) ? type_ : ForwardingFileSystem::FileSystemType(path);
  }

 private:
  bool IsMount(const std::string& path) const {
    return std::filesystem::path(path).filename() == mount_;
  }
  std::string mount_;
  uint64_t type_;
};

// A kernel pseudo file system mounted inside a tree (/proc, /sys, cgroup, devpts... under a
// scanned /) is skipped as such: `zsim scan /proc` counted 20,372 files of made-up sizes and 50
// errors, and /proc/kcore's size is the address space. Other file systems are walked (tmpfs holds
// real files), and a pseudo file system named as an input is walked as asked.
TEST(WalkerTest, KernelPseudoFileSystemsInsideATreeAreSkipped) {
  testing::TempDir tmp;
  tmp.WriteFile("t/a", {1});
  tmp.WriteFile("t/proc/version", {2});
  tmp.WriteFile("t/sub/proc/x", {3});
  EXPECT_TRUE(IsKernelPseudoFileSystem(PROC_SUPER_MAGIC));
  EXPECT_TRUE(IsKernelPseudoFileSystem(CGROUP2_SUPER_MAGIC));
  // The kernel's own magics, not in linux/magic.h: /dev/mqueue, /sys/kernel/config,
  // /sys/fs/fuse/connections.
  EXPECT_TRUE(IsKernelPseudoFileSystem(0x19800202));
  EXPECT_TRUE(IsKernelPseudoFileSystem(0x62656570));
  EXPECT_TRUE(IsKernelPseudoFileSystem(0x65735543));
  EXPECT_FALSE(IsKernelPseudoFileSystem(0x65735546));  // FUSE_SUPER_MAGIC: real files
  EXPECT_FALSE(IsKernelPseudoFileSystem(TMPFS_MAGIC));
  EXPECT_FALSE(IsKernelPseudoFileSystem(EXT4_SUPER_MAGIC));
  const std::filesystem::path t = tmp.path() / "t";
  for (uint64_t type : {uint64_t{PROC_SUPER_MAGIC}, uint64_t{TMPFS_MAGIC}}) {
    SCOPED_TRACE(type);
    MountedAt fs("proc", type);
    const bool pseudo = type == PROC_SUPER_MAGIC;
    const std::vector<std::string> walked =
        pseudo ? std::vector<std::string>{"a"}
               : std::vector<std::string>{"a", "proc/version", "sub/proc/x"};
    Walked serial = WalkAll(&fs, t);
    EXPECT_EQ(serial.files, walked);
    for (int threads : {1, 3}) {
      ParallelWalker walker(&fs, {t.string()}, {}, threads, /*queue_items=*/16);
      const Walked w = Drain(walker, t);
      EXPECT_EQ(w.files, walked) << threads;
      if (pseudo) {
        EXPECT_EQ(w.skipped.at("proc"), "pseudo_file_system");
        EXPECT_EQ(w.skipped.at("sub/proc"), "pseudo_file_system");
      }
    }
  }
  // Named as an input: walked.
  MountedAt fs("proc", PROC_SUPER_MAGIC);
  ParallelWalker named(&fs, {(t / "proc").string()}, {}, 2, /*queue_items=*/16);
  EXPECT_EQ(Drain(named, t / "proc").files, std::vector<std::string>{"version"});
}

// A pseudo file system that is also an input: inside the other tree it is the input's overlap
// (walked as its own root), in the serial and the parallel walker alike. The serial walker
// called it pseudo_file_system, the parallel one overlap, so the skip lists differed with the
// thread count.
TEST(WalkerTest, APseudoFileSystemNamedAsAnInputIsAnOverlapInTheOtherTree) {
  testing::TempDir tmp;
  tmp.WriteFile("t/a", {1});
  tmp.WriteFile("t/proc/version", {2});
  const std::filesystem::path t = tmp.path() / "t";
  MountedAt fs("proc", PROC_SUPER_MAGIC);
  const std::vector<std::string> roots = {t.string(), (t / "proc").string()};
  Walker serial(&fs, roots, {});
  const Walked s = Drain(serial, t);
  EXPECT_EQ(s.skipped.count("proc") ? s.skipped.at("proc") : "", "overlap");
  EXPECT_EQ(s.files, (std::vector<std::string>{"a", "proc/version"}));
  for (int threads : {1, 3}) {
    ParallelWalker walker(&fs, roots, {}, threads, /*queue_items=*/16);
    Walked w = Drain(walker, t);
    std::sort(w.files.begin(), w.files.end());
    EXPECT_EQ(w.skipped.count("proc") ? w.skipped.at("proc") : "", "overlap") << threads;
    EXPECT_EQ(w.files, s.files) << threads;
  }
}

// On this machine: /dev/pts is devpts where it is mounted (a container's /dev too).
TEST(ParallelWalkerTest, TheRealDevptsIsSkipped) {
  auto fs = io::PosixFileSystem();
  Result<io::FileInfo> dev = fs->Stat("/dev", true), pts = fs->Stat("/dev/pts", true);
  if (!dev.ok() || !pts.ok() || dev->dev == pts->dev ||
      fs->FileSystemType("/dev/pts") != DEVPTS_SUPER_MAGIC) {
    GTEST_SKIP() << "/dev/pts is not a devpts mount here";
  }
  ParallelWalker walker(fs.get(), {"/dev"}, {}, 2, /*queue_items=*/64);
  const Walked w = Drain(walker, "/dev");
  EXPECT_EQ(w.skipped.count("pts") ? w.skipped.at("pts") : "", "pseudo_file_system");
}

}  // namespace
}  // namespace zsim::walk
