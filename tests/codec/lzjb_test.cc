#include "engine/codec/lzjb.h"

#include <vector>

#include "tests/util/test_util.h"

namespace zsim::codec {
namespace {

std::optional<size_t> CompressFresh(const std::vector<uint8_t>& src, std::vector<uint8_t>& dst) {
  LzjbTable table;
  return LzjbCompress(src, dst, table);
}

TEST(LzjbTest, EncodesLiteralsThenAMaximalMatchByHand) {
  // 70 bytes of "abc...": positions 0..2 are literals (a fresh slot reads as position 0, which
  // gives offset 0 at position 0 and no 3-byte match at 1, 2), position 3 matches offset 3 for
  // the maximum 66 bytes, and position 69 lies in the last 66 bytes: a literal.
  std::vector<uint8_t> src(70);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>("abc"[i % 3]);
  std::vector<uint8_t> dst(100);
  const std::optional<size_t> n = CompressFresh(src, dst);
  ASSERT_TRUE(n.has_value());
  dst.resize(*n);
  const std::vector<uint8_t> want = {0x08, 'a', 'b', 'c', (66 - 3) << 2, 3, 'a'};
  EXPECT_EQ(dst, want);
  std::vector<uint8_t> back(70);
  ASSERT_OK(LzjbDecompress(dst, back));
  EXPECT_EQ(back, src);
}

TEST(LzjbTest, GivesUpSeventeenBytesBeforeTheBudgetAtAGroupStart) {
  // ZFS tests the budget only when it starts a group: it needs d_len > group_start + 17. So it
  // fails at a budget equal to its own output length and always fits at length + 17.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    const std::vector<uint8_t> src = testing::GenerateBlock(4096, 0.5, seed);
    std::vector<uint8_t> big(8192);
    const std::optional<size_t> n = CompressFresh(src, big);
    ASSERT_TRUE(n.has_value());
    big.resize(*n);
    // Last group start = the last copy-map byte: walk the groups.
    size_t pos = 0, last_group = 0, decoded = 0;
    while (decoded < src.size()) {
      last_group = pos;
      const uint8_t map = big[pos++];
      for (int bit = 0; bit < 8 && decoded < src.size(); ++bit) {
        if (map & (1 << bit)) {
          decoded += (big[pos] >> 2) + 3;
          pos += 2;
        } else {
          ++decoded;
          ++pos;
        }
      }
    }
    ASSERT_EQ(pos, *n);
    std::vector<uint8_t> dst(*n + 17);
    LzjbTable table;
    size_t min_ok = 0;
    for (size_t budget = *n + 17; budget >= *n - 1; --budget) {
      const std::optional<size_t> got = LzjbCompress(src, std::span(dst).first(budget), table);
      if (!got) break;
      EXPECT_EQ(*got, *n);
      min_ok = budget;
    }
    EXPECT_EQ(min_ok, last_group + 18);
    EXPECT_GT(min_ok, *n);
  }
}

TEST(LzjbTest, DecoderRejectsMatchesBeforeTheBlockStart) {
  // Copy map 0x01: first item is a match of offset 5 at position 0.
  const std::vector<uint8_t> bad = {0x01, 0x00, 0x05};
  std::vector<uint8_t> out(16);
  EXPECT_EQ(LzjbDecompress(bad, out).code(), StatusCode::kCorruption);
  const std::vector<uint8_t> zero_offset = {0x02, 'x', 0x00, 0x00};
  EXPECT_EQ(LzjbDecompress(zero_offset, out).code(), StatusCode::kCorruption);
}

TEST(LzjbTest, RoundTripsEveryLengthUpTo600) {
  LzjbTable table;
  for (size_t len = 0; len <= 600; ++len) {
    const std::vector<uint8_t> src = testing::GenerateBlock(len, 0.6, len);
    std::vector<uint8_t> dst(len * 2 + 64);
    const std::optional<size_t> n = LzjbCompress(src, dst, table);
    ASSERT_TRUE(n.has_value()) << len;
    std::vector<uint8_t> back(len);
    ASSERT_OK(LzjbDecompress(std::span(dst).first(*n), back));
    ASSERT_EQ(back, src) << len;
  }
}

}  // namespace
}  // namespace zsim::codec
