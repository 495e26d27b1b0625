// zstd's least-budget class (codec::ZstdLeastBudget, state format 9: kept for the blocks without
// early abort) against zstd run at the budgets a report may ask for. For every block, every
// budget ZFS can compute near its output (112 bytes; every multiple of 512 from 2K below the
// output to 2K above it; the largest, lsize - lsize/8) is decided from the 2-byte code as the
// report decides it (zfs::ReplayLeastBudget: the code's least budget at or below it, fits with
// the code's output; at or above the code's lower bound, does not fit) and compared with running
// zsim's ZFS zstd path (codec::ZfsCompress, 2.1: no early abort) at that budget: fit or not, and
// when it fits the same output class (exact up to 112 bytes, else the same 512-byte unit, all
// psize rounding needs). The blocks: incompressible, barely compressible, text-like at many
// ratios (outputs anywhere in their unit, some a few bytes short of its end, where zstd's
// capacity checks fail although the output would fit), and highly compressible (outputs of
// 90 to 112 bytes), from 4K to 16M. With a margin of 0 (the candidate budget never run: the
// output taken to fit its unit's end) some are decided wrong: that is what the runs are for.

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/codec/codec.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/dedup_table.h"
#include "engine/zfs/write_rules.h"
#include "tests/util/test_util.h"
#include "zsim/scan_options.h"

namespace zsim::codec {
namespace {

std::vector<std::vector<uint8_t>> Blocks() {
  std::vector<std::vector<uint8_t>> blocks;
  // Text-like at many ratios: outputs spread over their 512-byte units.
  for (const size_t size : {4096, 8192, 16384, 65536}) {
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      blocks.push_back(
          testing::GenerateBlock(size, 0.05 + 0.015 * static_cast<double>(seed), seed * 31 + size));
    }
  }
  // Outputs of about 112 bytes: a repeated byte with a few random ones among it.
  for (size_t extra = 40; extra <= 110; ++extra) {
    std::vector<uint8_t> b(8192, 'z');
    const std::vector<uint8_t> noise = testing::Xorshift64Bytes(extra, extra);
    for (size_t i = 0; i < extra; ++i) b[(i * 977) % b.size()] = noise[i];
    blocks.push_back(std::move(b));
  }
  // Incompressible and barely compressible, and large blocks.
  blocks.push_back(testing::Xorshift64Bytes(7, 4096));
  blocks.push_back(testing::GenerateBlock(131072, 0.1, 3));
  blocks.push_back(testing::GenerateBlock(131072, 0.6, 4));
  blocks.push_back(testing::GenerateBlock(1 << 20, 0.12, 5));
  blocks.push_back(testing::GenerateBlock(16 << 20, 0.5, 6));
  return blocks;
}

// The output class psize rounding needs: exact up to 112 bytes, else the 512-byte unit.
uint64_t ClassOf(uint64_t length) {
  return length <= zfs::kEmbeddedPayloadBytes ? length : 1000 + (length + 511) / 512;
}

// The budgets (as the report decides them from the code) where the code's answer differs from
// zstd's at that budget, over `blocks` (each one a test failure when `report`); `decided` counts
// the budgets checked.
size_t WrongDecisions(const std::vector<std::vector<uint8_t>>& blocks, Compression c,
                      uint64_t margin, size_t* decided, bool report) {
  Compressor compressor;
  zfs::WritePolicy v21;
  v21.profile = Profile::kZfs21;
  size_t wrong = 0;
  for (const std::vector<uint8_t>& block : blocks) {
    const uint64_t lsize = block.size();
    const uint64_t largest = zfs::LargestCompressionBudget(lsize);
    std::vector<uint8_t> scratch(largest);
    const std::optional<Compressor::Fit> fit =
        ZstdLeastBudget(c, block, compressor, scratch, margin);
    const ddt::PsizeCode code =
        fit ? ddt::EncodeLeastBudget(fit->length, fit->least_budget) : ddt::kNoFitCode;
    const ddt::LeastBudget b = ddt::LeastBudgetOf(code);
    std::vector<uint64_t> budgets = {zfs::kEmbeddedPayloadBytes, largest};
    const uint64_t around = fit ? fit->length : largest;
    for (uint64_t u = around > 2048 ? (around - 2048) / 512 : 1; u * 512 <= around + 2048; ++u) {
      if (u * 512 < largest) budgets.push_back(u * 512);
    }
    for (const uint64_t budget : budgets) {
      std::vector<uint8_t> dst(budget);
      const std::optional<size_t> ran = ZfsCompress(v21, c, block, compressor, dst);
      // zfs::ReplayLeastBudget's rule.
      std::optional<bool> fits;
      if (!b.length || budget <= b.above) fits = budget >= largest && b.length.has_value();
      if (b.length && (budget >= b.at_most || budget >= largest)) fits = true;
      ++*decided;
      if (!fits || *fits != ran.has_value() ||
          (ran && ClassOf(*ran) != ClassOf(fit ? fit->length : 0))) {
        ++wrong;
        if (!report) continue;
        ADD_FAILURE_AT(__FILE__, __LINE__)
            << "margin " << margin << " " << CompressionName(c) << " lsize " << lsize << " output "
            << (fit ? std::to_string(fit->length) : "none") << " budget " << budget << ": decided "
            << (fits ? (*fits ? "fits" : "no fit") : "unknown") << ", zstd "
            << (ran ? std::to_string(*ran) : "no fit");
      }
    }
  }
  return wrong;
}

TEST(ZstdLeastBudgetTest, TheCodeDecidesEveryBudgetAsZstdDoes) {
  const std::vector<std::vector<uint8_t>> blocks = Blocks();
  for (const Compression c :
       {Compression{CompressionAlgorithm::kZstd, 3}, Compression{CompressionAlgorithm::kZstd, 1},
        Compression{CompressionAlgorithm::kZstd, -1}}) {
    SCOPED_TRACE(CompressionName(c));
    size_t decided = 0;
    EXPECT_EQ(WrongDecisions(blocks, c, kZstdRunMargin, &decided, true), 0u);
    EXPECT_GT(decided, 2500u);
  }
}

// Without the runs (a margin of 0) zstd-3's outputs a few bytes short of their unit's end are
// taken to fit it, and some do not: the margin is needed.
TEST(ZstdLeastBudgetTest, WithoutTheRunsSomeBudgetsAreDecidedWrong) {
  size_t decided = 0;
  const size_t wrong =
      WrongDecisions(Blocks(), {CompressionAlgorithm::kZstd, 3}, 0, &decided, false);
  EXPECT_GT(wrong, 0u) << "of " << decided;
}

}  // namespace
}  // namespace zsim::codec
