// File names that are not UTF-8, or that hold C1 controls (issue 18): JSON keeps every name
// distinct and recoverable (engine/report/name_encoding.h, docs/names.md), and the text report
// lets no C1 control (U+0080..U+009F, or a stray 0x80..0x9F byte such as 0x9b, CSI to an 8-bit
// terminal) through, as it lets no C0 one.

#include "engine/report/name_encoding.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/util/report_json.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

using report::DecodeName;
using report::EncodeName;
using report::TerminalName;

bool IsValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = report::ValidUtf8Length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

TEST(NameEncodingTest, InvalidBytesAndTheReplacementCharacterStayDistinctAndRoundTrip) {
  const std::vector<std::string> names = {
      "a\xff",
      "a\xfe",
      "a\xef\xbf\xbd",  // the three that once all became a\ufffd
      "plain.txt",
      "caf\xc3\xa9",
      "\xe6\x97\xa5\xe6\x9c\xac",  // UTF-8 kept as is
      "bad\xff\xfe\xc3(name",
      "\xc3",
      "\xe2\x82",  // truncated sequences
      "\xc0\xaf",
      "\xed\xa0\x80",
      "\xf4\x90\x80\x80",  // overlong, surrogate, >10FFFF
      "\xee\xbe\x80",
      "\xee\xbf\xbf",    // real U+EF80 and U+EFFF: the encoding's own range
      "x\xef\x80\x80y",  // U+F000, next to the range: kept
      std::string("nul\0in", 6),
  };
  std::set<std::string> encoded;
  for (const std::string& name : names) {
    const std::string e = EncodeName(name);
    EXPECT_TRUE(IsValidUtf8(e)) << name;
    EXPECT_EQ(DecodeName(e), name) << name;
    encoded.insert(e);
  }
  EXPECT_EQ(encoded.size(), names.size());  // no two names collapse
  // Valid UTF-8 outside U+EF80..U+EFFF is unchanged; a real U+FFFD stays one.
  EXPECT_EQ(EncodeName("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(EncodeName("a\xef\xbf\xbd"), "a\xef\xbf\xbd");
  // Byte 0xff is U+EFFF (EE BF BF); byte 0x80 is U+EF80 (EE BE 80).
  EXPECT_EQ(EncodeName("a\xff"), "a\xee\xbf\xbf");
  EXPECT_EQ(EncodeName("\x80"), "\xee\xbe\x80");
}

TEST(NameEncodingTest, TerminalNameReplacesC0DelAndC1Controls) {
  EXPECT_EQ(TerminalName("a\x1b[31mb\x7f\n"), "a?[31mb??");
  EXPECT_EQ(TerminalName("csi\xc2\x9b"
                         "31m"),
            "csi?31m");  // U+009B
  EXPECT_EQ(TerminalName("csi\x9b"
                         "31m"),
            "csi?31m");  // a stray 0x9b byte
  EXPECT_EQ(TerminalName("nel\xc2\x85"), "nel?");
  EXPECT_EQ(TerminalName("caf\xc3\xa9 \xc2\xa0"), "caf\xc3\xa9 \xc2\xa0");  // text kept
  EXPECT_EQ(TerminalName("latin1 \xe9"), "latin1 \xe9");  // a stray byte >= 0xA0 is kept
}

class NameCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string& name : names_) {
      tmp_.WriteFile(name, testing::Xorshift64Bytes(static_cast<uint64_t>(name.size()), 10000));
    }
  }
  const std::vector<std::string> names_ = {"a\xff", "a\xfe", "a\xef\xbf\xbd",
                                           "csi\xc2\x9b"
                                           "2J",
                                           "raw\x9b"
                                           "2J"};
  testing::TempDir tmp_;
};

