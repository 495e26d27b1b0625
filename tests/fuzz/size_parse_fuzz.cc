// Fuzz target: size parsing (--recordsize, --volblocksize, --ram, --max-memory) on arbitrary text.
// ParseSize must return (a value or an error) without undefined behaviour (a fraction times a
// suffix past 2^64 is the classic one); a value it accepts must print and parse back.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/base/size_suffix.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  zsim::Result<uint64_t> r = zsim::ParseSize(text);
  if (r.ok()) {
    (void)zsim::FormatBytes(*r);
    // The plain decimal spelling of an accepted size is itself accepted, with the same value.
    zsim::Result<uint64_t> again = zsim::ParseSize(std::to_string(*r));
    if (!again.ok() || *again != *r) __builtin_trap();
  } else if (r.status().message().empty()) {
    __builtin_trap();  // every refusal says why
  }
  // And any 8 bytes as a byte count print without trouble.
  if (size >= 8) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{data[i]} << (8 * i);
    (void)zsim::FormatBytes(v);
  }
  return 0;
}
