// zsim scan --save and zsim report, through the binary: the report from a saved state equals the
// scan's own report (timings aside) for a matrix of allocation options, profiles and sampling;
// several states are merged (scans of parts equal the scan of the whole); a state file that is
// truncated, corrupt, foreign or of another format version is refused with exit 2 and a message,
// and so are options the state cannot answer; --save to a bad place is refused before scanning;
// zsim diff shows each scan's own figures side by side.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>

#include "tests/util/report_json.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

using nlohmann::json;

using testing::ExpectSameFigures;
using testing::Figures;

void BuildTree(testing::TempDir& dir) {
  const std::vector<uint8_t> shared = testing::GenerateBlock(300 * 1024, 0.7, 3);
  dir.WriteFile("p1/shared.bin", shared);
  dir.WriteFile("p2/copy/shared.bin", shared);
  for (int i = 0; i < 4; ++i) {
    dir.WriteFile("p1/" + testing::NumberedName("t", i) + ".txt",
                  testing::GenerateBlock(50000 + i * 40000, 0.6, 40 + i));
    dir.WriteFile("p2/" + testing::NumberedName("s", i) + ".dat",
                  testing::GenerateBlock(200 + i * 1500, 0.4, 50 + i));
  }
  dir.WriteFile("p2/random.bin", testing::Xorshift64Bytes(9, 150 * 1024));
}

using testing::Concat;

