#include "engine/mpi/shipped_keys.h"

#include "engine/base/mix.h"

namespace zsim::mpi {
namespace {

constexpr uint64_t kFirstKeys = uint64_t{1} << 16;
constexpr uint64_t kBitsPerKey = 16;
constexpr int kProbes = 8;

// Double hashing over the bits of the key a table keeps (lo, and hi's top 8 and low 32:
// ddt::EntryView), as the shipped entries give it and as the scan's sighting has it, mixed (lo's
// low bits choose the codecs' sample levels). Mixed once per key; probe i of a segment of `bits`
// bits (a power of two) is (first + i * step) mod bits.
struct Hashes {
  uint64_t first, step;
};

Hashes HashesOf(const ddt::Fingerprint& key) {
  const uint64_t kept_hi = key.hi & 0xFF000000FFFFFFFFull;
  return {Mix64(key.lo), Mix64(kept_hi ^ key.lo) | 1};
}

uint64_t Probe(const Hashes& h, int i, uint64_t bits) {
  return (h.first + static_cast<uint64_t>(i) * h.step) & (bits - 1);
}

}  // namespace

void ShippedKeys::Add(const ddt::Fingerprint& key) {
  if (segments_.empty() || segments_.back().keys == segments_.back().capacity) {
    Segment s;
    s.capacity = segments_.empty() ? kFirstKeys : segments_.back().capacity * 2;
    s.words.assign(s.capacity * kBitsPerKey / 64, 0);
    segments_.push_back(std::move(s));
  }
  Segment& s = segments_.back();
  const Hashes h = HashesOf(key);
  const uint64_t bits = s.words.size() * 64;
  for (int i = 0; i < kProbes; ++i) {
    const uint64_t b = Probe(h, i, bits);
    s.words[b / 64] |= uint64_t{1} << (b % 64);
  }
  ++s.keys;
}

bool ShippedKeys::Contains(const ddt::Fingerprint& key) const {
  const Hashes h = HashesOf(key);
  for (const Segment& s : segments_) {
    const uint64_t bits = s.words.size() * 64;
    bool all = true;
    for (int i = 0; i < kProbes && all; ++i) {
      const uint64_t b = Probe(h, i, bits);
      all = (s.words[b / 64] >> (b % 64)) & 1;
    }
    if (all) return true;
  }
  return false;
}

uint64_t ShippedKeys::memory_bytes() const {
  uint64_t n = 0;
  for (const Segment& s : segments_) n += s.words.size() * sizeof(uint64_t);
  return n;
}

}  // namespace zsim::mpi
