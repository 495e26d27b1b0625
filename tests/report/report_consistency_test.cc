// Issue 17: a report never contradicts itself. Every bundled sample (tiny always; vmstore, source,
// database and fileserver when the ctest fixtures built them into build/samples-data; and
// "specks", files of 300 bytes stored at many times their size) goes through a matrix of options
// (profiles, vdevs including raidz2:6 and dRAID, RAM sizes, recordsizes, codec lists, zvol block
// sizes, sampling), and every pair of statements that could
// disagree is compared: in the JSON (decision, verdict, advice items and their figures, the
// settings table's figures, the breakdown's setting), in the HTML written by the same run (its
// verdict, highlighted row and embedded JSON), and in the text report (the verdict's setting and
// savings against the row marked "*", the histogram's and breakdown's setting, the advice
// lines, the width).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "engine/report/text_table.h"
#include "engine/zfs/nicenum.h"
#include "tests/util/report_json.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Case {
  std::string sample;
  std::vector<std::string> options;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.sample;
  for (const std::string& o : c.options) *os << " " << o;
}

// The option sets; the last ones (every codec of a profile, 512-byte records: minutes on the
// larger samples) run on the tiny sample only.
const std::vector<std::vector<std::string>>& OptionSets() {
  static const std::vector<std::vector<std::string>> kSets = {
      {"--ram", "16G"},
      {"--ram", "16G", "--vdev", "raidz2:6"},
      {"--ram", "64G", "--profile", "v23", "--compression", "off,lzjb,gzip-1,zle"},
      {"--ram", "64M", "--vdev", "mirror:2", "--compression", "lz4,zstd,gzip-1"},
      {"--ram", "64M", "--vdev", "raidz1:5", "--ashift", "9"},
      {"--ram", "8G", "--recordsize", "16k,128k,1M", "--compression", "off,lz4,zstd"},
      {"--ram", "32G", "--profile", "2.1", "--vdev", "draid2:4d:11c:1s", "--sample", "1/8"},
      {"--ram", "16G", "--volblocksize", "16k", "--compression", "lz4,zstd-9", "--vdev",
       "raidz2:6"},
      {"--ram", "16G", "--compression", "off"},
      {"--ram", "4G", "--profile", "2.2", "-o", "compression=lz4,gzip-1,zle", "--copies", "2"},
      {"--ram", "64G", "--profile", "v23", "--compression", "all"},
      {"--ram", "2G", "--compression", "all", "--vdev", "raidz3:9", "--exact"},
      // 512-byte records: a table whose own blocks take back what dedup removes.
      {"--ram", "16G", "--recordsize", "512", "--ashift", "9"},
  };
  return kSets;
}
constexpr size_t kTinyOnlySets = 3;

// The option sets of "specks" (60 files of 300 random bytes, made by the test): a store many
// times the data's size, whose savings the sentences say as multiples.
const std::vector<std::vector<std::string>>& SpeckSets() {
  static const std::vector<std::vector<std::string>> kSets = {
      {"--ram", "16G", "--vdev", "raidz3:9"},
      {"--ram", "16G", "--vdev", "mirror:3", "--copies", "3", "--ashift", "13"},
  };
  return kSets;
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  for (const char* sample : {"tiny", "vmstore", "source", "database", "fileserver"}) {
    const size_t sets = OptionSets().size() - (std::string(sample) == "tiny" ? 0 : kTinyOnlySets);
    for (size_t i = 0; i < sets; ++i) out.push_back({sample, OptionSets()[i]});
  }
  for (const std::vector<std::string>& set : SpeckSets()) out.push_back({"specks", set});
  return out;
}

using testing::ReadText;

// The sample's directory: tiny is built into a temporary directory when the fixture did not;
// specks always is.
fs::path SamplePath(const std::string& sample, const testing::TempDir& tmp) {
  if (sample == "specks") {
    const fs::path dir = tmp.path() / "specks";
    fs::create_directory(dir);
    uint32_t x = 1;
    for (int f = 0; f < 60; ++f) {
      std::string bytes(300, '\0');
      for (char& c : bytes) {
        x = x * 1664525u + 1013904223u;
        c = char(x >> 24);
      }
      std::ofstream(dir / ("f" + std::to_string(f)), std::ios::binary) << bytes;
    }
    return dir;
  }
  std::string var = "ZSIM_SAMPLE_" + sample;
  for (char& c : var) c = char(std::toupper(static_cast<unsigned char>(c)));
  fs::path dir = testing::SampleDir(var.c_str());
  if (!dir.empty() || sample != "tiny") return dir;
  dir = tmp.path() / "tiny";
  const testing::CommandResult built = testing::RunCommand(
      {"python3", std::string(ZSIM_SOURCE_DIR) + "/samples/build-tiny", dir.string()});
  EXPECT_EQ(built.exit_code, 0) << built.err;
  return dir;
}

