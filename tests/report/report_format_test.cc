// The three printed forms of a report: text section order and content, the JSON advice fields,
// and HTML escaping of hostile file names.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/base/size_suffix.h"
#include "engine/report/advice.h"
#include "engine/report/html_report.h"
#include "engine/report/json_report.h"
#include "engine/report/text_report.h"
#include "engine/report/text_table.h"
#include "engine/zfs/zdb_text.h"
#include "tests/report/report_fixtures.h"

namespace zsim::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using zsim::testing::kGiB;
using zsim::testing::kKiB;
using zsim::testing::kMiB;
using zsim::testing::MakeResult;
using zsim::testing::MakeSetting;

ScanResult VmLike() {
  ScanResult r = MakeResult(64 * kGiB);
  r.input.files = 10;
  r.input.directories = 2;
  r.input.bytes_logical = 200 * kGiB;
  r.input.bytes_read = 150 * kGiB;
  r.input.skipped = {{"symlink", 3}, {"special_file", 1}};
  for (auto algo : {CompressionAlgorithm::kOff, CompressionAlgorithm::kLz4}) {
    r.results.push_back(
        MakeSetting({.algorithm = algo,
                     .lsize = 200 * kGiB,
                     .compressratio = algo == CompressionAlgorithm::kOff ? 1.0 : 1.6,
                     .dedup_ratio = 2.5,
                     .ddt_in_core_bytes = 300 * kMiB,
                     .ddt_on_disk_bytes = 700 * kMiB}));
  }
  // The breakdown of each setting: off stores what it reads, lz4 compresses.
  for (auto algo : {CompressionAlgorithm::kOff, CompressionAlgorithm::kLz4}) {
    const bool off = algo == CompressionAlgorithm::kOff;
    Breakdowns b;
    b.recordsize = 128 * kKiB;
    b.compression = Compression{algo, 0};
    b.directories = {
        {"/vm/images", 10, 200 * kGiB, 200 * kGiB, off ? 200 * kGiB : 125 * kGiB, 120 * kGiB},
        {"/vm/iso", 2, 8 * kGiB, 8 * kGiB, 8 * kGiB, 0}};
    b.extensions = {
        {".qcow2", 10, 200 * kGiB, 200 * kGiB, off ? 200 * kGiB : 125 * kGiB, 120 * kGiB}};
    r.breakdowns.push_back(b);
  }
  return r;
}

size_t Find(const std::string& text, const std::string& what) {
  const size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << "missing: " << what;
  return at;
}

TEST(TextReportTest, SectionsComeInTheIssueOrder) {
  const ScanResult r = VmLike();
  const std::string text = ToText(r);
  const size_t verdict = Find(text, "Verdict: Dedup pays");
  const size_t scanned = Find(text, std::string("== ") + kSectionScanned + " ==");
  const size_t settings = Find(text, std::string("== ") + kSectionSettings + " ==");
  const size_t histogram = Find(text, std::string("== ") + kSectionHistogram + " ==");
  const size_t ddt = Find(text, std::string("== ") + kSectionDdtSize + " ==");
  const size_t breakdown = Find(text, std::string("== ") + kSectionBreakdown + " ==");
  const size_t advice = Find(text, std::string("== ") + kSectionAdvice + " ==");
  EXPECT_LT(verdict, scanned);
  EXPECT_LT(scanned, settings);
  EXPECT_LT(settings, histogram);
  EXPECT_LT(histogram, ddt);
  EXPECT_LT(ddt, breakdown);
  EXPECT_LT(breakdown, advice);
}

