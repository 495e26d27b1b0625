#include "engine/pipeline/directory_zap.h"

#include <gtest/gtest.h>

#include <string>
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

// Every micro-ZAP directory OpenZFS 2.3.2 stored for the database sample (the one-sector
// directories too): the block built and compressed here rounds to the psize it wrote. The fit
// the model used before put base/1 and base/16384 one sector low.
TEST(DirectoryZapTest, CompressesAsOpenZfsWroteTheSamplesDirectories) {
  for (const MeasuredDirectory& d : kMeasured) {
    for (bool reverse : {false, true}) {
      const uint64_t bytes = MicrozapLz4Bytes(Listing(d, reverse));
      EXPECT_GT(bytes, 112u);  // stored, not embedded
      EXPECT_EQ((bytes + 511) / 512 * 512, d.psize) << d.entries.size() << " entries";
    }
  }
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
