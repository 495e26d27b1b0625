#include "engine/zfs/nicenum.h"

#include <gtest/gtest.h>

namespace zsim::zfs {
namespace {

TEST(NicenumTest, MatchesZfsNicenum) {
  EXPECT_EQ(NiceNumber(0), "0");
  EXPECT_EQ(NiceNumber(512), "512");
  EXPECT_EQ(NiceNumber(1000), "1000");
  EXPECT_EQ(NiceNumber(1024), "1K");
  EXPECT_EQ(NiceNumber(1200), "1.17K");  // zdb: 1200 blocks
  EXPECT_EQ(NiceNumber(1400), "1.37K");
  EXPECT_EQ(NiceNumber(8192000), "7.81M");  // zdb LSIZE of 1000 x 8K
  EXPECT_EQ(NiceNumber(3276800), "3.12M");  // 3.125M, printf rounds to even
  EXPECT_EQ(NiceNumber(11468800), "10.9M");
  EXPECT_EQ(NiceNumber(128512), "126K");  // zdb -dddd lsize of a 2000-entry micro-ZAP
  EXPECT_EQ(NiceNumber(10239), "10.0K");
  EXPECT_EQ(NiceNumber(1023 * 1024 + 1023), "1024K");
  EXPECT_EQ(NiceNumber(uint64_t{15} << 60), "15E");
}

TEST(NicenumTest, NicebytesAddsBBelow1K) {
  EXPECT_EQ(NiceBytes(0), "0B");
  EXPECT_EQ(NiceBytes(512), "512B");
  EXPECT_EQ(NiceBytes(131072), "128K");
  EXPECT_EQ(NiceBytes(1095216660), "1.02G");
  EXPECT_EQ(NiceSize(512, Profile::kV23), "512");
  EXPECT_EQ(NiceSize(512, Profile::kZfs22), "512B");
}

}  // namespace
}  // namespace zsim::zfs