TEST(TextReportTest, ShowsScanTableHistogramSizesAndAdvice) {
  const ScanResult r = VmLike();
  const Advice a = ComputeAdvice(r);
  const std::string text = ToText(r, a);
  EXPECT_THAT(
      text,
      HasSubstr("10 files in 2 directories: 200 GiB in size, 150 GiB read (holes are not read)"));
  EXPECT_THAT(text, HasSubstr("Skipped: 1 special_file, 3 symlink\n"));
  // The featured row is marked, and both rows carry compress, dedup and savings figures.
  EXPECT_THAT(text, HasSubstr("* 128K       lz4"));
  EXPECT_THAT(text, HasSubstr("  128K       off"));
  EXPECT_THAT(text, HasSubstr("1.60x 2.50x"));
  // The zdb block of the featured setting, byte for byte what zdb_text makes of it.
  const SettingResult& f = r.results[size_t(a.featured)];
  EXPECT_THAT(
      text, HasSubstr(zfs::ZdbHistogramTable(f.dedup.histogram, f.dedup.total, r.options.profile)));
  EXPECT_THAT(text, HasSubstr(zfs::ZdbRatioLine(f.dedup.total)));
  EXPECT_THAT(text, HasSubstr("legacy format (in force): 300 MiB in core, 700 MiB on disk"));
  EXPECT_THAT(text, HasSubstr("Against 64.0 GiB of RAM: The legacy DDT"));
  EXPECT_THAT(text, HasSubstr("Top directories by duplicate bytes"));
  EXPECT_THAT(text, HasSubstr("/vm/images"));
  for (const AdviceItem& item : a.items) {
    EXPECT_THAT(text, HasSubstr(Wrap(item.sentence, 100, "- ", "  ")));
  }
}

// Issue 8: a sampled figure is marked in the table and given with its 95% interval (the +- is
// the interval's wider side, the bounds rounded outward); exact figures carry neither.
TEST(TextReportTest, SampledFiguresCarryTheirIntervals) {
  ScanResult r = VmLike();
  SettingResult& lz4 = r.results[1];
  lz4.exact = false;
  lz4.ci95 = std::array<double, 2>{1.556, 1.641};  // rounded outward: 1.55x-1.65x
  lz4.dedup.sample_modulus = 64;
  lz4.dedup.ratio_ci95 = std::array<double, 2>{2.3, 2.8};
  const std::string text = ToText(r);
  EXPECT_THAT(text, HasSubstr("~1.60x"));
  EXPECT_THAT(text, HasSubstr("~2.50x"));
  EXPECT_THAT(text, HasSubstr("~ estimates from a sample"));
  // Folded to the report's 100 columns.
  EXPECT_THAT(text, HasSubstr("128K lz4: compress 1.60x ±0.05 (1.55x-1.65x); dedup 2.50x ±0.30 "
                              "(2.30x-2.80x) (the dedup table\n    kept 1/64 of the blocks)"));
  // The exact setting (off) has no marker and no line.
  EXPECT_THAT(text, Not(HasSubstr("128K off:")));
  EXPECT_THAT(ToText(VmLike()), Not(HasSubstr("estimates from a sample")));
  EXPECT_THAT(ToText(VmLike()), Not(HasSubstr("~")));
  // The HTML table's cells say the same.
  const std::string html = ToHtml(r);
  EXPECT_THAT(html, HasSubstr("<td>~1.60x ±0.05 (1.55x-1.65x)</td>"));
  EXPECT_THAT(html, HasSubstr("<td>~2.50x ±0.30 (2.30x-2.80x)</td>"));
  EXPECT_THAT(ToHtml(VmLike()), Not(HasSubstr("<td>~")));
}

// Under a sampled table or codec, the featured setting's histogram, DDT size and block-size
// sections say they are estimates and from what; an exact setting's say nothing.
TEST(TextReportTest, SectionsOfASampledSettingSayTheyAreEstimates) {
  ScanResult r = VmLike();
  const std::string exact = ToText(r);
  EXPECT_THAT(exact, Not(HasSubstr("~ estimates:")));
  for (SettingResult& s : r.results) {
    s.dedup.sample_modulus = 64;
    s.dedup.ratio_ci95 = std::array<double, 2>{s.dedup.ratio - 0.1, s.dedup.ratio + 0.1};
  }
  const std::string text = ToText(r);
  const size_t histogram = text.find("== DDT histogram ==");
  const size_t size = text.find("== DDT size and RAM ==");
  ASSERT_NE(histogram, std::string::npos);
  ASSERT_NE(size, std::string::npos);
  const std::string note = "~ estimates: the dedup table kept 1/64 of the blocks";
  EXPECT_NE(text.find(note, histogram), std::string::npos);
  EXPECT_LT(text.find(note, histogram), size);  // in the histogram's section
  EXPECT_NE(text.find(note, size), std::string::npos);
  EXPECT_THAT(text, Not(HasSubstr("'s sample of the unique blocks")));  // no codec was sampled
  EXPECT_THAT(text, HasSubstr("~ The figures below rest on a sample, as the settings table marks "
                              "them: those with dedup"));
  // The HTML report's sections say the same.
  const std::string html = ToHtml(r);
  EXPECT_THAT(html, HasSubstr("<p class=\"meta\">" + note));
  // A sampled codec: the sizes after compression, and the breakdown's saved and compress.
  r.results[1].ci95 = std::array<double, 2>{1.55, 1.65};
  const std::string codec = ToText(r);
  EXPECT_THAT(codec, HasSubstr("the sizes after compression rest on lz4's sample"));
  EXPECT_THAT(codec, HasSubstr("~ estimates: saved and compress rest on lz4's sample"));
}

