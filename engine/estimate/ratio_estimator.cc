#include "engine/estimate/ratio_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zsim::estimate {

// sum((y - R x)^2) / (n - 1) / x_mean^2, the sum expanded so that the estimator needs no
// per-unit storage; n >= 2 and sum(x) > 0.
double RatioEstimator::ResidualVariancePerX() const {
  const double n = static_cast<double>(n_);
  const double r = sy_ / sx_;
  const double ss = std::max(0.0, syy_ - 2 * r * sxy_ + r * r * sxx_);
  const double x_mean = sx_ / n;
  return ss / (n - 1) / (x_mean * x_mean);
}

double RatioEstimator::StandardError(double population_units) const {
  if (n_ < 2 || sx_ <= 0) return std::numeric_limits<double>::infinity();
  const double n = static_cast<double>(n_);
  if (population_units <= n) return 0.0;  // every unit was seen
  const double f = n / population_units;
  return std::sqrt((1 - f) * ResidualVariancePerX() / n);
}

double RatioEstimator::RelativeUnitVariance() const {
  if (n_ < 2 || sx_ <= 0 || sy_ <= 0) return std::numeric_limits<double>::infinity();
  const double r = sy_ / sx_;
  return ResidualVariancePerX() / (r * r);
}

double RatioEstimator::RelativeHalfWidth95(double population_units) const {
  const double r = Ratio();
  if (r <= 0) return std::numeric_limits<double>::infinity();
  return 1.96 * StandardError(population_units) / r;
}

std::array<double, 2> RatioEstimator::Interval95(double population_units) const {
  const double r = Ratio();
  const double h = 1.96 * StandardError(population_units);
  return {std::max(0.0, r - h), r + h};
}

}  // namespace zsim::estimate
