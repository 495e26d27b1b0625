// engine/estimate/ratio_regression.h
//
// RegressionSums: the correction of a sampled table's allocated ratio by the referenced ratio an
// occurrence sample knows better (finish/sampled_table.cc); KeysRepeat: where that
// correction is in doubt.
//
// Thread safety: a value, one thread at a time.

#ifndef ZSIM_ENGINE_ESTIMATE_RATIO_REGRESSION_H_
#define ZSIM_ENGINE_ESTIMATE_RATIO_REGRESSION_H_

#include <algorithm>
#include <cmath>

namespace zsim::estimate {

// The regression of a stratum's allocated ratio (dsize per u over its kept entries, a) on the
// same entries' referenced ratio (refs x dsize per refs x u, rho). With an occurrence sample the
// true referenced ratio is known far better than the kept entries' rho, and the two ratios err
// together as far as the same entries make both: a = a - b (rho - rho_true), b the slope of
// a's error on rho's (Cochran, "Sampling Techniques", 7.1, linearised for two ratios). A few
// kept entries that all compress well make both low together (b near 1: the correction lifts
// a by what rho lacks); a heavily referenced key kept or missed moves rho alone (b near 0).
// Two passes: the ratios first, then the residuals about them (sums of squares expanded in one
// pass cancel to noise when the entries are alike).
struct RegressionSums {
  double n = 0, u = 0, d = 0, ru = 0, rd = 0, ruu = 0, rruu = 0;  // first pass
  double ee_a = 0, ee_r = 0, ee_ar = 0;                           // second pass
  void Add(double r, double ui, double di) {
    n += 1;
    u += ui;
    d += di;
    ru += r * ui;
    rd += r * di;
    ruu += r * ui * ui;
    rruu += r * r * ui * ui;
  }
  void AddResiduals(double r, double ui, double di) {
    if (u <= 0 || ru <= 0) return;
    const double e_a = di - d / u * ui, e_r = r * (di - rd / ru * ui);
    ee_a += e_a * e_a;
    ee_r += e_r * e_r;
    ee_ar += e_a * e_r;
  }
  struct Fit {
    double a;         // the corrected dsize per u
    double residual;  // the share of a's variance the regression leaves (1 - corr^2)
    double b;         // the slope: rho_true's own error passes into a times b
  };
  // a corrected to `rho_true`; no correction (residual 1) where the sums cannot support one.
  //
  // The correction holds while rho's distance from rho_true is what sampling the kept entries
  // gives. When it is more (z > 3 standard errors, judged with the larger of the kept entries'
  // spread and `v_occ`, the occurrences' relative unit variance), the kept sample misses what
  // moves rho (heavily referenced keys), not what moves a: correcting a by it put a dataset's
  // allocated side 9% high from 10,000 kept entries, so a is left alone. The slope is held to
  // [0, 1] (a correction of more than rho lacks is taken as noise), and a correction that would
  // leave nothing allocated is not made.
  Fit Correct(double rho_true, double rho_true_var, double v_occ) const {
    if (u <= 0 || ru <= 0 || n < 2) return {d > 0 && u > 0 ? d / u : 0.0, 1.0, 0.0};
    const double a = d / u, rho = rd / ru;
    const double var_rho_kept = ee_r / (ru * ru) * n / (n - 1);
    const double var_rho_occ =
        std::isfinite(v_occ) ? v_occ * rho_true * rho_true * rruu / (ru * ru) : 0.0;
    const double sd = std::sqrt(std::max(var_rho_kept, var_rho_occ) + rho_true_var);
    if (!(std::abs(rho - rho_true) <= 3 * sd)) return {a, 1.0, 0.0};
    double b, residual = 1.0;
    if (ee_a <= 1e-12 * d * d || ee_r <= 1e-12 * rd * rd) {
      // The kept entries all have one ratio (a few that compress alike): no spread to fit a
      // slope to. Take the slope of residuals in proportion to each entry's size, which is 1
      // when every kept entry is referenced alike and falls as some are referenced more.
      if (rruu <= 0) return {a, 1.0, 0.0};
      b = ruu * ru / (u * rruu);
    } else {
      b = ee_ar * ru / (u * ee_r);
      residual = 1.0 - std::min(1.0, ee_ar * ee_ar / (ee_a * ee_r));
    }
    b = std::clamp(b, 0.0, 1.0);
    const double corrected = a - b * (rho - rho_true);
    if (!(corrected > 0)) return {a, 1.0, 0.0};
    return {corrected, residual, b};
  }
};

// The share of a stratum's references beyond its distinct keys from which a correction by
// RegressionSums is in doubt, once the two counts' own errors are allowed for. Beyond what its
// variance counts, the correction errs by b (W - W_true), W being how far weighting the kept
// entries by their references moves their ratio (rho - a): the fit takes the kept entries' W for
// the stratum's. Where every reference is a distinct key W is 0 on both; where keys repeat, a few
// dozen kept entries may hold none of the repeated keys, or the wrong ones (docs/estimation.md).
inline constexpr double kDuplicateShare = 0.02;

// Whether a stratum's references, estimated from `occurrences` drawn at `level` (2^-level of
// them, every one at level 0), exceed its `keys` distinct keys (a sketch's count, of relative
// standard error `keys_error`) by more than kDuplicateShare, beyond two standard errors of the
// two counts together: at level 1, a few hundred occurrences of unique blocks count 4 to 10%
// more or fewer references than there are.
inline bool KeysRepeat(double keys, double keys_error, double occurrences, int level) {
  if (!(occurrences > 0)) return false;
  const double refs = std::ldexp(occurrences, level);
  const double refs_error = std::sqrt((1 - std::ldexp(1.0, -level)) / occurrences);
  return keys * (1 + 2 * std::hypot(refs_error, keys_error)) < (1 - kDuplicateShare) * refs;
}

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_RATIO_REGRESSION_H_
