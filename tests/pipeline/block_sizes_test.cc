// The block-size histogram and the special vdev's small blocks, on a tree whose blocks are known
// (ashift 12, one disk, lz4, recordsize 128K): random data does not compress, so psize is the
// record (or the file's 512-rounded size); a 1-byte file is embedded and counted nowhere.

#include <gtest/gtest.h>

#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

constexpr uint64_t K = 1024;

TEST(BlockSizesTest, HistogramAndSmallBlocksOfKnownBlocks) {
  testing::TempDir tmp;
  const std::vector<uint8_t> big = testing::Xorshift64Bytes(1, 256 * K);  // 2 x 128K
  tmp.WriteFile("a", big);
  tmp.WriteFile("a-copy", big);                              // the same 2 blocks again
  tmp.WriteFile("c", testing::Xorshift64Bytes(2, 100 * K));  // one block of 102400
  tmp.WriteFile("d", testing::Xorshift64Bytes(3, 3 * K));    // one block of 3072
  tmp.WriteFile("e", std::vector<uint8_t>{7});               // embedded
  ScanOptions o;
  o.paths = {tmp.path().string()};
  o.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
  o.threads = 2;
  auto fs = io::PosixFileSystem();
  Result<ScanResult> r = RunScan(o, fs.get());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->results.size(), 1u);
  const SettingResult& s = r->results[0];
  ASSERT_EQ(s.block_sizes.size(), 3u);
  // 3072 -> the 2K bucket, one 4K sector.
  EXPECT_EQ(s.block_sizes[0].size, 2 * K);
  EXPECT_EQ(s.block_sizes[0].blocks, 1u);
  EXPECT_EQ(s.block_sizes[0].psize, 3 * K);
  EXPECT_EQ(s.block_sizes[0].asize, 4 * K);
  // 102400 -> the 64K bucket, 25 sectors.
  EXPECT_EQ(s.block_sizes[1].size, 64 * K);
  EXPECT_EQ(s.block_sizes[1].asize, 100 * K);
  // Two 128K blocks referenced twice each: 4 references, 2 unique.
  EXPECT_EQ(s.block_sizes[2].size, 128 * K);
  EXPECT_EQ(s.block_sizes[2].blocks, 4u);
  EXPECT_EQ(s.block_sizes[2].unique_blocks, 2u);
  EXPECT_EQ(s.block_sizes[2].asize, 4 * 128 * K);
  EXPECT_EQ(s.block_sizes[2].unique_asize, 2 * 128 * K);
  // Thresholds 4K .. 64K (half the recordsize): only the 3K block is small enough for each.
  ASSERT_EQ(s.small_blocks.size(), 5u);
  for (const SmallBlocks& small : s.small_blocks) {
    EXPECT_EQ(small.blocks, 1u) << small.threshold;
    EXPECT_EQ(small.asize, 4 * K) << small.threshold;
  }
  EXPECT_EQ(s.small_blocks.front().threshold, 4 * K);
  EXPECT_EQ(s.small_blocks.back().threshold, 64 * K);
}

}  // namespace
}  // namespace zsim::pipeline
