// The temporary file beside an output (base/temp_files.h TempPathBeside): hidden, in the
// target's directory, and within NAME_MAX, cut at a character boundary.

#include "engine/base/temp_files.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>

namespace zsim {
namespace {

TEST(TempPathBesideTest, HiddenBesideTheTarget) {
  EXPECT_EQ(TempPathBeside("/a/b/state", ".tmp.7"), "/a/b/.state.tmp.7");
  EXPECT_EQ(TempPathBeside("state", ".tmp.7"), ".state.tmp.7");
  EXPECT_EQ(TempPathBeside("/state", ".zsim-XXXXXX"), "/.state.zsim-XXXXXX");
}

TEST(TempPathBesideTest, ALongNameIsCutToFitWithTheSuffixLast) {
  const std::string name(NAME_MAX, 'n');
  const std::string t = TempPathBeside("/d/" + name, ".zsim-XXXXXX");
  const std::string base = t.substr(3);
  EXPECT_EQ(base.size(), size_t{NAME_MAX});
  EXPECT_EQ(base.substr(base.size() - 12), ".zsim-XXXXXX");
  EXPECT_EQ(base[0], '.');
}

// "a" then 2-byte characters: the cut falls inside one of them at one length or the next.
TEST(TempPathBesideTest, ACutNeverSplitsAUtf8Character) {
  for (size_t suffix = 10; suffix < 14; ++suffix) {
    std::string name = "a";
    for (int i = 0; i < 126; ++i) name += "\xC3\xA9";  // é
    const std::string s(suffix, 'x');
    const std::string t = TempPathBeside(name, s);
    ASSERT_LE(t.size(), size_t{NAME_MAX});
    const std::string cut = t.substr(2, t.size() - 2 - s.size());  // ".a", the é's, suffix
    EXPECT_EQ(cut.size() % 2, 0u) << suffix;                       // whole é's only
    EXPECT_GE(t.size(), size_t{NAME_MAX} - 1) << suffix;           // no more cut than one byte
  }
}

}  // namespace
}  // namespace zsim
