// engine/estimate/ratio_interval.h
//
// The 95% interval of a compression ratio whose psize is part exact, part estimated.
//
// Thread safety: a pure function.

#ifndef ZSIM_ENGINE_ESTIMATE_RATIO_INTERVAL_H_
#define ZSIM_ENGINE_ESTIMATE_RATIO_INTERVAL_H_

#include <array>

namespace zsim::estimate {

// compressratio's 95% interval when psize = `fixed` (known exactly: metadata, zero blocks, a
// census) + an estimated part `estimate` whose own interval is [lo, hi] (`hi` infinite when the
// sample says nothing). `l` is the lsize side (metadata included). Without a usable sample only
// the bounds of the possible hold: from stored uncompressed (1) to every estimated block
// embedded in its block pointer (psize 0), or exactly 1 without compression. The interval always
// holds the (unrounded) estimate itself.
std::array<double, 2> CompressRatioInterval(double l, double fixed, double estimate, double lo,
                                            double hi, bool compressing);

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_RATIO_INTERVAL_H_
