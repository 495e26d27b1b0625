// Fuzz target: every codec on arbitrary blocks at arbitrary budgets. Byte 0 picks the codec,
// bytes 1-2 the budget (as a fraction of lsize), the rest is the block. Whatever fits must decode
// to the block, and nothing may be written past the budget.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/codec/codec.h"

namespace {

using A = zsim::CompressionAlgorithm;
const zsim::Compression kCodecs[] = {{A::kLzjb, 0}, {A::kZle, 0},   {A::kLz4, 0},
                                     {A::kGzip, 1}, {A::kGzip, 9},  {A::kZstd, 1},
                                     {A::kZstd, 5}, {A::kZstd, -7}, {A::kZstd, -1000}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static zsim::codec::Compressor compressor;  // reused, as a pipeline worker reuses it
  if (size < 3) return 0;
  const zsim::Compression c = kCodecs[data[0] % (sizeof(kCodecs) / sizeof(kCodecs[0]))];
  const size_t fraction = data[1] | (size_t{data[2]} << 8);  // budget = block * fraction / 32768
  const std::vector<uint8_t> block(data + 3, data + size);
  const size_t budget = block.size() * fraction / 32768 + 16;
  std::vector<uint8_t> dst(budget + 32, 0x5A);
  const std::optional<size_t> n =
      compressor.Compress(c, block, zsim::MutableByteView(dst.data(), budget));
  for (size_t i = budget; i < dst.size(); ++i) {
    if (dst[i] != 0x5A) __builtin_trap();
  }
  if (!n) return 0;
  if (*n > budget) __builtin_trap();
  std::vector<uint8_t> back(block.size());
  const zsim::Status s = zsim::codec::Decompress(c, zsim::ByteView(dst.data(), *n), back);
  if (!block.empty() && (!s.ok() || back != block)) __builtin_trap();
  return 0;
}
