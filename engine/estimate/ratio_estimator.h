// engine/estimate/ratio_estimator.h
//
// The estimate module, overview. zsim samples by fingerprint bits, never by a random number
// generator, so which blocks are in a sample depends on their content only (the same for any
// thread count or order). Two uses:
//   - compression sampling (costly codecs run on the unique blocks of a sample level, see
//     sample_level.h), whose totals are ratio estimates: psize_total ~ R x lsize_total;
//   - dedup sampling (--sample 1/M, --max-memory): whole DDT entries kept for 1/M of the key
//     space, whose ratios (dedup, compress) are ratio estimates over entries.
// RatioEstimator gives the estimate R = sum(y) / sum(x) over the sampled units and its 95%
// confidence interval by the usual linearisation (Cochran, "Sampling Techniques", 6.4):
//   Var(R) = (1 - f) / (n x_mean^2) * sum((y_i - R x_i)^2) / (n - 1),  f = n / N.
//
// Thread safety: a value; one thread at a time; Merge to combine.

#ifndef ZSIM_ENGINE_ESTIMATE_RATIO_ESTIMATOR_H_
#define ZSIM_ENGINE_ESTIMATE_RATIO_ESTIMATOR_H_

#include <array>
#include <cstdint>

namespace zsim::estimate {

class RatioEstimator {
 public:
  // One sampled unit with auxiliary value x (known for the whole population, e.g. lsize) and
  // study value y (known only in the sample, e.g. psize).
  void Add(double x, double y) {
    ++n_;
    sx_ += x;
    sy_ += y;
    sxx_ += x * x;
    syy_ += y * y;
    sxy_ += x * y;
  }
  void Merge(const RatioEstimator& o) {
    n_ += o.n_;
    sx_ += o.sx_;
    sy_ += o.sy_;
    sxx_ += o.sxx_;
    syy_ += o.syy_;
    sxy_ += o.sxy_;
  }

  // The sums themselves, to keep an estimator in a file (state/state_file.h) and restore it.
  struct Moments {
    uint64_t n = 0;
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  };
  Moments moments() const { return {n_, sx_, sy_, sxx_, syy_, sxy_}; }
  static RatioEstimator FromMoments(const Moments& m) {
    RatioEstimator r;
    r.n_ = m.n;
    r.sx_ = m.sx;
    r.sy_ = m.sy;
    r.sxx_ = m.sxx;
    r.syy_ = m.syy;
    r.sxy_ = m.sxy;
    return r;
  }

  uint64_t n() const { return n_; }
  double sum_x() const { return sx_; }
  double sum_y() const { return sy_; }
  // The units the sample counts for: sum(x)^2 / sum(x^2) (Kish's effective sample size), n when
  // the units' x are equal, about k when k units hold nearly all of sum(x) (a few 1M blocks
  // among many small ones): the normal interval rests on this many, not on n. 0 when empty.
  double EffectiveUnits() const { return sxx_ > 0 ? sx_ * sx_ / sxx_ : 0.0; }
  // sum(y) / sum(x); 0 when nothing was sampled.
  double Ratio() const { return sx_ > 0 ? sy_ / sx_ : 0.0; }
  // Standard error of Ratio() for a sample of n units out of `population_units` (finite
  // population correction; population_units <= n means a census: 0). Infinity when n < 2.
  double StandardError(double population_units) const;
  // Half width of the 95% interval relative to the ratio (1.96 se / R); infinity if unknown.
  double RelativeHalfWidth95(double population_units) const;
  // The residuals' variance per unit relative to the ratio and the mean x:
  // sum((y - R x)^2) / (n - 1) / (x_mean R)^2, so that the relative standard error of R from n
  // units is sqrt((1 - f) v / n). Another sample of similar units may borrow it when its own
  // is too small to show its spread. Infinity when n < 2 or R = 0.
  double RelativeUnitVariance() const;
  // [R - 1.96 se, R + 1.96 se], clamped at 0.
  std::array<double, 2> Interval95(double population_units) const;

 private:
  double ResidualVariancePerX() const;

  uint64_t n_ = 0;
  double sx_ = 0, sy_ = 0, sxx_ = 0, syy_ = 0, sxy_ = 0;
};

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_RATIO_ESTIMATOR_H_
