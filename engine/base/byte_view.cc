#include "engine/base/byte_view.h"

#include <cstring>

namespace zsim {

bool IsAllZero(ByteView bytes) {
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  // Head bytes until 8-byte alignment, then 64 bytes at a time with an OR-reduction the compiler
  // vectorises, then the tail.
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    if (*p != 0) return false;
    ++p;
    --n;
  }
  while (n >= 64) {
    uint64_t w[8];
    std::memcpy(w, p, 64);
    if ((w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7]) != 0) return false;
    p += 64;
    n -= 64;
  }
  while (n > 0) {
    if (*p != 0) return false;
    ++p;
    --n;
  }
  return true;
}

}  // namespace zsim
