#include "engine/zfs/ddt_stats.h"

#include <gtest/gtest.h>

namespace zsim::zfs {
namespace {

TEST(DdtStatsTest, BucketsArePowersOfTwo) {
  EXPECT_EQ(DdtBucket(1), 0);
  EXPECT_EQ(DdtBucket(2), 1);
  EXPECT_EQ(DdtBucket(3), 1);
  EXPECT_EQ(DdtBucket(4), 2);
  EXPECT_EQ(DdtBucket(1023), 9);
  EXPECT_EQ(DdtBucket(1024), 10);
}

TEST(DdtStatsTest, HistogramRowsAndTotals) {
  DdtStatsBuilder b;
  b.AddEntries(1000, 1, 8192, 8192, 8192);
  b.AddEntries(200, 2, 8192, 8192, 8192);
  b.AddEntry(3, 131072, 65536, 65536);
  b.AddEntry(5, 131072, 65536, 65536);
  const DedupResult r = b.Result();
  ASSERT_EQ(r.histogram.size(), 3u);
  EXPECT_EQ(r.histogram[0].refcnt, 1u);
  EXPECT_EQ(r.histogram[1].refcnt, 2u);
  EXPECT_EQ(r.histogram[1].allocated.blocks, 201u);  // refcounts 2 and 3
  EXPECT_EQ(r.histogram[1].referenced.blocks, 403u);
  EXPECT_EQ(r.histogram[1].referenced.psize, 400u * 8192 + 3u * 65536);
  EXPECT_EQ(r.histogram[2].refcnt, 4u);  // refcount 5 lands in bucket 4
  EXPECT_EQ(r.histogram[2].referenced.lsize, 5u * 131072);
  EXPECT_EQ(r.total.allocated.blocks, 1202u);
  EXPECT_EQ(r.total.referenced.blocks, 1408u);
  EXPECT_EQ(r.unique_entries, 1000u);
  EXPECT_EQ(r.duplicate_entries, 202u);
}

TEST(DdtStatsTest, RatiosAsZdbAndZpoolPrintThem) {
  DdtStatsBuilder b;
  b.AddEntries(1000, 1, 8192, 8192, 8192);
  b.AddEntries(200, 2, 8192, 8192, 8192);
  const DedupResult r = b.Result();
  EXPECT_DOUBLE_EQ(r.ratio, 1.16);  // 1400/1200 = 1.1666 -> 116 % (zpool list said 1.16x)
  EXPECT_NEAR(r.zdb_dedup, 1400.0 / 1200.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.zdb_compress, 1.0);
  EXPECT_DOUBLE_EQ(r.zdb_copies, 1.0);
  EXPECT_NEAR(r.zdb_total, 1400.0 / 1200.0, 1e-12);
}

TEST(DdtStatsTest, CompressAndCopiesComeFromReferencedSizes) {
  DdtStatsBuilder b;
  // 128K blocks compressed to 64K, copies=2 on disks: dsize = 2 x 64K.
  b.AddEntries(10, 3, 131072, 65536, 131072);
  const DedupResult r = b.Result();
  EXPECT_DOUBLE_EQ(r.zdb_dedup, 3.0);
  EXPECT_DOUBLE_EQ(r.zdb_compress, 2.0);
  EXPECT_DOUBLE_EQ(r.zdb_copies, 2.0);
  EXPECT_DOUBLE_EQ(r.zdb_total, 3.0);
  EXPECT_DOUBLE_EQ(r.ratio, 3.0);
}

TEST(DdtStatsTest, MergeEqualsOneBuilderInAnyOrder) {
  DdtStatsBuilder whole, a, b;
  for (uint64_t i = 1; i <= 300; ++i) {
    const uint64_t ref = i % 7 + 1, lsize = 512 * (i % 5 + 1);
    whole.AddEntry(ref, lsize, lsize, lsize * 2);
    (i % 2 ? a : b).AddEntry(ref, lsize, lsize, lsize * 2);
  }
  DdtStatsBuilder ab = a, ba = b;
  ab.Merge(b);
  ba.Merge(a);
  EXPECT_EQ(ab.Result().histogram, whole.Result().histogram);
  EXPECT_EQ(ba.Result().total, whole.Result().total);
  EXPECT_EQ(ba.unique_entries() + ba.duplicate_entries(), 300u);
}

TEST(DdtStatsTest, AddBucketAndScaleMatchEntryByEntry) {
  DdtStatsBuilder by_entry;
  by_entry.AddEntries(10, 3, 4096, 2048, 4096);
  by_entry.AddEntries(5, 1, 8192, 8192, 8192);
  DdtStatsBuilder by_bucket;
  by_bucket.AddBucket(1, 10, DdtStat{10, 40960, 20480, 40960}, DdtStat{30, 122880, 61440, 122880});
  by_bucket.AddBucket(0, 5, DdtStat{5, 40960, 40960, 40960}, DdtStat{5, 40960, 40960, 40960});
  EXPECT_EQ(by_bucket.Result().histogram, by_entry.Result().histogram);
  EXPECT_EQ(by_bucket.unique_entries(), 5u);
  EXPECT_EQ(by_bucket.duplicate_entries(), 10u);
  DdtStatsBuilder scaled = by_entry;
  scaled.Scale(4);
  DdtStatsBuilder four;
  four.AddEntries(40, 3, 4096, 2048, 4096);
  four.AddEntries(20, 1, 8192, 8192, 8192);
  EXPECT_EQ(scaled.Result().histogram, four.Result().histogram);
  EXPECT_EQ(scaled.duplicate_entries(), 40u);
  EXPECT_DOUBLE_EQ(scaled.Result().ratio, by_entry.Result().ratio);
}

TEST(DdtStatsTest, EmptyTableHasNeutralRatios) {
  const DedupResult r = DdtStatsBuilder().Result();
  EXPECT_TRUE(r.histogram.empty());
  EXPECT_DOUBLE_EQ(r.ratio, 1.0);
  EXPECT_DOUBLE_EQ(r.zdb_total, 1.0);
}

TEST(DdtStatsTest, RatioPercentFloorTruncates) {
  EXPECT_DOUBLE_EQ(RatioPercentFloor(1999, 1000), 1.99);
  EXPECT_DOUBLE_EQ(RatioPercentFloor(0, 0), 1.0);
  // No overflow for pool-sized figures.
  EXPECT_DOUBLE_EQ(RatioPercentFloor(uint64_t{3} << 60, uint64_t{1} << 60), 3.0);
}

}  // namespace
}  // namespace zsim::zfs
