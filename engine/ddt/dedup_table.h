// engine/ddt/dedup_table.h
//
// DedupTable: fingerprint -> reference count, plus per unique block its lsize and one 16-bit
// outcome code per evaluated compression setting (PsizeCode). One table per recordsize.
//
// Layout: 256 shards chosen by fingerprint bits, each an open-addressing table under its own
// mutex, so threads rarely meet. Per unique block: 24 bytes (key 16, refcount 4, lsize 2, pad)
// plus 2 bytes per setting, at a load factor between 3/8 and 3/4.
//
// Sampling (--sample 1/M, --max-memory): the table keeps only keys whose low `sample_shift`
// bits of `hi` are zero (SampledOut), i.e. 1/M of the key space, M = 2^sample_shift. Raising the
// shift drops the keys the new space excludes; a key inside it was kept since its first sighting,
// so its refcount stays exact. The choice depends on the key only, never on arrival order.
//
// Thread safety: Insert/SetCodes/RaiseSampleShift from any thread concurrently; ForEach requires
// that no Insert, SetCodes or RaiseSampleShift is running.

#ifndef ZSIM_ENGINE_DDT_DEDUP_TABLE_H_
#define ZSIM_ENGINE_DDT_DEDUP_TABLE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "engine/ddt/fingerprint.h"

namespace zsim::ddt {

// What one compression setting made of a block, in 16 bits:
//   0                       hole (all-zero block turned into a hole): no DDT entry
//   1 .. 32768              allocated, psize = code * 512 (every allocated psize is a multiple of
//                           512 and at most 16 MiB)
//   32769 .. 32768 + 112    embedded block pointer with (code - 32768) payload bytes
//   0xFFFF                  not computed yet (only between Insert and SetCodes)
using PsizeCode = uint16_t;
inline constexpr PsizeCode kHoleCode = 0;
inline constexpr PsizeCode kEmbeddedBase = 32768;
inline constexpr PsizeCode kPendingCode = 0xFFFF;
PsizeCode EncodeAllocated(uint64_t psize);   // REQUIRES: psize % 512 == 0, 512..16M
PsizeCode EncodeEmbedded(uint64_t payload);  // REQUIRES: 1..112
inline bool IsHoleCode(PsizeCode c) { return c == kHoleCode; }
inline bool IsEmbeddedCode(PsizeCode c) { return c > kEmbeddedBase && c != kPendingCode; }
inline uint64_t AllocatedPsize(PsizeCode c) { return uint64_t{c} * 512; }
inline uint64_t EmbeddedPayload(PsizeCode c) { return uint64_t{c} - kEmbeddedBase; }

struct EntryView {
  Fingerprint key;
  uint32_t refcount;
  uint64_t lsize;
  std::span<const PsizeCode> codes;  // one per setting, in the order given to the table
};

enum class InsertOutcome : uint8_t {
  kFirst,       // first reference: compute the codes and call SetCodes
  kDuplicate,   // the key was there: refcount + 1
  kSampledOut,  // outside the sampled key space: not counted
};

// True if `key` lies outside the 1/2^shift of the key space that sampling keeps.
inline bool SampledOut(const Fingerprint& key, uint32_t shift) {
  return shift != 0 && (key.hi & ((uint64_t{1} << shift) - 1)) != 0;
}

class DedupTable {
 public:
  explicit DedupTable(size_t settings);
  ~DedupTable();
  DedupTable(const DedupTable&) = delete;
  DedupTable& operator=(const DedupTable&) = delete;

  // Adds one reference to `key` (a block of `lsize` bytes) unless sampling excludes it.
  // Refcounts saturate at 2^32-1.
  InsertOutcome Insert(const Fingerprint& key, uint64_t lsize);

  // Records the codes of a key inserted earlier (a key dropped meanwhile by a raised sample
  // shift is ignored). REQUIRES: codes.size() == settings().
  void SetCodes(const Fingerprint& key, std::span<const PsizeCode> codes);

  // Keeps from now on only 1/2^shift of the key space and drops the entries outside it.
  // A shift not above the current one changes nothing.
  void RaiseSampleShift(uint32_t shift);
  uint32_t sample_shift() const { return sample_shift_.load(std::memory_order_relaxed); }

  // Calls fn for every entry, shard by shard (order is fixed by the keys, not by arrival).
  void ForEach(const std::function<void(const EntryView&)>& fn) const;

  size_t settings() const { return settings_; }
  uint64_t entries() const;
  // Bytes held by the table's arrays (the RAM cost of the exact DDT).
  uint64_t memory_bytes() const;

 private:
  struct Shard;
  static constexpr size_t kShardBits = 8;
  size_t settings_;
  std::atomic<uint32_t> sample_shift_{0};
  std::array<std::unique_ptr<Shard>, size_t{1} << kShardBits> shards_;
};

}  // namespace zsim::ddt

#endif  // ZSIM_ENGINE_DDT_DEDUP_TABLE_H_