// A skewed interval (few sampled blocks) is given by its bounds alone: "1.28x ±1.41" would put
// the low end below zero where the bounds say 1.10x. The bounds are rounded outward, as the
// verdict quoting them rounds them.
TEST(TextReportTest, SkewedIntervalsShowTheirBoundsOnly) {
  EXPECT_EQ(RatioWithInterval(1.28, {1.10, 2.69}), "1.28x (1.10x-2.69x)");
  EXPECT_EQ(RatioWithInterval(1.75, {1.0, 11.93}), "1.75x (1.00x-11.93x)");
  EXPECT_EQ(RatioWithInterval(2.50, {2.30, 2.80}), "2.50x ±0.30 (2.30x-2.80x)");
  EXPECT_EQ(RatioWithInterval(1.00, {1.0, 1.0}), "1.00x ±0.00 (1.00x-1.00x)");
  EXPECT_EQ(RatioWithInterval(5.0, {1.0, 9.8763}), "5.00x ±4.88 (1.00x-9.88x)");
  EXPECT_EQ(PrintedInterval({1.0, 9.8763}), (std::array<double, 2>{1.0, 9.88}));
  EXPECT_EQ(PrintedInterval({2.3, 2.3}), (std::array<double, 2>{2.3, 2.3}));
}

TEST(TextReportTest, SavingsRoundToZeroWithoutSign) {
  ScanResult r = VmLike();
  r.results[0].used = r.results[0].lsize + r.results[0].lsize / 400;  // 0.25 % more than logical
  const std::string text = ToText(r);
  EXPECT_THAT(text, Not(HasSubstr("-0%")));
  EXPECT_THAT(text, HasSubstr("    0%"));
}

// Prose folds at spaces, never between a number and its unit: a --since rescan's summary line
// ended "293 KiB read, 0.0" and the next line held "s".
TEST(TextReportTest, WrapKeepsANumberWithItsUnit) {
  EXPECT_EQ(Wrap("read, 0.0 s", 9, "", "  "), "read,\n  0.0 s\n");
  EXPECT_EQ(Wrap("of 293 KiB. Then", 8, "", ""), "of\n293 KiB.\nThen\n");
  EXPECT_EQ(Wrap("files 12 of", 8, "", ""), "files 12\nof\n");  // "of" is no unit
  EXPECT_EQ(Wrap("x 0.0 s", 80, "- ", "  "), "- x 0.0 s\n");
}

TEST(TextReportTest, EmptyBreakdownSaysSoAndControlCharactersCannotForgeLines) {
  ScanResult r = VmLike();
  r.breakdowns.clear();
  EXPECT_THAT(ToText(r), HasSubstr("(no breakdown by directory or file type was collected"));
  // One collected with no rows (no file held data) is not said to be missing.
  r = VmLike();
  for (Breakdowns& b : r.breakdowns) b.directories.clear(), b.extensions.clear();
  EXPECT_THAT(ToText(r), HasSubstr("(no file holds data: nothing to break down)"));
  EXPECT_THAT(ToText(r), Not(HasSubstr("was collected")));
  r = VmLike();
  r.breakdowns[1].directories[0].name = "/vm/evil\nVerdict: forged";
  const std::string text = ToText(r);
  EXPECT_THAT(text, HasSubstr("/vm/evil?Verdict: forged"));
  EXPECT_THAT(text, Not(HasSubstr("\nVerdict: forged")));
}

