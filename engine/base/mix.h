// engine/base/mix.h
//
// Mix64: splitmix64's finaliser (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", 2014), a bijection of 64-bit values in which every input bit moves about half of
// the output's. The scan's order-free content hash, its occurrence sample and the DDT-size
// simulation's generator all spread their inputs with it.
//
// Thread safety: a pure function.

#ifndef ZSIM_ENGINE_BASE_MIX_H_
#define ZSIM_ENGINE_BASE_MIX_H_

#include <cstdint>

namespace zsim {

inline constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;  // 2^64 / phi, odd

inline uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace zsim

#endif  // ZSIM_ENGINE_BASE_MIX_H_
