// Fuzz target: the lzjb decoder fed arbitrary bytes (see fuzz_input.h for the layout).

#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  zsim::fuzz::DecodeArbitrary({zsim::CompressionAlgorithm::kLzjb, 0}, data, size);
  return 0;
}
