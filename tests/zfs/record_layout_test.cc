#include "engine/zfs/record_layout.h"

#include <gtest/gtest.h>

namespace zsim::zfs {
namespace {

// docs/zfs_model.md §1: a file up to recordsize is one block of its size rounded up to 512; a
// larger one is ceil(size / recordsize) full records.
TEST(RecordLayoutTest, EdgeSizesAtRecordsize128K) {
  constexpr uint64_t rs = 128 * 1024;
  struct Case {
    uint64_t size, block, blocks;
  } cases[] = {
      {0, 0, 0},
      {1, 512, 1},
      {511, 512, 1},
      {512, 512, 1},
      {513, 1024, 1},
      {rs - 1, rs, 1},
      {rs, rs, 1},
      {rs + 1, rs, 2},
      {2 * rs, rs, 2},
      {2 * rs + 1, rs, 3},
      {36 * 1024 + 1, 37376, 1},
  };
  for (const Case& c : cases) {
    const RecordLayout l = FileLayout(c.size, rs);
    EXPECT_EQ(l.block_bytes, c.block) << c.size;
    EXPECT_EQ(l.blocks, c.blocks) << c.size;
  }
}

TEST(RecordLayoutTest, RoundsTo512NotToAshiftWhateverTheRecordsize) {
  EXPECT_EQ(FileLayout(1000, 4096).block_bytes, 1024u);
  EXPECT_EQ(FileLayout(5000, 4096).block_bytes, 4096u);
  EXPECT_EQ(FileLayout(5000, 4096).blocks, 2u);
  EXPECT_EQ(FileLayout(3u << 20, 1u << 20).blocks, 3u);
  EXPECT_EQ(FileLayout(17u << 20, 16u << 20).blocks, 2u);
}

TEST(RecordLayoutTest, ZvolBlocksAreAlwaysVolblocksize) {
  EXPECT_EQ(ZvolLayout(0, 16384).blocks, 0u);
  EXPECT_EQ(ZvolLayout(1, 16384).block_bytes, 16384u);
  EXPECT_EQ(ZvolLayout(1, 16384).blocks, 1u);
  EXPECT_EQ(ZvolLayout(1u << 30, 16384).blocks, 65536u);
  EXPECT_EQ(ZvolLayout((1u << 30) + 512, 8192).blocks, 131073u);
}

}  // namespace
}  // namespace zsim::zfs
