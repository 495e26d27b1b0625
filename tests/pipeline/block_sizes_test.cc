// The block-size histogram and the special vdev's small blocks, on a tree whose blocks are known
// (ashift 12, one disk, lz4, recordsize 128K): random data does not compress, so psize is the
// record (or the file's 512-rounded size); a 1-byte file is embedded and counted nowhere.

#include "engine/finish/block_sizes.h"

#include <gtest/gtest.h>

#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

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

// A sampled table's histogram (--sample 1/M) is its sample's shape, scaled to add up to the
// setting's psize: scaled by M alone, 1/16 of /usr/share/doc's keys added up to 53.6 MB where the
// setting said 83.6 MB (its few largest blocks drawn or not), and the special vdev's sizes came
// from it. Here: 600 files of 4K random blocks and 40 of 128K, 1 in 8 keys kept.
TEST(BlockSizesTest, ASampledTablesHistogramAddsUpToTheSettingsPsize) {
  testing::TempDir tmp;
  for (int i = 0; i < 600; ++i) {
    tmp.WriteFile(testing::NumberedName("s", i), testing::Xorshift64Bytes(100 + i, 4 * K));
  }
  for (int i = 0; i < 40; ++i) {
    tmp.WriteFile(testing::NumberedName("b", i), testing::Xorshift64Bytes(5000 + i, 128 * K));
  }
  ScanOptions o;
  o.paths = {tmp.path().string()};
  o.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
  o.sample_modulus = 8;
  auto fs = io::PosixFileSystem();
  Result<ScanResult> r = RunScan(o, fs.get());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const SettingResult& s = r->results[0];
  ASSERT_EQ(s.dedup.sample_modulus, 8u);
  uint64_t psize = 0, blocks = 0;
  for (const BlockSizeBucket& b : s.block_sizes) {
    psize += b.psize;
    blocks += b.blocks;
  }
  EXPECT_EQ(psize, s.psize);
  EXPECT_EQ(s.psize, 600 * 4 * K + 40 * 128 * K);  // random data: stored as is, every block
  EXPECT_EQ(blocks, 640u);                         // the data blocks, counted whole
}

// The calibration itself: an exact setting is left as it is; an estimated one is scaled, its
// buckets' psize adding up to the setting's exactly (cumulative rounding), every count with them.
TEST(BlockSizesTest, CalibrationScalesEstimatesOnly) {
  SettingResult s;
  s.psize = 3000;
  s.blocks.data = 6;
  s.block_sizes = {BlockSizeBucket{512, 2, 1000, 1000, 1, 500},
                   BlockSizeBucket{1024, 1, 1000, 1000, 1, 1000}};
  s.small_blocks = {SmallBlocks{4096, 3, 2, 2000, 1500}};
  SettingResult exact = s;
  finish::CalibrateBlockSizes(&exact);
  EXPECT_EQ(exact.block_sizes[0].psize, 1000u);
  s.exact = false;
  finish::CalibrateBlockSizes(&s);
  // Sizes by 3000 / 2000, counts by 6 data blocks / 3.
  EXPECT_EQ(s.block_sizes[0].psize + s.block_sizes[1].psize, 3000u);
  EXPECT_EQ(s.block_sizes[0].blocks, 4u);
  EXPECT_EQ(s.block_sizes[0].unique_blocks, 2u);
  EXPECT_EQ(s.block_sizes[1].asize, 1500u);
  EXPECT_EQ(s.small_blocks[0].blocks, 6u);
  EXPECT_EQ(s.small_blocks[0].asize, 3000u);
}

}  // namespace
}  // namespace zsim::pipeline
