#include "engine/codec/lz4_zfs.h"

#include <lz4.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>

namespace zsim::codec {
namespace {

// The facts of lz4_zfs.c (docs/zfs_model.md §3.4), LZ4 r85 with COMPRESSIONLEVEL 12.
constexpr size_t kMinMatch = 4;
constexpr size_t kLastLiterals = 5;
constexpr size_t kMfLimit = 12;                // COPYLENGTH + MINMATCH
constexpr size_t kMinLength = kMfLimit + 1;    // shorter inputs are all literals
constexpr size_t kMaxDistance = 65535;         // (1 << MAXD_LOG) - 1, large variant only
constexpr size_t k64kLimit = (1u << 16) + 11;  // LZ4_64KLIMIT: below it, the 64K variant
constexpr uint32_t kSkipStrength = 6;          // NOTCOMPRESSIBLE_CONFIRMATION
constexpr uint32_t kFirstAttempt = (1u << kSkipStrength) + 3;  // 67 (liblz4 1.9 starts at 64)
constexpr size_t kTableBytes = 16384;                          // struct refTables, both variants
constexpr uint32_t kRunMask = 15;
constexpr uint32_t kMlMask = 15;

inline uint32_t Read32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only, as the hash is defined on the LE value
}
inline uint64_t Read64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Knuth's multiplicative hash of the 4 bytes at p: hash log 13 (64K variant) or 12.
template <bool kSmall>
inline uint32_t Hash(const uint8_t* p) {
  return (Read32(p) * 2654435761u) >> (kSmall ? 32 - 13 : 32 - 12);
}

// Bytes equal at a and b, counting up to (not including) `limit` measured from a.
inline size_t CommonBytes(const uint8_t* a, const uint8_t* b, const uint8_t* limit) {
  const uint8_t* const start = a;
  while (a + 8 <= limit) {
    const uint64_t diff = Read64(a) ^ Read64(b);
    if (diff != 0) return static_cast<size_t>(a - start) + (__builtin_ctzll(diff) >> 3);
    a += 8;
    b += 8;
  }
  while (a < limit && *a == *b) {
    ++a;
    ++b;
  }
  return static_cast<size_t>(a - start);
}

// Copies in 8-byte steps, up to 7 bytes past dst + n (the callers' room checks leave that room,
// exactly as ZFS's LZ4_WILDCOPY relies on).
inline void WildCopy(uint8_t* dst, const uint8_t* src, size_t n) {
  uint8_t* const end = dst + n;
  do {
    std::memcpy(dst, src, 8);
    dst += 8;
    src += 8;
  } while (dst < end);
}

inline uint8_t* WriteLength(uint8_t* op, size_t len) {
  for (; len >= 255; len -= 255) *op++ = 255;
  *op++ = static_cast<uint8_t>(len);
  return op;
}

// One call of LZ4_compress64kCtx (kSmall) or LZ4_compressCtx. Returns the LZ4 block length, or
// 0 when an output check fails (ZFS's failure value).
template <bool kSmall>
size_t CompressR85(const uint8_t* const in, const size_t isize, uint8_t* const dst,
                   const size_t osize, void* const table_memory, size_t& need) {
  // ZFS's table: 16 KiB, zeroed per call, 8192 16-bit positions or 4096 32-bit ones.
  using Entry = std::conditional_t<kSmall, uint16_t, uint32_t>;
  Entry* const table = static_cast<Entry*>(table_memory);
  std::memset(table, 0, kTableBytes);
  const uint8_t* ip = in;
  const uint8_t* anchor = in;
  const uint8_t* const iend = in + isize;
  uint8_t* op = dst;
  uint8_t* const oend = dst + osize;

  // ZFS's room tests (op + n > oend), signed: after the first token op is one past oend
  // when osize is 0 (budget 4), and the test must then fail as ZFS's pointer test does. `need`
  // keeps the largest osize a test asked for (the output does not depend on osize).
  need = 0;
  auto lacks = [&](const uint8_t* o, size_t n) {
    need = std::max(need, static_cast<size_t>(o - dst) + n);
    return oend - o < static_cast<ptrdiff_t>(n);
  };
  auto lookup = [&](uint32_t h) -> const uint8_t* { return in + table[h]; };
  auto store = [&](uint32_t h, const uint8_t* p) { table[h] = static_cast<Entry>(p - in); };

  if (isize >= kMinLength) {
    const uint8_t* const mflimit = iend - kMfLimit;
    const uint8_t* const matchlimit = iend - kLastLiterals;
    if (!kSmall) store(Hash<kSmall>(ip), ip);  // the 64K variant leaves position 0 implicit
    ++ip;
    uint32_t forward_h = Hash<kSmall>(ip);
    for (;;) {
      // Find a match: step grows by one every 64 failed attempts, starting at attempt 67.
      uint32_t attempts = kFirstAttempt;
      const uint8_t* forward_ip = ip;
      const uint8_t* ref;
      do {
        const uint32_t h = forward_h;
        const size_t step = attempts++ >> kSkipStrength;
        ip = forward_ip;
        // forward_ip > mflimit (ip itself may already be mflimit + 1 here)
        if (static_cast<ptrdiff_t>(step) > mflimit - ip) goto last_literals;
        forward_ip = ip + step;
        forward_h = Hash<kSmall>(forward_ip);
        ref = lookup(h);
        store(h, ip);
      } while (__builtin_expect(Read32(ref) != Read32(ip), 1) ||
               (!kSmall && static_cast<size_t>(ip - ref) > kMaxDistance));

      // Catch up backwards over equal bytes.
      while (ip > anchor && ref > in && ip[-1] == ref[-1]) {
        --ip;
        --ref;
      }

      // Literal run; ZFS's check: op + length + (2 + 1 + LASTLITERALS) + (length >> 8) > oend.
      const size_t length = static_cast<size_t>(ip - anchor);
      uint8_t* token = op++;
      if (lacks(op, length + 8 + (length >> 8))) return 0;
      if (length >= kRunMask) {
        *token = static_cast<uint8_t>(kRunMask << 4);
        op = WriteLength(op, length - kRunMask);
      } else {
        *token = static_cast<uint8_t>(length << 4);
      }
      if (length > 0) WildCopy(op, anchor, length);
      op += length;

      for (;;) {
        // Offset, then the match length counted up to LASTLITERALS before the end.
        const uint16_t offset = static_cast<uint16_t>(ip - ref);
        op[0] = static_cast<uint8_t>(offset);
        op[1] = static_cast<uint8_t>(offset >> 8);
        op += 2;
        ip += kMinMatch;
        ref += kMinMatch;
        anchor = ip;
        ip += CommonBytes(ip, ref, matchlimit);

        // ZFS's check: op + (1 + LASTLITERALS) + (len >> 8) > oend.
        size_t len = static_cast<size_t>(ip - anchor);
        if (lacks(op, 1 + kLastLiterals + (len >> 8))) return 0;
        if (len >= kMlMask) {
          *token = static_cast<uint8_t>(*token + kMlMask);
          op = WriteLength(op, len - kMlMask);
        } else {
          *token = static_cast<uint8_t>(*token + len);
        }

        if (ip > mflimit) {  // end of chunk
          anchor = ip;
          goto last_literals;
        }
        store(Hash<kSmall>(ip - 2), ip - 2);
        // Test the next position for an immediate match (no literals between).
        const uint32_t h = Hash<kSmall>(ip);
        ref = lookup(h);
        store(h, ip);
        if ((kSmall || static_cast<size_t>(ip - ref) <= kMaxDistance) &&
            Read32(ref) == Read32(ip)) {
          token = op++;
          *token = 0;
          continue;
        }
        break;
      }
      anchor = ip++;
      forward_h = Hash<kSmall>(ip);
    }
  }

last_literals:
  // ZFS's check: op + lastRun + 1 + ((lastRun + 255 - RUN_MASK) / 255) > oend.
  const size_t last_run = static_cast<size_t>(iend - anchor);
  if (lacks(op, last_run + 1 + (last_run + 255 - kRunMask) / 255)) return 0;
  if (last_run >= kRunMask) {
    *op++ = static_cast<uint8_t>(kRunMask << 4);
    op = WriteLength(op, last_run - kRunMask);
  } else {
    *op++ = static_cast<uint8_t>(last_run << 4);
  }
  if (last_run > 0) std::memcpy(op, anchor, last_run);  // an empty block has no source pointer
  op += last_run;
  return static_cast<size_t>(op - dst);
}

}  // namespace

