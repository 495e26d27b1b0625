// tests/fuzz/fuzz_input.h
//
// How the codec fuzz targets read their input: the first 3 bytes give the block's lsize
// (1 + little-endian value mod 1 MiB), the rest is the compressed stream (decoders) or the block
// (round trip). Shared by the targets so one corpus format serves them all.

#ifndef ZSIM_TESTS_FUZZ_FUZZ_INPUT_H_
#define ZSIM_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/codec/codec.h"

namespace zsim::fuzz {

inline constexpr size_t kLsizeBytes = 3;
inline constexpr size_t kMaxLsize = 1 << 20;

inline size_t LsizeOf(const uint8_t* data, size_t size) {
  if (size < kLsizeBytes) return 0;
  const size_t v = data[0] | (size_t{data[1]} << 8) | (size_t{data[2]} << 16);
  return 1 + v % kMaxLsize;
}

// Runs one decoder on arbitrary bytes: it must return (any status) without reading outside the
// stream or writing outside the block; sanitizers and the canary below catch the rest.
inline void DecodeArbitrary(Compression c, const uint8_t* data, size_t size) {
  const size_t lsize = LsizeOf(data, size);
  if (lsize == 0) return;
  // An exact-size stream copy, so reading past it is an out-of-bounds read under ASan.
  const std::vector<uint8_t> stream(data + kLsizeBytes, data + size);
  std::vector<uint8_t> block(lsize + 16, 0xC3);
  (void)codec::Decompress(c, stream, MutableByteView(block.data(), lsize));
  for (size_t i = lsize; i < block.size(); ++i) {
    if (block[i] != 0xC3) __builtin_trap();  // wrote past the block
  }
}

}  // namespace zsim::fuzz

#endif  // ZSIM_TESTS_FUZZ_FUZZ_INPUT_H_
