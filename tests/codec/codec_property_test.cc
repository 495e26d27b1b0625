// Properties of every codec over seeds x sizes (STYLE.md §6.3): round trip, determinism across
// interleaved calls (per-thread tables are reused), the budget is never exceeded, and a
// successful output does not depend on the budget (ZFS's budget only decides success).

#include <cstdint>
#include <string>
#include <vector>

#include "engine/codec/codec.h"
#include "engine/zfs/write_rules.h"
#include "tests/util/test_util.h"
#include "zsim/scan_options.h"

namespace zsim::codec {
namespace {

using A = CompressionAlgorithm;

const Compression kCodecs[] = {
    {A::kLzjb, 0},   {A::kZle, 0},     {A::kLz4, 0},      {A::kGzip, 1},  {A::kGzip, 6},
    {A::kGzip, 9},   {A::kZstd, 1},    {A::kZstd, 3},     {A::kZstd, 19}, {A::kZstd, -1},
    {A::kZstd, -10}, {A::kZstd, -100}, {A::kZstd, -1000},
};

// Blocks with a compressibility dial, a zero-heavy variant (ZLE's case) and sizes around the
// lz4 64K variant boundary (65547).
std::vector<uint8_t> MakeBlock(size_t n, uint64_t seed) {
  std::vector<uint8_t> b =
      testing::GenerateBlock(n, 0.2 + 0.15 * static_cast<double>(seed % 5), seed);
  if (seed % 3 == 0) {
    for (size_t i = 0; i < n; ++i) {
      if ((i / 97 + seed) % 3 != 0) b[i] = 0;
    }
  }
  return b;
}

struct Case {
  size_t size;
  uint64_t seed;
};

class CodecPropertyTest : public ::testing::TestWithParam<Case> {};

TEST_P(CodecPropertyTest, RoundTripsDeterministicallyWithinTheBudget) {
  const Case k = GetParam();
  const std::vector<uint8_t> block = MakeBlock(k.size, k.seed);
  const std::vector<uint8_t> other = MakeBlock(k.size, k.seed + 1000);
  Compressor compressor;
  for (const Compression& c : kCodecs) {
    // The slow levels are covered up to 128K; at 1M they would dominate the suite's time.
    const bool slow = (c.algorithm == A::kZstd && c.level >= 9) || c.level == 9;
    if (slow && k.size > 131072) continue;
    SCOPED_TRACE(CompressionName(c) + " size " + std::to_string(k.size) + " seed " +
                 std::to_string(k.seed));
    // A generous budget: the block compresses (these blocks are all compressible enough) ...
    const size_t big = k.size + k.size / 2 + 1024;
    std::vector<uint8_t> out(big + 64, 0xEE);
    const std::optional<size_t> n = compressor.Compress(c, block, MutableByteView(out).first(big));
    ASSERT_TRUE(n.has_value());
    ASSERT_LE(*n, big);
    const std::vector<uint8_t> first(out.begin(), out.begin() + static_cast<ptrdiff_t>(*n));
    // ... and decodes to the block.
    std::vector<uint8_t> decoded(k.size, 0x55);
    ASSERT_OK(Decompress(c, first, decoded));
    EXPECT_EQ(decoded, block);

    // Determinism: the same bytes after compressing another block with the same contexts.
    std::vector<uint8_t> scratch(big);
    (void)compressor.Compress(c, other, scratch);
    std::vector<uint8_t> again(big);
    ASSERT_EQ(compressor.Compress(c, block, again), n);
    again.resize(*n);
    EXPECT_EQ(again, first);

    // ZFS's budgets: 7/8 and a sweep of tight ones around the output length. Never a byte
    // written past the budget; when it fits, the very same bytes.
    std::vector<size_t> budgets = {k.size - k.size / 8, *n, *n + 1, *n + 17, *n + 64};
    for (size_t d : {1, 2, 3, 4, 8, 16, 17, 18, 24}) {
      if (d < *n) budgets.push_back(*n - d);
    }
    for (size_t budget : budgets) {
      std::vector<uint8_t> dst(budget + 32, 0xA5);
      const std::optional<size_t> got =
          compressor.Compress(c, block, MutableByteView(dst).first(budget));
      for (size_t i = budget; i < dst.size(); ++i) {
        ASSERT_EQ(dst[i], 0xA5) << "wrote past budget " << budget;
      }
      if (got) {
        ASSERT_LE(*got, budget);
        EXPECT_TRUE(std::equal(first.begin(), first.end(), dst.begin()))
            << "budget " << budget << " changed the output";
        EXPECT_EQ(*got, *n);
      }
      if (budget < *n) {
        EXPECT_FALSE(got.has_value()) << "budget " << budget;
      }
    }
  }
}

// CompressFit's least budget (state format 8 keeps it): the call succeeds with exactly that
// budget, with the same output, and fails with one byte less; it lies within 64 bytes of the
// output, so every least-budget code exists (ddt/dedup_table.h).
TEST_P(CodecPropertyTest, TheLeastBudgetIsTheSmallestThatFits) {
  const Case k = GetParam();
  Compressor compressor;
  for (const uint64_t seed : {k.seed, k.seed + 500}) {
    // Also a barely compressible block, where the give-up tests decide.
    const std::vector<uint8_t> block =
        seed == k.seed ? MakeBlock(k.size, seed) : testing::GenerateBlock(k.size, 0.08, seed);
    for (const Compression& c : kCodecs) {
      if (!zfs::LeastBudgetKnown(c) || (c.level == 9 && k.size > 131072)) continue;
      SCOPED_TRACE(CompressionName(c) + " size " + std::to_string(k.size) + " seed " +
                   std::to_string(seed));
      const size_t largest = k.size - k.size / 8;
      std::vector<uint8_t> out(largest);
      const std::optional<Compressor::Fit> fit = compressor.CompressFit(c, block, out);
      if (!fit) {
        EXPECT_FALSE(compressor.Compress(c, block, out).has_value());
        continue;
      }
      ASSERT_GE(fit->least_budget, fit->length);
      ASSERT_LE(fit->least_budget, fit->length + 64);
      ASSERT_LE(fit->least_budget, largest);
      std::vector<uint8_t> dst(fit->least_budget);
      EXPECT_EQ(compressor.Compress(c, block, dst), fit->length);
      EXPECT_TRUE(
          std::equal(dst.begin(), dst.begin() + static_cast<ptrdiff_t>(fit->length), out.begin()));
      if (fit->least_budget > 0) {
        EXPECT_FALSE(
            compressor.Compress(c, block, MutableByteView(dst).first(fit->least_budget - 1))
                .has_value());
      }
    }
  }
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const size_t sizes[] = {512, 1536, 4096, 8192, 36864, 65536, 65546, 65547, 131072, 1 << 20};
  for (size_t size : sizes) {
    for (uint64_t seed = 1; seed <= 3; ++seed) cases.push_back({size, seed * 7 + size % 13});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(SeedsAndSizes, CodecPropertyTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return "size" + std::to_string(info.param.size) + "_seed" +
                                  std::to_string(info.param.seed);
                         });

TEST(CodecTest, EveryCodecRefusesATooSmallBudgetWithoutWriting) {
  Compressor compressor;
  // Random data, and a block that compresses to a few bytes (its first sequence comes early).
  for (const std::vector<uint8_t>& block :
       {testing::Xorshift64Bytes(5, 4096), std::vector<uint8_t>(4096, 'z')}) {
    for (const Compression& c : kCodecs) {
      SCOPED_TRACE(CompressionName(c));
      for (size_t budget : {0, 1, 3, 4, 5, 8, 9, 12}) {
        std::vector<uint8_t> dst(budget + 64, 0x3C);
        EXPECT_FALSE(compressor.Compress(c, block, MutableByteView(dst).first(budget)).has_value())
            << budget;
        for (size_t i = budget; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0x3C) << budget;
      }
    }
  }
}

TEST(CodecTest, DecodersRejectTruncatedStreams) {
  const std::vector<uint8_t> block = MakeBlock(8192, 4);
  Compressor compressor;
  for (const Compression& c : kCodecs) {
    SCOPED_TRACE(CompressionName(c));
    std::vector<uint8_t> out(16384);
    const std::optional<size_t> n = compressor.Compress(c, block, out);
    ASSERT_TRUE(n.has_value());
    std::vector<uint8_t> decoded(block.size());
    for (size_t cut : {size_t{0}, size_t{1}, *n / 2, *n - 1}) {
      const Status s = Decompress(c, ByteView(out.data(), cut), decoded);
      EXPECT_EQ(s.code(), StatusCode::kCorruption) << "cut at " << cut;
    }
    // A wrong lsize is corruption too (one byte short of the block).
    std::vector<uint8_t> shorter(block.size() - 1);
    if (c.algorithm != A::kLzjb && c.algorithm != A::kZle) {
      EXPECT_EQ(Decompress(c, ByteView(out.data(), *n), shorter).code(), StatusCode::kCorruption);
    }
  }
}

}  // namespace
}  // namespace zsim::codec
