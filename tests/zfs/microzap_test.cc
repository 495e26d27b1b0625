#include "engine/zfs/microzap.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace zsim::zfs {
namespace {

uint64_t Le64(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | b[at + i];
  return v;
}

// The block grows 512 bytes at a time and holds one 64-byte chunk per entry after the header
// (OpenZFS 2.3.2, zdb -dd of the database sample: 298 entries in 19,456 bytes, 312 in 20,480).
TEST(MicrozapTest, BlockGrowsBy512ForEvery64ByteEntry) {
  EXPECT_EQ(MicrozapBlockBytes(0), 512u);
  EXPECT_EQ(MicrozapBlockBytes(7), 512u);
  EXPECT_EQ(MicrozapBlockBytes(8), 1024u);
  EXPECT_EQ(MicrozapBlockBytes(23), 1536u);
  EXPECT_EQ(MicrozapBlockBytes(298), 19456u);
  EXPECT_EQ(MicrozapBlockBytes(312), 20480u);
}

TEST(MicrozapTest, LongNamesAndLargeBlocksMakeAFatZap) {
  EXPECT_TRUE(IsMicrozap(10, 49));
  EXPECT_FALSE(IsMicrozap(10, 50));  // MZAP_NAME_LEN with its NUL
  EXPECT_TRUE(IsMicrozap(2047, 8));  // (2047 + 1) x 64 = 128K
  EXPECT_FALSE(IsMicrozap(2048, 8));
}

TEST(MicrozapTest, ImageLaysEntriesOutInNameOrder) {
  const std::vector<uint8_t> b = MicrozapImage({{"zeta", DirentType::kRegular},
                                                {"Alpha", DirentType::kDirectory},
                                                {"link", DirentType::kSymlink}});
  ASSERT_EQ(b.size(), 512u);
  EXPECT_EQ(Le64(b, 0), (uint64_t{1} << 63) + 3);                 // ZBT_MICRO
  EXPECT_NE(Le64(b, 8), 0u);                                      // a salt
  for (size_t at = 16; at < 64; ++at) EXPECT_EQ(b[at], 0) << at;  // normflags, pad
  const char* names[] = {"Alpha", "link", "zeta"};                // bytewise: upper case first
  const uint64_t types[] = {4, 10, 8};
  for (size_t i = 0; i < 3; ++i) {
    const size_t at = (i + 1) * 64;
    EXPECT_EQ(Le64(b, at), types[i] << 60 | (kMicrozapFirstObject + i)) << i;
    for (size_t k = 8; k < 14; ++k) EXPECT_EQ(b[at + k], 0) << i;  // cd, pad
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(&b[at + 14])), names[i]);
    for (size_t k = 14 + std::strlen(names[i]); k < 64; ++k) EXPECT_EQ(b[at + k], 0) << i;
  }
  for (size_t at = 4 * 64; at < b.size(); ++at) EXPECT_EQ(b[at], 0) << at;
}

}  // namespace
}  // namespace zsim::zfs