const json& Item(const json& report, const std::string& kind) {
  for (const json& item : report["advice"]["items"]) {
    if (item["kind"] == kind) return item;
  }
  static const json kNone = json::object();
  return kNone;
}

// A saving a sentence states: a percentage, signed, or where the data takes ten times its size or
// more, that multiple ("stores 49 times the data's size", "from 49 times to 54 times").
struct Saving {
  int percent = 0;  // when !times
  int times = 0;    // the stored size over the data's, when > 0
};

// Whether `s` states the table's saving of `percent` (rounded as the table rounds it): a multiple
// is the stored size over the data's, 1 - saved, rounded, and stated from 10 on.
bool States(const Saving& s, int percent) {
  if (s.times == 0) return s.percent == percent;
  const double times = 1.0 - percent / 100.0;
  return times >= 9.995 && std::abs(s.times - times) <= 0.505;
}

std::ostream& operator<<(std::ostream& os, const Saving& s) {
  return s.times > 0 ? os << s.times << " times" : os << s.percent << "%";
}

// Every saving a sentence states: "saves N%", "saved from A% to B%", "make that N%",
// "would save N%", and where the data takes more room than its size "stores N% more
// than the data's size" (-N), "from A% above to B% below the data's size" (-A, +B), and "N times".
std::vector<Saving> SavedFigures(const std::string& sentence) {
  std::vector<Saving> out;
  static const std::regex kSaves(
      R"((?:saves|saved from|to|make that|would save) (\d+)%(?! (?:above|below))|stores? (\d+)% more than the data's size|(\d+)% (above|below)|(\d+) times)");
  for (std::sregex_iterator it(sentence.begin(), sentence.end(), kSaves), end; it != end; ++it) {
    const std::smatch& m = *it;
    if (m[1].matched) out.push_back({std::stoi(m[1])});
    if (m[2].matched) out.push_back({-std::stoi(m[2])});
    if (m[3].matched) out.push_back({m[4] == "above" ? -std::stoi(m[3]) : std::stoi(m[3])});
    if (m[5].matched) out.push_back({0, std::stoi(m[5])});
  }
  return out;
}

class ReportConsistencyTest : public ::testing::TestWithParam<Case> {
 protected:
  testing::TempDir tmp_;
};

