// engine/estimate/ratio_interval.h
//
// The 95% interval of a compression ratio whose psize is part exact, part estimated.
//
// Thread safety: a pure function.

#ifndef ZSIM_ENGINE_ESTIMATE_RATIO_INTERVAL_H_
#define ZSIM_ENGINE_ESTIMATE_RATIO_INTERVAL_H_

#include <array>
#include <cstdint>

namespace zsim::estimate {

// compressratio's 95% interval when psize = `fixed` (known exactly: metadata, zero blocks, a
// census) + an estimated part `estimate` whose own interval is [lo, hi] (`hi` infinite when the
// sample says nothing). `l` is the lsize side (metadata included). Without a usable sample only
// the bounds of the possible hold: from stored uncompressed (1) to every estimated block
// embedded in its block pointer (psize 0), or exactly 1 without compression. The interval always
// holds the (unrounded) estimate itself.
std::array<double, 2> CompressRatioInterval(double l, double fixed, double estimate, double lo,
                                            double hi, bool compressing);

// Fewest sampled blocks whose spread a normal interval may rest on, counted as effective units
// (RatioEstimator::EffectiveUnits: a few large blocks among many small ones count as few). Below
// it the spread of the sample says little (2-3 blocks all stored uncompressed have a variance of
// 0) and the normal quantile undercovers, so the interval takes the certain bounds instead
// (CertainPsizeBounds). 30: the usual rule of thumb for a normal approximation of a mean.
inline constexpr uint64_t kMinIntervalBlocks = 30;

// The bounds that hold whatever the blocks not coded hold: the sampled blocks' exact psize
// `sampled_psize`, plus between 0 (every other block embedded in its block pointer) and
// `unsampled_lsize` (every other block stored uncompressed: psize <= lsize). Zero width only when
// every block was coded (`unsampled_lsize` 0).
inline std::array<double, 2> CertainPsizeBounds(double sampled_psize, double unsampled_lsize) {
  return {sampled_psize, sampled_psize + (unsampled_lsize > 0 ? unsampled_lsize : 0.0)};
}

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_RATIO_INTERVAL_H_
