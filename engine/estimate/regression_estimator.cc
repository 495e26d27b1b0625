#include "engine/estimate/regression_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zsim::estimate {

void RegressionEstimator::Merge(const RegressionEstimator& o) {
  n_ += o.n_;
  ss_ += o.ss_;
  sx_ += o.sx_;
  xx_ += o.xx_;
  sy_ += o.sy_;
  xy_ += o.xy_;
  yy_ += o.yy_;
  s_ += o.s_;
  x_ += o.x_;
  y_ += o.y_;
}

bool RegressionEstimator::HasFit() const {
  // The normal equations' determinant against its scale: 0 when x is proportional to s
  // (Cauchy-Schwarz), rounding noise of the raw sums when nearly so.
  const double det = ss_ * xx_ - sx_ * sx_;
  return n_ >= 4 && det > 1e-9 * ss_ * xx_;
}

RegressionEstimator::Fit RegressionEstimator::Coefficients() const {
  const double det = ss_ * xx_ - sx_ * sx_;
  return {(xx_ * sy_ - sx_ * xy_) / det, (ss_ * xy_ - sx_ * sy_) / det};
}

double RegressionEstimator::ResidualSum(const Fit& f) const { return y_ - f.a * s_ - f.b * x_; }

double RegressionEstimator::ResidualSquares(const Fit& f) const {
  const double v =
      yy_ + f.a * f.a * ss_ + f.b * f.b * xx_ - 2 * f.a * sy_ - 2 * f.b * xy_ + 2 * f.a * f.b * sx_;
  return std::max(0.0, v);
}

double RegressionEstimator::Total(double units, double s_total, double x_total) const {
  const Fit f = Coefficients();
  const double n = static_cast<double>(n_);
  return std::max(0.0, f.a * s_total + f.b * x_total + units / n * ResidualSum(f));
}

double RegressionEstimator::RelativeHalfWidth95(double units, double s_total,
                                                double x_total) const {
  if (!HasFit()) return std::numeric_limits<double>::infinity();
  const double total = Total(units, s_total, x_total);
  if (!(total > 0)) return std::numeric_limits<double>::infinity();
  const double n = static_cast<double>(n_);
  if (units <= n) return 0.0;  // every unit was seen
  const Fit f = Coefficients();
  const double e_sum = ResidualSum(f);
  const double centred = std::max(0.0, ResidualSquares(f) - e_sum * e_sum / n);
  const double fpc = 1 - n / units;
  const double se = units * std::sqrt(fpc * centred / (n - 3) / n);
  return 1.96 * se / total;
}

}  // namespace zsim::estimate
