// zdb -DD text against real output of zfs-fuse 0.7.0 (pool v23) captured on the calibration
// pools of docs/space_model.md.

#include "engine/zfs/zdb_text.h"

#include <gtest/gtest.h>

#include "engine/zfs/ddt_stats.h"

namespace zsim::zfs {
namespace {

// zdb -DD of pool d12_1k: 1001 unique 4K blocks, 300 4K blocks referenced twice, ashift 12.
constexpr const char* kRealD12_1k =
    "DDT-sha256-zap-duplicate: 300 entries, size 532 on disk, 163 in core\n"
    "DDT-sha256-zap-unique: 1001 entries, size 441 on disk, 130 in core\n"
    "\n"
    "DDT histogram (aggregated over all DDTs):\n"
    "\n"
    "bucket              allocated                       referenced          \n"
    "______   ______________________________   ______________________________\n"
    "refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n"
    "------   ------   -----   -----   -----   ------   -----   -----   -----\n"
    "     1     1001   3.91M   3.91M   3.91M     1001   3.91M   3.91M   3.91M\n"
    "     2      300   1.17M   1.17M   1.17M      600   2.34M   2.34M   2.34M\n"
    " Total    1.27K   5.08M   5.08M   5.08M    1.56K   6.25M   6.25M   6.25M\n"
    "\n"
    "dedup = 1.23, compress = 1.00, copies = 1.00, dedup * compress / copies = 1.23\n"
    "\n";

// zdb -DD of pool t1: 1000 unique 8K blocks, 200 referenced twice.
constexpr const char* kRealT1 =
    "DDT-sha256-zap-duplicate: 200 entries, size 614 on disk, 184 in core\n"
    "DDT-sha256-zap-unique: 1000 entries, size 479 on disk, 131 in core\n"
    "\n"
    "DDT histogram (aggregated over all DDTs):\n"
    "\n"
    "bucket              allocated                       referenced          \n"
    "______   ______________________________   ______________________________\n"
    "refcnt   blocks   LSIZE   PSIZE   DSIZE   blocks   LSIZE   PSIZE   DSIZE\n"
    "------   ------   -----   -----   -----   ------   -----   -----   -----\n"
    "     1     1000   7.81M   7.81M   7.81M     1000   7.81M   7.81M   7.81M\n"
    "     2      200   1.56M   1.56M   1.56M      400   3.12M   3.12M   3.12M\n"
    " Total    1.17K   9.38M   9.38M   9.38M    1.37K   10.9M   10.9M   10.9M\n"
    "\n"
    "dedup = 1.17, compress = 1.00, copies = 1.00, dedup * compress / copies = 1.17\n"
    "\n";

TEST(ZdbTextTest, ReproducesRealZdbOutputByteForByte) {
  {
    DdtStatsBuilder b;
    b.AddEntries(1001, 1, 4096, 4096, 4096);
    b.AddEntries(300, 2, 4096, 4096, 4096);
    const std::vector<ZdbDdtObject> objects = {
        {DdtObjectName("sha256", true), 300, 13 * 12288, 12 * 4096},
        {DdtObjectName("sha256", false), 1001, 36 * 12288, 32 * 4096}};
    EXPECT_EQ(ZdbDedupText(b.Result(), objects, Profile::kV23), kRealD12_1k);
  }
  {
    DdtStatsBuilder b;
    b.AddEntries(1000, 1, 8192, 8192, 8192);
    b.AddEntries(200, 2, 8192, 8192, 8192);
    const std::vector<ZdbDdtObject> objects = {
        {"DDT-sha256-zap-duplicate", 200, 10 * 12288, 9 * 4096},
        {"DDT-sha256-zap-unique", 1000, 39 * 12288, 32 * 4096}};
    EXPECT_EQ(ZdbDedupText(b.Result(), objects, Profile::kV23), kRealT1);
  }
}

TEST(ZdbTextTest, NewerProfilesPrintBytesWithB) {
  DdtStatsBuilder b;
  b.AddEntries(1, 1, 512, 512, 4096);
  const DedupResult r = b.Result();
  const std::string table = ZdbHistogramTable(r.histogram, r.total, Profile::kZfs22);
  EXPECT_NE(
      table.find("     1        1    512B    512B      4K        1    512B    512B      4K\n"),
      std::string::npos)
      << table;
  EXPECT_NE(ZdbHistogramTable(r.histogram, r.total, Profile::kV23)
                .find("     1        1     512     512      4K"),
            std::string::npos);
}

TEST(ZdbTextTest, ObjectLineFormats) {
  const ZdbDdtObject o{"DDT-sha256-zap-unique", 3, 1000, 500};
  EXPECT_EQ(ZdbObjectLine(o, Profile::kZfs22),
            "DDT-sha256-zap-unique: 3 entries, size 333 on disk, 166 in core\n");
  EXPECT_EQ(ZdbObjectLine(o, Profile::kZfs24),
            "DDT-sha256-zap-unique: dspace=1000; mspace=500; entries=3\n");
  EXPECT_EQ(ZdbObjectLine(ZdbDdtObject{"x", 0, 0, 0}, Profile::kV23), "");
}

TEST(ZdbTextTest, EmptyTable) {
  EXPECT_EQ(ZdbDedupText(DdtStatsBuilder().Result(), {}, Profile::kV23), "All DDTs are empty\n");
}

TEST(ZdbTextTest, LargeRefcountLabels) {
  DdtStatsBuilder b;
  b.AddEntry(1500, 131072, 131072, 131072);
  const DedupResult r = b.Result();
  const std::string table = ZdbHistogramTable(r.histogram, r.total, Profile::kV23);
  EXPECT_NE(
      table.find("\n    1K        1    128K    128K    128K    1.46K    188M    188M    188M\n"),
      std::string::npos)
      << table;
}

}  // namespace
}  // namespace zsim::zfs