// The JSON's statements against each other.
void CheckJson(const json& r) {
  const json& advice = r["advice"];
  const json& d = advice["decision"];
  ASSERT_TRUE(d.is_object()) << advice.dump();
  EXPECT_EQ(r["schema_version"].get<int>(), 5);
  const int index = d["index"].get<int>();
  const json& f = r["results"][size_t(index)];
  EXPECT_EQ(advice["featured"]["index"], index);
  EXPECT_EQ(advice["featured"]["compression"], d["compression"]);
  EXPECT_EQ(f["compression"], d["compression"]);
  EXPECT_EQ(f["recordsize"], d["recordsize"]);
  EXPECT_EQ(advice["verdict"], d["verdict"]);
  const bool on = d["dedup"] == "on";
  const bool hardware = d["dedup_with_ddt_hardware"].get<bool>();
  const std::string verdict = advice["verdict"];
  const std::string dedup_verdict = Item(r, "dedup")["verdict"];
  EXPECT_EQ(dedup_verdict, d["dedup_verdict"]);
  // Dedup yes or no: the summary, the dedup item and the decision say the same.
  EXPECT_EQ(on, verdict == "dedup_pays") << verdict;
  EXPECT_EQ(on, dedup_verdict == "dedup_pays") << dedup_verdict;
  EXPECT_EQ(hardware, verdict == "dedup_needs_hardware");
  EXPECT_EQ(hardware, dedup_verdict == "dedup_needs_hardware");
  EXPECT_EQ(verdict == "clone_instead_of_dedup", dedup_verdict == "dedup_covered_by_cloning");
  // The savings: one figure per setting, the same wherever it is quoted.
  const int saved = f["saved_percent"].get<int>();
  const int saved_dedup = f["saved_with_dedup_percent"].get<int>();
  EXPECT_EQ(d["saved_without_dedup_percent"].get<int>(), saved);
  EXPECT_EQ(d["saved_with_dedup_percent"].get<int>(), saved_dedup);
  EXPECT_EQ(d["saved_percent"].get<int>(), on ? saved_dedup : saved);
  EXPECT_EQ(Item(r, "summary")["figures"]["saved_percent"], d["saved_percent"]);
  if (f["compression"] != "off") {
    EXPECT_EQ(Item(r, "compression")["figures"]["saved_percent"].get<int>(), saved);
  }
  EXPECT_EQ(Item(r, "dedup")["figures"]["saved_percent"].get<int>(), saved);
  EXPECT_EQ(Item(r, "dedup")["figures"]["saved_with_dedup_percent"].get<int>(), saved_dedup);
  // Every row: its savings on the one base of every row, the files' data (holes not counted), so
  // that of two rows the one storing less never shows the smaller saving; and with dedup no more
  // usable space than the pool allocates. Each record size's rows share their logical size
  // (all-zero records included).
  ASSERT_TRUE(r["input"]["bytes_data"].is_number()) << r["input"].dump();
  const double data = r["input"]["bytes_data"].get<double>();
  EXPECT_LE(data, r["input"]["bytes_logical"].get<double>());
  for (const json& s : r["results"]) {
    const double logical = s["lsize"].get<double>() + s["zero_lsize"].get<double>();
    if (logical == 0 || data == 0) continue;
    EXPECT_EQ(s["saved_percent"].get<int>(),
              static_cast<int>(std::round(100.0 * (1.0 - s["used"].get<double>() / data))))
        << s["compression"];
    for (const json& t : r["results"]) {
      if (t["used"].get<double>() < s["used"].get<double>()) {
        EXPECT_GE(t["saved_percent"].get<int>(), s["saved_percent"].get<int>())
            << t["recordsize"] << " " << t["compression"] << " vs " << s["recordsize"] << " "
            << s["compression"];
      }
    }
    EXPECT_LE(s["used_with_dedup"].get<double>(), s["pool_alloc"].get<double>())
        << s["recordsize"] << " " << s["compression"];
    for (const json& t : r["results"]) {
      if (t["recordsize"] != s["recordsize"]) continue;
      EXPECT_EQ(t["lsize"].get<double>() + t["zero_lsize"].get<double>(), logical)
          << s["compression"] << " vs " << t["compression"];
    }
  }
  // The DDT's fit.
  if (!Item(r, "ddt_memory").empty()) {
    EXPECT_EQ(Item(r, "ddt_memory")["verdict"] == "ddt_fits_in_ram",
              d["ddt_fits_in_ram"].get<bool>());
  }
  // The block size item names the featured one.
  if (!Item(r, "recordsize").empty()) {
    EXPECT_EQ(Item(r, "recordsize")["figures"]["recordsize_bytes"], f["recordsize"]);
  }
  // The special vdev's sizing adds up, grows with the threshold, and carries the DDT exactly when
  // dedup is recommended (outright or with hardware).
  const json& sizing = advice["vdev_sizing"];
  uint64_t previous = 0;
  for (const json& v : sizing["special_vdev"]) {
    EXPECT_EQ(v["total_bytes"].get<uint64_t>(), v["metadata_bytes"].get<uint64_t>() +
                                                    v["ddt_bytes"].get<uint64_t>() +
                                                    v["small_block_bytes"].get<uint64_t>());
    EXPECT_GE(v["total_bytes"].get<uint64_t>(), previous);
    previous = v["total_bytes"].get<uint64_t>();
    EXPECT_EQ(v["ddt_bytes"].get<uint64_t>() > 0,
              (on || hardware) && sizing["dedup_vdev_bytes"] > 0);
  }
  // The breakdown is for the recommended setting.
  EXPECT_EQ(r["breakdown"]["recordsize"], f["recordsize"]);
  EXPECT_EQ(r["breakdown"]["compression"], f["compression"]);
  // The input summary, the breakdown and the settings table cover the same data: read bytes
  // within the logical ones; where the breakdown lists every row (under its 50-row cap), its
  // files and bytes are the summary's and its lsize and zero_lsize the recommended row's.
  const json& in = r["input"];
  EXPECT_LE(in["bytes_read"].get<uint64_t>(), in["bytes_logical"].get<uint64_t>());
  for (const char* group : {"directories", "extensions"}) {
    const json& rows = r["breakdown"][group];
    if (rows.size() >= 50) continue;
    uint64_t files = 0, bytes = 0, lsize = 0, zero_lsize = 0;
    for (const json& row : rows) {
      files += row["files"].get<uint64_t>();
      bytes += row["bytes"].get<uint64_t>();
      lsize += row["lsize"].get<uint64_t>();
      zero_lsize += row["zero_lsize"].get<uint64_t>();
    }
    EXPECT_EQ(files, in["files"].get<uint64_t>()) << group;
    EXPECT_EQ(bytes, in["bytes_logical"].get<uint64_t>()) << group;
    EXPECT_EQ(lsize, f["lsize"].get<uint64_t>()) << group;
    if (r["breakdown"]["zero_lsize_known"].get<bool>()) {
      EXPECT_EQ(zero_lsize, f["zero_lsize"].get<uint64_t>()) << group;
    }
  }
  // Every sentence: the recommended setting by name, savings only as the table gives them,
  // "dedup pays" / "dedup=on" only when dedup is on.
  const std::string prop = d["block_size_property"];
  const std::string setting = "compression=" + d["compression"].get<std::string>() + ", " + prop +
                              "=" + zfs::NiceBytes(d["recordsize"].get<uint64_t>());
  const std::string summary = advice["summary"];
  EXPECT_NE(summary.find(setting), std::string::npos) << summary << "\n" << setting;
  EXPECT_NE(summary.find(on ? "dedup=on" : "dedup=off"), std::string::npos) << summary;
  for (const json& item : advice["items"]) {
    const std::string s = item["sentence"];
    EXPECT_FALSE(std::regex_search(s, std::regex(R"(-\d+%)"))) << s;
    if (item["kind"] == "summary" || item["kind"] == "compression" || item["kind"] == "dedup") {
      for (const Saving& figure : SavedFigures(s)) {
        EXPECT_TRUE(States(figure, saved) || States(figure, saved_dedup))
            << figure << " in: " << s << " (table: " << saved << "%, " << saved_dedup << "%)";
      }
    }
    if (!on) {
      EXPECT_EQ(s.find("dedup pays"), std::string::npos) << s;
      EXPECT_EQ(s.find("dedup=on"), std::string::npos) << s;
    }
    if (prop == "volblocksize") {
      EXPECT_EQ(s.find("recordsize"), std::string::npos) << s;
    }
  }
}