class StateCliTest : public ::testing::Test {
 protected:
  void SetUp() override { BuildTree(tree_); }
  std::string Part(const char* name) const { return (tree_.path() / name).string(); }
  std::string StatePath(const char* name) const { return (files_.path() / name).string(); }
  // Scans `paths` with `scan_flags` and --save; the JSON report.
  json ScanSaving(const std::vector<std::string>& paths, const std::vector<std::string>& flags,
                  const std::string& state) {
    std::vector<std::string> args = Concat(Concat({"scan"}, paths), flags);
    args = Concat(args, {"--save", state, "--json", "-q", "--threads", "2"});
    const testing::CommandResult r = testing::RunZsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return testing::ParseReportJson(r);
  }
  json Scan(const std::vector<std::string>& paths, const std::vector<std::string>& flags) {
    const testing::CommandResult r = testing::RunZsim(
        Concat(Concat(Concat({"scan"}, paths), flags), {"--json", "-q", "--threads", "2"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return testing::ParseReportJson(r);
  }
  json Report(const std::vector<std::string>& states, const std::vector<std::string>& flags) {
    const testing::CommandResult r =
        testing::RunZsim(Concat(Concat(Concat({"report"}, states), flags), {"--json"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return testing::ParseReportJson(r);
  }
  testing::TempDir tree_, files_;
};

TEST_F(StateCliTest, ReportFromSavedStateEqualsTheScanForAMatrixOfOptions) {
  struct Scanned {
    std::vector<std::string> flags;                 // fix the state's content
    std::vector<std::vector<std::string>> reports;  // report-time options to try
  };
  const std::vector<Scanned> cases = {
      {{"--recordsize", "16k,128k"},
       {{},
        {"--vdev", "mirror:3"},
        {"--vdev", "raidz2:6", "--copies", "2"},
        {"--vdev", "raidz1:3", "--copies", "3", "--ram", "2G"},
        {"--ddt-format", "legacy", "--ram", "64G"}}},
      {{"--profile", "2.1", "--compression", "lz4,gzip-9", "--exact"},
       {{}, {"--vdev", "raidz3:9", "--copies", "2"}}},
      {{"--profile", "v23", "--compression", "off,lzjb,gzip-6"},
       {{}, {"--ashift", "9", "--vdev", "raidz2:5"}, {"--ashift", "13", "--copies", "2"}}},
      {{"--sample", "1/4", "--recordsize", "8k"}, {{}, {"--ram", "1G"}}},
  };
  int n = 0;
  for (const Scanned& c : cases) {
    const std::string state = StatePath("s") + std::to_string(n++);
    const json saved_scan = ScanSaving({tree_.path().string()}, c.flags, state);
    for (const std::vector<std::string>& r : c.reports) {
      std::string what;
      for (const std::string& a : Concat(c.flags, r)) what += a + " ";
      SCOPED_TRACE(what);
      const json direct =
          r.empty() ? saved_scan : Scan({tree_.path().string()}, Concat(c.flags, r));
      const json from_state = Report({state}, r);
      ExpectSameFigures(from_state, direct);
    }
  }
  // The saving leaves no temporary file behind.
  for (const auto& e : std::filesystem::directory_iterator(files_.path())) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
}

TEST_F(StateCliTest, StatesOfPartsMergeIntoTheScanOfTheWhole) {
  ScanSaving({Part("p1")}, {"--recordsize", "4k,128k"}, StatePath("a"));
  ScanSaving({Part("p2")}, {"--recordsize", "4k,128k"}, StatePath("b"));
  const json whole = Scan({Part("p1"), Part("p2")}, {"--recordsize", "4k,128k"});
  ExpectSameFigures(Report({StatePath("a"), StatePath("b")}, {}), whole);
  // The dedup across the parts is the point: the whole has duplicates neither part has alone.
  EXPECT_GE(whole["dedup_sources"]["duplicate_files"].get<int>(), 1);
  const json with_raidz = Scan({Part("p1"), Part("p2")},
                               {"--recordsize", "4k,128k", "--vdev", "raidz2:6", "--copies", "2"});
  EXPECT_EQ(
      Figures(Report({StatePath("a"), StatePath("b")}, {"--vdev", "raidz2:6", "--copies", "2"})),
      Figures(with_raidz));
  // One state file named twice, or by two names, is one part (as a path named twice is one
  // input of a scan): read once, and said so.
  std::filesystem::create_hard_link(StatePath("a"), StatePath("a_link"));
  const testing::CommandResult same =
      testing::RunZsim({"report", StatePath("a"), StatePath("a_link"), StatePath("a"), "--json"});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.err.find(StatePath("a_link") + " is " + StatePath("a") +
                          " again (the same file): read once"),
            std::string::npos)
      << same.err;
  EXPECT_EQ(Figures(testing::ParseReportJson(same)), Figures(Report({StatePath("a")}, {})));
  EXPECT_EQ(testing::ParseReportJson(same)["input"]["files_counted_twice"], 0);
  // The same tree twice (two copies of its state): the report says its files are counted twice.
  for (const char* copy : {"a2", "a3", "a4"}) {
    std::filesystem::copy_file(StatePath("a"), StatePath(copy));
  }
  const testing::CommandResult twice =
      testing::RunZsim({"report", StatePath("a"), StatePath("a2"), "--json"});
  EXPECT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_NE(twice.err.find("also in an earlier state"), std::string::npos) << twice.err;
  // And the report says so too (it was on stderr only, which -q hides), as does every report
  // of the merged state saved.
  const json twice_json = testing::ParseReportJson(twice);
  EXPECT_EQ(twice_json["input"]["files_counted_twice"],
            twice_json["input"]["files"].get<int>() / 2);
  const testing::CommandResult twice_text = testing::RunZsim(
      {"report", StatePath("a"), StatePath("a2"), "-q", "--save", StatePath("aa")});
  EXPECT_NE(twice_text.out.find("COUNTED TWICE: "), std::string::npos) << twice_text.out;
  const testing::CommandResult saved = testing::RunZsim({"report", StatePath("aa"), "--json"});
  EXPECT_EQ(testing::ParseReportJson(saved)["input"]["files_counted_twice"],
            twice_json["input"]["files_counted_twice"]);
  EXPECT_EQ(Report({StatePath("a"), StatePath("b")}, {})["input"]["files_counted_twice"], 0);
  // Each count beyond a file's first, whatever the grouping: (a+a)+(a+a) as a+a+a+a, 3 per file
  // (the merge of merges counted 4 before).
  const int files_of_a = twice_json["input"]["files"].get<int>() / 2;
  std::filesystem::copy_file(StatePath("aa"), StatePath("aa2"));
  EXPECT_EQ(Report({StatePath("aa"), StatePath("aa2")}, {"-q"})["input"]["files_counted_twice"],
            3 * files_of_a);
  EXPECT_EQ(Report({StatePath("a"), StatePath("a2"), StatePath("a3"), StatePath("a4")},
                   {"-q"})["input"]["files_counted_twice"],
            3 * files_of_a);
  // Parts scanned for other pools: the merge cannot tell which pool to report, and took the
  // first part's before (the verdict then followed the order of the files). Told, it reports
  // that pool, in either order.
  ScanSaving({Part("p2")}, {"--recordsize", "4k,128k", "--vdev", "raidz2:6", "--ram", "1G"},
             StatePath("b_raidz"));
  const json with_raidz_1g =
      Scan({Part("p1"), Part("p2")},
           {"--recordsize", "4k,128k", "--vdev", "raidz2:6", "--copies", "2", "--ram", "1G"});
  for (const auto& order : {std::vector<std::string>{StatePath("a"), StatePath("b_raidz")},
                            std::vector<std::string>{StatePath("b_raidz"), StatePath("a")}}) {
    const testing::CommandResult refused =
        testing::RunZsim(Concat(Concat({"report"}, order), {"--json"}));
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_TRUE(refused.out.empty());
    EXPECT_NE(refused.err.find("different pools"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("give --vdev --ram"), std::string::npos) << refused.err;
    // What --save keeps, as it is: not the vdev given (it said "then keeps them").
    EXPECT_NE(refused.err.find("a state saved with --save keeps --ram and --ddt-format, but the "
                               "first part's vdev, ashift and copies: give those again when you "
                               "report it"),
              std::string::npos)
        << refused.err;
    json got = Figures(Report(order, {"--vdev", "raidz2:6", "--copies", "2", "--ram", "1G"}));
    json want = Figures(with_raidz_1g);
    got["input"].erase("paths");  // in the order of the states
    want["input"].erase("paths");
    EXPECT_EQ(got, want);
  }
  // The DDT format too, as it is in force: --profile naming the parts' own profile does not
  // settle it (it let the first part's format win before); --ddt-format does, and a state
  // saved from the merge keeps the RAM and format given.
  ScanSaving({Part("p2")}, {"--recordsize", "4k,128k", "--ddt-format", "legacy"},
             StatePath("b_legacy"));
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{}, std::vector<std::string>{"--profile", "2.4"}}) {
    const testing::CommandResult refused = testing::RunZsim(
        Concat({"report", StatePath("a"), StatePath("b_legacy"), "--json"}, flags));
    EXPECT_EQ(refused.exit_code, 2) << refused.out;
    EXPECT_NE(refused.err.find("ddt-format fast in "), std::string::npos) << refused.err;
  }
  const testing::CommandResult settled =
      testing::RunZsim({"report", StatePath("a"), StatePath("b_legacy"), "--ddt-format", "legacy",
                        "--ram", "2G", "--json", "--save", StatePath("ab_legacy")});
  ASSERT_EQ(settled.exit_code, 0) << settled.err;
  const json again = Report({StatePath("ab_legacy")}, {});
  EXPECT_EQ(again["settings"]["ddt_format"], "legacy");
  EXPECT_EQ(again["settings"]["ram_bytes"], uint64_t{2} << 30);
  EXPECT_EQ(Figures(again), Figures(testing::ParseReportJson(settled)));
  // One state saved again with another pool's layout keeps its own, and says so (it did only
  // for a merge of several).
  const testing::CommandResult resaved = testing::RunZsim(
      {"report", StatePath("a"), "--vdev", "mirror:3", "--save", StatePath("a_again")});
  ASSERT_EQ(resaved.exit_code, 0) << resaved.err;
  EXPECT_NE(resaved.err.find("note: " + StatePath("a_again") +
                             " keeps the vdev, ashift and "
                             "copies of " +
                             StatePath("a") + " (disk, ashift 12, copies 1)"),
            std::string::npos)
      << resaved.err;
  EXPECT_EQ(Report({StatePath("a_again")}, {})["settings"]["vdev"], "disk");
  // States of other recordsizes do not merge.
  ScanSaving({Part("p2")}, {"--recordsize", "8k"}, StatePath("c"));
  const testing::CommandResult r = testing::RunZsim({"report", StatePath("a"), StatePath("c")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("recordsizes"), std::string::npos) << r.err;
}

// Files hard-linked across the parts, and a copy: zsim report of the parts' states, merged at
// report time, gives the JSON of one scan of all parts (timings aside), with the default
// options, several recordsizes and --sample 1/16; a merged state saved with `zsim report
// --save` merges on with the last part; a part's state saved by --since keeps its links.
TEST_F(StateCliTest, FilesLinkedAcrossPartsCountOnceInAMerge) {
  namespace fs = std::filesystem;
  const fs::path root = tree_.path();
  fs::create_directories(root / "p2" / "linked");
  fs::create_directories(root / "p3");
  fs::create_hard_link(root / "p1" / "t1.txt", root / "p2" / "linked" / "t1.txt");
  fs::create_hard_link(root / "p2" / "random.bin", root / "p1" / "r.bin");
  fs::create_hard_link(root / "p2" / "random.bin", root / "p3" / "r.bin");
  fs::create_hard_link(root / "p1" / "shared.bin", root / "p3" / "shared.link");
  fs::copy_file(root / "p1" / "t2.txt", root / "p3" / "t2.copy");
  const std::vector<std::string> parts = {Part("p1"), Part("p2"), Part("p3")};
  int n = 0;
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {}, {"--recordsize", "4k,128k,1m"}, {"--sample", "1/16", "--recordsize", "8k"}}) {
    std::string what;
    for (const std::string& f : flags) what += f + " ";
    SCOPED_TRACE(what);
    std::vector<std::string> states;
    for (const std::string& p : parts) {
      states.push_back(StatePath("part") + std::to_string(n++));
      ScanSaving({p}, flags, states.back());
    }
    const json whole = Scan(parts, flags);
    EXPECT_EQ(whole["input"]["skipped"]["hard_link"].get<int>(), 4);
    const testing::CommandResult merged =
        testing::RunZsim(Concat({"report"}, Concat(states, {"--json"})));
    EXPECT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_EQ(merged.err.find("warning"), std::string::npos) << merged.err;
    ExpectSameFigures(testing::ParseReportJson(merged), whole);
    // The first two merged and saved, then merged with the third.
    const std::string saved = StatePath("merged") + std::to_string(n);
    const json two = Report({states[0], states[1]}, {"--save", saved});
    ExpectSameFigures(two, Scan({parts[0], parts[1]}, flags));
    ExpectSameFigures(Report({saved, states[2]}, {}), whole);
  }
  // A state saved by --since keeps the links of the files it did not read again.
  const std::string base = StatePath("since-base"), again = StatePath("since-again");
  ScanSaving({parts[0]}, {}, base);
  const testing::CommandResult since = testing::RunZsim(
      {"scan", parts[0], "--since", base, "--save", again, "--json", "-q", "--threads", "2"});
  EXPECT_EQ(since.exit_code, 0) << since.err;
  ScanSaving({parts[1]}, {}, StatePath("s2"));
  ScanSaving({parts[2]}, {}, StatePath("s3"));
  ExpectSameFigures(Report({again, StatePath("s2"), StatePath("s3")}, {}), Scan(parts, {}),
                    {"bytes_read"});
  // --save of the merge to a bad place is refused before anything is read.
  const testing::CommandResult bad = testing::RunZsim(
      {"report", StatePath("s2"), "--save", (files_.path() / "no" / "m").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(bad.out.empty());
  EXPECT_NE(bad.err.find("--save"), std::string::npos) << bad.err;
}

// States of parts saved with their file records merge into a state that --since starts from
// (`zsim report A B --save M`, then `zsim scan A B --since M`): on the unchanged union it reads
// nothing, and after changes its figures are a full scan's, with a file hard-linked across the
// parts.
TEST_F(StateCliTest, AMergeOfStatesWithRecordsServesSince) {
  namespace fs = std::filesystem;
  fs::create_directories(tree_.path() / "p2" / "linked");
  fs::create_hard_link(tree_.path() / "p1" / "t1.txt", tree_.path() / "p2" / "linked" / "t1.txt");
  // Stamps older than the scans vouch for the content (state/since.h StampsVouch).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ScanSaving({Part("p1")}, {}, StatePath("a"));
  ScanSaving({Part("p2")}, {}, StatePath("b"));
  Report({StatePath("a"), StatePath("b")}, {"--save", StatePath("m")});
  const std::set<std::string> run_costs = {"bytes_read", "codec_bytes", "cpu_seconds_per_gb"};
  auto since = [&](const std::string& from, const std::string& to) {
    const testing::CommandResult r =
        testing::RunZsim({"scan", Part("p1"), Part("p2"), "--since", from, "--save", to, "--json",
                          "--threads", "2"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("unchanged"), std::string::npos) << r.err;
    return testing::ParseReportJson(r);
  };
  const json unchanged = since(StatePath("m"), StatePath("m2"));
  EXPECT_EQ(unchanged["input"]["bytes_read"], 0) << "an unchanged tree is not read";
  ExpectSameFigures(unchanged, Scan({Part("p1"), Part("p2")}, {}), run_costs);
  // A file changed, one added, one deleted.
  tree_.WriteFile("p2/s1.dat", testing::GenerateBlock(9000, 0.4, 77));
  tree_.WriteFile("p1/new.txt", testing::GenerateBlock(70000, 0.6, 78));
  fs::remove(tree_.path() / "p1" / "t3.txt");
  ExpectSameFigures(since(StatePath("m2"), StatePath("m3")), Scan({Part("p1"), Part("p2")}, {}),
                    run_costs);
}

std::vector<uint8_t> Bytes(const std::string& path) { return testing::ReadFileBytes(path); }
void Write(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

TEST_F(StateCliTest, DamagedForeignAndOtherVersionFilesAreRefused) {
  const std::string good = StatePath("good");
  ScanSaving({tree_.path().string()}, {}, good);
  const std::vector<uint8_t> bytes = Bytes(good);
  ASSERT_GT(bytes.size(), 1000u);
  auto refused = [&](const std::vector<uint8_t>& b, const std::string& word) {
    const std::string bad = StatePath("bad");
    Write(bad, b);
    const testing::CommandResult r = testing::RunZsim({"report", bad, "--json"});
    EXPECT_EQ(r.exit_code, 2) << word;
    EXPECT_TRUE(r.out.empty()) << word;
    EXPECT_NE(r.err.find(word), std::string::npos) << r.err;
  };
  // Truncated anywhere: in the header, in a frame, before the end mark.
  for (size_t cut : {size_t{4}, size_t{20}, size_t{200}, bytes.size() / 2, bytes.size() - 13,
                     bytes.size() - 1}) {
    SCOPED_TRACE(cut);
    const std::vector<uint8_t> b(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(cut));
    refused(b, cut < 8 ? "not a zsim state file" : "truncated");
  }
  // One byte changed in the header text, in the middle of the data, in the last checksum.
  for (size_t at : {size_t{30}, bytes.size() / 2, bytes.size() - 3}) {
    SCOPED_TRACE(at);
    std::vector<uint8_t> b = bytes;
    b[at] ^= 0x20;
    refused(b, "corrupt");
  }
  // Bytes after the end mark.
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  refused(longer, "corrupt");
  // Not a state file at all.
  const std::string text = "just some text, not a state file at all\n";
  refused(std::vector<uint8_t>(text.begin(), text.end()), "not a zsim state file");
  // Another format version: a file whose header's second checksum (from format 23, seeded with
  // the version) holds, and one whose version word alone was damaged, which is corrupt.
  std::vector<uint8_t> other = bytes;
  other[8] = 99;
  refused(other, "corrupt: its format version fails its checksum");
  uint32_t text_bytes = 0;
  std::memcpy(&text_bytes, bytes.data() + 12, 4);
  const uint64_t sum = XXH3_64bits_withSeed(bytes.data() + 16, text_bytes, 99);
  std::memcpy(other.data() + 16 + text_bytes + 8, &sum, 8);
  refused(other, "format version 99");
  // Missing file.
  const testing::CommandResult missing = testing::RunZsim({"report", StatePath("none")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
  // A fifo (no writer: an open would wait forever) and a directory: refused at once.
  const std::string fifo = StatePath("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string& path : {fifo, tree_.path().string()}) {
    const testing::CommandResult r = testing::RunZsim({"report", path});
    EXPECT_EQ(r.exit_code, 2) << path;
    EXPECT_NE(r.err.find("is not a regular file"), std::string::npos) << r.err;
  }
}

TEST_F(StateCliTest, WhatTheStateCannotAnswerIsRefused) {
  const std::string s = StatePath("s");
  ScanSaving({tree_.path().string()}, {}, s);  // profile 2.4, ashift 12, off among the codecs
  auto refused = [&](const std::string& state, const std::vector<std::string>& flags,
                     const std::string& word) {
    const testing::CommandResult r = testing::RunZsim(Concat({"report", state}, flags));
    EXPECT_EQ(r.exit_code, 2) << word;
    EXPECT_TRUE(r.out.empty()) << word;
    EXPECT_NE(r.err.find(word), std::string::npos) << r.err;
  };
  // compression=off: 2.4 makes all-zero blocks holes with dedup=on, 2.2 writes them. A state
  // holding all-zero blocks is refused; one holding none (this tree) is answered as a scan under
  // 2.2 (a default scan's list holds off: such states were all refused, whatever they held).
  ExpectSameFigures(Report({s}, {"--profile", "2.2"}),
                    Scan({tree_.path().string()}, {"--profile", "2.2"}));
  testing::TempDir zeros;
  zeros.WriteFile("zeros.img", std::vector<uint8_t>(512 * 1024, 0));
  zeros.WriteFile("data.bin", testing::GenerateBlock(200 * 1024, 0.6, 77));
  const std::string z = StatePath("z");
  ScanSaving({zeros.path().string()}, {}, z);
  refused(z, {"--profile", "2.2"}, "all-zero blocks are written otherwise");
  refused(z, {"--profile", "2.2"}, "report with a profile that writes them as the scan's does");
  // A --sample state and one without: named as such, with what to do (both orders).
  const std::string sampled = StatePath("s-sampled");
  ScanSaving({tree_.path().string()}, {"--sample", "1/4"}, sampled);
  refused(sampled, {s}, "the first state was scanned with --sample 1/4 and the other without");
  refused(s, {sampled}, "the second state was scanned with --sample 1/4 and the other without");
  refused(s, {sampled}, "scan the other part again with --sample");
  refused(s, {"--copies", "5"}, "copies");
  refused(s, {"--vdev", "raid5"}, "--vdev");
  // Another unit: answered exactly as a scan with it, or refused when a block's fate under its
  // budget is not known.
  for (const char* ashift : {"9", "13"}) {
    SCOPED_TRACE(ashift);
    const testing::CommandResult r = testing::RunZsim({"report", s, "--ashift", ashift, "--json"});
    if (r.exit_code == 2) {
      EXPECT_NE(r.err.find("not known"), std::string::npos) << r.err;
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectSameFigures(testing::ParseReportJson(r),
                      Scan({tree_.path().string()}, {"--ashift", ashift}));
  }
  // A state of format 5 (older than 7: psize rounded for its scan's profile and unit): reported as
  // saved, and another unit or profile is refused.
  const std::string v5 = std::string(ZSIM_SOURCE_DIR) + "/tests/cli/data/v5_state";
  EXPECT_EQ(testing::RunZsim({"report", v5, "--json"}).exit_code, 0);
  refused(v5, {"--ashift", "13"}, "format 6 or older");
  refused(v5, {"--profile", "2.3"}, "format 6 or older");
}

// Two states of format 22 (saved by zsim at 237d680, tests/cli/data/v22_link_{a,b}) of two trees
// holding one file by two hard links (128K of bytes, 256K of zeros, 128K of bytes). Format 23's
// file shapes keep the indirect blocks over written zeros; a merge taking the linked file out of
// one part must still find that part's format-22 shape (it did not, and counted the file twice
// in `used` under off: 892,928 bytes against 622,592).
TEST_F(StateCliTest, StatesOfFormat22MergeTheirLinkedFilesOnce) {
  const std::string data = std::string(ZSIM_SOURCE_DIR) + "/tests/cli/data/";
  testing::TempDir dir;
  std::vector<uint8_t> bytes(512 * 1024, 0);
  for (int half = 0; half < 2; ++half) {  // the bytes the states were made of
    uint64_t x = static_cast<uint64_t>(half + 1);
    for (size_t i = 0; i < 128 * 1024; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      bytes[(half == 0 ? 0 : 384 * 1024) + i] = static_cast<uint8_t>(x >> 56);
    }
  }
  dir.WriteFile("a/f", bytes);
  std::filesystem::create_directories(dir.path() / "b");
  std::filesystem::create_hard_link(dir.path() / "a" / "f", dir.path() / "b" / "f");
  const json merged = Report({data + "v22_link_a", data + "v22_link_b"}, {});
  const json scanned = Scan({(dir.path() / "a").string(), (dir.path() / "b").string()}, {});
  ASSERT_EQ(merged["results"].size(), scanned["results"].size());
  for (size_t i = 0; i < scanned["results"].size(); ++i) {
    SCOPED_TRACE(scanned["results"][i]["compression"].get<std::string>());
    EXPECT_EQ(merged["results"][i]["used"], scanned["results"][i]["used"]);
    EXPECT_EQ(merged["results"][i]["metadata_bytes"], scanned["results"][i]["metadata_bytes"]);
  }
  EXPECT_EQ(merged["input"]["files"], 1);
}

// A file with holes between its data blocks: its indirect blocks were counted over the scan
// profile's indirect block size (16K in v23, 128K from 2.1), so the other size is refused.
TEST_F(StateCliTest, ASparseFilesStateKeepsItsIndirectBlockSize) {
  testing::TempDir dir;
  std::vector<uint8_t> sparse(2000 * 4096, 0);
  for (size_t b : {0, 150, 300, 1999}) {
    const std::vector<uint8_t> block = testing::Xorshift64Bytes(b + 7, 4096);
    std::copy(block.begin(), block.end(), sparse.begin() + b * 4096);
  }
  dir.WriteFile("sparse.img", sparse);
  for (auto [scanned, other] : {std::pair{"2.1", "v23"}, std::pair{"v23", "2.1"}}) {
    SCOPED_TRACE(std::string(scanned) + " -> " + other);
    const std::string state = StatePath(scanned);
    ScanSaving({dir.path().string()},
               {"--profile", scanned, "--recordsize", "4k", "--compression", "lzjb"}, state);
    const testing::CommandResult r = testing::RunZsim({"report", state, "--profile", other});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(r.out.empty());
    EXPECT_NE(r.err.find("indirect blocks of files with holes"), std::string::npos) << r.err;
  }
}

// The state keeps what each codec produced: on the bundled tiny sample, a state of profile 2.1
// (whose budgets do not follow the pool) answers every ashift, vdev, copies and 2.2, exactly as
// the scans with those options.
TEST_F(StateCliTest, ASavedStateAnswersOtherAshiftsVdevsAndProfiles) {
  const std::filesystem::path tiny = testing::SampleDir("ZSIM_SAMPLE_TINY");
  if (tiny.empty()) GTEST_SKIP() << "the tiny sample is not built (ctest -R sample_tiny)";
  const std::vector<std::string> content = {"--profile",         "2.1",          "--compression",
                                            "lz4,gzip-6,zstd-1", "--recordsize", "16k,128k"};
  const std::string state = StatePath("tiny21");
  ScanSaving({tiny.string()}, content, state);
  const std::vector<std::vector<std::string>> reports = {
      {"--ashift", "9"},
      {"--ashift", "13", "--vdev", "raidz2:6", "--copies", "2"},
      {"--vdev", "draid1:4:7"},
      {"--profile", "2.2", "--ashift", "13"},
      {"--profile", "2.2", "--ashift", "9", "--vdev", "mirror:2"},
  };
  for (const std::vector<std::string>& r : reports) {
    std::string what;
    for (const std::string& a : r) what += a + " ";
    SCOPED_TRACE(what);
    std::vector<std::string> scan_flags = content;
    for (size_t i = 0; i < r.size(); i += 2) {
      if (r[i] == "--profile") {
        scan_flags[1] = r[i + 1];
      } else {
        scan_flags.push_back(r[i]);
        scan_flags.push_back(r[i + 1]);
      }
    }
    ExpectSameFigures(Report({state}, r), Scan({tiny.string()}, scan_flags));
  }
}

// State format 8 keeps, for lzjb, zle, lz4 and gzip, the smallest budget each output fits: a
// state of the default profile (2.4, whose budget follows the allocation unit) answers other
// ashifts and vdevs for them; format 10 for zstd too, with its early abort's least budget (format
// 9 refused draid2:3:7 at ashift 13 with zstd-3, naming early abort; format 7 refused lz4 blocks
// here too).
TEST_F(StateCliTest, ADefaultProfileStateAnswersOtherAshiftsAndVdevs) {
  const std::filesystem::path tiny = testing::SampleDir("ZSIM_SAMPLE_TINY");
  if (tiny.empty()) GTEST_SKIP() << "the tiny sample is not built (ctest -R sample_tiny)";
  const std::vector<std::vector<std::string>> reports = {
      {"--ashift", "9"},
      {"--ashift", "13", "--vdev", "raidz2:6"},
      {"--vdev", "draid1:4:7"},
      {"--ashift", "13", "--vdev", "draid2:3:7", "--copies", "2"},
  };
  const std::vector<std::string> no_zstd = {"--compression", "off,lz4,gzip-6,lzjb,zle",
                                            "--recordsize", "16k,128k"};
  const std::string state = StatePath("tiny24");
  ScanSaving({tiny.string()}, no_zstd, state);
  const std::string with_zstd = StatePath("tiny24z");
  ScanSaving({tiny.string()}, {}, with_zstd);
  for (const std::vector<std::string>& r : reports) {
    std::string what;
    for (const std::string& a : r) what += a + " ";
    SCOPED_TRACE(what);
    std::vector<std::string> scan_flags = no_zstd;
    scan_flags.insert(scan_flags.end(), r.begin(), r.end());
    ExpectSameFigures(Report({state}, r), Scan({tiny.string()}, scan_flags));
    // The default codec list (zstd-3): every report answered as a scan would, also on
    // draid2:3:7 at ashift 13, where early abort's budget for a 128K block is 96K (aligned to
    // 24K), not the scan's 112K.
    std::vector<std::string> args = {"report", with_zstd, "--json"};
    args.insert(args.end(), r.begin(), r.end());
    const testing::CommandResult got = testing::RunZsim(args);
    ASSERT_EQ(got.exit_code, 0) << got.err;
    ExpectSameFigures(testing::ParseReportJson(got), Scan({tiny.string()}, r));
  }
}

TEST_F(StateCliTest, SaveToABadPlaceIsRefusedBeforeScanning) {
  for (const std::string& where :
       {(files_.path() / "no" / "such" / "dir" / "s").string(), files_.path().string()}) {
    const testing::CommandResult r =
        testing::RunZsim({"scan", tree_.path().string(), "--save", where, "-q"});
    EXPECT_EQ(r.exit_code, 2) << where;
    EXPECT_TRUE(r.out.empty()) << "no report: nothing was scanned";
    EXPECT_NE(r.err.find("--save"), std::string::npos) << r.err;
  }
}

// A name of NAME_MAX bytes is legal: the probe and temporary file beside it must fit too.
TEST_F(StateCliTest, SaveAndHtmlTakeANameOfTheLongestLength) {
  const std::string name(255, 's');
  const std::string state = (files_.path() / name).string();
  const std::string html = (files_.path() / (std::string(250, 'h') + ".html")).string();
  const testing::CommandResult r = testing::RunZsim(
      {"scan", tree_.path().string(), "--save", state, "--html", html, "-q", "--threads", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(state));
  EXPECT_TRUE(std::filesystem::is_regular_file(html));
  // Nothing else left beside them (no probe, no temporary file).
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(files_.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 2u);
  // One byte more is refused before the scan, naming the flag.
  const testing::CommandResult longer = testing::RunZsim(
      {"scan", tree_.path().string(), "--save", state + "s", "-q", "--threads", "2"});
  EXPECT_EQ(longer.exit_code, 2) << longer.err;
  EXPECT_NE(longer.err.find("--save"), std::string::npos) << longer.err;
}

TEST_F(StateCliTest, DiffShowsWhatChangedBetweenTwoScans) {
  const json before = ScanSaving({Part("p1")}, {}, StatePath("before"));
  const json after = ScanSaving({Part("p1"), Part("p2")}, {}, StatePath("after"));
  const testing::CommandResult r =
      testing::RunZsim({"diff", StatePath("before"), StatePath("after"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json d = testing::ParseReportJson(r);
  EXPECT_EQ(d["input"]["files"][0], before["input"]["files"]);
  EXPECT_EQ(d["input"]["files"][1], after["input"]["files"]);
  ASSERT_EQ(d["results"].size(), before["results"].size());
  for (const json& row : d["results"]) {
    SCOPED_TRACE(row["compression"].get<std::string>());
    const uint64_t rs = row["recordsize"];
    const std::string c = row["compression"];
    const json& b = testing::ResultFor(before, rs, c);
    const json& a = testing::ResultFor(after, rs, c);
    EXPECT_EQ(row["dedup_ratio"][0], b["dedup"]["ratio"]);
    EXPECT_EQ(row["dedup_ratio"][1], a["dedup"]["ratio"]);
    EXPECT_EQ(row["psize"][0], b["psize"]);
    EXPECT_EQ(row["psize"][1], a["psize"]);
    EXPECT_EQ(row["used"][1], a["used"]);
    EXPECT_EQ(row["ddt_entries"][1].get<uint64_t>(),
              a["dedup"]["entries"]["unique"].get<uint64_t>() +
                  a["dedup"]["entries"]["duplicate"].get<uint64_t>());
    // The DDT's RAM means what the report's does (the format in force, its log included).
    const json& decision = after["advice"]["decision"];
    if (rs == decision["recordsize"] && c == decision["compression"]) {
      EXPECT_EQ(row["ddt_ram_bytes"][1], decision["ddt_ram_bytes"]);
    }
  }
  // Each side's pool and inputs, and no setting one side lacks.
  EXPECT_EQ(d["settings"][0]["paths"], before["input"]["paths"]);
  EXPECT_EQ(d["settings"][1]["vdev"], "disk");
  EXPECT_TRUE(d["only_old"].empty());
  EXPECT_TRUE(d["only_new"].empty());
  // The second part adds a copy of a file of the first: the dedup ratio grows.
  const json& lz4 = d["results"][1];
  EXPECT_GT(lz4["dedup_ratio"][1].get<double>(), lz4["dedup_ratio"][0].get<double>());
  const testing::CommandResult text =
      testing::RunZsim({"diff", StatePath("before"), StatePath("after")});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("dedup_ratio"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("pool: ZFS 2.4, vdev disk, ashift 12, copies 1"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("(both)\npaths: " + Part("p1") + " -> " + Part("p1") + " " + Part("p2")),
            std::string::npos)
      << text.out;
  // Its header says size and data, as the reports' "What was scanned" does: it said "logical
  // bytes" for the sizes, a word the rows below use for the data in records (data added to a
  // sparse image showed as no change).
  EXPECT_NE(text.out.find("\nfiles "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(", size "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(", data "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("logical bytes"), std::string::npos) << text.out;
  // Another pool and another recordsize list: said, not read as a change of data, and the
  // settings only one scan holds are named (they vanished before).
  ScanSaving({Part("p1")}, {"--recordsize", "128k,1M", "--vdev", "raidz2:6"}, StatePath("other"));
  const testing::CommandResult other =
      testing::RunZsim({"diff", StatePath("before"), StatePath("other")});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("vdev disk, ashift 12, copies 1, fast DDT, RAM "), std::string::npos)
      << other.out;
  EXPECT_NE(other.out.find(" -> ZFS 2.4, vdev raidz2:6"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("only in the new scan (not compared): 1M off, 1M lz4"),
            std::string::npos)
      << other.out;
  EXPECT_NE(other.out.find("\n128K lz4 "), std::string::npos) << other.out;  // as reports name it
  const testing::CommandResult bad =
      testing::RunZsim({"diff", StatePath("before"), Part("p1")});  // a directory, not a state
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_FALSE(bad.err.empty());
}

// A diff against a sampled scan says so: the same tree, the second scan's dedup table sampled,
// moves its dedup figures by the sample alone. An exact scan against another says nothing.
TEST_F(StateCliTest, DiffSaysWhichScanWasSampled) {
  testing::TempDir data;
  for (int i = 0; i < 24; ++i) {
    data.WriteFile("t/f" + std::to_string(i), testing::GenerateBlock(300 * 1024, 0.5, i % 8));
  }
  const std::vector<std::string> flags = {"--recordsize", "128K", "--compression", "lz4"};
  const std::string tree = (data.path() / "t").string();
  ScanSaving({tree}, flags, StatePath("d-exact"));
  ScanSaving({tree}, flags, StatePath("d-exact2"));
  ScanSaving({tree}, Concat(flags, {"--sample", "1/4"}), StatePath("d-sampled"));
  const testing::CommandResult same =
      testing::RunZsim({"diff", StatePath("d-exact"), StatePath("d-exact2")});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out.find("SAMPLED"), std::string::npos) << same.out;
  const testing::CommandResult text =
      testing::RunZsim({"diff", StatePath("d-exact"), StatePath("d-sampled")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("SAMPLED: " + StatePath("d-sampled") +
                          "'s dedup tables kept 1/4 of the blocks"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("SAMPLED: " + StatePath("d-exact")), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("+0 pts"), std::string::npos) << text.out;  // equal as printed: "="
  EXPECT_EQ(text.out.find("-0 pts"), std::string::npos) << text.out;
  const testing::CommandResult j =
      testing::RunZsim({"diff", StatePath("d-exact"), StatePath("d-sampled"), "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json d = testing::ParseReportJson(j);
  EXPECT_EQ(d["dedup_sample_modulus"], json::array({1, 4}));
  EXPECT_FALSE(d["input"]["bytes_data"][0].is_null());
  // A state before format 22 rests its savings on the rows' logical size: said as BASE.
  const std::string v21 =
      std::string(ZSIM_SOURCE_DIR) + "/tests/fuzz/corpus/state_load/v21_records";
  const testing::CommandResult old = testing::RunZsim({"diff", v21, StatePath("d-exact")});
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_NE(old.out.find("BASE: " + v21 + " is of a state before format 22"), std::string::npos)
      << old.out;
  EXPECT_EQ(text.out.find("BASE:"), std::string::npos) << text.out;
  const testing::CommandResult old_json =
      testing::RunZsim({"diff", v21, StatePath("d-exact"), "--json"});
  const json o = testing::ParseReportJson(old_json);
  EXPECT_TRUE(o["input"]["bytes_data"][0].is_null());
  EXPECT_FALSE(o["input"]["bytes_data"][1].is_null());
}

// The diff's savings rest on the reports' one base (report/decision.h SpaceOf: the files' data,
// holes not counted, all-zero data included), so the saved fraction a diff shows is the
// report's; its logical size is the rows' (LogicalOf: lsize plus the all-zero records a codec
// makes holes): with all-zero files under lz4, lsize alone would leave the zeros out.
TEST_F(StateCliTest, DiffRestsOnTheReportsLogicalBase) {
  testing::TempDir data;
  data.WriteFile("t/text.bin", testing::GenerateBlock(400 * 1024, 0.7, 3));
  const std::vector<std::string> flags = {"--recordsize", "128K", "--compression", "off,lz4"};
  const json before = ScanSaving({(data.path() / "t").string()}, flags, StatePath("z-before"));
  data.WriteFile("t/zeros.img", std::vector<uint8_t>(1024 * 1024, 0));
  const json after = ScanSaving({(data.path() / "t").string()}, flags, StatePath("z-after"));
  const testing::CommandResult r =
      testing::RunZsim({"diff", StatePath("z-before"), StatePath("z-after"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json d = testing::ParseReportJson(r);
  ASSERT_EQ(d["results"].size(), 2u);
  for (const json& row : d["results"]) {
    const std::string c = row["compression"];
    SCOPED_TRACE(c);
    for (int k = 0; k < 2; ++k) {
      const json& s = testing::ResultFor(k == 0 ? before : after, 128 * 1024, c);
      const uint64_t logical = s["lsize"].get<uint64_t>() + s["zero_lsize"].get<uint64_t>();
      const json& input = (k == 0 ? before : after)["input"];
      const double data = input["bytes_data"].get<double>();
      EXPECT_EQ(data, input["bytes_read"].get<double>());  // a full scan reads all the data
      ASSERT_TRUE(row.contains("logical")) << row.dump();
      EXPECT_EQ(row["logical"][k].get<uint64_t>(), logical);
      // The zeros stored as holes are shown beside it: psize is of the rest.
      EXPECT_EQ(row["zero_lsize"][k], s["zero_lsize"]);
      EXPECT_DOUBLE_EQ(row["saved"][k].get<double>(), 1.0 - s["used"].get<double>() / data);
      EXPECT_EQ(s["saved_percent"].get<int>(),
                static_cast<int>(std::round(100.0 * row["saved"][k].get<double>())));
    }
  }
  // lz4 makes the zeros holes: in its base all the same (off's, which writes them), and saved.
  const json& lz4 = testing::ResultFor(after, 128 * 1024, "lz4");
  ASSERT_GT(lz4["zero_lsize"].get<uint64_t>(), 0u);
  const json& off_row = d["results"][0];
  const json& lz4_row = d["results"][1];
  ASSERT_EQ(lz4_row["compression"], "lz4");
  EXPECT_EQ(lz4_row["logical"][1].get<uint64_t>(), off_row["logical"][1].get<uint64_t>());
  EXPECT_GT(lz4_row["saved"][1].get<double>(), lz4_row["saved"][0].get<double>());
  const testing::CommandResult text =
      testing::RunZsim({"diff", StatePath("z-before"), StatePath("z-after")});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("saved"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" pts"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace zsim
