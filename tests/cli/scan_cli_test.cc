// CLI tests: the built zsim binary on temp trees with known content (STYLE.md §6.6).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "engine/base/byte_view.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/fingerprint.h"
#include "engine/ddt/written_key.h"
#include "engine/zfs/ddt_footprint.h"
#include "engine/zfs/write_rules.h"
#include "tests/util/report_json.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

using nlohmann::json;
using testing::RunZsim;

std::string FileName(int i) { return testing::NumberedName("f", i); }

// zsim with `args` and then `extra` (a run that differs from a baseline by a few options).
testing::CommandResult RunWith(std::vector<std::string> args,
                               std::initializer_list<std::string> extra) {
  args.insert(args.end(), extra);
  return RunZsim(args);
}

// The report without wall-clock figures (scan time, codec speeds, and the advice, whose
// sentences quote codec speeds), which no two runs share.
json WithoutTimings(json j) {
  j.erase("seconds");
  j.erase("advice");
  // zsim's own table memory: under --max-memory it depends on when the table compacted itself.
  j.erase("memory");
  if (j.contains("settings")) j["settings"].erase("threads");
  if (j.contains("results")) {
    for (json& r : j["results"]) {
      r.erase("timing");
      r.erase("compress_bytes_per_second");
    }
  }
  return j;
}

json ParseJson(const testing::CommandResult& r) { return testing::ParseReportJson(r); }
using testing::ResultFor;

// A tree whose ZFS figures are known by hand (recordsize 128K, ashift 12, profile 2.4):
//   a     256K random         -> 2 records of 128K
//   b     copy of a           -> the same 2 records again (refcount 2 each)
//   c     100K random         -> 1 block of 102400 (a file below recordsize: its size, 512-rounded)
//   e     1 byte              -> 1 block of 512
//   empty 0 bytes             -> no block
class KnownTree : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<uint8_t> a = testing::Xorshift64Bytes(1, 256 * K);
    tmp_.WriteFile("a", a);
    tmp_.WriteFile("dir/b", a);
    tmp_.WriteFile("dir/c", testing::Xorshift64Bytes(2, 100 * K));
    tmp_.WriteFile("e", {'x'});
    tmp_.WriteFile("empty", {});
  }
  testing::TempDir tmp_;
};