// The text report's statements against each other and against the JSON decision.
void CheckText(const std::string& text, const json& r) {
  const json& d = r["advice"]["decision"];
  const bool on = d["dedup"] == "on";
  const std::string prop = d["block_size_property"];
  for (std::istringstream in(text); !in.eof();) {
    std::string line;
    std::getline(in, line);
    EXPECT_LE(report::DisplayWidth(line), 100u) << line;
  }
  // The verdict (folded over lines) names a setting and a saving.
  const size_t v = text.find("Verdict: ");
  ASSERT_NE(v, std::string::npos);
  std::string verdict = text.substr(v, text.find("\n\n", v) - v);
  verdict = std::regex_replace(verdict, std::regex("\n  "), " ");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(verdict, m, std::regex(R"(compression=([^,]+), (\w+)=(\w+))")))
      << verdict;
  const std::string codec = m[1], prop_named = m[2], block = m[3];
  EXPECT_EQ(prop_named, prop);
  EXPECT_EQ(verdict.find("dedup=on") != std::string::npos, on) << verdict;
  // No sentence says a negative saving as a signed figure ("saves -40%").
  EXPECT_FALSE(std::regex_search(verdict, std::regex(R"(-\d+%)"))) << verdict;
  ASSERT_TRUE(std::regex_search(
      verdict, m,
      std::regex(
          R"((?:saves (\d+)%|stores (\d+)% more than the data's size|stores (\d+) times the data's size))")))
      << verdict;
  const Saving verdict_saved = m[1].matched   ? Saving{std::stoi(m[1])}
                               : m[2].matched ? Saving{-std::stoi(m[2])}
                                              : Saving{0, std::stoi(m[3])};
  // The row marked "*".
  const size_t header = text.find("\n  " + prop + " ");
  ASSERT_NE(header, std::string::npos) << text;
  std::istringstream rows(text.substr(text.rfind('\n', header) + 1));
  std::string head_line, row_line, featured;
  std::getline(rows, head_line);
  std::vector<std::string> headers;
  for (std::istringstream h(head_line); h >> row_line;) headers.push_back(row_line);
  while (std::getline(rows, row_line) && row_line.size() > 2 && row_line[1] == ' ') {
    if (row_line[0] == '*') featured = row_line.substr(2);
  }
  ASSERT_FALSE(featured.empty()) << text;
  std::vector<std::string> cells;
  for (std::istringstream c(featured); c >> row_line;) cells.push_back(row_line);
  ASSERT_EQ(cells.size(), headers.size()) << featured;
  auto cell = [&](const std::string& name) {
    const auto it = std::find(headers.begin(), headers.end(), name);
    return it == headers.end() ? std::string("(absent)") : cells[size_t(it - headers.begin())];
  };
  EXPECT_EQ(cell(prop), block);
  EXPECT_EQ(cell("compression"), codec);
  // The saving the verdict quotes, marked "~" in the table where it rests on a sample: a sampled
  // codec's sizes, or with dedup also a sampled table.
  const json& fr = r["results"][d["index"].get<size_t>()];
  // As decision.h EstimatedFiguresOf: a sampled codec (its compressratio has an interval), a
  // sampled table (its modulus above 1, or its ratio an interval).
  const bool codec_sampled = fr.contains("ci95") && !fr["ci95"].is_null();
  const bool table_sampled =
      fr["dedup"]["sample_modulus"].get<uint64_t>() > 1 || !fr["dedup"]["ci95"].is_null();
  const bool estimated = codec_sampled || (on && table_sampled);
  EXPECT_EQ(cell(on ? "saved+dedup" : "saved"),
            (estimated ? "~" : "") + std::to_string(d["saved_percent"].get<int>()) + "%");
  EXPECT_EQ(cell("used").starts_with("~"), codec_sampled) << featured;
  EXPECT_EQ(cell("used+dedup").starts_with("~"), codec_sampled || table_sampled) << featured;
  EXPECT_TRUE(States(verdict_saved, d["saved_percent"].get<int>()))
      << verdict_saved << " against " << d["saved_percent"];
  // The histogram and the breakdown are for that setting.
  const std::string named = prop + " " + block + ", compression " + codec;  // as the table names it
  const size_t histogram = text.find("== DDT histogram ==");
  EXPECT_EQ(text.find(named, histogram), text.find('\n', histogram) + 1) << named;
  const size_t breakdown = text.find("== Breakdown ==");
  if (text.find("(no breakdown", breakdown) == std::string::npos) {
    EXPECT_EQ(text.find(named, breakdown), text.find('\n', breakdown) + 1) << named;
  }
  EXPECT_NE(text.find("losing one loses the pool"), std::string::npos);
  if (!on) {
    const size_t advice = text.find("== Advice ==");
    EXPECT_EQ(text.find("dedup pays", advice), std::string::npos);
  }
}

