// zsim scan --since, through the binary: after each kind of change to a tree (a file modified,
// added, deleted, renamed, a hard link added and removed, a touch that changes nothing, many
// files gone) a --since scan from the last saved state gives the figures of a full scan of the
// tree as it is now (timings and the bytes this run read aside); a tree that did not change is
// not read at all (the report's bytes_read is 0); and the bases or options --since cannot
// honour are refused with exit 2 before anything is read.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/util/report_json.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// What a --since run legitimately reports differently: the bytes it read and its codecs' work.
const std::set<std::string> kRunCosts = {"bytes_read", "codec_bytes", "cpu_seconds_per_gb"};

using testing::Concat;

class SinceCliTest : public ::testing::Test {
 protected:
  std::string Root() const { return tree_.path().string(); }
  std::string State(int n) const {
    return (files_.path() / testing::NumberedName("s", n)).string();
  }
  void Write(const std::string& rel, const std::vector<uint8_t>& bytes) {
    tree_.WriteFile(rel, bytes);
  }

  // A full scan of the tree now (the reference), saved as state n.
  json Full(const std::vector<std::string>& flags, int n) {
    const testing::CommandResult r = testing::RunZsim(Concat(
        Concat({"scan", Root()}, flags), {"--json", "-q", "--threads", "2", "--save", State(n)}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return testing::ParseReportJson(r);
  }
  // A --since scan from state `from`, saved as state `to`; its stderr in *err.
  json Since(const std::vector<std::string>& flags, int from, int to, std::string* err = nullptr) {
    const testing::CommandResult r = testing::RunZsim(
        Concat(Concat({"scan", Root()}, flags),
               {"--json", "--threads", "2", "--since", State(from), "--save", State(to)}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (err) *err = r.err;
    return testing::ParseReportJson(r);
  }
  // The --since scan from `from` equals a full scan of the tree now (saved as from + 1; the
  // --since one as from + 2, the base of the next step).
  void ExpectSinceEqualsFull(const std::vector<std::string>& flags, int from,
                             std::string* err = nullptr) {
    const json since = Since(flags, from, from + 2, err);
    const json full = Full(flags, from + 1);
    testing::ExpectSameFigures(since, full, kRunCosts);
  }

  // Files written in the clock tick a scan starts in cannot vouch for their content
  // (state/since.h StampsVouch) and are read again by the next --since: the tests that count
  // what --since skips let the tree's stamps fall behind the scan's start first.
  static void SettleStamps() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

  testing::TempDir tree_, files_;
};

TEST_F(SinceCliTest, EveryKindOfChangeGivesTheFullScansFigures) {
  const std::vector<uint8_t> shared = testing::GenerateBlock(300 * 1024, 0.7, 3);
  Write("a/shared.bin", shared);
  Write("b/copy/shared.bin", shared);
  for (int i = 0; i < 5; ++i) {
    Write("a/" + testing::NumberedName("t", i) + ".txt",
          testing::GenerateBlock(50000 + i * 40000, 0.6, 40 + i));
    Write("b/" + testing::NumberedName("s", i) + ".dat",
          testing::GenerateBlock(200 + i * 1500, 0.4, 50 + i));
  }
  Write("b/zeros.img", std::vector<uint8_t>(1 << 20, 0));
  Write("b/random.bin", testing::Xorshift64Bytes(9, 150 * 1024));
  const std::vector<std::string> flags = {"--recordsize", "16k,128k"};
  SettleStamps();
  Full(flags, 0);

  // Nothing changed: nothing read, and the same figures.
  {
    SCOPED_TRACE("unchanged");
    const json since = Since(flags, 0, 2);
    const json full = Full(flags, 1);
    testing::ExpectSameFigures(since, full, kRunCosts);
    EXPECT_EQ(since["input"]["bytes_read"], 0) << "an unchanged tree is not read";
    EXPECT_GT(full["input"]["bytes_read"].get<uint64_t>(), 1000000u);
  }
  int base = 2;
  auto step = [&](const char* what, const std::function<void()>& change) {
    SCOPED_TRACE(what);
    change();
    ExpectSinceEqualsFull(flags, base);
    base += 2;
  };
  step("modified", [&] { Write("a/t1.txt", testing::GenerateBlock(70000, 0.2, 99)); });
  step("added", [&] { Write("a/new/n.bin", testing::GenerateBlock(200000, 0.5, 7)); });
  step("deleted", [&] { fs::remove(tree_.path() / "b/random.bin"); });
  step("renamed", [&] { fs::rename(tree_.path() / "a/t2.txt", tree_.path() / "b/t2-moved.txt"); });
  step("hard link added", [&] {
    fs::create_hard_link(tree_.path() / "a/shared.bin", tree_.path() / "b/shared-link.bin");
  });
  step("hard link removed", [&] { fs::remove(tree_.path() / "b/shared-link.bin"); });
  step("touched, same content", [&] {
    const fs::path p = tree_.path() / "a/t3.txt";
    fs::last_write_time(p, fs::last_write_time(p) + std::chrono::seconds(5));
  });
  step("a directory gone", [&] { fs::remove_all(tree_.path() / "b/copy"); });
  step("grown", [&] {
    Write("b/zeros.img", std::vector<uint8_t>(3 << 20, 0));
    Write("a/t0.txt", testing::GenerateBlock(90000, 0.6, 40));
  });
}

// Under --checksum sha256 the tables keep the keys of the bytes compressed blocks write (state
// format 12): a --since scan keeps the base's and adds the new blocks', so the DDT is laid out
// on the keys as a full scan's is, with the same figures.
TEST_F(SinceCliTest, WrittenKeysCarryOverAndCoverTheNewBlocks) {
  for (int i = 0; i < 4; ++i) {
    Write("a/" + testing::NumberedName("t", i) + ".txt",
          testing::GenerateBlock(120000 + i * 30000, 0.6, 60 + i));
  }
  Write("b/random.bin", testing::Xorshift64Bytes(5, 100 * 1024));
  const std::vector<std::string> flags = {
      "--recordsize", "16k", "--compression", "off,lz4,gzip-6", "--checksum", "sha256", "--exact"};
  SettleStamps();
  Full(flags, 0);
  Write("a/t1.txt", testing::GenerateBlock(90000, 0.3, 98));
  Write("c/new.txt", testing::GenerateBlock(200000, 0.5, 97));
  const json since = Since(flags, 0, 2);
  const json full = Full(flags, 1);
  testing::ExpectSameFigures(since, full, kRunCosts);
  for (const char* c : {"off", "lz4", "gzip-6"}) {
    for (const json& f : testing::ResultFor(since, 16 * 1024, c)["dedup"]["ddt_formats"]) {
      EXPECT_TRUE(f["leaves_from_keys"].get<bool>()) << c << " " << f.dump();
    }
  }
}

// Enough unique blocks (about 14,000 of 4K) that the sampled codecs rise to level 1 (8,000 and
// more): the levels and the codes of a --since scan must still be the full scan's; a quarter
// gone keeps level 1, but with three quarters gone the level is 0, where the base left blocks
// uncoded: the scan reads everything again and says so.
TEST_F(SinceCliTest, SampledCodecLevelsFollowTheTreeAndAShrunkTreeIsReadAgain) {
  for (int i = 0; i < 48; ++i) {
    Write(testing::NumberedName("d", i % 4) + "/" + testing::NumberedName("f", i),
          testing::GenerateBlock(1200 * 1024, 0.3, 100 + static_cast<uint64_t>(i)));
  }
  const std::vector<std::string> flags = {"--recordsize", "4k"};
  SettleStamps();
  const json first = Full(flags, 0);
  std::string err;
  {
    SCOPED_TRACE("unchanged");
    const json since = Since(flags, 0, 2, &err);
    testing::ExpectSameFigures(since, first, kRunCosts);
    EXPECT_NE(err.find("48 files unchanged"), std::string::npos) << err;
  }
  {
    SCOPED_TRACE("a quarter gone");
    fs::remove_all(tree_.path() / "d0");
    ExpectSinceEqualsFull(flags, 2, &err);
    EXPECT_NE(err.find("36 files unchanged"), std::string::npos) << err;
  }
  {
    SCOPED_TRACE("most gone");
    fs::remove_all(tree_.path() / "d1");
    fs::remove_all(tree_.path() / "d2");
    ExpectSinceEqualsFull(flags, 4, &err);
    EXPECT_NE(err.find("read all 12 files again"), std::string::npos) << err;
  }
}

// A file whose stamps are not older than the scan that read it may have been rewritten after
// its stat without a change of stamp: its record does not vouch for it, and the next --since
// reads it again (a file stamped in the future stands in for one rewritten in the same tick).
TEST_F(SinceCliTest, AFileStampedDuringTheScanIsReadAgain) {
  const std::vector<uint8_t> future = testing::GenerateBlock(96 * 1024, 0.5, 5);
  Write("future.bin", future);
  Write("past.bin", testing::GenerateBlock(64 * 1024, 0.5, 6));
  const fs::path p = tree_.path() / "future.bin";
  fs::last_write_time(p, fs::file_time_type::clock::now() + std::chrono::hours(1));
  SettleStamps();
  const std::vector<std::string> flags = {"--recordsize", "16k"};
  const json full = Full(flags, 0);
  std::string err;
  const json since = Since(flags, 0, 2, &err);
  testing::ExpectSameFigures(since, full, kRunCosts);
  EXPECT_EQ(since["input"]["bytes_read"], future.size()) << "only the file stamped late is read";
  EXPECT_NE(err.find("1 file unchanged"), std::string::npos) << err;
}

// A budget the saved table does not fit makes the --since scan sample its tables, which
// renumbers their entries: the saved references are then not used; the tree is read again and
// the figures are a full scan's under the same budget.
TEST_F(SinceCliTest, ABudgetTheSavedTableDoesNotFitReadsEverythingAgain) {
  for (int i = 0; i < 24; ++i) {
    Write(testing::NumberedName("f", i), testing::GenerateBlock(1200 * 1024, 0.3, 300 + i));
  }
  const std::vector<std::string> flags = {"--recordsize", "1k"};
  Full(flags, 0);
  const std::vector<std::string> budget = {"--recordsize", "1k", "--max-memory", "1M"};
  std::string err;
  const json since = Since(budget, 0, 2, &err);
  const json full = Full(budget, 1);
  testing::ExpectSameFigures(since, full, kRunCosts);
  EXPECT_NE(err.find("read all 24 files again"), std::string::npos) << err;
}

// "D/" and "D" name one tree, whose files the walk spells alike: a state saved from one serves
// the other, both ways, and reads nothing again. (Refused as other input paths before.)
TEST_F(SinceCliTest, ATrailingSlashIsTheSameInputPath) {
  Write("x/a.bin", testing::GenerateBlock(100000, 0.5, 1));
  Write("b.bin", testing::GenerateBlock(300000, 0.3, 2));
  SettleStamps();
  const json full = Full({}, 0);
  for (const std::string& root : {Root() + "/", Root() + "//"}) {
    SCOPED_TRACE(root);
    const testing::CommandResult slashed = testing::RunZsim(
        {"scan", root, "--json", "--threads", "2", "--since", State(0), "--save", State(1)});
    ASSERT_EQ(slashed.exit_code, 0) << slashed.err;
    const json j = testing::ParseReportJson(slashed);
    EXPECT_EQ(j["input"]["paths"], json::array({Root()}));  // kept as the walk spells it
    EXPECT_EQ(j["input"]["bytes_read"], 0u) << "both files kept from the base";
    testing::ExpectSameFigures(j, full, kRunCosts);
    // And back: the state saved from the slashed spelling serves the plain one.
    const json back = Since({}, 1, 2);
    EXPECT_EQ(back["input"]["bytes_read"], 0u);
    testing::ExpectSameFigures(back, full, kRunCosts);
  }
}

TEST_F(SinceCliTest, WhatCannotBeHonouredIsRefusedBeforeReading) {
  Write("x/a.bin", testing::GenerateBlock(100000, 0.5, 1));
  Full({"--recordsize", "16k"}, 0);
  auto refused = [&](const std::vector<std::string>& args, const std::string& word) {
    SCOPED_TRACE(word);
    const std::string out = (files_.path() / "out").string();
    const testing::CommandResult r = testing::RunZsim(Concat(args, {"--save", out, "-q"}));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(r.out.empty()) << "no report: nothing was scanned";
    EXPECT_FALSE(fs::exists(out)) << "nothing saved";
    EXPECT_NE(r.err.find(word), std::string::npos) << r.err;
  };
  refused({"scan", Root(), "--since", State(0)}, "recordsizes");
  refused({"scan", Root(), "--recordsize", "16k", "--compression", "lz4", "--since", State(0)},
          "compression");
  refused({"scan", Root(), "--recordsize", "16k", "--checksum", "sha256", "--since", State(0)},
          "checksum");
  // Another list, in another order too; and --exact: each named as what differs (not as another
  // plan), the list with the flag that rescans as the state was scanned.
  refused({"scan", Root(), "--recordsize", "16k", "--compression", "off,zstd-3,lz4", "--since",
           State(0)},
          "the state was scanned with --compression off,lz4,zstd-3, this scan evaluates "
          "off,zstd-3,lz4: give --compression off,lz4,zstd-3 to rescan as the state was scanned");
  // A profile that differs too is named, not a list that profile would refuse (v23 has no lz4).
  refused({"scan", Root(), "--recordsize", "16k", "--profile", "v23", "--since", State(0)},
          "the scans differ in profile (2.4 and v23)");
  refused({"scan", Root(), "--recordsize", "16k", "--exact", "--since", State(0)}, "--exact");
  refused({"scan", (tree_.path() / "x").string(), "--recordsize", "16k", "--since", State(0)},
          "same input paths");
  // The same directory spelled another way: said so, with the spelling the state holds.
  refused({"scan", Root() + "/x/..", "--recordsize", "16k", "--since", State(0)},
          "the same places spelled another way; the state's records name files by the paths as "
          "typed, so give them as the state has them (" +
              Root() + ")");
  refused({"scan", Root(), "--recordsize", "16k", "--sample", "1/4", "--since", State(0)},
          "--sample");
  refused({"scan", Root(), "--recordsize", "16k", "--since", State(9)}, "cannot open");
  // A state of an earlier zsim, whose default list also held gzip-6, lzjb and zle: the rescan
  // without --compression is told the list to give, and with it goes on.
  const std::vector<std::string> earlier = {"--recordsize", "16k", "--compression",
                                            "off,lz4,zstd-3,gzip-6,lzjb,zle"};
  Full(earlier, 2);
  refused({"scan", Root(), "--recordsize", "16k", "--since", State(2)},
          "give --compression off,lz4,zstd-3,gzip-6,lzjb,zle to rescan as the state was scanned");
  const testing::CommandResult again = testing::RunZsim(
      Concat(Concat({"scan", Root()}, earlier), {"--since", State(2), "-q", "--json"}));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  // A state without file records: sampled, or merged from several.
  const testing::CommandResult sampled =
      testing::RunZsim({"scan", Root(), "--sample", "1/4", "--save", State(1), "-q", "--json"});
  ASSERT_EQ(sampled.exit_code, 0) << sampled.err;
  refused({"scan", Root(), "--since", State(1)}, "no file records");
}

}  // namespace
}  // namespace zsim