TEST_F(NameCliTest, JsonNamesAreDistinctAndDecodeToTheFilesNames) {
  // Each file named on the command line: input.paths echoes every name.
  const std::string root = tmp_.path().string();
  std::vector<std::string> args = {"scan", "-q", "--json", "--compression", "lz4"};
  for (const std::string& name : names_) args.push_back(root + "/" + name);
  const testing::CommandResult r = testing::RunZsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = testing::ParseReportJson(r);
  ASSERT_EQ(j["input"]["paths"].size(), names_.size());
  std::set<std::string> seen;
  for (size_t i = 0; i < names_.size(); ++i) {
    const std::string got = j["input"]["paths"][i].get<std::string>();
    EXPECT_EQ(DecodeName(got), root + "/" + names_[i]);
    seen.insert(got);
  }
  EXPECT_EQ(seen.size(), names_.size());  // a\xff, a\xfe and a\ufffd stay three names
  EXPECT_EQ(j["input"]["files"], names_.size());
}

TEST_F(NameCliTest, TextReportHasNoC1ControlBytes) {
  const std::string root = tmp_.path().string();
  // Names shown in the text report: the unreadable-path list. A symlink loop per name with
  // --follow-symlinks puts each name there.
  for (const std::string& name : names_) {
    std::filesystem::create_directory(tmp_.path() / (name + ".d"));
    std::filesystem::create_directory_symlink(".", tmp_.path() / (name + ".d") / name);
  }
  const testing::CommandResult r =
      testing::RunZsim({"scan", root, "--follow-symlinks", "--compression", "lz4"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the loops
  EXPECT_EQ(r.out.find('\x9b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos);
  EXPECT_EQ(r.err.find('\x9b'), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("csi?2J"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("raw?2J"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("csi\\xc2\\x9b2J"), std::string::npos) << r.err;
}

// A name holding a newline cannot forge a line of stderr, in any message that quotes it: the
// scan's refusals, the --html and --save checks, the other paths' notes. Each message is one
// line, the name written with \n (docs/names.md).
TEST_F(NameCliTest, MessagesQuoteANewlineInANameAsBackslashN) {
  const std::string root = tmp_.path().string();
  const std::string fifo = root + "/ff\nzsim: forged";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::symlink("lo\nop", (root + "/lo\nop").c_str()), 0);  // loops on itself
  const std::string real = root + "/a\xff";
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string quoted;  // as the message must write the name
  };
  const std::vector<Case> cases = {
      {{"scan", root + "/nope\nzsim: forged"}, 2, "nope\\nzsim: forged"},
      {{"scan", fifo}, 2, "ff\\nzsim: forged"},        // alone: nothing to scan
      {{"scan", fifo, real}, 0, "ff\\nzsim: forged"},  // noted, the other scanned
      {{"scan", root + "/lo\nop"}, 2, "lo\\nop"},
      {{"scan", real, "--html", root + "/no\ndir/x.html"}, 2, "no\\ndir"},
      {{"scan", real, "--save", root + "/no\ndir/x.zstate"}, 2, "no\\ndir"},
      // A name that spells a usage error's hint: still the name, not a hint line.
      {{"report", root + "/nope\nRun 'zsim scan --evil"}, 2, "nope\\nRun 'zsim scan --evil"},
  };
  for (const Case& c : cases) {
    const testing::CommandResult r = testing::RunZsim(c.args);
    SCOPED_TRACE(c.args[1]);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
    EXPECT_NE(r.err.find(c.quoted), std::string::npos) << r.err;
    // Every line of stderr is one of zsim's: none begins with what followed a newline in a name.
    std::istringstream lines(r.err);
    std::string line;
    while (std::getline(lines, line)) {
      EXPECT_EQ(line.rfind("zsim: forged", 0), std::string::npos) << r.err;
      EXPECT_EQ(line.rfind("op", 0), std::string::npos) << r.err;
      EXPECT_EQ(line.rfind("dir", 0), std::string::npos) << r.err;
      EXPECT_EQ(line.rfind("Run 'zsim scan --evil", 0), std::string::npos) << r.err;
    }
  }
}

}  // namespace
}  // namespace zsim
