// engine/ddt/written_key.h
//
// The DDT key ZFS gives a block that compresses, as a dedup table keeps it. ZFS checksums the
// bytes it writes: for a compressed block the compressor's output padded with zeros to its
// rounded psize (codec::WriteZfsBlock), not the logical block the table's key covers. The DDT
// ZAP's hash, which decides the table's leaves, is that checksum's first word
// (ZfsChecksumWord0). Under --checksum sha256 a scan keeps that word's top 30 bits for every
// lzjb, zle, lz4 and gzip setting (state::KeyColumns), in two of the table's 16-bit columns, 15
// bits in each: 4 bytes per entry and setting. The leaves split on the hash's top bits, one
// more per split: a table laid out on its keys holds at most 2^22 entries per class
// (zfs::kMaxKnownKeyEntries) in leaves of at least 128 (2^15 leaves), so 30 bits leave room for
// 15 splits past the even ones before two keys could not be told apart.
//
// Column values: 0 .. 0x7FFF a word's 15 bits; kNoWrittenKey in the first column (the other 0)
// when the block writes no compressed bytes under the scan's rounding (a hole, no fit, or an
// output that rounds up to lsize: stored as is, whose key is the table's own); kPendingCode in
// both when not computed.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_DDT_WRITTEN_KEY_H_
#define ZSIM_ENGINE_DDT_WRITTEN_KEY_H_

#include <cstdint>
#include <optional>
#include <span>

#include "engine/ddt/dedup_table.h"

namespace zsim::ddt {

inline constexpr size_t kWrittenKeyColumns = 2;
inline constexpr int kWrittenKeyBits = 15 * static_cast<int>(kWrittenKeyColumns);
inline constexpr PsizeCode kNoWrittenKey = 0x8000;

// The columns of `word` (nullopt: kNoWrittenKey).
inline void EncodeWrittenKey(std::optional<uint64_t> word, std::span<PsizeCode> out) {
  for (size_t i = 0; i < kWrittenKeyColumns; ++i) {
    out[i] = word ? static_cast<PsizeCode>((*word >> (64 - 15 * (i + 1))) & 0x7FFF) : 0;
  }
  if (!word) out[0] = kNoWrittenKey;
}

// What the columns hold.
struct WrittenKey {
  enum class Kind : uint8_t { kWord, kNone, kPending, kCorrupt };
  Kind kind = Kind::kPending;
  uint64_t word = 0;  // kWord: the top kWrittenKeyBits bits, the others zero
};
inline WrittenKey DecodeWrittenKey(std::span<const PsizeCode> in) {
  if (in[0] == kPendingCode) {
    for (size_t i = 1; i < kWrittenKeyColumns; ++i) {
      if (in[i] != kPendingCode) return {WrittenKey::Kind::kCorrupt};
    }
    return {WrittenKey::Kind::kPending};
  }
  for (size_t i = 1; i < kWrittenKeyColumns; ++i) {
    if (in[i] > 0x7FFF) return {WrittenKey::Kind::kCorrupt};
  }
  if (in[0] == kNoWrittenKey) {
    for (size_t i = 1; i < kWrittenKeyColumns; ++i) {
      if (in[i] != 0) return {WrittenKey::Kind::kCorrupt};
    }
    return {WrittenKey::Kind::kNone};
  }
  if (in[0] > 0x7FFF) return {WrittenKey::Kind::kCorrupt};
  uint64_t word = 0;
  for (size_t i = 0; i < kWrittenKeyColumns; ++i) word |= uint64_t{in[i]} << (64 - 15 * (i + 1));
  return {WrittenKey::Kind::kWord, word};
}

// The part of a word the columns keep.
inline uint64_t KeptWord(uint64_t word) {
  return word & ~((uint64_t{1} << (64 - kWrittenKeyBits)) - 1);
}

}  // namespace zsim::ddt

#endif  // ZSIM_ENGINE_DDT_WRITTEN_KEY_H_
