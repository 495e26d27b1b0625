// Allocation rules against the worked examples of docs/zfs_model.md §4.

#include "engine/zfs/allocation.h"

#include <gtest/gtest.h>

#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"

namespace zsim::zfs {
namespace {

VdevLayout Raidz(int p, int c) { return VdevLayout{VdevKind::kRaidz, p, c, 0}; }
VdevLayout Draid(int p, int d, int c) { return VdevLayout{VdevKind::kDraid, p, c, d}; }

TEST(AllocationTest, DiskAndMirrorRoundUpToTheSector) {
  EXPECT_EQ(AllocatedSize(1, VdevLayout{}, 12), 4096u);
  EXPECT_EQ(AllocatedSize(4097, VdevLayout{}, 12), 8192u);
  EXPECT_EQ(AllocatedSize(1536, VdevLayout{}, 9), 1536u);
  EXPECT_EQ(AllocatedSize(0, VdevLayout{}, 12), 0u);
  EXPECT_EQ(AllocatedSize(5000, VdevLayout{VdevKind::kMirror, 0, 3, 0}, 12), 8192u);
  EXPECT_EQ(DeflateRatio(VdevLayout{VdevKind::kMirror, 0, 2, 0}, 12), 512u);
}

TEST(AllocationTest, RaidzWorkedExamples) {
  EXPECT_EQ(AllocatedSize(128 << 10, Raidz(1, 5), 12), 160u << 10);
  EXPECT_EQ(AllocatedSize(8 << 10, Raidz(1, 3), 12), 16u << 10);
  EXPECT_EQ(AllocatedSize(4 << 10, Raidz(2, 6), 12), 12u << 10);
  EXPECT_EQ(AllocatedSize(4 << 10, Raidz(1, 5), 12), 8u << 10);
}

TEST(AllocationTest, RaidzDeflateRatioAndDsize) {
  EXPECT_EQ(DeflateRatio(Raidz(1, 5), 12), 409u);
  const AllocationModel m = AllocationModel::For(Raidz(1, 5), 12);
  EXPECT_EQ(m.Dsize(128 << 10), 130880u);
  EXPECT_EQ(m.Dsize(4 << 10), 6544u);
  EXPECT_EQ(DeflatedSize(8192, 512), 8192u);
}

TEST(AllocationTest, DraidAllocatesWholeRowsOfTheGroup) {
  // draid1 with 4 data: a 4K block takes one row of 4 data + 1 parity sectors.
  EXPECT_EQ(AllocatedSize(4 << 10, Draid(1, 4, 5), 12), 20u << 10);
  // 128K = 32 sectors = 8 rows of 5.
  EXPECT_EQ(AllocatedSize(128 << 10, Draid(1, 4, 5), 12), 160u << 10);
  EXPECT_EQ(AllocatedSize(20 << 10, Draid(2, 8, 11), 12), 40u << 10);  // 5 sectors -> 1 row of 10
  EXPECT_EQ(DeflateRatio(Draid(1, 4, 5), 12), 409u);
}

TEST(AllocationTest, CopiesAddOneDvaEach) {
  const AllocationModel m = AllocationModel::For(Raidz(1, 5), 12);
  EXPECT_EQ(m.Block(128 << 10, 2), (BlockSpace{2 * (160u << 10), 2 * 130880u}));
  EXPECT_EQ(m.Block(0, 3), (BlockSpace{0, 0}));
  EXPECT_EQ(MetadataCopies(1), 2);
  EXPECT_EQ(MetadataCopies(2), 3);
  EXPECT_EQ(MetadataCopies(3), 3);
}

TEST(AllocationTest, GeometryForUsesDraidDataWidth) {
  EXPECT_EQ(GeometryFor(VdevLayout{}, 9).min_alloc, 512u);
  EXPECT_EQ(GeometryFor(Raidz(2, 6), 12).min_alloc, 4096u);
  const PoolGeometry g = GeometryFor(Draid(1, 4, 5), 12);
  EXPECT_EQ(g.min_alloc, 16384u);
  EXPECT_EQ(g.gcd_alloc, 16384u);
  EXPECT_EQ(g.ashift, 12);
}

TEST(AllocationTest, PropertiesHoldOverLayouts) {
  const VdevLayout layouts[] = {VdevLayout{}, Raidz(1, 3), Raidz(2, 7), Raidz(3, 12),
                                Draid(2, 8, 20)};
  for (const VdevLayout& v : layouts) {
    for (int ashift : {9, 12, 13}) {
      for (uint64_t psize = 512; psize <= (1u << 20); psize = psize * 3 / 2 + 512) {
        SCOPED_TRACE(VdevName(v) + " ashift " + std::to_string(ashift) + " psize " +
                     std::to_string(psize));
        const uint64_t a = AllocatedSize(psize, v, ashift);
        EXPECT_GE(a, psize);
        EXPECT_EQ(a % (uint64_t{1} << ashift), 0u);
      }
    }
  }
}

TEST(AllocationTest, ValidationNamesTheRightValues) {
  EXPECT_TRUE(ValidateAshift(12).ok());
  EXPECT_FALSE(ValidateAshift(8).ok());
  EXPECT_FALSE(ValidateAshift(17).ok());
  EXPECT_TRUE(ValidateCopies(3).ok());
  EXPECT_FALSE(ValidateCopies(0).ok());
  EXPECT_NE(ValidateCopies(4).message().find("1, 2 or 3"), std::string::npos);
  EXPECT_FALSE(ValidateVdev(Raidz(4, 8)).ok());
  EXPECT_FALSE(ValidateVdev(Raidz(2, 2)).ok());
  EXPECT_FALSE(ValidateVdev(Draid(1, 4, 4)).ok());
  EXPECT_FALSE(ValidateVdev(VdevLayout{VdevKind::kMirror, 0, 1, 0}).ok());
  // Every refusal lists the accepted forms, zpool's dRAID spelling (with spares) among them.
  EXPECT_NE(ValidateVdev(Raidz(4, 8)).message().find("draidP:Dd:Cc:Ss"), std::string::npos);
}

TEST(VdevNamesTest, ParsesEveryFormAndRoundTrips) {
  for (const char* text : {"disk", "mirror:2", "raidz1:5", "raidz3:12", "draid2:8:11"}) {
    Result<VdevLayout> v = ParseVdev(text);
    ASSERT_TRUE(v.ok()) << text << ": " << v.status().ToString();
    EXPECT_EQ(VdevName(*v), text);
  }
  Result<VdevLayout> plain = ParseVdev("raidz:4");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->parity, 1);
  EXPECT_EQ(plain->children, 4);
  EXPECT_EQ(ParseVdev("draid:4:5")->data, 4);
}

// zpool create's dRAID spelling: fields tagged d (data), c (children), s (distributed spares);
// data defaults to 8 within the disks left beside parity and spares.
TEST(VdevNamesTest, ParsesZpoolDraidSpelling) {
  Result<VdevLayout> v = ParseVdev("draid2:4d:11c:1s");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->kind, VdevKind::kDraid);
  EXPECT_EQ(v->parity, 2);
  EXPECT_EQ(v->data, 4);
  EXPECT_EQ(v->children, 11);
  EXPECT_EQ(VdevName(*v), "draid2:4:11");
  // Same allocation as the short form.
  EXPECT_EQ(AllocatedSize(20000, *v, 12), AllocatedSize(20000, *ParseVdev("draid2:4:11"), 12));
  Result<VdevLayout> defaults = ParseVdev("draid1:20c:2s");
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->data, 8);
  EXPECT_EQ(ParseVdev("draid3:7c")->data, 4);  // 7 - 3 parity: fewer than 8
  for (const char* bad : {"draid2:4d:1s", "draid2:4d:6c:1s", "draid2:4x:11c", "draid2:4d:5c:5s"}) {
    Result<VdevLayout> r = ParseVdev(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("draidP:Dd:Cc:Ss"), std::string::npos)
        << r.status().message();
  }
}

TEST(VdevNamesTest, RefusesBadFormsWithTheAcceptedOnes) {
  for (const char* text : {"", "raid5", "mirror", "mirror:x", "raidz4:8", "raidz2:2", "raidz1",
                           "draid1:4", "draid1:4:4", "disk:2"}) {
    Result<VdevLayout> v = ParseVdev(text);
    ASSERT_FALSE(v.ok()) << text;
    EXPECT_NE(v.status().message().find("raidzP:C"), std::string::npos) << v.status().message();
  }
}

}  // namespace
}  // namespace zsim::zfs
