#include "engine/codec/lzjb.h"

#include <algorithm>
#include <cstring>

namespace zsim::codec {
namespace {

// docs/zfs_model.md §3.1: 6-bit length (3..66), 10-bit offset (1..1023).
constexpr size_t kMatchMin = 3;
constexpr size_t kMatchMax = 66;
constexpr size_t kOffsetMask = 1023;
// Give up when the output reaches d_len - 1 - 2 * 8 at a group start (lzjb.c).
constexpr int64_t kGroupReserve = 17;

}  // namespace

namespace {

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// One item at position sp, which has at least kMatchMax bytes after it: a match (2 output
// bytes, bit set in the copy map) or a literal. Returns the new position.
inline size_t EncodeItem(const uint8_t* in, size_t sp, uint8_t* out, size_t& dp, uint8_t& map_byte,
                         unsigned bit, LzjbTable& table) {
  const uint8_t* const cur = in + sp;
  const uint32_t word = Load32(cur);  // little-endian host: byte 0 in the low bits
  uint32_t h = ((word & 0xFF) << 16) | (word & 0xFF00) | ((word >> 16) & 0xFF);
  h += h >> 9;
  h += h >> 5;
  uint16_t& slot = table[h & 1023];
  // ZFS keeps the low 16 bits of the source address; with a 1024-aligned buffer that is the
  // position, and a fresh slot (0) means "position 0" (docs/zfs_model.md §3.1).
  const size_t offset = (sp - slot) & kOffsetMask;
  slot = static_cast<uint16_t>(sp);
  const uint8_t* const cpy = cur - offset;
  if (offset == 0 || offset > sp || ((Load32(cpy) ^ word) & 0xFFFFFF) != 0) {
    out[dp++] = *cur;
    return sp + 1;
  }
  map_byte |= static_cast<uint8_t>(1u << bit);
  // Extend 8 bytes at a time from byte 2 (known equal): reads stay below cur + kMatchMax.
  size_t mlen = 2;
  while (mlen + 8 <= kMatchMax) {
    const uint64_t diff = Load64(cur + mlen) ^ Load64(cpy + mlen);
    if (diff != 0) {
      mlen += static_cast<size_t>(__builtin_ctzll(diff)) >> 3;
      goto done;
    }
    mlen += 8;
  }
  while (mlen < kMatchMax && cur[mlen] == cpy[mlen]) ++mlen;
done:
  out[dp++] = static_cast<uint8_t>(((mlen - kMatchMin) << 2) | (offset >> 8));
  out[dp++] = static_cast<uint8_t>(offset);
  return sp + mlen;
}

}  // namespace

std::optional<size_t> LzjbCompress(ByteView src, MutableByteView dst, LzjbTable& table,
                                   size_t* least_budget) {
  table.fill(0);
  const uint8_t* const in = src.data();
  uint8_t* const out = dst.data();
  const size_t s_len = src.size();
  const int64_t give_up_at = static_cast<int64_t>(dst.size()) - kGroupReserve;
  // Positions past this one are always literals (ZFS: src > s_start + s_len - MATCH_MAX).
  const int64_t last_match_pos = static_cast<int64_t>(s_len) - static_cast<int64_t>(kMatchMax);
  size_t sp = 0;
  size_t dp = 0;
  size_t need = 0;  // the largest budget a group start asked for: dp + 18
  while (sp < s_len) {
    // One copy-map byte, then up to 8 items; the budget test happens only here.
    if (static_cast<int64_t>(dp) >= give_up_at) return std::nullopt;
    need = dp + kGroupReserve + 1;
    const size_t copymap = dp;
    out[dp++] = 0;
    uint8_t map_byte = 0;
    if (static_cast<int64_t>(sp + 7 * kMatchMax) <= last_match_pos) {
      // All 8 items start in the match region (each advances at most kMatchMax).
      for (unsigned bit = 0; bit < 8; ++bit) sp = EncodeItem(in, sp, out, dp, map_byte, bit, table);
    } else {
      for (unsigned bit = 0; bit < 8 && sp < s_len; ++bit) {
        if (static_cast<int64_t>(sp) > last_match_pos) {
          out[dp++] = in[sp++];
        } else {
          sp = EncodeItem(in, sp, out, dp, map_byte, bit, table);
        }
      }
    }
    out[copymap] = map_byte;
  }
  if (least_budget != nullptr) *least_budget = std::max(need, dp);
  return dp;
}

Status LzjbDecompress(ByteView src, MutableByteView dst) {
  const size_t s_len = src.size();
  const size_t d_len = dst.size();
  size_t sp = 0;
  size_t dp = 0;
  unsigned copymap = 0;
  unsigned copymask = 128;
  while (dp < d_len) {
    copymask <<= 1;
    if (copymask == 256) {
      if (sp >= s_len) return Status::Corruption("lzjb: input ends before the block is full");
      copymask = 1;
      copymap = src[sp++];
    }
    if (copymap & copymask) {
      if (sp + 2 > s_len) return Status::Corruption("lzjb: input ends inside a match");
      size_t mlen = (src[sp] >> 2) + kMatchMin;
      const size_t offset = ((static_cast<size_t>(src[sp]) << 8) | src[sp + 1]) & kOffsetMask;
      sp += 2;
      if (offset == 0 || offset > dp) return Status::Corruption("lzjb: match before block start");
      // Overlapping copies are allowed: byte by byte, as ZFS does.
      for (; mlen > 0 && dp < d_len; --mlen, ++dp) dst[dp] = dst[dp - offset];
    } else {
      if (sp >= s_len) return Status::Corruption("lzjb: input ends before the block is full");
      dst[dp++] = src[sp++];
    }
  }
  return Status::Ok();
}

}  // namespace zsim::codec
