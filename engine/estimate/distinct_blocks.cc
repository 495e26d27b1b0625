#include "engine/estimate/distinct_blocks.h"

namespace zsim::estimate {
namespace {

// A bijective 64-bit mixer (the MurmurHash3 finaliser): the units of one key get unrelated
// hashes, and distinct (key, unit) pairs stay distinct.
uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

DistinctBlocks::DistinctBlocks(uint64_t full_lsize)
    : full_lsize_(full_lsize), full_keys_(16), small_keys_(14), small_units_(17) {}

void DistinctBlocks::Add(uint64_t key_lo, uint64_t lsize, uint64_t aux_units, bool is_zero) {
  if (is_zero) return;
  if (lsize >= full_lsize_) {
    full_keys_.Add(key_lo);
    return;
  }
  small_keys_.Add(key_lo);
  // Unit u of the key: Mix(key + u * odd). The key is uniform, so the pairs collide only when
  // keys do (at 2^-64 per pair).
  for (uint64_t u = 0; u < aux_units; ++u) {
    small_units_.Add(Mix(key_lo + u * 0x9E3779B97F4A7C15ull));
  }
}

uint64_t DistinctBlocks::memory_bytes() const {
  return full_keys_.memory_bytes() + small_keys_.memory_bytes() + small_units_.memory_bytes();
}

void DistinctBlocks::Merge(const DistinctBlocks& other) {
  full_keys_.Merge(other.full_keys_);
  small_keys_.Merge(other.small_keys_);
  small_units_.Merge(other.small_units_);
}

}  // namespace zsim::estimate