// The HTML's verdict and highlighted row against its embedded JSON report, which it returns.
json CheckHtml(const std::string& html) {
  const size_t begin = html.find("<script type=\"application/json\" id=\"zsim-data\">");
  EXPECT_NE(begin, std::string::npos);
  if (begin == std::string::npos) return json::object();
  const size_t start = html.find('>', begin) + 1;
  const json r = json::parse(html.substr(start, html.find("</script>", start) - start));
  const json& d = r["advice"]["decision"];
  std::smatch m;
  EXPECT_TRUE(
      std::regex_search(html, m, std::regex(R"re(<p class="verdict (\w+)" id="verdict">)re")));
  EXPECT_EQ(m[1], r["advice"]["verdict"]);
  EXPECT_TRUE(std::regex_search(
      html, m, std::regex(R"(<tr class="featured"><td>([^<]+)</td><td class="l">([^<]+)</td>)")));
  EXPECT_EQ(m[1], zfs::NiceBytes(d["recordsize"].get<uint64_t>()));
  EXPECT_EQ(m[2], d["compression"]);
  return r;
}

// One run writes the text report on stdout and the HTML (with the JSON report embedded) to a
// file: the three come from one evaluation, so any disagreement is the report's, not timing's
// (the codec speeds are measured and may differ between runs).
TEST_P(ReportConsistencyTest, EveryStatementAgrees) {
  const Case& c = GetParam();
  const fs::path dir = SamplePath(c.sample, tmp_);
  if (dir.empty()) GTEST_SKIP() << "sample " << c.sample << " is not built";
  const fs::path html = tmp_.path() / "report.html";
  std::vector<std::string> args = {"scan", dir.string(), "-q", "--html", html.string()};
  args.insert(args.end(), c.options.begin(), c.options.end());
  const testing::CommandResult run = testing::RunZsim(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json r = CheckHtml(ReadText(html));
  CheckJson(r);
  CheckText(run.out, r);
}

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  const std::vector<std::vector<std::string>>& sets =
      info.param.sample == "specks" ? SpeckSets() : OptionSets();
  size_t set = 0;
  while (sets[set] != info.param.options) ++set;
  return info.param.sample + "_" + std::to_string(set);
}

INSTANTIATE_TEST_SUITE_P(AllSamples, ReportConsistencyTest, ::testing::ValuesIn(Cases()), Name);

}  // namespace
}  // namespace zsim
