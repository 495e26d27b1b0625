#include "engine/ddt/dedup_table.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace zsim::ddt {

PsizeCode EncodeAllocated(uint64_t psize) {
  assert(psize % 512 == 0 && psize >= 512 && psize <= (uint64_t{16} << 20));
  return static_cast<PsizeCode>(psize / 512);
}

PsizeCode EncodeEmbedded(uint64_t payload) {
  assert(payload >= 1 && payload <= 112);
  return static_cast<PsizeCode>(kEmbeddedBase + payload);
}

namespace {

struct Slot {
  uint64_t lo;
  uint64_t hi;
  uint32_t refcount;  // 0: empty slot
  uint16_t lsize_sectors_minus_1;
};

}  // namespace

// Invariants:
//  1. slots.size() is a power of two (or 0), used < 3/4 of it.
//  2. An empty slot has refcount 0; a key lives at the first free slot from its home (linear
//     probing) and never moves except when the whole shard is rehashed under mu.
//  3. codes[i * settings .. (i+1) * settings) belong to slots[i].
struct DedupTable::Shard {
  std::mutex mu;
  std::vector<Slot> slots;       // Guarded by mu.
  std::vector<PsizeCode> codes;  // Guarded by mu.
  size_t used = 0;               // Guarded by mu.

  // Home index from bits the shard choice did not use.
  static size_t Home(const Fingerprint& k, size_t mask) { return (k.lo >> kShardBits) & mask; }

  size_t Find(const Fingerprint& k) const {
    const size_t mask = slots.size() - 1;
    for (size_t i = Home(k, mask);; i = (i + 1) & mask) {
      const Slot& s = slots[i];
      if (s.refcount == 0 || (s.lo == k.lo && s.hi == k.hi)) return i;
    }
  }

  void Grow(size_t settings) {
    const size_t new_size = slots.empty() ? 64 : slots.size() * 2;
    std::vector<Slot> old_slots(new_size, Slot{0, 0, 0, 0});
    std::vector<PsizeCode> old_codes(new_size * settings, kPendingCode);
    old_slots.swap(slots);
    old_codes.swap(codes);
    for (size_t i = 0; i < old_slots.size(); ++i) {
      if (old_slots[i].refcount == 0) continue;
      const size_t j = Find(Fingerprint{old_slots[i].lo, old_slots[i].hi});
      slots[j] = old_slots[i];
      for (size_t c = 0; c < settings; ++c) codes[j * settings + c] = old_codes[i * settings + c];
    }
  }
};

DedupTable::DedupTable(size_t settings) : settings_(settings) {
  for (auto& s : shards_) s = std::make_unique<Shard>();
}

DedupTable::~DedupTable() = default;

InsertOutcome DedupTable::Insert(const Fingerprint& key, uint64_t lsize) {
  Shard& shard = *shards_[key.hi >> (64 - kShardBits)];
  std::lock_guard<std::mutex> lock(shard.mu);
  // Read under the shard lock: a raise compacts each shard under its lock after storing the new
  // shift, so no key outside the new space can slip in after its shard was compacted.
  if (SampledOut(key, sample_shift_.load(std::memory_order_acquire))) {
    return InsertOutcome::kSampledOut;
  }
  if ((shard.used + 1) * 4 > shard.slots.size() * 3) shard.Grow(settings_);
  Slot& slot = shard.slots[shard.Find(key)];
  if (slot.refcount != 0) {
    if (slot.refcount != std::numeric_limits<uint32_t>::max()) ++slot.refcount;
    return InsertOutcome::kDuplicate;
  }
  slot.lo = key.lo;
  slot.hi = key.hi;
  slot.refcount = 1;
  slot.lsize_sectors_minus_1 = static_cast<uint16_t>(lsize / 512 - 1);
  ++shard.used;
  return InsertOutcome::kFirst;
}

void DedupTable::RaiseSampleShift(uint32_t shift) {
  uint32_t current = sample_shift_.load();
  while (shift > current && !sample_shift_.compare_exchange_weak(current, shift)) {
  }
  if (shift <= current) return;
  for (auto& shard_ptr : shards_) {
    Shard& shard = *shard_ptr;
    std::lock_guard<std::mutex> lock(shard.mu);
    // Rebuild in place: collect the survivors, then re-insert them into a cleared table (linear
    // probing cannot simply blank slots).
    std::vector<Slot> keep;
    std::vector<PsizeCode> keep_codes;
    for (size_t i = 0; i < shard.slots.size(); ++i) {
      const Slot& sl = shard.slots[i];
      if (sl.refcount == 0 || SampledOut(Fingerprint{sl.lo, sl.hi}, shift)) continue;
      keep.push_back(sl);
      keep_codes.insert(keep_codes.end(), shard.codes.begin() + i * settings_,
                        shard.codes.begin() + (i + 1) * settings_);
    }
    // A right-sized table, so the memory given back shows (--max-memory counts capacity).
    size_t size = 64;
    while ((keep.size() + 1) * 4 > size * 3) size *= 2;
    std::vector<Slot>(size, Slot{0, 0, 0, 0}).swap(shard.slots);
    std::vector<PsizeCode>(size * settings_, kPendingCode).swap(shard.codes);
    shard.used = keep.size();
    for (size_t k = 0; k < keep.size(); ++k) {
      const size_t j = shard.Find(Fingerprint{keep[k].lo, keep[k].hi});
      shard.slots[j] = keep[k];
      std::copy(keep_codes.begin() + k * settings_, keep_codes.begin() + (k + 1) * settings_,
                shard.codes.begin() + j * settings_);
    }
  }
}

void DedupTable::SetCodes(const Fingerprint& key, std::span<const PsizeCode> codes) {
  assert(codes.size() == settings_);
  Shard& shard = *shards_[key.hi >> (64 - kShardBits)];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (shard.slots.empty()) return;
  const size_t i = shard.Find(key);
  if (shard.slots[i].refcount == 0) return;  // dropped by a raised sample shift
  for (size_t c = 0; c < settings_; ++c) shard.codes[i * settings_ + c] = codes[c];
}

void DedupTable::ForEach(const std::function<void(const EntryView&)>& fn) const {
  for (const auto& shard : shards_) {
    for (size_t i = 0; i < shard->slots.size(); ++i) {
      const Slot& s = shard->slots[i];
      if (s.refcount == 0) continue;
      EntryView view{Fingerprint{s.lo, s.hi}, s.refcount,
                     (uint64_t{s.lsize_sectors_minus_1} + 1) * 512,
                     std::span<const PsizeCode>(shard->codes.data() + i * settings_, settings_)};
      fn(view);
    }
  }
}

uint64_t DedupTable::entries() const {
  uint64_t n = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    n += shard->used;
  }
  return n;
}

uint64_t DedupTable::memory_bytes() const {
  uint64_t n = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    n += shard->slots.capacity() * sizeof(Slot) + shard->codes.capacity() * sizeof(PsizeCode);
  }
  return n;
}

}  // namespace zsim::ddt
