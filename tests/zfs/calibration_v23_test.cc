// The space model against measurements on real ZFS: zfs-fuse 0.7.0 (Debian), pool version 23,
// file-backed pools, data written with cp and synced (docs/space_model.md has the procedure).
// Each test states the error the model reaches on these points.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "engine/zfs/allocation.h"
#include "engine/zfs/ddt_footprint.h"
#include "engine/zfs/metadata.h"

namespace zsim::zfs {
namespace {

double RelErr(double model, double real) { return std::fabs(model - real) / real; }

// DDT ZAP objects measured with zdb -dddd (leaf blocks) and zdb -DD (per-entry figures).
struct DdtPoint {
  const char* run;
  int ashift;
  uint64_t entries;
  uint64_t peak_entries;  // entries the ZAP held at its largest
  uint64_t real_leaves;   // zdb -dddd "Leaf blocks"
  uint64_t real_on_disk;  // zdb -DD "size X on disk" (per entry)
  uint64_t real_in_core;  // zdb -DD "Y in core" (per entry)
  bool fill_count_fresh;  // zdb's %full equals the non-hole L0 share
};
constexpr DdtPoint kDdtPoints[] = {
    {"d12_1k unique", 12, 1001, 1001, 33, 441, 130, false},
    {"d12_1k duplicate", 12, 300, 300, 11, 532, 163, true},
    {"d12_10k unique", 12, 10001, 13001, 504, 643, 207, true},
    {"d12_10k duplicate", 12, 3000, 3000, 122, 524, 167, true},
    {"d12_50k unique", 12, 50001, 70001, 2426, 618, 83, false},
    {"d12_50k duplicate", 12, 20000, 20000, 752, 480, 155, true},
    {"d9_1k unique", 9, 1001, 1001, 33, 256, 130, false},
    {"d9_1k duplicate", 9, 300, 300, 11, 276, 163, true},
    {"d9_10k unique", 9, 10001, 13001, 504, 305, 207, true},
    {"d9_10k duplicate", 9, 3000, 3000, 122, 272, 167, true},
    {"d9_50k unique", 9, 50001, 70001, 2426, 304, 83, false},
    {"d9_50k duplicate", 9, 20000, 20000, 752, 271, 155, true},
    {"d12_100k_dup unique", 12, 20001, 100001, 3856, 2457, 793, true},
    {"d12_100k_dup duplicate", 12, 80000, 80000, 2998, 478, 52, false},
    // Seeds 777/778: part of the duplicates reached the unique ZAP before moving (1401 leaves,
    // between 1060 for none and 1507 for all); the default peak (all) is used.
    {"d12s_30k unique", 12, 30001, 40001, 1401, 596, 138, false},
    {"d12s_30k duplicate", 12, 10000, 10000, 372, 476, 153, true},
    {"d9s_30k unique", 9, 30001, 40001, 1402, 296, 138, false},
    {"d9s_30k duplicate", 9, 10000, 10000, 373, 267, 153, true},
    {"d12_200k unique", 12, 150001, 200001, 7840, 665, 214, true},
    {"d12_200k duplicate", 12, 50000, 50000, 1962, 500, 83, false},
};

TEST(CalibrationV23Test, DdtEntriesTakeFourChunks) {
  // zdb -dddd: "Entries with n chunks: 3" (key + value chunks) for every entry measured.
  EXPECT_EQ(DdtEntryChunks(DdtFormat::kLegacy, 1, 4096, 1), 4);
  EXPECT_EQ(DdtEntryChunks(DdtFormat::kLegacy, 1, 8192, 2), 4);
  EXPECT_EQ(ZapLeafChunks(12), 158);
  EXPECT_EQ(ZapLeafChunks(15), 1278);
}

TEST(CalibrationV23Test, DdtLeafCountWithin5Percent) {
  for (const DdtPoint& p : kDdtPoints) {
    SCOPED_TRACE(p.run);
    const double leaves = static_cast<double>(ExpectedZapLeaves(p.peak_entries, 4, 158));
    // The d*s_30k unique tables had a smaller, unknown peak: +7.6 % there, <= 2.5 % elsewhere.
    EXPECT_LT(RelErr(leaves, static_cast<double>(p.real_leaves)), 0.08) << leaves;
  }
}

TEST(CalibrationV23Test, DdtPerEntryFiguresWithin10Percent) {
  for (const DdtPoint& p : kDdtPoints) {
    SCOPED_TRACE(p.run);
    const AllocationModel alloc = AllocationModel::For(VdevLayout{}, p.ashift);
    const DdtObjectModel m = ModelDdtObject(p.entries, p.peak_entries, 4, 12, false, alloc);
    EXPECT_LT(RelErr(double(m.on_disk_per_entry), double(p.real_on_disk)), 0.10)
        << m.on_disk_per_entry;
    // v23's zdb takes the fill count of the dnode's first block pointer only, which was below
    // the number of L0 blocks where fill_count_fresh is false; the model reproduces both.
    EXPECT_LT(RelErr(double(m.in_core_per_entry), double(p.real_in_core)), 0.10)
        << m.in_core_per_entry;
  }
}

// DDT objects of the accuracy suite (docs/accuracy.md: samples written one file at a time into
// zfs-fuse pools, zdb -DD), small and mid-size tables. The unique tables held no more than
// their final entries (peak = entries).
struct SuiteDdtPoint {
  const char* run;
  int ashift;
  uint64_t entries;
  uint64_t real_on_disk;
  uint64_t real_in_core;
};
constexpr SuiteDdtPoint kSuiteDdtPoints[] = {
    {"source 128k lzjb dup (1 entry)", 12, 1, 24576, 4096},
    {"source 8k off a9 dup (1 entry)", 9, 1, 4608, 4096},
    {"tiny 128k off dup", 12, 14, 1755, 292},
    {"tiny 128k lzjb dup", 12, 13, 1890, 315},
    {"tiny 128k unique", 12, 56, 658, 73},
    {"vmstore 128k off dup", 12, 20, 1228, 204},
    {"vmstore 128k gzip-6 a9 dup", 9, 19, 404, 215},
    {"tiny 8k lzjb a9 unique", 9, 260, 283, 157},
    {"tiny 8k lzjb a9 dup", 9, 178, 302, 184},
    {"database 16k gzip-6 a9 dup", 9, 541, 275, 143},
    {"vmstore 128k off unique", 12, 2230, 429, 58},
    {"fileserver 128k off unique", 12, 2720, 510, 162},
    {"database 16k gzip-6 a9 unique", 9, 3338, 280, 158},
    {"fileserver 16k zle unique", 12, 4111, 442, 141},
    {"fileserver 16k zle dup", 12, 740, 531, 171},
    {"fileserver 16k gzip-1 a9 unique", 9, 4111, 278, 145},
    {"source 128k lzjb unique", 12, 4584, 436, 140},
    {"database 8k off unique", 12, 6352, 516, 165},
    {"source 8k off a9 unique", 9, 9937, 276, 154},
    {"vmstore 16k lzjb unique", 12, 12319, 508, 163},
    {"vmstore 8k gzip-1 a9 unique", 9, 14811, 288, 149},
    {"vmstore 8k gzip-1 a9 dup", 9, 9708, 295, 156},
};

TEST(CalibrationV23Test, SuiteDdtPerEntryFiguresWithin10Percent) {
  for (const SuiteDdtPoint& p : kSuiteDdtPoints) {
    SCOPED_TRACE(p.run);
    const AllocationModel alloc = AllocationModel::For(VdevLayout{}, p.ashift);
    const DdtObjectModel m = ModelDdtObject(p.entries, p.entries, 4, 12, false, alloc);
    EXPECT_LT(RelErr(double(m.on_disk_per_entry), double(p.real_on_disk)), 0.10)
        << m.on_disk_per_entry;
    EXPECT_LT(RelErr(double(m.in_core_per_entry), double(p.real_in_core)), 0.10)
        << m.in_core_per_entry;
  }
}

TEST(CalibrationV23Test, SmallDdtZapHasNoIndirectAndZdbCountsOnlyItsHeader) {
  // One entry: header + one leaf, both held by the dnode (3 block pointers), 3 MOS copies of
  // one 4K sector each at ashift 12; zdb's %full was 50.00 (fill 1 of 2 blocks).
  const AllocationModel alloc = AllocationModel::For(VdevLayout{}, 12);
  const DdtObjectModel one = ModelDdtObject(1, 1, 4, 12, false, alloc);
  EXPECT_EQ(one.l0_blocks, 2u);
  EXPECT_EQ(one.indirect_blocks, 0u);
  EXPECT_EQ(one.mspace_bytes, 4096u);
  EXPECT_EQ(one.dspace_bytes, 2u * 3 * 4096);
  // Later zdb versions sum the fill of every block pointer: both blocks.
  EXPECT_EQ(ModelDdtObject(1, 1, 4, 12, true, alloc).mspace_bytes, 2u * 4096);
}

TEST(CalibrationV23Test, FootprintTotalsAddBothClasses) {
  DdtFootprintInput in;
  in.unique_entries = 10001;
  in.duplicate_entries = 3000;
  in.profile = Profile::kV23;
  in.typical_block_asize = 4096;
  const DdtFootprintModel m = ModelDdtFootprint(in);
  EXPECT_EQ(m.totals.in_core_bytes, m.unique.mspace_bytes + m.duplicate.mspace_bytes);
  EXPECT_EQ(m.totals.leaf_bytes, 4096u);
  EXPECT_EQ(m.totals.rule_of_thumb_320, 320u * 13001);
  EXPECT_EQ(m.totals.l2arc_header_bytes, (m.unique.l0_blocks + m.duplicate.l0_blocks) * 180);
  EXPECT_EQ(m.totals.log_bytes, 0u);
  in.profile = Profile::kZfs24;
  in.format = DdtFormat::kFast;
  in.ram_bytes = uint64_t{16} << 30;
  const DdtFootprintModel f = ModelDdtFootprint(in);
  EXPECT_EQ(f.totals.leaf_bytes, 32768u);
  // 144 B per entry (DDT_LOG_ENTRY_FLAT_SIZE; measured on OpenZFS 2.3.2), below 1 % of 16 GiB.
  EXPECT_EQ(f.totals.log_bytes, 13001u * 144);
  // 32K leaves of 7-chunk fast-dedup entries (182 per leaf): OpenZFS 2.3.2 measured 211-239 B
  // per entry in core on tables of 2500-5100 entries (tests/accuracy/openzfs23), 327 right after
  // a doubling of the table.
  EXPECT_GT(f.totals.in_core_per_entry, 180u);
  EXPECT_LT(f.totals.in_core_per_entry, 340u);
}

// File indirect blocks of the accuracy suite's trees: per file with more than one block, its
// block count (from zdb -dddd) -> number of such files; zdb -bbb's "L1 ZFS plain file" PSIZE
// (rounded to 3 digits by zdb).
struct IndirectPoint {
  const char* run;
  std::vector<std::pair<uint64_t, uint64_t>> files;  // blocks -> files
  uint64_t real_l1_psize;
};

uint64_t ModelL1Psize(const std::vector<std::pair<uint64_t, uint64_t>>& files) {
  uint64_t total = 0;
  for (const auto& [blocks, count] : files) {
    for (uint64_t left = blocks; left > 0;) {
      const uint64_t bps = std::min<uint64_t>(left, 128);
      total += count * IndirectBlockPsize(Profile::kV23, bps, 1);
      left -= bps;
    }
  }
  return total;
}

TEST(CalibrationV23Test, FileIndirectBlocksOfSuiteTreesWithin1Percent) {
  // 16K L1 blocks holding 2..6 block pointers are 1024 bytes each: lzjb spends ~530 B on the
  // 16K of zeros (source 128K: 59 L1s, "59.0K").
  for (uint64_t bps = 2; bps <= 6; ++bps)
    EXPECT_EQ(IndirectBlockPsize(Profile::kV23, bps, 1), 1024u);
  const std::vector<IndirectPoint> points = {
      {"source 128k lzjb", {{2, 44}, {3, 11}, {4, 3}, {6, 1}}, 60416},
      {"source 8k off a9",
       {{2, 569}, {3, 291}, {4, 148}, {5, 104}, {6, 57}, {7, 36}, {8, 40}, {9, 35}, {10, 19},
        {11, 13}, {12, 11}, {13, 10}, {14, 5},  {15, 8}, {16, 5}, {17, 7}, {18, 4}, {19, 4},
        {20, 2},  {21, 6},  {22, 4},  {23, 3},  {24, 3}, {26, 4}, {27, 6}, {30, 1}, {33, 2},
        {34, 1},  {36, 3},  {37, 1},  {42, 3},  {45, 1}, {50, 1}, {57, 1}, {60, 1}, {85, 1}},
       1520435},  // 1.45M
      {"database 16k gzip-6 a9",
       {{1, 1},
        {2, 198},
        {3, 44},
        {4, 13},
        {5, 4},
        {6, 8},
        {7, 20},
        {8, 8},
        {10, 6},
        {14, 4},
        {16, 4},
        {22, 4},
        {28, 3},
        {29, 1},
        {32, 4},
        {48, 4},
        {276, 1},
        {787, 1},
        {1638, 1}},
       486400},  // 475K
      {"database 8k gzip-9 a12",
       {{1, 1},  {2, 199}, {3, 176}, {4, 22}, {5, 28}, {6, 16},  {7, 4},    {8, 9},
        {10, 4}, {11, 8},  {14, 20}, {15, 8}, {19, 4}, {20, 2},  {28, 4},   {31, 4},
        {44, 4}, {56, 3},  {57, 1},  {64, 4}, {96, 4}, {550, 1}, {1574, 1}, {3277, 1}},
       867328},  // 847K
  };
  for (const IndirectPoint& p : points) {
    SCOPED_TRACE(p.run);
    const double model = static_cast<double>(ModelL1Psize(p.files));
    EXPECT_LT(RelErr(model, static_cast<double>(p.real_l1_psize)), 0.01) << model;
  }
  // database 8k: the three L2 blocks (over 5, 13 and 26 L1s of 2 DVAs each): "4.50K".
  EXPECT_EQ(IndirectBlockPsize(Profile::kV23, 5, 2) + IndirectBlockPsize(Profile::kV23, 13, 2) +
                IndirectBlockPsize(Profile::kV23, 26, 2),
            4608u);
}

// Datasets measured with zfs get -Hp used and zdb -b ("SPA allocated" = zpool ALLOC).
struct TreePoint {
  const char* run;
  int ashift;
  uint64_t data_dsize;  // data blocks, known from the generator
  uint64_t real_used;
  uint64_t real_pool_alloc;
};

TEST(CalibrationV23Test, TinyFilesUsedAndPoolAlloc) {
  // m1: 5000 files of 1500 bytes (1536-byte blocks), 20 directories of 250, compression off.
  MetadataContext ctx{Profile::kV23, VdevLayout{}, 12, 1};
  MetadataTally t(ctx);
  for (int i = 0; i < 5000; ++i) t.AddFile(1, 1);
  for (int d = 0; d < 20; ++d) t.AddDirectory(250, 250 * 16, 16);
  t.AddDirectory(20, 20 * 6, 6);
  const uint64_t data = 5000 * 4096;
  const double used = static_cast<double>(data + t.DatasetMetadataDsize());
  EXPECT_LT(RelErr(used, 22061056), 0.01) << used;
  const double alloc = static_cast<double>(PoolAllocated(ctx, data, t.DatasetMetadataAsize(), 0));
  EXPECT_LT(RelErr(alloc, 22601728), 0.02) << alloc;
}

TEST(CalibrationV23Test, TinyFilesInLargeDirectoriesUsedAndPoolAlloc) {
  // m6: 20000 files of 700 bytes, 10 directories of 2000 (micro-ZAPs of 128512 bytes).
  // Model error: +0.47 % used, +0.42 % ALLOC (sequential names compress better than modelled).
  MetadataContext ctx{Profile::kV23, VdevLayout{}, 12, 1};
  MetadataTally t(ctx);
  for (int i = 0; i < 20000; ++i) t.AddFile(1, 1);
  for (int d = 0; d < 10; ++d) t.AddDirectory(2000, 2000 * 16, 16);
  t.AddDirectory(10, 60, 6);
  const uint64_t data = 20000ull * 4096;
  const double used = static_cast<double>(data + t.DatasetMetadataDsize());
  EXPECT_LT(RelErr(used, 87474176), 0.01) << used;
  const double alloc = static_cast<double>(PoolAllocated(ctx, data, t.DatasetMetadataAsize(), 0));
  EXPECT_LT(RelErr(alloc, 88113152), 0.02) << alloc;
}

TEST(CalibrationV23Test, LargeFilesUsedAndPoolAlloc) {
  // m3: 4 files of 48 MiB at recordsize 128K, compression off, ashift 12.
  MetadataContext ctx{Profile::kV23, VdevLayout{}, 12, 1};
  MetadataTally t(ctx);
  for (int i = 0; i < 4; ++i) t.AddFile(384, 384);
  t.AddDirectory(4, 24, 6);
  const uint64_t data = 1536ull * 131072;
  EXPECT_EQ(t.DatasetMetadataDsize(), 344064u);  // measured: used - data = 344064 exactly
  const double alloc = static_cast<double>(PoolAllocated(ctx, data, t.DatasetMetadataAsize(), 0));
  EXPECT_LT(RelErr(alloc, 202358784), 0.02) << alloc;
}

TEST(CalibrationV23Test, TinyCompressedFilesAshift9) {
  // m2: as m1 with lzjb and half-random files: each 1536-byte block stored in 1024 bytes.
  MetadataContext ctx{Profile::kV23, VdevLayout{}, 9, 1};
  MetadataTally t(ctx);
  for (int i = 0; i < 5000; ++i) t.AddFile(1, 1);
  for (int d = 0; d < 20; ++d) t.AddDirectory(250, 250 * 16, 16);
  t.AddDirectory(20, 20 * 6, 6);
  const uint64_t data = 5000 * 1024;
  const double used = static_cast<double>(data + t.DatasetMetadataDsize());
  // The worst point: 5000 equal-sized files with sequential names compress their dnodes and
  // directories better than the real trees the constants are fitted on (the accuracy suite's),
  // and at ashift 9 every saved 512 bytes shows. Measured error of the model: +4.3 %.
  EXPECT_LT(RelErr(used, 6182912), 0.05) << used;
}

TEST(CalibrationV23Test, DedupedFilesUsedAndPoolAlloc) {
  // d12_10k: file a = 13000 4K blocks, file b = 3000 of them again, zz_settle one 4K block.
  MetadataContext ctx{Profile::kV23, VdevLayout{}, 12, 1};
  MetadataTally t(ctx);
  t.AddFile(13000, 13000);
  t.AddFile(3000, 3000);
  t.AddFile(1, 1);
  t.AddDirectory(3, 10, 8);
  const uint64_t referenced = 16001ull * 4096, unique = 13001ull * 4096;
  const double used = static_cast<double>(referenced + t.DatasetMetadataDsize());
  EXPECT_LT(RelErr(used, 67727360), 0.01) << used;
  DdtFootprintInput in;
  in.unique_entries = 10001;
  in.duplicate_entries = 3000;
  in.unique_peak_entries = 13001;  // file b was written after file a's txg had synced
  in.profile = Profile::kV23;
  in.typical_block_asize = 4096;
  const DdtFootprintModel ddt = ModelDdtFootprint(in);
  const uint64_t ddt_asize = ddt.unique.asize_bytes + ddt.duplicate.asize_bytes;
  const double alloc =
      static_cast<double>(PoolAllocated(ctx, unique, t.DatasetMetadataAsize(), ddt_asize));
  EXPECT_LT(RelErr(alloc, 64139264), 0.02) << alloc;
}

TEST(CalibrationV23Test, CopiesTwoEntriesTakeFiveChunks) {
  // d12c2_10k (copies=2): zdb -dddd counted 9844 entries of 4+1 chunks and 157 of 3+1.
  EXPECT_EQ(DdtEntryChunks(DdtFormat::kLegacy, 2, 4096, 1), 5);
  const AllocationModel alloc = AllocationModel::For(VdevLayout{}, 12);
  const DdtObjectModel dup = ModelDdtObject(3000, 3000, 5, 12, false, alloc);
  EXPECT_LT(RelErr(double(dup.on_disk_per_entry), 577), 0.05) << dup.on_disk_per_entry;
  EXPECT_LT(RelErr(double(dup.in_core_per_entry), 184), 0.05) << dup.in_core_per_entry;
}

// Trees shaped like real data (random names of 5..36 bytes, 300 directories, log-normal file
// sizes), compression off so the data's size is exact; metadata is compressed as always.
struct TreeShapePoint {
  const char* run;
  int ashift;
  int copies;
  int tree_copies;  // r12_dd: the tree written twice with dedup=on
  uint64_t data_asize;
  uint64_t real_used;
  uint64_t real_pool_alloc;
  std::vector<std::pair<uint64_t, uint64_t>> slots;  // block slots -> number of files
  std::vector<std::array<uint64_t, 3>> dirs;         // entries, name bytes, longest name
};
const std::vector<TreeShapePoint>& TreePoints() {
  static const auto* points = new std::vector<TreeShapePoint>{
#include "tests/zfs/calibration_v23_trees.inc"
  };
  return *points;
}

TEST(CalibrationV23Test, RealisticTreesUsedWithin1PercentAllocWithin2Percent) {
  for (const TreeShapePoint& p : TreePoints()) {
    SCOPED_TRACE(p.run);
    MetadataContext ctx{Profile::kV23, VdevLayout{}, p.ashift, p.copies};
    MetadataTally t(ctx);
    uint64_t blocks = 0;
    for (int c = 0; c < p.tree_copies; ++c) {
      for (const auto& [slots, files] : p.slots) {
        for (uint64_t i = 0; i < files; ++i) t.AddFile(slots, slots);
        if (c == 0) blocks += slots * files;
      }
      for (const auto& d : p.dirs) t.AddDirectory(d[0], d[1], d[2]);
    }
    uint64_t used = p.data_asize * p.copies * p.tree_copies;
    uint64_t ddt_asize = 0;
    if (p.tree_copies == 2) {  // r12_dd: zz_settle, one more 4K file, and its DDT entry
      t.AddFile(1, 1);
      used += 4096;
      DdtFootprintInput in;
      in.unique_entries = 1;
      in.duplicate_entries = blocks;
      in.unique_peak_entries = 1;  // the unique ZAP emptied (destroyed), then held zz_settle
      in.profile = Profile::kV23;
      const DdtFootprintModel f = ModelDdtFootprint(in);
      ddt_asize = f.unique.asize_bytes + f.duplicate.asize_bytes;
    }
    used += t.DatasetMetadataDsize();
    EXPECT_LT(RelErr(double(used), double(p.real_used)), 0.01) << used;
    const uint64_t unique_data = p.data_asize * p.copies + (p.tree_copies == 2 ? 4096 : 0);
    const uint64_t alloc = PoolAllocated(ctx, unique_data, t.DatasetMetadataAsize(), ddt_asize);
    EXPECT_LT(RelErr(double(alloc), double(p.real_pool_alloc)), 0.02) << alloc;
  }
}

}  // namespace
}  // namespace zsim::zfs
