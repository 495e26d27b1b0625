#include "engine/codec/zle.h"

#include <vector>

#include "tests/util/test_util.h"

namespace zsim::codec {
namespace {

TEST(ZleTest, KeepsSingleZerosInLiteralRunsAndCountsZeroRunsByHand) {
  // Literal run 1,2,0,3 (a single zero stays inside), then 6 zeros: 6 - 1 + 64 = 69.
  const std::vector<uint8_t> src = {1, 2, 0, 3, 0, 0, 0, 0, 0, 0};
  std::vector<uint8_t> dst(65);
  const std::optional<size_t> n = ZleCompress(src, dst);
  ASSERT_TRUE(n.has_value());
  dst.resize(*n);
  EXPECT_EQ(dst, (std::vector<uint8_t>{3, 1, 2, 0, 3, 69}));
}

TEST(ZleTest, ALiteralRunNeedsSixtyFourFreeBytes) {
  const std::vector<uint8_t> src = {1, 2, 0, 3, 0, 0, 0, 0, 0, 0};
  std::vector<uint8_t> dst(64);
  EXPECT_FALSE(ZleCompress(src, dst).has_value());  // 6 bytes of output, but 64 < 1 + 64
}

TEST(ZleTest, CapsZeroRunsAt192AndLiteralRunsAt64) {
  std::vector<uint8_t> src(400, 0);
  std::vector<uint8_t> dst(400);
  std::optional<size_t> n = ZleCompress(src, dst);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(std::vector<uint8_t>(dst.begin(), dst.begin() + static_cast<ptrdiff_t>(*n)),
            (std::vector<uint8_t>{255, 255, 16 - 1 + 64}));

  std::vector<uint8_t> ones(130, 7);
  std::vector<uint8_t> out(200);
  n = ZleCompress(ones, out);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 1 + 64 + 1 + 64 + 1 + 2u);
  EXPECT_EQ(out[0], 63);
  EXPECT_EQ(out[65], 63);
  EXPECT_EQ(out[130], 1);
}

TEST(ZleTest, RoundTripsZeroHeavyDataOfEveryLengthUpTo300) {
  for (size_t len = 0; len <= 300; ++len) {
    std::vector<uint8_t> src = testing::Xorshift64Bytes(len + 1, len);
    for (size_t i = 0; i < len; ++i) {
      if (src[i] % 3 != 0) src[i] = 0;  // zeros, single and in runs
    }
    std::vector<uint8_t> dst(len * 2 + 130);
    const std::optional<size_t> n = ZleCompress(src, dst);
    ASSERT_TRUE(n.has_value()) << len;
    std::vector<uint8_t> back(len, 0xFF);
    ASSERT_OK(ZleDecompress(std::span(dst).first(*n), back));
    ASSERT_EQ(back, src) << len;
  }
}

TEST(ZleTest, DecoderRejectsRecordsThatOverrun) {
  std::vector<uint8_t> out(4);
  EXPECT_EQ(ZleDecompress(std::vector<uint8_t>{10, 1, 2}, out).code(), StatusCode::kCorruption);
  EXPECT_EQ(ZleDecompress(std::vector<uint8_t>{64 + 9}, out).code(), StatusCode::kCorruption);
  EXPECT_EQ(ZleDecompress(std::vector<uint8_t>{64 + 1}, out).code(), StatusCode::kCorruption);
  EXPECT_OK(ZleDecompress(std::vector<uint8_t>{64 + 3}, out));
}

}  // namespace
}  // namespace zsim::codec