TEST_F(KnownTree, CompressionOffGivesExactBlocksEntriesAndDedupRatio) {
  const auto r = RunZsim({"scan", tmp_.path().string(), "--compression", "off,lz4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_EQ(j["input"]["files"], 5);
  EXPECT_EQ(j["input"]["bytes_logical"], 2 * 256 * K + 100 * K + 1);
  const json& off = ResultFor(j, 128 * K, "off");
  EXPECT_EQ(off["blocks"]["data"], 6);  // 2 + 2 + 1 + 1
  EXPECT_EQ(off["lsize"], 4 * 128 * K + 102400 + 512);
  EXPECT_EQ(off["psize"], off["lsize"]);
  EXPECT_EQ(off["dedup"]["entries"]["unique"], 2);     // c, e
  EXPECT_EQ(off["dedup"]["entries"]["duplicate"], 2);  // a's two records
  // dsize: 128K records as is; 102400 is 25 sectors of 4K; 512 takes one 4K sector.
  const uint64_t allocated = 2 * 128 * K + 102400 + 4096;
  const uint64_t referenced = 4 * 128 * K + 102400 + 4096;
  EXPECT_EQ(off["dedup"]["histogram"].size(), 2u);
  EXPECT_EQ(off["dedup"]["histogram"][0]["refcnt"], 1);
  EXPECT_EQ(off["dedup"]["histogram"][0]["allocated"]["blocks"], 2);
  EXPECT_EQ(off["dedup"]["histogram"][1]["refcnt"], 2);
  EXPECT_EQ(off["dedup"]["histogram"][1]["allocated"]["blocks"], 2);
  EXPECT_EQ(off["dedup"]["histogram"][1]["referenced"]["blocks"], 4);
  EXPECT_EQ(off["dedup"]["total"]["allocated"]["dsize"], allocated);
  EXPECT_EQ(off["dedup"]["total"]["referenced"]["dsize"], referenced);
  EXPECT_DOUBLE_EQ(off["dedup"]["ratio"].get<double>(), (referenced * 100 / allocated) / 100.0);
  EXPECT_EQ(off["asize"], referenced);
}

TEST_F(KnownTree, Lz4EmbedsTheOneByteFileAndLeavesItOutOfTheDdt) {
  const auto r = RunZsim({"scan", tmp_.path().string(), "--compression", "lz4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  const json& lz4 = ResultFor(j, 128 * K, "lz4");
  EXPECT_EQ(lz4["blocks"]["embedded"], 1);
  EXPECT_EQ(lz4["blocks"]["data"], 5);  // random data does not compress: stored as is
  EXPECT_EQ(lz4["dedup"]["entries"]["unique"], 1);
  EXPECT_EQ(lz4["dedup"]["entries"]["duplicate"], 2);
  EXPECT_EQ(lz4["psize"], 4 * 128 * K + 102400);  // an embedded block accounts 0 psize
  EXPECT_GT(lz4["embedded_bytes"].get<uint64_t>(), 0u);
  EXPECT_LE(lz4["embedded_bytes"].get<uint64_t>(), 112u);
}

TEST_F(KnownTree, JsonCarriesEveryFieldOfTheContract) {
  const auto r = RunZsim({"scan", tmp_.path().string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  for (const char* f : {"zsim_version", "partial", "input", "settings", "results"}) {
    EXPECT_TRUE(j.contains(f)) << f;
  }
  for (const char* f : {"paths", "files", "bytes_logical", "bytes_read", "skipped", "errors"}) {
    EXPECT_TRUE(j["input"].contains(f)) << f;
  }
  for (const char* f :
       {"recordsize", "ashift", "vdev", "copies", "checksum", "ddt_format", "profile"}) {
    EXPECT_TRUE(j["settings"].contains(f)) << f;
  }
  // Default compressions: off, lz4, zstd-3.
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][2]["compression"], "zstd-3");
  for (const json& res : j["results"]) {
    for (const char* f :
         {"recordsize", "compression", "blocks", "lsize", "psize", "asize", "embedded_bytes",
          "compressratio", "exact", "dedup", "used", "pool_alloc"}) {
      EXPECT_TRUE(res.contains(f)) << f;
    }
    for (const char* f : {"ratio", "entries", "histogram", "zdb", "ddt_bytes"}) {
      EXPECT_TRUE(res["dedup"].contains(f)) << f;
    }
    for (const char* f : {"dedup", "compress", "copies", "total"}) {
      EXPECT_TRUE(res["dedup"]["zdb"].contains(f)) << f;
    }
  }
  EXPECT_EQ(j["partial"], false);
  EXPECT_EQ(j["settings"]["profile"], "2.4");
  // zsim's own memory: the table holds every entry at 22 bytes or more (key, refcount, lsize,
  // codes; and the index), and one recordsize's sketches take 2^16 + 2^14 + 2^17 bytes.
  const json& m = j["memory"];
  const uint64_t entries = j["results"][0]["dedup"]["entries"]["unique"].get<uint64_t>() +
                           j["results"][0]["dedup"]["entries"]["duplicate"].get<uint64_t>();
  EXPECT_GE(m["ddt_table_entries"].get<uint64_t>(), entries);
  EXPECT_GE(m["ddt_table_bytes"].get<uint64_t>(), 22 * m["ddt_table_entries"].get<uint64_t>());
  EXPECT_EQ(m["distinct_sketch_bytes"], 65536 + 16384 + 131072);
}

// The memory figure counts what grows with the files, not only the tables: per file at least
// its identity hash (8 bytes) and, each content being distinct, an entry of the whole-file
// contents (a map node of 32 + 48 bytes and its lsize, 8); under --save also a record with its
// path and references. And nothing like a kilobyte per file for a tree of one-block files.
TEST(ScanCliTest, MemoryCountsWhatGrowsWithTheFiles) {
  testing::TempDir few, many;
  for (int i = 0; i < 20; ++i) few.WriteFile(FileName(i), testing::Xorshift64Bytes(i + 1, 100));
  for (int i = 0; i < 2020; ++i) {
    many.WriteFile(FileName(i), testing::Xorshift64Bytes(i + 1, 100));
  }
  auto file_state = [](const testing::TempDir& tree, std::initializer_list<std::string> extra) {
    const auto r = RunWith({"scan", tree.path().string(), "--compression", "off", "--json"}, extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return testing::ParseReportJson(r)["memory"]["file_state_bytes"].get<uint64_t>();
  };
  const uint64_t small = file_state(few, {}), large = file_state(many, {});
  EXPECT_GE(large, small + 2000 * (8 + 80 + 8));
  EXPECT_LE(large, 2020 * 1024);
  testing::TempDir saves;
  const std::string state = (saves.path() / "s.zstate").string();
  const uint64_t saved = file_state(many, {"--save", state});
  EXPECT_GE(saved, large + 2000 * 64);
}

// A tree without data recommends nothing: no row of the settings table is starred (or
// highlighted), the legend does not speak of one, and JSON has no featured setting. The first
// row was starred "recommended" beside "Nothing to advise" before.
TEST(ScanCliTest, AScanThatFoundNoDataStarsNoSetting) {
  testing::TempDir tree, out;
  tree.WriteFile("empty.txt", {});
  const std::string html = (out.path() / "r.html").string();
  const auto text = RunZsim({"scan", tree.path().string(), "--html", html});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Nothing to advise"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("\n* "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("recommended setting"), std::string::npos) << text.out;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(page.find("class=\"featured\""), std::string::npos);
  EXPECT_EQ(page.find("Highlighted"), std::string::npos);
  const auto json = RunZsim({"scan", tree.path().string(), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = testing::ParseReportJson(json);
  EXPECT_EQ(j["advice"]["verdict"], "nothing_scanned");
  EXPECT_TRUE(j["advice"]["featured"].is_null());
  // No data: no saving, as the text's "-" says, not a saving of 0%.
  EXPECT_EQ(j["input"]["bytes_data"], 0);
  for (const auto& row : j["results"]) {
    EXPECT_TRUE(row["saved_percent"].is_null()) << row.dump();
    EXPECT_TRUE(row["saved_with_dedup_percent"].is_null());
  }
}

TEST(ScanCliTest, HardLinkFifoAndUnreadableFileAreCountedAndTheScanGoesOn) {
  testing::TempDir tmp;
  tmp.WriteFile("data", testing::Xorshift64Bytes(3, 64 * K));
  tmp.WriteFile("secret", testing::Xorshift64Bytes(4, 8 * K));
  ASSERT_EQ(::link((tmp.path() / "data").c_str(), (tmp.path() / "data-link").c_str()), 0);
  ASSERT_EQ(::mkfifo((tmp.path() / "pipe").c_str(), 0644), 0);
  ASSERT_EQ(::chmod((tmp.path() / "secret").c_str(), 0), 0);
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
  std::vector<std::string> argv = {"scan", tmp.path().string(), "--compression", "off", "--json"};
  const testing::CommandResult r = testing::RunZsimUnprivileged(argv);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = ParseJson(r);
  EXPECT_EQ(j["input"]["files"], 1);  // data; secret is listed as an error only (issue 18)
  EXPECT_EQ(j["input"]["skipped"]["hard_link"], 1);
  EXPECT_EQ(j["input"]["skipped"]["fifo"], 1);
  ASSERT_EQ(j["input"]["errors"].size(), 1u);
  EXPECT_EQ(j["input"]["errors"][0]["path"], (tmp.path() / "secret").string());
  EXPECT_NE(j["input"]["errors"][0]["error"].get<std::string>().find("permission_denied"),
            std::string::npos);
  // Its size is known, and said: the verdict covers 64K of the 72K named.
  EXPECT_EQ(j["input"]["errors"][0]["bytes"], 8 * K);
  EXPECT_EQ(j["input"]["bytes_unread"], 8 * K);
  // The readable file is modelled in full: 64K below recordsize -> one 64K block.
  EXPECT_EQ(ResultFor(j, 128 * K, "off")["lsize"], 64 * K);
  EXPECT_NE(r.err.find("secret"), std::string::npos);  // and the user is told on stderr
  // The text report says it beside the verdict, with the share of the data named.
  argv.pop_back();  // --json
  const testing::CommandResult text = testing::RunZsimUnprivileged(argv);
  EXPECT_NE(text.out.find("\nNOT READ: 8.00 KiB in 1 file could not be read (11.1% of the data "
                          "named)"),
            std::string::npos)
      << text.out.substr(0, 600);
}

// The share of what could not be read is of the data, holes not counted (as every "data" of the
// report): a sparse 1 GiB file holding 64K beside an unreadable 64K file is half unread, where
// the share of the logical bytes said 0.0%.
TEST(ScanCliTest, TheUnreadShareIsOfTheDataNotOfTheHoles) {
  testing::TempDir tmp;
  tmp.WriteFile("secret", testing::Xorshift64Bytes(6, 64 * K));
  tmp.WriteFile("sparse", testing::Xorshift64Bytes(7, 64 * K));
  ASSERT_EQ(::truncate((tmp.path() / "sparse").c_str(), 1024 * 1024 * K), 0);
  ASSERT_EQ(::chmod((tmp.path() / "secret").c_str(), 0), 0);
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
  const testing::CommandResult r =
      testing::RunZsimUnprivileged({"scan", tmp.path().string(), "--compression", "off"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("\nNOT READ: 64.0 KiB in 1 file could not be read (50.0% of the data "
                       "named)"),
            std::string::npos)
      << r.out.substr(0, 800);
}

TEST(ScanCliTest, SparseFileHolesAreNeitherReadNorAllocated) {
  testing::TempDir tmp;
  const auto path = tmp.path() / "sparse.img";
  {
    std::ofstream f(path, std::ios::binary);
    const std::vector<uint8_t> data = testing::Xorshift64Bytes(5, 1024 * K);
    f.seekp(4 * 1024 * K);
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  ASSERT_EQ(::truncate(path.c_str(), 16 * 1024 * K), 0);
  const auto r = RunZsim({"scan", path.string(), "--compression", "off", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_EQ(j["input"]["bytes_logical"], 16 * 1024 * K);
  EXPECT_LE(j["input"]["bytes_read"].get<uint64_t>(), 1024 * K + 64 * K);  // data only (+fs slack)
  const json& off = ResultFor(j, 128 * K, "off");
  EXPECT_EQ(off["blocks"]["data"], 8);     // 1M of data = 8 records
  EXPECT_EQ(off["blocks"]["holes"], 120);  // the other 15M
  EXPECT_EQ(off["lsize"], 1024 * K);
}

// compression=off without dedup writes zero blocks as data (2.4: with dedup they are holes): the
// indirect blocks over 2 MiB of zeros written 6 GiB into an 8 GiB sparse file are those over 2
// MiB of random bytes there, not those of data spread over the whole file (format 23, issue of
// a new user's audit: 229,376 against 106,496 bytes of metadata at 50 GiB).
TEST(ScanCliTest, ZerosWrittenDeepInASparseFileCostWhatOtherDataCosts) {
  testing::TempDir tmp;
  const uint64_t at = 6 * 1024 * 1024 * K, data_bytes = 2 * 1024 * K;
  const std::vector<uint8_t> zeros(data_bytes, 0);
  const std::vector<uint8_t> random = testing::Xorshift64Bytes(8, data_bytes);
  for (const auto& [name, bytes] :
       {std::pair{"zeros.img", &zeros}, std::pair{"random.img", &random}}) {
    const auto path = tmp.path() / name;
    {
      std::ofstream f(path, std::ios::binary);
      f.seekp(static_cast<std::streamoff>(at));
      f.write(reinterpret_cast<const char*>(bytes->data()),
              static_cast<std::streamsize>(bytes->size()));
    }
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(8 * 1024 * 1024 * K)), 0);
  }
  const std::string save = (tmp.path() / "s.zstate").string();
  uint64_t metadata[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const std::string path = (tmp.path() / (i == 0 ? "zeros.img" : "random.img")).string();
    const auto r = RunZsim({"scan", path, "--compression", "off,lz4", "--profile", "2.4",
                            "--volblocksize", "16k", "--json", "--save", save});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = ParseJson(r);
    const json& off = ResultFor(j, 16 * K, "off");
    metadata[i] = off["metadata_bytes"].get<uint64_t>();
    EXPECT_EQ(off["used"].get<uint64_t>(), data_bytes + metadata[i]) << path;
    // The saved state answers the same.
    const auto again = RunZsim({"report", save, "--json"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(ResultFor(ParseJson(again), 16 * K, "off")["metadata_bytes"], metadata[i]);
  }
  EXPECT_GT(metadata[1], 0u);
  EXPECT_EQ(metadata[0], metadata[1]);
}

// A block device is a zvol's data: a scan of block devices alone is a scan of zvols at the
// profile's default volblocksize, labelled so (it printed recordsize 128K over 16K blocks, and
// advised recordsize=128K), and --recordsize is refused there before anything is read.
TEST(ScanCliTest, ABlockDeviceAloneIsScannedAsAZvol) {
  testing::TempDir tmp;
  // A node for a loop device that may hold nothing: only its type is looked at before the refusal.
  const std::string node = (tmp.path() / "blk").string();
  if (::mknod(node.c_str(), S_IFBLK | 0600, makedev(7, 250)) != 0) {
    GTEST_SKIP() << "mknod of a block device node refused here: " << std::strerror(errno);
  }
  const auto refused = RunZsim({"scan", node, "--recordsize", "1M"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(refused.out.empty());
  EXPECT_NE(refused.err.find("is a block device, which ZFS holds as a zvol: --recordsize cuts the "
                             "files of a filesystem, not a zvol; give --volblocksize (16K is the "
                             "default under profile 2.4)"),
            std::string::npos)
      << refused.err;
  // A loop device over 4 MiB of data (and 4 MiB of zeros), read only, where losetup works here.
  const std::string image = (tmp.path() / "image").string();
  std::vector<uint8_t> bytes = testing::Xorshift64Bytes(11, 4096 * K);
  bytes.resize(8192 * K, 0);
  tmp.WriteFile("image", bytes);
  const testing::CommandResult attach =
      testing::RunCommand({"losetup", "--find", "--show", "--read-only", image});
  if (attach.exit_code != 0) GTEST_SKIP() << "losetup does not work here: " << attach.err;
  const std::string device = attach.out.substr(0, attach.out.find('\n'));
  const auto r = RunZsim({"scan", device, "--json", "--compression", "off,lz4", "-q"});
  testing::RunCommand({"losetup", "-d", device});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_EQ(j["settings"]["volblocksize"], 16 * K);
  ASSERT_EQ(j["results"].size(), 2u);
  const json& off = ResultFor(j, 16 * K, "off");
  // 8 MiB of 16K blocks: 256 of data, 256 of zeros (holes with dedup under 2.4, even off).
  EXPECT_EQ(off["blocks"]["data"], 256);
  EXPECT_EQ(off["blocks"]["holes"], 256);
  EXPECT_EQ(ResultFor(j, 16 * K, "lz4")["blocks"]["holes"], 256);
  bool reservation = false;
  for (const json& item : j["advice"]["items"]) reservation |= item["kind"] == "zvol_reservation";
  EXPECT_TRUE(reservation) << j["advice"].dump().substr(0, 400);
}

// A file of /proc named as an input: read as asked, but said to be made up by the kernel (its
// size, 0, is not its content: the report's "0 B" read as a figure of what was named).
TEST(ScanCliTest, AFileOfAKernelPseudoFileSystemIsSaidToBeOne) {
  struct stat st;
  if (::stat("/proc/self/status", &st) != 0) GTEST_SKIP() << "no /proc here";
  const auto r = RunZsim({"scan", "/proc/self/status", "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("zsim: note: /proc/self/status lies on a kernel pseudo file system: its "
                       "files are made up by the kernel as they are read"),
            std::string::npos)
      << r.err;
  testing::TempDir tmp;
  tmp.WriteFile("a", testing::Xorshift64Bytes(3, 4 * K));
  EXPECT_EQ(RunZsim({"scan", tmp.path().string(), "--no-progress"}).err.find("pseudo"),
            std::string::npos);
  // The note is the report's too (input.notes, the text's "Note:"), and the saved state's: a
  // report of it, and a merge with another state (once).
  const std::string proc_state = (tmp.path() / "proc.zstate").string();
  const std::string tree_state = (tmp.path() / "tree.zstate").string();
  const auto saved = RunZsim({"scan", "/proc/self/status", "--json", "-q", "--save", proc_state});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const json notes = ParseJson(saved)["input"]["notes"];
  ASSERT_EQ(notes.size(), 1u) << notes.dump();
  EXPECT_NE(notes[0].get<std::string>().find("/proc/self/status lies on a kernel pseudo file"),
            std::string::npos);
  ASSERT_EQ(RunZsim({"scan", (tmp.path() / "a").string(), "-q", "--save", tree_state}).exit_code,
            0);
  const auto again = RunZsim({"report", proc_state, "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ParseJson(again)["input"]["notes"], notes);
  const auto both = RunZsim({"report", tree_state, proc_state});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("Note: /proc/self/status lies on a kernel pseudo file system"),
            std::string::npos)
      << both.out.substr(0, 1500);
  EXPECT_EQ(ParseJson(RunZsim({"report", tree_state, "--json"}))["input"]["notes"].size(), 0u);
}

// Copies of a tiny file, whose one block ZFS 2.3+ embeds in its block pointer with dedup on, take
// no allocation and no DDT entry: they are no whole-file duplicates that cloning or a hard link
// would save (3,000 of them were "Whole-file duplicates (3000 files, 4.34 MiB)" beside 2.88 MiB
// that dedup removes). Under 2.2, where dedup=on stores small blocks (no embedding), they count.
TEST(ScanCliTest, CopiesOfAnEmbeddedFileAreNoWholeFileDuplicates) {
  testing::TempDir tmp;
  const std::string line = "# placeholder, keep me\n";
  for (int i = 0; i < 40; ++i) {
    tmp.WriteFile("tiny/" + testing::NumberedName("k", i),
                  std::vector<uint8_t>(line.begin(), line.end()));
  }
  const std::vector<uint8_t> big = testing::Xorshift64Bytes(12, 300 * K);
  tmp.WriteFile("big/a.bin", big);
  tmp.WriteFile("big/b.bin", big);
  const auto r24 = RunZsim({"scan", tmp.path().string(), "--json", "-q"});
  ASSERT_EQ(r24.exit_code, 0) << r24.err;
  const json j24 = ParseJson(r24);
  EXPECT_EQ(j24["dedup_sources"]["duplicate_files"], 1);
  EXPECT_EQ(j24["dedup_sources"]["duplicate_file_bytes"], 384 * K);  // 3 records of 128K
  const auto r22 = RunZsim({"scan", tmp.path().string(), "--json", "-q", "--profile", "2.2"});
  ASSERT_EQ(r22.exit_code, 0) << r22.err;
  const json j22 = ParseJson(r22);
  EXPECT_EQ(j22["dedup_sources"]["duplicate_files"], 1 + 39);
  EXPECT_EQ(j22["dedup_sources"]["duplicate_file_bytes"], 384 * K + 39 * 512);
  // Under --sample 1/M the table keeps a key 1 time in M: the copies are counted, all of them
  // (not as many as the keys kept happen to tell).
  const auto sampled = RunZsim({"scan", tmp.path().string(), "--json", "-q", "--sample", "1/2"});
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  EXPECT_EQ(ParseJson(sampled)["dedup_sources"]["duplicate_files"], 1 + 39);
}

TEST(ScanCliTest, BadArgumentsAreRefusedWithWhatWouldBeRight) {
  testing::TempDir tmp;
  const std::string p = tmp.path().string();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"scan", p, "--recordsize", "3k"}, "power of two"},
      {{"scan", p, "--recordsize", "256k", "--profile", "v23"},
       "256K is not allowed: use a power of two from 512 to 128K"},
      {{"scan", p, "--recordsize", "12q"}, "suffix"},
      {{"scan", p, "--compression", "lz5"}, "lz4"},
      {{"scan", p, "--compression", "lz4", "--profile", "v23"}, "v23"},
      {{"scan", p, "--profile", "3.0"}, "v23, 2.1, 2.2, 2.3 or 2.4"},
      {{"scan", p, "--ashift", "20"}, "9 to 16"},
      {{"scan", p, "--copies", "4"}, "1, 2 or 3"},
      {{"scan", p, "--vdev", "raidz9:3"}, "raidz"},
      {{"scan", p, "--checksum", "md5"}, "xxh128 or sha256"},
      {{"scan"}, "PATH"},
      {{"scan", p, "--no-such-option"}, "--no-such-option"},
      // A value that is another option: refused, not taken as a file name or a glob.
      {{"scan", p, "--html", "--json"},
       "--html takes a value, and the next word '--json' looks like an option: give --html its "
       "value, or write --html=--json if that is the value"},
      {{"scan", p, "--save", "--json"}, "--save=--json"},
      {{"scan", p, "--exclude", "--no-progress"}, "'--no-progress' looks like an option"},
      {{"report", p, "--vdev", "--json"}, "--vdev takes a value"},
      {{"scan", p, "-qo", "--json"}, "-o takes a value"},  // -o last of a cluster
      // An option the command does not take is refused as such, whatever follows it.
      {{"diff", p, p, "--html", "--json"}, "zsim diff takes no --html option"},
  };
  for (const Case& c : cases) {
    const auto r = RunZsim(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.back();
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args.back() << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists("--json"));  // nothing written under a flag's name
}

TEST(ScanCliTest, SameJsonWhateverTheThreadCount) {
  testing::TempDir tmp;
  for (int i = 0; i < 12; ++i) {
    tmp.WriteFile(FileName(i),
                  testing::GenerateBlock(50 * K * static_cast<size_t>(i + 1), 0.6, i % 4));
  }
  std::string first;
  for (const char* threads : {"1", "2", "4", "3"}) {
    const auto r = RunZsim(
        {"scan", tmp.path().string(), "--json", "--threads", threads, "--recordsize", "16k,128k"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = WithoutTimings(ParseJson(r));
    if (first.empty()) {
      first = j.dump();
    } else {
      EXPECT_EQ(j.dump(), first) << "threads " << threads;
    }
  }
}

TEST(ScanCliTest, SeveralRecordsizesInOnePassEqualSeparatePasses) {
  testing::TempDir tmp;
  for (int i = 0; i < 6; ++i) {
    tmp.WriteFile(FileName(i), testing::GenerateBlock(300 * K + 77 * i, 0.5, i % 3));
  }
  const auto both = RunZsim({"scan", tmp.path().string(), "--json", "--recordsize", "16k,128k",
                             "--compression", "lz4,gzip-6"});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  const json jb = WithoutTimings(ParseJson(both));
  for (uint64_t rs : {16 * K, 128 * K}) {
    const auto one = RunZsim({"scan", tmp.path().string(), "--json", "--recordsize",
                              std::to_string(rs), "--compression", "lz4,gzip-6"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const json jo = WithoutTimings(ParseJson(one));
    for (const char* c : {"lz4", "gzip-6"}) {
      EXPECT_EQ(ResultFor(jb, rs, c).dump(), ResultFor(jo, rs, c).dump()) << rs << " " << c;
    }
  }
}

// With --checksum sha256 (ZFS's dedup checksum) and compression off, the keys zsim computes are
// the DDT's own: the footprint lays the ZAP's leaves out on them (the ZAP's hash is the
// checksum's first word, big-endian) instead of on uniform keys; any other setting, and a
// sampled table, keep the model.
TEST(ScanCliTest, DdtLeavesAreLaidOutOnZfsKeysWhereTheScanHasThem) {
  testing::TempDir tmp;
  constexpr uint64_t kBlock = 16 * K, kBlocks = 1500, kCopied = 300;
  const std::vector<uint8_t> a = testing::Xorshift64Bytes(11, kBlocks * kBlock);
  tmp.WriteFile("a", a);
  tmp.WriteFile("b", std::vector<uint8_t>(a.begin(), a.begin() + kCopied * kBlock));
  const std::vector<std::string> args = {
      "scan",    tmp.path().string(), "--recordsize", "16k", "--compression",
      "off,lz4", "--exact",           "--profile",    "2.3", "--json"};
  const auto sha = RunWith(args, {"--checksum", "sha256"});
  ASSERT_EQ(sha.exit_code, 0) << sha.err;
  const json j = ParseJson(sha);
  // What the footprint of those keys is: ZFS's hashes computed here from the same bytes.
  zfs::DdtFootprintInput in;
  in.unique_entries = kBlocks - kCopied;
  in.duplicate_entries = kCopied;
  in.profile = Profile::kZfs23;
  in.typical_block_asize = kBlock;
  in.unique_size_diversity = in.duplicate_size_diversity = 0;  // every entry 16K, stored whole
  std::vector<uint64_t> hashes[2];
  for (uint64_t i = 0; i < kBlocks; ++i) {
    const ddt::Fingerprint fp =
        ddt::ComputeFingerprint(ChecksumKind::kSha256, ByteView(a.data() + i * kBlock, kBlock));
    uint64_t h = 0;
    for (int b = 0; b < 8; ++b) h = (h << 8) | ((fp.lo >> (8 * b)) & 0xFF);  // digest[0..8] BE
    hashes[i < kCopied ? 1 : 0].push_back(h);
  }
  for (auto& h : hashes) std::sort(h.begin(), h.end());
  in.unique_hashes = hashes[0];
  in.duplicate_hashes = hashes[1];
  for (const json& f : ResultFor(j, kBlock, "off")["dedup"]["ddt_formats"]) {
    EXPECT_TRUE(f["leaves_from_keys"].get<bool>()) << f.dump();
    in.format = f["format"] == "fast" ? DdtFormat::kFast : DdtFormat::kLegacy;
    const zfs::DdtFootprintModel m = zfs::ModelDdtFootprint(in);
    EXPECT_TRUE(m.totals.leaves_from_keys);
    EXPECT_EQ(f["unique"]["entries"], kBlocks - kCopied);
    EXPECT_EQ(f["in_core"], m.totals.in_core_bytes) << f["format"];
    EXPECT_EQ(f["on_disk"], m.totals.on_disk_bytes) << f["format"];
    EXPECT_EQ(f["unique"]["on_disk"], m.unique.dspace_bytes) << f["format"];
  }
  // lz4 stores this random data as is: its keys are the blocks' own, and so its footprint.
  const json& off_formats = ResultFor(j, kBlock, "off")["dedup"]["ddt_formats"];
  const json& lz4_formats = ResultFor(j, kBlock, "lz4")["dedup"]["ddt_formats"];
  ASSERT_EQ(lz4_formats.size(), off_formats.size());
  for (size_t i = 0; i < lz4_formats.size(); ++i) {
    EXPECT_TRUE(lz4_formats[i]["leaves_from_keys"].get<bool>());
    EXPECT_EQ(lz4_formats[i]["in_core"], off_formats[i]["in_core"]);
  }
  // The same figures for any thread count, and from the saved state.
  testing::TempDir out;  // zsim never writes inside what it scans
  const std::string state = (out.path() / "keys.zsim").string();
  const auto one_thread =
      RunWith(args, {"--checksum", "sha256", "--threads", "1", "--save", state});
  ASSERT_EQ(one_thread.exit_code, 0) << one_thread.err;
  EXPECT_EQ(WithoutTimings(ParseJson(one_thread)), WithoutTimings(j));
  const auto reported = RunZsim({"report", state, "--json"});
  ASSERT_EQ(reported.exit_code, 0) << reported.err;
  const json from_state = ParseJson(reported);
  EXPECT_EQ(ResultFor(from_state, kBlock, "off")["dedup"]["ddt_formats"],
            ResultFor(j, kBlock, "off")["dedup"]["ddt_formats"]);
  // The text report says which it was.
  const std::vector<std::string> text = {
      "scan", tmp.path().string(), "--recordsize", "16k", "--compression",
      "off",  "--profile",         "2.3"};
  const auto keyed_text = RunWith(text, {"--checksum", "sha256"});
  const auto model_text = RunZsim(text);
  ASSERT_EQ(keyed_text.exit_code, 0) << keyed_text.err;
  EXPECT_NE(keyed_text.out.find("this table's own SHA-256 keys"), std::string::npos)
      << keyed_text.out;
  EXPECT_EQ(model_text.out.find("own SHA-256 keys"), std::string::npos) << model_text.out;
  for (const auto& extra : {std::vector<std::string>{},  // xxh128: not ZFS's keys
                            std::vector<std::string>{"--checksum", "sha256", "--sample", "1/2"}}) {
    std::vector<std::string> run = args;
    run.insert(run.end(), extra.begin(), extra.end());
    const auto r = RunZsim(run);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json report = ParseJson(r);  // alive through the loop: ResultFor returns into it
    for (const json& f : ResultFor(report, kBlock, "off")["dedup"]["ddt_formats"]) {
      EXPECT_FALSE(f["leaves_from_keys"].get<bool>());
    }
  }
}

// A compressed block's DDT key is the checksum of the bytes ZFS writes (the output padded to its
// rounded psize), not of the block: under --checksum sha256 the scan keeps those keys' first
// words for lzjb, zle, lz4 and gzip, the state file carries them, and the footprint lays the
// leaves out on them, as long as the report's pool pads outputs as the scan's did.
TEST(ScanCliTest, CompressedTablesAreLaidOutOnTheKeysOfTheWrittenBytes) {
  testing::TempDir tmp;
  // 16K blocks of 8K random bytes and 8K zeros: lz4 makes about 8.2K of each, 12K at ashift 12
  // (every entry the same sizes); 300 of them twice.
  constexpr uint64_t kBlock = 16 * K, kBlocks = 1500, kCopied = 300;
  std::vector<uint8_t> a(kBlocks * kBlock, 0);
  for (uint64_t i = 0; i < kBlocks; ++i) {
    const std::vector<uint8_t> r = testing::Xorshift64Bytes(100 + i, kBlock / 2);
    std::copy(r.begin(), r.end(), a.begin() + static_cast<ptrdiff_t>(i * kBlock));
  }
  tmp.WriteFile("a", a);
  tmp.WriteFile("b", std::vector<uint8_t>(a.begin(), a.begin() + kCopied * kBlock));
  testing::TempDir out;
  const std::string state = (out.path() / "written.zsim").string();
  const auto run = RunZsim({"scan", tmp.path().string(), "--recordsize", "16k", "--compression",
                            "lz4,zstd-3", "--exact", "--profile", "2.3", "--ashift", "12",
                            "--checksum", "sha256", "--json", "--save", state});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json j = ParseJson(run);
  // ZFS's hashes, from the bytes codec::WriteZfsBlock says ZFS writes (checked against
  // OpenZFS 2.3.2's own DDT keys by the accuracy suite's accuracy23_keys).
  const zfs::WritePolicy policy = zfs::DedupPolicyOf(Profile::kZfs23, VdevLayout{}, 12);
  codec::Compressor compressor;
  std::vector<uint8_t> scratch(kBlock);
  std::vector<uint64_t> hashes[2];
  for (uint64_t i = 0; i < kBlocks; ++i) {
    const ByteView block(a.data() + i * kBlock, kBlock);
    const codec::WrittenBlock w =
        codec::WriteZfsBlock(policy, Compression{CompressionAlgorithm::kLz4, 0}, block, false,
                             compressor, MutableByteView(scratch.data(), scratch.size()));
    ASSERT_EQ(w.write.kind, zfs::BlockKind::kCompressed);
    ASSERT_EQ(w.write.psize, 12 * K);
    hashes[i < kCopied ? 1 : 0].push_back(ddt::KeptWord(ddt::ZfsChecksumWord0(
        ddt::ComputeFingerprint(ChecksumKind::kSha256, w.bytes))));  // the bits a table keeps
  }
  for (auto& h : hashes) std::sort(h.begin(), h.end());
  zfs::DdtFootprintInput in;
  in.unique_entries = kBlocks - kCopied;
  in.duplicate_entries = kCopied;
  in.profile = Profile::kZfs23;
  in.typical_block_asize = 12 * K;
  in.unique_size_diversity = in.duplicate_size_diversity = 0;  // every entry 16K -> 12K
  in.unique_hashes = hashes[0];
  in.duplicate_hashes = hashes[1];
  const auto expect_keyed = [&](const json& result, const char* what) {
    ASSERT_FALSE(result["dedup"]["ddt_formats"].empty()) << what;
    for (const json& f : result["dedup"]["ddt_formats"]) {
      EXPECT_TRUE(f["leaves_from_keys"].get<bool>()) << what << f.dump();
      in.format = f["format"] == "fast" ? DdtFormat::kFast : DdtFormat::kLegacy;
      const zfs::DdtFootprintModel m = zfs::ModelDdtFootprint(in);
      EXPECT_EQ(f["in_core"], m.totals.in_core_bytes) << what << " " << f["format"];
      EXPECT_EQ(f["on_disk"], m.totals.on_disk_bytes) << what << " " << f["format"];
    }
  };
  expect_keyed(ResultFor(j, kBlock, "lz4"), "scan");
  for (const json& f : ResultFor(j, kBlock, "zstd-3")["dedup"]["ddt_formats"]) {
    EXPECT_FALSE(f["leaves_from_keys"].get<bool>());  // zsim's zstd is not OpenZFS's
  }
  // From the saved state; and on a pool that pads alike (raidz2 at ashift 12) or not (ashift 9,
  // where the model takes over).
  const auto reported = RunZsim({"report", state, "--json"});
  ASSERT_EQ(reported.exit_code, 0) << reported.err;
  const json from_state = ParseJson(reported);
  expect_keyed(ResultFor(from_state, kBlock, "lz4"), "report");
  const auto raidz = RunZsim({"report", state, "--vdev", "raidz2:6", "--json"});
  ASSERT_EQ(raidz.exit_code, 0) << raidz.err;
  const json rz = ParseJson(raidz);
  for (const json& f : ResultFor(rz, kBlock, "lz4")["dedup"]["ddt_formats"]) {
    EXPECT_TRUE(f["leaves_from_keys"].get<bool>()) << f.dump();
  }
  const auto a9 = RunZsim({"report", state, "--ashift", "9", "--json"});
  ASSERT_EQ(a9.exit_code, 0) << a9.err;
  const json r9 = ParseJson(a9);
  for (const json& f : ResultFor(r9, kBlock, "lz4")["dedup"]["ddt_formats"]) {
    EXPECT_FALSE(f["leaves_from_keys"].get<bool>()) << f.dump();
  }
  // Without ZFS's checksum there is nothing to keep.
  const auto xxh = RunZsim({"scan", tmp.path().string(), "--recordsize", "16k", "--compression",
                            "lz4", "--exact", "--profile", "2.3", "--json"});
  ASSERT_EQ(xxh.exit_code, 0) << xxh.err;
  const json jx = ParseJson(xxh);
  for (const json& f : ResultFor(jx, kBlock, "lz4")["dedup"]["ddt_formats"]) {
    EXPECT_FALSE(f["leaves_from_keys"].get<bool>());
  }
}

TEST(ScanCliTest, HelpAndVersion) {
  const auto help = RunZsim({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("scan"), std::string::npos);
  const auto scan_help = RunZsim({"scan", "--help"});
  EXPECT_EQ(scan_help.exit_code, 0);
  EXPECT_NE(scan_help.out.find("--recordsize"), std::string::npos);
  EXPECT_NE(scan_help.out.find("Examples"), std::string::npos);
  const auto version = RunZsim({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("zsim "), std::string::npos);
  // No command, or one that does not exist, is bad usage (it printed the top-level help and
  // exited 0, `zsim merge --help` too); merge points at report.
  const auto bare = RunZsim({});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("no command"), std::string::npos) << bare.err;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"merge", "a", "b"}, {"merge", "--help"}}) {
    const auto merge = RunZsim(args);
    EXPECT_EQ(merge.exit_code, 2);
    EXPECT_TRUE(merge.out.empty());
    EXPECT_NE(merge.err.find("unknown command 'merge'"), std::string::npos) << merge.err;
    EXPECT_NE(merge.err.find("zsim report A.zstate B.zstate --save"), std::string::npos);
  }
}

}  // namespace
}  // namespace zsim

namespace zsim {
namespace {

// Enough unique blocks (1K records of 24 MiB) for compression sampling to rise above level 0.
class SampledTree : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new testing::TempDir();
    for (int i = 0; i < 3; ++i) {
      tmp_->WriteFile(FileName(i), testing::GenerateBlock(8 << 20, 0.55, 100 + i));
    }
    tmp_->WriteFile("copy0", testing::GenerateBlock(8 << 20, 0.55, 100));  // dedups with f0
  }
  static void TearDownTestSuite() { delete tmp_; }
  static testing::TempDir* tmp_;
};
testing::TempDir* SampledTree::tmp_ = nullptr;

// Every codec is sampled (issue 19) but lz4 beside another codec: lz4 runs on every unique block
// (exact) as the auxiliary of gzip-1's and zle's regression estimates; each sampled one has an
// interval holding the exact ratio.
TEST_F(SampledTree, EveryCodecIsSampledWithAnIntervalHoldingTheExactRatio) {
  const std::vector<std::string> base = {"scan",  tmp_->path().string(), "--recordsize",
                                         "1k",    "--compression",       "lz4,gzip-1,zle",
                                         "--json"};
  const auto sampled = RunZsim(base);
  std::vector<std::string> exact_args = base;
  exact_args.push_back("--exact");
  const auto exact = RunZsim(exact_args);
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  const json js = ParseJson(sampled), je = ParseJson(exact);
  const json& lz4 = ResultFor(js, 1024, "lz4");
  EXPECT_EQ(lz4["exact"], true);
  EXPECT_FALSE(lz4.contains("ci95"));
  EXPECT_EQ(lz4["psize"], ResultFor(je, 1024, "lz4")["psize"]);
  for (const char* codec : {"gzip-1", "zle"}) {
    SCOPED_TRACE(codec);
    const json& s = ResultFor(js, 1024, codec);
    const json& e = ResultFor(je, 1024, codec);
    EXPECT_EQ(s["exact"], false);
    EXPECT_EQ(e["exact"], true);
    ASSERT_TRUE(s.contains("ci95"));
    const double lo = s["ci95"][0].get<double>(), hi = s["ci95"][1].get<double>();
    const double truth = e["lsize"].get<double>() / e["psize"].get<double>();
    EXPECT_LE(lo, truth + 0.01);
    EXPECT_GE(hi, truth - 0.01);
    // 2,000-8,000 blocks: a few percent wide at most on this mixed data.
    EXPECT_LT(hi - lo, 0.06 * truth);
    EXPECT_NEAR(s["psize"].get<double>() / e["psize"].get<double>(), 1.0, 0.02);
    // The sample skipped work: the codec ran on fewer bytes.
    EXPECT_LT(s["timing"]["codec_bytes"].get<uint64_t>(),
              e["timing"]["codec_bytes"].get<uint64_t>());
    // Same entries: dedup does not depend on compression sampling.
    EXPECT_EQ(s["dedup"]["entries"], e["dedup"]["entries"]);
  }
}

TEST_F(SampledTree, DedupSamplingScalesCountsAndStaysWithinTwoPercent) {
  // A relative input path: the occurrence sample is the same on every run, not one per
  // temporary directory's name.
  const testing::ScopedWorkingDirectory cwd(tmp_->path());
  const std::vector<std::string> base = {"scan",          ".",   "--recordsize", "1k",
                                         "--compression", "lz4", "--json"};
  const auto exact = RunZsim(base);
  const auto sampled = RunWith(base, {"--sample", "1/16"});
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  const json je = ParseJson(exact);
  const json& e = ResultFor(je, 1024, "lz4");
  const json js = ParseJson(sampled);
  const json& s = ResultFor(js, 1024, "lz4");
  EXPECT_EQ(s["exact"], false);
  EXPECT_EQ(s["dedup"]["sample_modulus"], 16);
  const double ratio = s["dedup"]["ratio"].get<double>();
  EXPECT_NEAR(ratio, e["dedup"]["ratio"].get<double>(), 0.02 * e["dedup"]["ratio"].get<double>());
  // The interval is around the unrounded ratio (zpool's DEDUP is floored to 2 decimals).
  const double unrounded = s["dedup"]["zdb"]["dedup"].get<double>();
  EXPECT_LE(s["dedup"]["ci95"][0].get<double>(), unrounded);
  EXPECT_GE(s["dedup"]["ci95"][1].get<double>(), unrounded);
  const double entries = s["dedup"]["entries"]["unique"].get<double>() +
                         s["dedup"]["entries"]["duplicate"].get<double>();
  const double exact_entries = e["dedup"]["entries"]["unique"].get<double>() +
                               e["dedup"]["entries"]["duplicate"].get<double>();
  EXPECT_NEAR(entries / exact_entries, 1.0, 0.05);
}

TEST_F(SampledTree, AMemoryBudgetSamplesTheTableSaysSoAndKeepsTheRatio) {
  // 48K unique 512-byte records need about 1.5 MiB of table: past a 1 MiB budget the table
  // must sample itself, say so on stderr, and still give the dedup ratio within 2%.
  const std::vector<std::string> base = {
      "scan", tmp_->path().string(), "--recordsize", "512", "--compression", "off", "--json"};
  const auto exact = RunZsim(base);
  const auto sampled = RunWith(base, {"--max-memory", "1M"});
  ASSERT_EQ(exact.exit_code, 0) << exact.err;
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  EXPECT_EQ(exact.err.find("outgrew"), std::string::npos) << exact.err;
  EXPECT_NE(sampled.err.find("outgrew --max-memory 1.00 MiB"), std::string::npos) << sampled.err;
  const json je = ParseJson(exact), js = ParseJson(sampled);
  const json& e = ResultFor(je, 512, "off")["dedup"];
  const json& s = ResultFor(js, 512, "off")["dedup"];
  EXPECT_EQ(e["sample_modulus"], 1);
  EXPECT_GT(s["sample_modulus"].get<int>(), 1);
  EXPECT_NEAR(s["zdb"]["dedup"].get<double>() / e["zdb"]["dedup"].get<double>(), 1.0, 0.02);
}

// --sample 1/M with its occurrence sample (chosen by path and block index) and sampled codecs
// (60K 512-byte records: the occurrences at plan level 1, the kept entries at level 0): the same
// figures for any thread count, intervals included.
TEST(ScanCliTest, SampledTableGivesTheSameFiguresForAnyThreadCount) {
  testing::TempDir tmp;
  for (int i = 0; i < 30; ++i) {
    // Every third file is a copy of another, so the table has references to count.
    const uint64_t seed = static_cast<uint64_t>(i % 3 == 2 ? i - 1 : i);
    tmp.WriteFile(FileName(i), testing::GenerateBlock(1000 * K, 0.03 * (i % 10) + 0.1, seed));
  }
  std::string first;
  for (const char* threads : {"1", "2", "3"}) {
    const auto r = RunZsim({"scan", tmp.path().string(), "--recordsize", "512", "--compression",
                            "lz4,gzip-6", "--sample", "1/16", "--json", "--threads", threads});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = WithoutTimings(ParseJson(r));
    EXPECT_EQ(ResultFor(j, 512, "gzip-6")["dedup"]["sample_modulus"], 16);
    if (first.empty()) {
      first = j.dump();
    } else {
      EXPECT_EQ(j.dump(), first) << "threads " << threads;
    }
  }
}

TEST(ScanCliTest, SampledCodecsGiveTheSameFiguresForAnyThreadCount) {
  // 40 files whose compressibility climbs from file to file, 80K unique 512-byte records: the
  // sampled codecs go from level 0 to PlanLevel 4 when the sizing walk ends, and which files the
  // threads had met by then depends on timing. Which blocks the estimates use must not.
  testing::TempDir tmp;
  for (int i = 0; i < 40; ++i) {
    tmp.WriteFile(FileName(i),
                  testing::GenerateBlock(1 << 20, 0.02 * i + 0.05, static_cast<uint64_t>(500 + i)));
  }
  std::string first;
  json first_results;
  for (const char* threads : {"1", "2", "3", "2"}) {
    const auto r = RunZsim({"scan", tmp.path().string(), "--recordsize", "512", "--compression",
                            "lz4,gzip-1,zstd-3", "--json", "--threads", threads});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = WithoutTimings(ParseJson(r));
    EXPECT_EQ(ResultFor(j, 512, "gzip-1")["exact"], false);
    if (first.empty()) {
      first = j.dump();
      first_results = j["results"];
    } else {
      EXPECT_EQ(j.dump(), first) << "threads " << threads;
    }
  }
  // --follow-symlinks walks serially, and its sizing walk too: the same plan, the same figures.
  const auto r = RunZsim({"scan", tmp.path().string(), "--recordsize", "512", "--compression",
                          "lz4,gzip-1,zstd-3", "--json", "--follow-symlinks"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(WithoutTimings(ParseJson(r))["results"], first_results);
}

// --exclude as other tools spell it: a directory with a trailing '/', an absolute path under a
// scanned path typed relative (with or without its own trailing '/'), a glob holding a '/' below
// the scanned path; never above it; and one that matches nothing is said on stderr (the first
// three silently excluded nothing before).
TEST(ScanCliTest, ExcludeTakesOtherToolsSpellingsAndSaysWhenItMatchedNothing) {
  testing::TempDir tmp;
  tmp.WriteFile("t/keep.bin", testing::Xorshift64Bytes(1, 4 * K));
  tmp.WriteFile("t/logs/a.log", testing::Xorshift64Bytes(2, 4 * K));
  const std::string abs_logs = std::filesystem::canonical(tmp.path()).string() + "/t/logs";
  for (const auto& [scanned, glob] : {std::pair<std::string, std::string>{"t", "logs/"},
                                      {"t", abs_logs},
                                      {"t/", abs_logs},
                                      {"t/", "logs/*.log"}}) {
    const testing::CommandResult r =
        testing::RunCommand({"/bin/sh", "-c",
                             "cd '" + tmp.path().string() + "' && exec '" + ZSIM_BINARY +
                                 "' scan " + scanned + " --json --exclude '" + glob + "'"});
    ASSERT_EQ(r.exit_code, 0) << glob << ": " << r.err;
    const json j = ParseJson(r);
    EXPECT_EQ(j["input"]["skipped"]["excluded"], 1) << scanned << " " << glob;
    EXPECT_EQ(j["input"]["files"], 1) << scanned << " " << glob;
    EXPECT_EQ(r.err.find("matched nothing"), std::string::npos) << r.err;
  }
  // Scanning /.../t, "t/*" names nothing below it: the tree is not excluded.
  const auto above = RunZsim({"scan", (tmp.path() / "t").string(), "--json", "--exclude", "t/*"});
  EXPECT_EQ(ParseJson(above)["input"]["files"], 2);
  EXPECT_NE(above.err.find("zsim: --exclude matched nothing"), std::string::npos) << above.err;
}

// Several --exclude globs: the one that matched nothing while the others did is named on
// stderr (the overall warning stays silent then: something was excluded), each glob by what
// its own spellings matched, and --quiet says nothing.
TEST(ScanCliTest, ExcludeNamesTheGlobThatMatchedNothingAmongOthers) {
  testing::TempDir tmp;
  tmp.WriteFile("keep.bin", testing::Xorshift64Bytes(1, 4 * K));
  tmp.WriteFile("a.log", testing::Xorshift64Bytes(2, 4 * K));
  tmp.WriteFile("old/b.tmp", testing::Xorshift64Bytes(3, 4 * K));
  const std::string root = tmp.path().string();
  const auto r = RunZsim({"scan", root, "--json", "--exclude", "*.log", "--exclude", "*.lgo",
                          "--exclude", "old/*.tmp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = ParseJson(r);
  EXPECT_EQ(j["input"]["skipped"]["excluded"], 2);
  EXPECT_EQ(j["input"]["files"], 1);
  EXPECT_NE(r.err.find("zsim: --exclude '*.lgo' matched nothing"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("'*.log' matched nothing"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("'old/*.tmp' matched nothing"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("zsim: --exclude matched nothing"), std::string::npos) << r.err;

  // Every glob matched: nothing said.
  const auto all = RunZsim({"scan", root, "--json", "--exclude", "*.log", "--exclude", "*.tmp"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.err.find("matched nothing"), std::string::npos) << all.err;
  // --quiet: nothing either.
  const auto quiet =
      RunZsim({"scan", root, "--json", "--quiet", "--exclude", "*.log", "--exclude", "*.lgo"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("matched nothing"), std::string::npos) << quiet.err;
}

// --ram: a machine's memory, refused before any I/O below what a machine running ZFS has: `--ram
// 64` was 64 bytes, and advised a special vdev for a table that did not fit in 16 B.
TEST(ScanCliTest, RamBelowAnyZfsMachineIsRefused) {
  testing::TempDir tmp;
  tmp.WriteFile("a", testing::GenerateBlock(1 << 20, 0.5, 7));
  const auto bare = RunZsim({"scan", tmp.path().string(), "--ram", "64"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_TRUE(bare.out.empty()) << bare.out;
  EXPECT_NE(bare.err.find("--ram 64 is 64 bytes, below the least a machine running ZFS has (64M): "
                          "a number without a suffix is bytes; give e.g. 64G"),
            std::string::npos)
      << bare.err;
  const auto small = RunZsim({"scan", tmp.path().string(), "--ram", "32M"});
  EXPECT_EQ(small.exit_code, 2);
  EXPECT_NE(small.err.find("--ram 32M is 33554432 bytes, below the least"), std::string::npos)
      << small.err;
  EXPECT_EQ(small.err.find("without a suffix"), std::string::npos) << small.err;
  EXPECT_EQ(RunZsim({"scan", tmp.path().string(), "--ram", "64M", "--quiet"}).exit_code, 0);
  // The report of a saved state alike.
  const std::string state = (tmp.path() / "a.zstate").string();
  ASSERT_EQ(RunZsim({"scan", (tmp.path() / "a").string(), "--save", state, "--quiet"}).exit_code,
            0);
  const auto report = RunZsim({"report", state, "--ram", "512"});
  EXPECT_EQ(report.exit_code, 2);
  EXPECT_NE(report.err.find("--ram 512 is 512 bytes"), std::string::npos) << report.err;
}

// --max-rate: a rate, refused otherwise before any I/O (exit 2); a capped scan reads as much.
TEST(ScanCliTest, MaxRateIsCheckedAndCapsTheReading) {
  testing::TempDir tmp;
  tmp.WriteFile("a", testing::GenerateBlock(3 << 20, 0.5, 7));
  for (const char* bad : {"0", "fast", "200M/h", "5X", "200", "1023K/s"}) {
    const auto r = RunZsim({"scan", tmp.path().string(), "--max-rate", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--max-rate"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // A number without a suffix is bytes: far below what a scan can be held to, and said so.
  const auto bytes = RunZsim({"scan", tmp.path().string(), "--max-rate", "200"});
  EXPECT_NE(bytes.err.find("--max-rate 200 is 200 bytes per second, below the least zsim holds a "
                           "scan to (1M/s): a number without a suffix is bytes; give SIZE/s, e.g. "
                           "200M/s"),
            std::string::npos)
      << bytes.err;
  const auto slow = RunZsim({"scan", tmp.path().string(), "--max-rate", "1023K/s"});
  EXPECT_NE(slow.err.find("--max-rate 1023K/s is 1047552 bytes per second, below the least zsim "
                          "holds a scan to (1M/s)\n"),
            std::string::npos)
      << slow.err;
  EXPECT_EQ(RunZsim({"scan", tmp.path().string(), "--max-rate", "1M", "--json"}).exit_code, 0);
  // 3 MiB at 6 MiB/s (the file's one chunk waits for its own bytes): the same figures.
  const auto capped =
      RunZsim({"scan", tmp.path().string(), "--json", "--exact", "--max-rate", "6M/s"});
  const auto free = RunZsim({"scan", tmp.path().string(), "--json", "--exact"});
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  EXPECT_EQ(WithoutTimings(ParseJson(capped))["results"],
            WithoutTimings(ParseJson(free))["results"]);
}

// The warning of a costly codec list rests on the codecs as the cost probe measures them, not on
// their nominal speeds over every allocated byte: 16 MiB of zeros through every codec at 16K is
// 20-odd nominal CPU seconds on one thread, 4,000 times the reading, but zero blocks are never
// coded (each is a hole), so nothing is costly and nothing is said.
TEST(ScanCliTest, NoCostWarningForCodecsThatHaveNothingToCode) {
  testing::TempDir tmp;
  tmp.WriteFile("zeros", std::vector<uint8_t>(16 << 20, 0));
  const auto r = RunZsim({"scan", tmp.path().string(), "--json", "--compression", "all",
                          "--recordsize", "16k", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("expected to take"), std::string::npos) << r.err;
}

TEST(ScanCliTest, SamplingArgumentsAreChecked) {
  testing::TempDir tmp;
  for (const char* bad : {"1/3", "1/0", "64", "1/x", "2/64"}) {
    const auto r = RunZsim({"scan", tmp.path().string(), "--sample", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("1/64"), std::string::npos) << r.err;
  }
  const auto r = RunZsim({"scan", tmp.path().string(), "--max-memory", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-memory"), std::string::npos) << r.err;
}

TEST(ScanCliTest, AMemoryBudgetBelowTheTablesFloorIsRefusedWithTheLeastThatWorks) {
  // Five recordsizes: their distinct-block counters and smallest tables alone take about 3 MiB,
  // so 1 MiB could only be kept by dropping every key. Refused before any I/O, with the least
  // budget that works; that one is accepted.
  testing::TempDir tmp;
  tmp.WriteFile("a", testing::Xorshift64Bytes(3, 300 * 1024));
  const std::vector<std::string> base = {"scan", tmp.path().string(), "--recordsize",
                                         "4k,8k,16k,64k,128k", "--json"};
  const auto small = RunWith(base, {"--max-memory", "1M"});
  EXPECT_EQ(small.exit_code, 2) << small.err;
  EXPECT_TRUE(small.out.empty());
  EXPECT_NE(small.err.find("too small for 5 block size(s)"), std::string::npos) << small.err;
  const std::string hint = "at least --max-memory ";
  const size_t at = small.err.find(hint);
  ASSERT_NE(at, std::string::npos) << small.err;
  const std::string least = small.err.substr(
      at + hint.size(), small.err.find('M', at + hint.size()) - at - hint.size() + 1);
  const auto ok = RunWith(base, {"--max-memory", least});
  EXPECT_EQ(ok.exit_code, 0) << least << ": " << ok.err;
  EXPECT_EQ(ParseJson(ok)["results"].size(), 5u * 3u);
}

}  // namespace
}  // namespace zsim

namespace zsim {
namespace {

TEST(ScanCliTest, VolblocksizeCutsEveryInputIntoFixedBlocks) {
  testing::TempDir tmp;
  const auto image = tmp.WriteFile("disk.img", testing::Xorshift64Bytes(21, 40000));
  // As a file: one block of 40000 rounded to 512. As a zvol: ceil(40000 / 16K) = 3 blocks of 16K.
  const auto file = RunZsim({"scan", image.string(), "--compression", "off", "--json"});
  const auto zvol =
      RunZsim({"scan", image.string(), "--compression", "off", "--volblocksize", "16k", "--json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  ASSERT_EQ(zvol.exit_code, 0) << zvol.err;
  const json jf = ParseJson(file), jz = ParseJson(zvol);
  EXPECT_EQ(ResultFor(jf, 128 * K, "off")["lsize"], 40448);
  const json& z = ResultFor(jz, 16 * K, "off");
  EXPECT_EQ(z["blocks"]["data"], 3);
  EXPECT_EQ(z["lsize"], 3 * 16 * K);
  EXPECT_EQ(jz["settings"]["volblocksize"], 16 * K);
  EXPECT_EQ(jz["settings"]["recordsizes"], nlohmann::json::array({16 * K}));  // the size evaluated
  const auto bad = RunZsim({"scan", image.string(), "--volblocksize", "12k"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("volblocksize"), std::string::npos);
}

}  // namespace
}  // namespace zsim
