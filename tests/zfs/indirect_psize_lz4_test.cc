// zfs/metadata.h IndirectBlockPsize from 0.7 on (lz4 metadata), against every L1 block OpenZFS
// 2.3.2 wrote for two samples at ashift 9 (tests/accuracy/openzfs23: `zdb -ddddd` of the
// dataset, the psize and fill count F of each L1; 16K records, lz4, dedup on, legacy DDT): the
// per-pool total within 1 %, and the sizes where the flat 46 B per block pointer missed a
// 512-byte step (an 11-pointer L1: 1,536 B; the 148-pointer L1 of the meta-dnode: 8,192 B).
// v23's lzjb fit is unchanged (calibration_v23_test).

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/zfs/metadata.h"

namespace zsim::zfs {
namespace {

struct L1Blocks {
  uint64_t fill;   // non-hole block pointers (zdb's F=)
  uint64_t psize;  // as OpenZFS 2.3.2 wrote it
  uint64_t count;  // L1 blocks with this fill and psize
};

// database sample, 16K lz4 a9 disk (1,282 files; 329 L1 blocks).
const std::vector<L1Blocks> kDatabase = {
    {2, 1024, 198}, {3, 1024, 44},   {4, 1024, 13},   {5, 1024, 4},    {6, 1024, 8},
    {7, 1024, 20},  {8, 1024, 8},    {10, 1024, 5},   {10, 1536, 1},   {14, 1536, 4},
    {16, 1536, 4},  {22, 1536, 4},   {28, 2048, 3},   {29, 2048, 1},   {32, 2048, 4},
    {48, 3072, 4},  {276, 12288, 1}, {616, 25600, 1}, {786, 35328, 1}, {1024, 42496, 1}};
// source sample, 16K lz4 a9 disk (4,507 files; 841 L1 blocks).
const std::vector<L1Blocks> kSource = {
    {2, 1024, 439}, {3, 1024, 161}, {4, 1024, 76}, {5, 1024, 54},  {6, 1024, 24}, {7, 1024, 15},
    {8, 1024, 13},  {9, 1024, 11},  {10, 1024, 6}, {11, 1536, 10}, {12, 1536, 6}, {13, 1536, 4},
    {14, 1536, 6},  {15, 1536, 1},  {17, 1536, 3}, {18, 1536, 3},  {19, 1536, 1}, {21, 1536, 3},
    {23, 2048, 1},  {25, 2048, 1},  {29, 2048, 1}, {30, 2048, 1},  {43, 2560, 1}};

void ExpectTotalWithin(const std::vector<L1Blocks>& blocks, double tolerance) {
  uint64_t measured = 0, modelled = 0;
  for (const L1Blocks& b : blocks) {
    measured += b.psize * b.count;
    modelled += IndirectBlockPsize(Profile::kZfs23, b.fill, 1) * b.count;
  }
  EXPECT_NEAR(static_cast<double>(modelled), static_cast<double>(measured),
              tolerance * static_cast<double>(measured));
}

TEST(IndirectPsizeLz4Test, DatabaseL1TotalWithinOnePercent) {
  // The flat 46 B per pointer gave 480,768 against 471,552 (+2.0 %).
  ExpectTotalWithin(kDatabase, 0.01);
}

TEST(IndirectPsizeLz4Test, SourceL1TotalWithinOnePercent) { ExpectTotalWithin(kSource, 0.01); }

TEST(IndirectPsizeLz4Test, SmallL1sLandOnTheMeasuredStep) {
  EXPECT_EQ(IndirectBlockPsize(Profile::kZfs23, 2, 1), 1024u);
  EXPECT_EQ(IndirectBlockPsize(Profile::kZfs23, 10, 1), 1024u);
  EXPECT_EQ(IndirectBlockPsize(Profile::kZfs23, 11, 1), 1536u);  // 46 B per pointer: 1,024
  EXPECT_EQ(IndirectBlockPsize(Profile::kZfs23, 23, 1), 2048u);
  EXPECT_EQ(IndirectBlockPsize(Profile::kZfs23, 43, 1), 2560u);
}

TEST(IndirectPsizeLz4Test, MetaDnodeIndirects) {
  // The dataset's meta-dnode (2 DVAs per pointer): source's L1 over 148 dnode blocks was 8,192
  // bytes (the flat fit: 8,704), its L2..L5 with one pointer 1,024 each.
  EXPECT_EQ(IndirectBlockPsize(Profile::kZfs23, 148, 2), 8192u);
  EXPECT_EQ(IndirectBlockPsize(Profile::kZfs23, 1, 2), 1024u);
  EXPECT_EQ(IndirectBlockPsize(Profile::kZfs23, 42, 2), 3072u);  // database: 42 dnode blocks
}

TEST(IndirectPsizeLz4Test, LargeL1sWithinAFewPercent) {
  // Full L1s cost 41-45 B per pointer, by how alike their blocks' sizes are.
  for (const L1Blocks& b : kDatabase) {
    if (b.fill < 200) continue;
    const double got = static_cast<double>(IndirectBlockPsize(Profile::kZfs23, b.fill, 1));
    EXPECT_NEAR(got, static_cast<double>(b.psize), 0.1 * static_cast<double>(b.psize)) << b.fill;
  }
}

}  // namespace
}  // namespace zsim::zfs
