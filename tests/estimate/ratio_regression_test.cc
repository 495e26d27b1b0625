// Where the regression's correction of a sampled table's allocated ratio is in doubt
// (estimate/ratio_regression.h KeysRepeat): a stratum whose references exceed its distinct keys,
// judged from an occurrence sample and a sketch, each with its own error.

#include "engine/estimate/ratio_regression.h"

#include <gtest/gtest.h>

#include <random>

namespace zsim::estimate {
namespace {

constexpr double kSketchError = 0.0041;  // the full-record keys' sketch (2^16 registers)

TEST(KeysRepeatTest, ACensusOfOccurrencesIsJudgedByTheSketchAlone) {
  // Level 0: every reference was drawn, so only the sketch's error is allowed for.
  EXPECT_FALSE(KeysRepeat(1000, kSketchError, 1000, 0));
  EXPECT_FALSE(KeysRepeat(975, kSketchError, 1000, 0));  // 2.5% more references: within
  EXPECT_TRUE(KeysRepeat(970, kSketchError, 1000, 0));   // 3%: beyond 2% and 2 errors
  EXPECT_TRUE(KeysRepeat(500, kSketchError, 1000, 0));
  // A less certain count of keys needs more repeats.
  EXPECT_FALSE(KeysRepeat(970, 0.02, 1000, 0));
}

TEST(KeysRepeatTest, NoOccurrencesSayNothing) {
  EXPECT_FALSE(KeysRepeat(100, kSketchError, 0, 0));
  EXPECT_FALSE(KeysRepeat(100, kSketchError, 0, 3));
}

// Occurrences drawn at level 1 (each reference with probability 1/2): a few hundred of them
// count the references to within 4-10%, which alone must not make unique data look repeated,
// while a fifth more references than keys is seen nearly always.
TEST(KeysRepeatTest, AnOccurrenceSampleIsJudgedWithItsOwnError) {
  std::mt19937_64 rng(11);
  constexpr int kDraws = 2000;
  int unique_flagged = 0, repeated_flagged = 0;
  for (int i = 0; i < kDraws; ++i) {
    std::binomial_distribution<int> unique(600, 0.5), repeated(720, 0.5);
    unique_flagged += KeysRepeat(600, kSketchError, unique(rng), 1);
    repeated_flagged += KeysRepeat(600, kSketchError, repeated(rng), 1);
  }
  EXPECT_LE(unique_flagged, kDraws / 100);
  EXPECT_GE(repeated_flagged, kDraws * 9 / 10);
  // Without the occurrences' error allowed for (as a census), a third of unique draws said so.
  int flagged_as_census = 0;
  for (int i = 0; i < kDraws; ++i) {
    std::binomial_distribution<int> unique(600, 0.5);
    flagged_as_census += KeysRepeat(600, kSketchError, 2.0 * unique(rng), 0);
  }
  EXPECT_GE(flagged_as_census, kDraws / 5);
}

}  // namespace
}  // namespace zsim::estimate
