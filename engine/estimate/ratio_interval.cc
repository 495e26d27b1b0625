#include "engine/estimate/ratio_interval.h"

#include <algorithm>
#include <cmath>

namespace zsim::estimate {

std::array<double, 2> CompressRatioInterval(double l, double fixed, double estimate, double lo,
                                            double hi, bool compressing) {
  double r_lo = 1.0, r_hi = compressing ? std::max(1.0, l / std::max(1.0, fixed)) : 1.0;
  if (std::isfinite(hi)) {
    r_lo = std::max(1.0, l / (hi + fixed));
    if (std::max(0.0, lo) + fixed > 0) r_hi = l / (std::max(0.0, lo) + fixed);
  }
  const double point = l / std::max(1.0, estimate + fixed);
  return {std::min(r_lo, point), std::max({r_lo, r_hi, point})};
}

}  // namespace zsim::estimate