// A breakdown row a sampled codec's sample missed: its psize is not known, and neither are its
// compression and saving (it showed "saved" as every byte of the row, more than its bytes).
TEST(TextReportTest, ABreakdownRowOfUnknownPsizeShowsNoSaving) {
  ScanResult r = VmLike();
  BreakdownRow unknown{".awk", 11, 45 * kKiB, 48 * kKiB, 0, 0};
  unknown.psize_known = false;
  r.breakdowns[1].extensions.push_back(unknown);
  // Its logical size (48K of records) is shown, its saving is not (not the whole row's 48K).
  EXPECT_THAT(ToText(r), HasSubstr("11 48.0 KiB       0 B        -        - .awk"));
  EXPECT_THAT(ToHtml(r), HasSubstr("<td>11</td><td>48.0 KiB</td><td>0 B</td><td>-</td><td>-</td>"));
  const nlohmann::json j = nlohmann::json::parse(ToJson(r));
  bool found = false;
  for (const nlohmann::json& row : j["breakdown"]["extensions"]) {
    if (row["name"] == ".awk") {
      found = true;
      EXPECT_EQ(row["psize_known"], false);
    } else {
      EXPECT_EQ(row["psize_known"], true);
    }
  }
  EXPECT_TRUE(found);
}

TEST(JsonReportTest, CarriesAdviceBreakdownAndDedupSources) {
  ScanResult r = VmLike();
  // Two block sizes: the top-level object is the advice's setting's (128K), the array has both.
  r.dedup_sources = {{r.results[0].recordsize, 3, 12 * kGiB, 77, 77 * 128 * kKiB},
                     {r.results[0].recordsize / 8, 3, 11 * kGiB, 616, 77 * 128 * kKiB}};
  const Advice a = ComputeAdvice(r);
  const nlohmann::json j = nlohmann::json::parse(ToJson(r));
  // Existing contract fields are still there.
  for (const char* key : {"zsim_version", "partial", "input", "settings", "results"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(j["results"][1]["dedup"]["ratio"].get<double>(), r.results[1].dedup.ratio);
  EXPECT_EQ(j["results"][1]["compress_bytes_per_second"].get<double>(), 0.0);

  const nlohmann::json& adv = j["advice"];
  EXPECT_EQ(adv["verdict"], "dedup_pays");
  EXPECT_EQ(adv["summary"], a.items[0].sentence);
  EXPECT_EQ(adv["featured"]["index"], 1);
  EXPECT_EQ(adv["featured"]["recordsize"], 128 * kKiB);
  EXPECT_EQ(adv["featured"]["compression"], "lz4");
  EXPECT_EQ(adv["ram_bytes"], 64 * kGiB);
  EXPECT_EQ(adv["ddt_format"], "legacy");
  EXPECT_DOUBLE_EQ(adv["thresholds"]["dedup_pays_ratio"].get<double>(), kDedupPaysRatio);
  EXPECT_DOUBLE_EQ(adv["thresholds"]["ddt_ram_fraction"].get<double>(), kDdtRamFraction);
  ASSERT_EQ(adv["items"].size(), a.items.size());
  for (size_t i = 0; i < a.items.size(); ++i) {
    const nlohmann::json& item = adv["items"][i];
    EXPECT_EQ(item["kind"], AdviceKindName(a.items[i].kind));
    EXPECT_EQ(item["verdict"], VerdictName(a.items[i].verdict));
    EXPECT_EQ(item["sentence"], a.items[i].sentence);
    for (const AdviceFigure& fig : a.items[i].figures) {
      EXPECT_DOUBLE_EQ(item["figures"][fig.name].get<double>(), fig.value) << fig.name;
    }
  }
  EXPECT_EQ(adv["items"][2]["kind"], "dedup");
  EXPECT_EQ(adv["items"][2]["figures"]["ddt_ram_bytes"], 300 * kMiB);

  EXPECT_EQ(j["breakdown"]["compression"], "lz4");
  ASSERT_EQ(j["breakdown"]["directories"].size(), 2u);
  EXPECT_EQ(j["breakdown"]["directories"][0]["name"], "/vm/images");
  EXPECT_EQ(j["breakdown"]["directories"][0]["duplicate_bytes"], 120 * kGiB);
  EXPECT_EQ(j["breakdown"]["extensions"][0]["name"], ".qcow2");
  EXPECT_EQ(j["dedup_sources"]["duplicate_files"], 3);
  EXPECT_EQ(j["dedup_sources"]["duplicate_file_bytes"], 12 * kGiB);
  EXPECT_EQ(j["dedup_sources"]["zero_blocks"], 77);
  EXPECT_EQ(j["dedup_sources"]["sample_modulus"], 1);  // every content compared: exact
  EXPECT_EQ(j["dedup_sources"]["recordsize"], r.results[size_t(a.featured)].recordsize);
  ASSERT_EQ(j["dedup_sources_by_recordsize"].size(), 2u);
  EXPECT_EQ(j["dedup_sources_by_recordsize"][1]["zero_blocks"], 616);
}

// The top-up: a row it coded whole and one it left (a file changed) are said in every form, the
// left one with its reason; a scan without one says nothing of it.
TEST(TextReportTest, TheTopUpIsSaidInEveryForm) {
  ScanResult r = VmLike();
  r.input.top_up = {{16 * kKiB, true, 91, 91 * 16 * kKiB, 0.024, ""},
                    {128 * kKiB, false, 3, 3 * 128 * kKiB, 0.5,
                     std::string("/vm/a.img\nVerdict: forged: its content changed after it was "
                                 "read (a block read again at offset 0 had other data)")}};
  const std::string text = ToText(r);
  EXPECT_THAT(text, HasSubstr("Top-up: recordsize 16K has few unique blocks: its sampled codecs "
                              "were run again on 91 blocks they\n  had skipped (1.42 MiB, 0.02 s), "
                              "as many as a tree of its unique blocks asks for; exact where not\n"
                              "  marked ~\n"));
  // The reason on a line of its own, not folded, its control characters made harmless.
  EXPECT_THAT(text, HasSubstr("Top-up: recordsize 128K: its sampled codecs were not run again on "
                              "the blocks they had skipped (3\n  blocks read, 384 KiB, 0.50 s), so "
                              "its ~ figures keep their intervals:\n  /vm/a.img?Verdict: forged: "
                              "its content changed after it was read (a block read again at "
                              "offset 0 had other data)\n"));
  EXPECT_THAT(text, Not(HasSubstr("\nVerdict: forged")));
  EXPECT_THAT(ToText(VmLike()), Not(HasSubstr("Top-up")));
  // A row topped up for a codec's interval alone says so (estimate/interval_top_up.h).
  ScanResult wide = VmLike();
  wide.input.top_up = {{128 * kKiB, true, 18467, 18467 * 128 * kKiB, 0.63, "", true}};
  EXPECT_THAT(ToText(wide), HasSubstr("Top-up: recordsize 128K: its sampled codecs whose sample "
                                      "was wider than ±0.5% were run on the 18467\n  blocks they "
                                      "had skipped (2.25 GiB, 0.63 s), every unique block; exact "
                                      "where not marked ~\n"));

  const nlohmann::json j = nlohmann::json::parse(ToJson(r));
  ASSERT_EQ(j["input"]["top_up"].size(), 2u);
  EXPECT_EQ(j["input"]["top_up"][0]["block_size"], 16 * kKiB);
  EXPECT_EQ(j["input"]["top_up"][0]["topped"], true);
  EXPECT_EQ(j["input"]["top_up"][0]["blocks_read_again"], 91);
  EXPECT_EQ(j["input"]["top_up"][0]["bytes_read_again"], 91 * 16 * kKiB);
  EXPECT_TRUE(j["input"]["top_up"][0]["left"].is_null());
  EXPECT_EQ(j["input"]["top_up"][1]["topped"], false);
  EXPECT_THAT(j["input"]["top_up"][1]["left"].get<std::string>(),
              HasSubstr("its content changed after it was read"));
  EXPECT_TRUE(nlohmann::json::parse(ToJson(VmLike()))["input"]["top_up"].empty());

  const std::string html = ToHtml(r);
  EXPECT_THAT(html, HasSubstr("<p>Top-up: recordsize 16K has few unique blocks: its sampled"));
  EXPECT_THAT(html,
              HasSubstr("keep their intervals: <code>/vm/a.img\nVerdict: forged: its content"));
}

// A file read in part (failed part-way, or interrupted while read) is listed, not counted as a
// file: the summary line counts it apart, its line says what of it the figures hold and what
// was not read, in text, HTML, JSON and the zvol advice alike.
TEST(TextReportTest, AFileReadInPartSaysWhatOfItTheFiguresHold) {
  ScanResult r = VmLike();
  r.options.volblocksize = 16 * kKiB;
  r.input.files = 1;
  r.input.bytes_logical = 64 * kGiB + 16 * kGiB;  // one volume whole, 16 GiB of another
  r.input.errors = {{"/vm/b.img", "cancelled: interrupted while it was read", 48 * kGiB, 16 * kGiB},
                    {"/vm/c.img", "permission_denied: open: Permission denied", 64 * kGiB, 0}};
  const std::string text = ToText(r);
  EXPECT_THAT(text, HasSubstr("1 file (and 1 read in part, listed below) in 2 directories"));
  EXPECT_THAT(text, HasSubstr("Could not read, or read in part, 2 paths (112 GiB not read):"));
  EXPECT_THAT(text, HasSubstr("/vm/b.img: cancelled: interrupted while it was read (16.0 GiB of "
                              "64.0 GiB in the figures, 48.0 GiB not read)"));
  EXPECT_THAT(text, HasSubstr("/vm/c.img: permission_denied: open: Permission denied (64.0 GiB "
                              "not read)"));
  const std::string html = ToHtml(r);
  EXPECT_THAT(html, HasSubstr("(and 1 read in part, listed below)"));
  EXPECT_THAT(html, HasSubstr("(16.0 GiB of 64.0 GiB in the figures, 48.0 GiB not read)"));
  const nlohmann::json j = nlohmann::json::parse(ToJson(r));
  EXPECT_EQ(j["input"]["errors"][0]["bytes_in_figures"], 16 * kGiB);
  EXPECT_EQ(j["input"]["errors"][0]["bytes"], 48 * kGiB);
  EXPECT_EQ(j["input"]["bytes_unread"], 112 * kGiB);
  // The thick zvols' reservation counts the three volumes named, each 64 GiB: a part-read or
  // unreadable volume is still one the pool will hold.
  bool zvol = false;
  for (const nlohmann::json& item : j["advice"]["items"]) {
    if (item["kind"] != "zvol_reservation") continue;
    zvol = true;
    EXPECT_EQ(item["figures"]["zvols"], 3);
    EXPECT_EQ(item["figures"]["volsize_bytes"], 3 * 64 * kGiB);
    EXPECT_THAT(item["sentence"].get<std::string>(),
                HasSubstr("for 3 volumes of 192 GiB in all (volblocksize="));
    EXPECT_THAT(item["sentence"].get<std::string>(),
                HasSubstr("indirect blocks included; reckoned as 64.0 GiB each, which moves the "
                          "total by a few blocks per volume at most: a reservation grows with its "
                          "blocks)"));
  }
  EXPECT_TRUE(zvol);
  {
    // Volumes of unequal sizes: the total stated is theirs, not the reckoning's (equal sizes,
    // each rounded up to the volblocksize: it said 1.03 MiB for 1 MiB and 4 KiB).
    ScanResult two = VmLike();
    two.options.volblocksize = 16 * kKiB;
    two.input.files = 2;
    two.input.errors.clear();
    two.input.bytes_logical = kMiB + 4 * kKiB;
    const nlohmann::json t = nlohmann::json::parse(ToJson(two));
    bool found = false;
    for (const nlohmann::json& item : t["advice"]["items"]) {
      if (item["kind"] != "zvol_reservation") continue;
      found = true;
      EXPECT_THAT(item["sentence"].get<std::string>(),
                  HasSubstr("for 2 volumes of " + FormatBytes(kMiB + 4 * kKiB) + " in all"));
    }
    EXPECT_TRUE(found);
  }
  // Partial: how much of what the paths hold the figures cover.
  r.partial = true;
  r.input.files_named = 5;
  r.input.bytes_named = 5 * 64 * kGiB;
  r.input.named_complete = true;
  EXPECT_THAT(ToText(r), HasSubstr("PARTIAL: the scan was interrupted; figures cover what was "
                                   "read: 80.0 GiB of the 320 GiB in 5 files\n  the paths hold "
                                   "(25%)."));
  r.input.named_complete = false;
  EXPECT_THAT(ToHtml(r), HasSubstr("80.0 GiB of the at least 320 GiB in at least 5 files"));
  EXPECT_EQ(nlohmann::json::parse(ToJson(r))["input"]["bytes_named"], 5 * 64 * kGiB);
  r.partial = false;
  // A file found changed after its last chunk keeps all of it in the figures.
  r.input.errors = {{"/vm/b.img", "changed_while_read: its mtime moved", 0, 64 * kGiB}};
  EXPECT_THAT(ToText(r), HasSubstr("its mtime moved (all 64.0 GiB in the figures)"));
}

TEST(JsonReportTest, EmptyScanStillHasAdvice) {
  const nlohmann::json j = nlohmann::json::parse(ToJson(MakeResult(kGiB)));
  EXPECT_EQ(j["advice"]["verdict"], "nothing_scanned");
  EXPECT_TRUE(j["advice"]["featured"].is_null());
  EXPECT_TRUE(j["breakdown"]["directories"].empty());
}

constexpr const char* kHostile = "<script>alert(1)</script>&\"'";

TEST(HtmlReportTest, EscapesHostileAndNonUtf8FileNames) {
  ScanResult r = VmLike();
  const std::string bad_utf8 = "caf\xE9-\xFF\xFE.img";  // Latin-1 e-acute, then two stray bytes
  r.input.paths = {std::string("/vm/") + kHostile};
  r.input.errors = {{std::string("/vm/") + kHostile + bad_utf8, "Permission denied"}};
  r.breakdowns[1].directories[0].name = std::string("/vm/") + kHostile;
  r.breakdowns[1].extensions[0].name = "." + bad_utf8;
  const std::string html = ToHtml(r);

  EXPECT_THAT(html, Not(HasSubstr("<script>alert(1)")));
  EXPECT_THAT(html, HasSubstr("/vm/&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"));
  // The embedded JSON keeps the name, with < > & as \u escapes.
  EXPECT_THAT(html, HasSubstr("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\\u0026"));
  // Exactly the page's own two script elements.
  size_t scripts = 0;
  for (size_t at = html.find("<script"); at != std::string::npos;
       at = html.find("<script", at + 1)) {
    ++scripts;
  }
  EXPECT_EQ(scripts, 2u);
  // Invalid bytes became U+FFFD: the page is valid UTF-8.
  EXPECT_EQ(ValidUtf8(html), html);
  EXPECT_THAT(html, HasSubstr("caf\xEF\xBF\xBD-\xEF\xBF\xBD\xEF\xBF\xBD.img"));
  EXPECT_THAT(html, Not(HasSubstr("\xFF")));
}

TEST(HtmlReportTest, ValidUtf8KeepsValidSequencesAndReplacesEachBadByte) {
  EXPECT_EQ(ValidUtf8("plain"), "plain");
  EXPECT_EQ(ValidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), fffd + fffd);                        // overlong '/'
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), fffd + fffd + fffd);             // surrogate U+D800
  EXPECT_EQ(ValidUtf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(ValidUtf8("a\xE2\x82"), "a" + fffd + fffd);                 // truncated at the end
  EXPECT_EQ(HtmlEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

TEST(HtmlReportTest, IsSelfContainedWithEveryChartAndTheAdvice) {
  const ScanResult r = VmLike();
  const Advice a = ComputeAdvice(r);
  const std::string html = ToHtml(r, a);
  for (const char* id : kChartIds) EXPECT_THAT(html, HasSubstr(std::string("id=\"") + id + "\""));
  EXPECT_THAT(html, HasSubstr("class=\"verdict dedup_pays\""));
  EXPECT_THAT(html, HasSubstr("id=\"zsim-data\""));
  EXPECT_THAT(html, HasSubstr("default-src 'none'"));
  // Nothing is fetched: no external references.
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  for (const AdviceItem& item : a.items) EXPECT_THAT(html, HasSubstr(HtmlEscape(item.sentence)));
}

}  // namespace
}  // namespace zsim::report
