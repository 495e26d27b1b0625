#include "engine/codec/zle.h"

#include <emmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace zsim::codec {
namespace {

// zio_compress_table: compression=zle uses n = 64. A length byte b < n is followed by b + 1
// literals; b >= n stands for b + 1 - n zero bytes (at most 256 - n = 192).
constexpr size_t kN = 64;
constexpr size_t kMaxZeroRun = 256 - kN;

// Bit i set when p[i] == 0, for the 64 bytes at p (SSE2 is the x86-64 baseline).
inline uint64_t ZeroMask64(const uint8_t* p) {
  const __m128i zero = _mm_setzero_si128();
  uint64_t mask = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    mask |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero))))
            << (16 * i);
  }
  return mask;
}

inline uint64_t ZeroMaskScalar(const uint8_t* p, size_t m) {
  uint64_t mask = 0;
  for (size_t i = 0; i < m; ++i) mask |= static_cast<uint64_t>(p[i] == 0) << i;
  return mask;
}

// Length of the literal run zle.c takes at p (p[0] != 0), given m = min(n, bytes left) >= 1:
// it copies while fewer than m - 1 bytes are taken and the current or the next byte is non-zero,
// then takes one more byte if it is non-zero. So the run stops at the first pair of zeros that
// starts before index m - 1.
inline size_t LiteralRun(const uint8_t* p, size_t m) {
  const uint64_t zeros = m == 64 ? ZeroMask64(p) : ZeroMaskScalar(p, m);
  // A pair may start at indices 0 .. m - 2 only (m <= 64, so the shift is defined).
  const uint64_t pairs = zeros & (zeros >> 1) & ((1ull << (m - 1)) - 1);
  if (pairs != 0) return static_cast<size_t>(__builtin_ctzll(pairs));
  return (m - 1) + (p[m - 1] != 0 ? 1 : 0);
}

// First index in [from, to) whose byte is non-zero, or `to`.
inline size_t SkipZeros(const uint8_t* in, size_t from, size_t to) {
  const __m128i zero = _mm_setzero_si128();
  size_t i = from;
  while (i + 16 <= to) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const unsigned nonzero =
        ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero))) & 0xFFFFu;
    if (nonzero != 0) return i + static_cast<size_t>(__builtin_ctz(nonzero));
    i += 16;
  }
  while (i < to && in[i] == 0) ++i;
  return i;
}

}  // namespace

std::optional<size_t> ZleCompress(ByteView src, MutableByteView dst, size_t* least_budget) {
  const uint8_t* const in = src.data();
  uint8_t* const out = dst.data();
  const size_t s_len = src.size();
  const size_t d_len = dst.size();
  size_t sp = 0;
  size_t dp = 0;
  size_t need = 0;  // the largest d_len a test asked for
  // zle.c: while (src < s_end && dst < d_end - 1).
  while (sp < s_len && dp + 1 < d_len) {
    need = std::max(need, dp + 2);
    const size_t first = sp;
    const size_t len_pos = dp++;
    if (in[sp] == 0) {
      sp = SkipZeros(in, sp, std::min(sp + kMaxZeroRun, s_len));
      out[len_pos] = static_cast<uint8_t>(sp - first - 1 + kN);
    } else {
      if (d_len - dp < kN) break;  // a literal run needs room for n bytes
      need = std::max(need, dp + kN);
      const size_t m = std::min(kN, s_len - sp);
      const size_t run = LiteralRun(in + sp, m);
      if (m == kN) {
        std::memcpy(out + dp, in + sp, kN);  // fixed-size copy; room for n bytes was checked
      } else {
        std::memcpy(out + dp, in + sp, run);
      }
      dp += run;
      sp += run;
      out[len_pos] = static_cast<uint8_t>(run - 1);
    }
  }
  if (sp != s_len) return std::nullopt;
  if (least_budget != nullptr) *least_budget = std::max(need, dp);
  return dp;
}

Status ZleDecompress(ByteView src, MutableByteView dst) {
  const size_t s_len = src.size();
  const size_t d_len = dst.size();
  size_t sp = 0;
  size_t dp = 0;
  while (sp < s_len && dp < d_len) {
    size_t len = 1 + static_cast<size_t>(src[sp++]);
    if (len <= kN) {
      if (sp + len > s_len || dp + len > d_len) return Status::Corruption("zle: literal overruns");
      std::memcpy(dst.data() + dp, src.data() + sp, len);
      sp += len;
      dp += len;
    } else {
      len -= kN;
      if (dp + len > d_len) return Status::Corruption("zle: zero run overruns the block");
      std::memset(dst.data() + dp, 0, len);
      dp += len;
    }
  }
  if (dp != d_len) return Status::Corruption("zle: input ends before the block is full");
  return Status::Ok();
}

}  // namespace zsim::codec
