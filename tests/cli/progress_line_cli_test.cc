// The progress line's text (cli/messages.h FormatProgress).

#include <gtest/gtest.h>

#include <string>

#include "engine/cli/messages.h"
#include "tests/util/run_command.h"
#include "tests/util/test_util.h"

namespace zsim::cli {
namespace {

pipeline::Progress Finished(double seconds, double expected) {
  pipeline::Progress p;
  p.files_done = p.files_discovered = 54;
  p.bytes_done = p.bytes_discovered = 7749120;
  p.walk_finished = true;
  p.seconds = seconds;
  p.expected_seconds = expected;
  p.codec_share = 0.99;
  return p;
}

// --progress where stderr is not a terminal (a log): plain lines, no carriage return or escape
// sequence (they were the terminal's "\r...\x1b[K" in the log).
TEST(ProgressLineTest, ALogGetsPlainLines) {
  testing::TempDir tmp;
  tmp.WriteFile("data/a", testing::GenerateBlock(300 * 1024, 0.5, 1));
  const testing::CommandResult r = testing::RunZsim(
      {"scan", (tmp.path() / "data").string(), "--progress", "--compression", "lz4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("zsim: progress: scanned "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
}

// A scan of a fifth of a second (the tiny sample) draws its only line at 100%, expecting what it
// has taken: shown in tenths, 0.14 s read as "0.1 s", 29% below the truth.
TEST(ProgressLineTest, SubSecondTimesKeepTwoDigits) {
  const std::string line = FormatProgress(Finished(0.14, 0.14));
  EXPECT_NE(line.find(", expected 0.14 s,"), std::string::npos) << line;
}

TEST(ProgressLineTest, SecondsKeepTenthsAndLongScansWholeSeconds) {
  pipeline::Progress p = Finished(1.2, 4.26);
  p.bytes_done /= 4;
  const std::string line = FormatProgress(p);
  EXPECT_NE(line.find(", expected 4.3 s,"), std::string::npos) << line;
  EXPECT_NE(line.find(", ETA 3.1 s"), std::string::npos) << line;
  EXPECT_NE(FormatProgress(Finished(30, 42.4)).find(", expected 42 s,"), std::string::npos);
  // 0.996 rounds to 1.00 in hundredths: shown as a second, in tenths.
  EXPECT_NE(FormatProgress(Finished(0.996, 0.996)).find(", expected 1.0 s,"), std::string::npos);
}

// After the reading, the top-up's reads: the line says what it does and how long the scan has
// taken, not an expected time the top-up is not part of.
TEST(ProgressLineTest, TheTopUpSaysWhatItReadsAgain) {
  pipeline::Progress p = Finished(3.2, 3.0);
  p.topping_up = true;
  p.top_up_blocks = 1234;
  const std::string line = FormatProgress(p);
  EXPECT_NE(line.find(", top-up: 1234 blocks read again for the sampled codecs, 3.2 s"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("expected"), std::string::npos) << line;
  EXPECT_EQ(line.find("ETA"), std::string::npos) << line;
  p.top_up_blocks = 1;
  EXPECT_NE(FormatProgress(p).find(", top-up: 1 block read again"), std::string::npos);
  // Once its rows are planned: of how many, and its own time left at its pace so far.
  p.top_up_blocks = 300;
  p.top_up_total = 1200;
  p.top_up_seconds = 2.0;
  const std::string planned = FormatProgress(p);
  EXPECT_NE(planned.find(", top-up: 300 of 1200 blocks read again for the sampled codecs, 3.2 s, "
                         "ETA 6.0 s"),
            std::string::npos)
      << planned;
  p.top_up_seconds = 0.2;  // too early for a pace
  EXPECT_EQ(FormatProgress(p).find("ETA"), std::string::npos);
}

// The top-up's cost, known once the reading has ended: said where it is more than a moment.
TEST(ProgressLineTest, ACostlyTopUpIsSaidBeforeItRuns) {
  pipeline::TopUpForecast f;
  f.rows = 2;
  f.block_sizes = {16 * 1024, 128 * 1024};
  f.blocks = 1400;
  f.bytes = uint64_t{700} << 20;
  f.codec_cpu_seconds = 25.2;
  f.seconds = 12.6;
  EXPECT_EQ(FormatTopUpWarning(f),
            "zsim: recordsize 16K, 128K: the sampled codecs code 1400 blocks they skipped "
            "(700 MiB) after the reading, about 13 s more (25 CPU s); Ctrl-C stops with the "
            "figures read");
  f.rows = 1;
  f.block_sizes = {8 * 1024};
  f.volblocksize = true;
  EXPECT_NE(FormatTopUpWarning(f).find("zsim: volblocksize 8K: the sampled codecs code"),
            std::string::npos);
  f.seconds = pipeline::kCostlyCodecSeconds;  // a moment: nothing said
  EXPECT_EQ(FormatTopUpWarning(f), "");
}

}  // namespace
}  // namespace zsim::cli
