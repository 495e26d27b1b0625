#include "engine/codec/lz4_zfs.h"

#include <lz4.h>

#include <string>
#include <vector>

#include "tests/util/test_util.h"

namespace zsim::codec {
namespace {

TEST(Lz4ZfsTest, ShortInputsAreOneLiteralRunBehindABigEndianLength) {
  const std::string text = "hello";
  const std::vector<uint8_t> src(text.begin(), text.end());
  Lz4ZfsCompressor lz4;
  std::vector<uint8_t> dst(10);
  const std::optional<size_t> n = lz4.Compress(src, dst);
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(dst, (std::vector<uint8_t>{0, 0, 0, 6, 0x50, 'h', 'e', 'l', 'l', 'o'}));
  // ZFS's last-literals check: op + run + 1 + (run + 240) / 255 > oend fails at 9.
  std::vector<uint8_t> small(9);
  EXPECT_FALSE(lz4.Compress(src, small).has_value());
}

TEST(Lz4ZfsTest, BothVariantsDecodeWithLiblz4AroundThe64KLimit) {
  Lz4ZfsCompressor lz4;
  for (size_t size : {13, 14, 100, 65535, 65536, 65546, 65547, 65548, 200000, 1 << 20}) {
    SCOPED_TRACE(size);
    const std::vector<uint8_t> src = testing::GenerateBlock(size, 0.7, size);
    std::vector<uint8_t> dst(size + size / 100 + 64);
    const std::optional<size_t> n = lz4.Compress(src, dst);
    ASSERT_TRUE(n.has_value());
    const uint32_t block =
        (uint32_t{dst[0]} << 24) | (uint32_t{dst[1]} << 16) | (uint32_t{dst[2]} << 8) | dst[3];
    EXPECT_EQ(block + 4, *n);
    std::vector<uint8_t> back(size);
    const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(dst.data() + 4),
                                        reinterpret_cast<char*>(back.data()),
                                        static_cast<int>(block), static_cast<int>(size));
    ASSERT_EQ(got, static_cast<int>(size));
    EXPECT_EQ(back, src);
  }
}

TEST(Lz4ZfsTest, LargeVariantNeverReachesBackMoreThan65535Bytes) {
  // 200 KB: a 70000-byte random prefix repeated. Every match offset must stay <= 65535, so the
  // second copy is found only through the first copy's nearer part (or not at all).
  const std::vector<uint8_t> unit = testing::Xorshift64Bytes(9, 70000);
  std::vector<uint8_t> src;
  for (int i = 0; i < 3; ++i) src.insert(src.end(), unit.begin(), unit.end());
  Lz4ZfsCompressor lz4;
  std::vector<uint8_t> dst(src.size() + 4096);
  const std::optional<size_t> n = lz4.Compress(src, dst);
  ASSERT_TRUE(n.has_value());
  // Period 70000 > max distance: nothing to find, output about the input size.
  EXPECT_GT(*n, src.size());
  std::vector<uint8_t> back(src.size());
  ASSERT_OK(Lz4ZfsDecompress(std::span(dst).first(*n), back));
  EXPECT_EQ(back, src);
}

TEST(Lz4ZfsTest, DecoderRejectsALengthBeyondTheInput) {
  std::vector<uint8_t> out(16);
  EXPECT_EQ(Lz4ZfsDecompress(std::vector<uint8_t>{0, 0, 0, 9, 0x50, 'a'}, out).code(),
            StatusCode::kCorruption);
}

}  // namespace
}  // namespace zsim::codec
