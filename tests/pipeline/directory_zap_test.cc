#include "engine/pipeline/directory_zap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/zfs/microzap.h"

namespace zsim::pipeline {
namespace {

struct MeasuredDirectory {
  uint64_t psize;  // at ashift 9
  std::vector<std::pair<const char*, bool>> entries;
};

const MeasuredDirectory kMeasured[] = {
#include "tests/pipeline/microzap_measured.inc"
};

std::vector<io::DirEntry> Listing(const MeasuredDirectory& d, bool reverse) {
  std::vector<io::DirEntry> out;
  for (const auto& [name, is_dir] : d.entries) {
    out.push_back({name, is_dir ? io::FileType::kDirectory : io::FileType::kRegular});
  }
  if (reverse) std::reverse(out.begin(), out.end());  // a listing's order is the file system's
  return out;
}

// The 7 micro-ZAP directories OpenZFS 2.3.2 stored for the database sample: the block built and
// compressed here rounds to the psize it wrote, in whatever order the listing comes. The fit the
// model used before put the four ~300-entry directories (base/1, base/4, base/5, base/16384) one
// sector low each. One lies near the 112-byte embedding line, where the salt and the object
// numbers (which zsim cannot know) decide: `base`, five subdirectories, stored by OpenZFS, 106
// bytes here (its real object numbers 11, 310, 623, 922, 1222 give 120 with the lz4 command).
TEST(DirectoryZapTest, CompressesAsOpenZfsWroteTheSamplesDirectories) {
  ASSERT_EQ(std::size(kMeasured), 7u);
  int exact = 0;
  for (const MeasuredDirectory& d : kMeasured) {
    const uint64_t bytes = MicrozapLz4Bytes(Listing(d, /*reverse=*/false));
    EXPECT_EQ(MicrozapLz4Bytes(Listing(d, /*reverse=*/true)), bytes);
    if (d.entries.size() == 5) {
      EXPECT_NEAR(static_cast<double>(bytes), 112.0, 16.0);
      continue;
    }
    EXPECT_GT(bytes, 112u);  // stored, not embedded
    EXPECT_EQ((bytes + 511) / 512 * 512, d.psize) << d.entries.size() << " entries";
    exact += (bytes + 511) / 512 * 512 == d.psize;
  }
  EXPECT_EQ(exact, 6);
}

TEST(DirectoryZapTest, TypesAreWrittenIntoTheBlock) {
  std::vector<io::DirEntry> files, dirs;
  for (int i = 0; i < 40; ++i) {
    files.push_back({"entry" + std::to_string(i), io::FileType::kRegular});
    dirs.push_back(
        {"entry" + std::to_string(i), i % 2 ? io::FileType::kDirectory : io::FileType::kSymlink});
  }
  // Alternating types break the runs lz4 finds in the values.
  EXPECT_LT(MicrozapLz4Bytes(files), MicrozapLz4Bytes(dirs));
}

TEST(DirectoryZapTest, FatZapsAreNotMeasured) {
  EXPECT_EQ(MicrozapLz4Bytes({{{std::string(50, 'x'), io::FileType::kRegular}}}), 0u);
  std::vector<io::DirEntry> many;
  for (int i = 0; i < 2048; ++i) many.push_back({std::to_string(i), io::FileType::kRegular});
  EXPECT_EQ(MicrozapLz4Bytes(many), 0u);
  many.pop_back();
  EXPECT_GT(MicrozapLz4Bytes(many), 0u);
  EXPECT_GT(MicrozapLz4Bytes({}), 0u);  // an empty directory's block (embedded when written)
}

}  // namespace
}  // namespace zsim::pipeline
