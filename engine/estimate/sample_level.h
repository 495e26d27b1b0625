// engine/estimate/sample_level.h
//
// Compression sampling by levels. Each fingerprint has a level: the number of trailing zero bits
// of its top 24 bits of `lo` (bits the DDT's shard and slot choice do not use, and independent of
// the dedup sampling bits in `hi`), so a block has level >= L with probability 2^-L. A costly
// codec runs on the unique blocks whose level is at least the current level; the level rises
// while the 95% interval stays well inside the target. The final estimate uses the highest level
// whose sample meets the target, over blocks that were all compressed, so it depends on the
// data, not on when the level rose.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_SAMPLE_LEVEL_H_
#define ZSIM_ENGINE_ESTIMATE_SAMPLE_LEVEL_H_

#include <bit>
#include <cstdint>

#include "zsim/scan_options.h"

namespace zsim::estimate {

inline constexpr int kMaxSampleLevel = 24;

// Level of a fingerprint's `lo` word: 0..kMaxSampleLevel.
inline int SampleLevel(uint64_t key_lo) {
  const uint64_t bits = (key_lo >> 40) | (uint64_t{1} << kMaxSampleLevel);
  return std::countr_zero(bits);
}

// Codecs costlier than lz4 that a default (not --exact) scan samples: gzip-N, zstd above level
// 1, and lzjb when lz4 is evaluated too (lzjb runs at about 2/3 of lz4's speed, and lz4's psize
// predicts lzjb's closely: the anchor of the ratio estimates). lz4, zle, zstd-1, zstd-fast-N,
// and lzjb without lz4 (profile v23 has no lz4) run on every unique block.
inline bool SampledByDefault(Compression c, bool lz4_evaluated) {
  return c.algorithm == CompressionAlgorithm::kGzip ||
         (c.algorithm == CompressionAlgorithm::kZstd && c.level >= 2) ||
         (c.algorithm == CompressionAlgorithm::kLzjb && lz4_evaluated);
}

// Target half width of the 95% interval of a sampled codec's psize total, relative.
inline constexpr double kTargetRelativeHalfWidth = 0.005;
// The sample level rises when the interval one level up is already this narrow.
inline constexpr double kRaiseRelativeHalfWidth = 0.8 * kTargetRelativeHalfWidth;
// Fewest sampled blocks a level needs before it may be used.
inline constexpr uint64_t kMinSampledBlocks = 400;

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_SAMPLE_LEVEL_H_