Lz4ZfsCompressor::Lz4ZfsCompressor() : table_(new uint32_t[kTableBytes / sizeof(uint32_t)]()) {}

std::optional<size_t> Lz4ZfsCompressor::Compress(ByteView src, MutableByteView dst,
                                                 size_t* least_budget) {
  if (dst.size() < kLz4HeaderBytes) return std::nullopt;  // ZFS asserts d_len >= 4
  const size_t isize = src.size();
  const size_t osize = dst.size() - kLz4HeaderBytes;
  uint8_t* const block = dst.data() + kLz4HeaderBytes;
  size_t need = 0;
  const size_t n = isize < k64kLimit
                       ? CompressR85<true>(src.data(), isize, block, osize, table_.get(), need)
                       : CompressR85<false>(src.data(), isize, block, osize, table_.get(), need);
  if (n == 0) return std::nullopt;
  if (least_budget != nullptr) *least_budget = kLz4HeaderBytes + std::max(need, n);
  dst[0] = static_cast<uint8_t>(n >> 24);
  dst[1] = static_cast<uint8_t>(n >> 16);
  dst[2] = static_cast<uint8_t>(n >> 8);
  dst[3] = static_cast<uint8_t>(n);
  return n + kLz4HeaderBytes;
}

Status Lz4ZfsDecompress(ByteView src, MutableByteView dst) {
  if (src.size() < kLz4HeaderBytes) return Status::Corruption("lz4: shorter than its header");
  const uint64_t n = (static_cast<uint64_t>(src[0]) << 24) | (static_cast<uint64_t>(src[1]) << 16) |
                     (static_cast<uint64_t>(src[2]) << 8) | src[3];
  if (n + kLz4HeaderBytes > src.size()) return Status::Corruption("lz4: length exceeds input");
  if (dst.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Status::Corruption("lz4: block too large");
  }
  const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(src.data() + kLz4HeaderBytes),
                                      reinterpret_cast<char*>(dst.data()), static_cast<int>(n),
                                      static_cast<int>(dst.size()));
  if (got < 0 || static_cast<size_t>(got) != dst.size()) {
    return Status::Corruption("lz4: invalid block");
  }
  return Status::Ok();
}

}  // namespace zsim::codec
