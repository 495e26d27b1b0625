#include "engine/estimate/distinct_counter.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

namespace zsim::estimate {
namespace {

// sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1): the share of empty registers' term (Ertl, eq. 17).
double Sigma(double x) {
  if (x == 1.0) return std::numeric_limits<double>::infinity();
  double y = 1, z = x, prev;
  do {
    x *= x;
    prev = z;
    z += x * y;
    y += y;
  } while (z != prev);
  return z;
}

// tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3: the saturated registers' term
// (Ertl, eq. 22).
double Tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double y = 1, z = 1 - x, prev;
  do {
    x = std::sqrt(x);
    prev = z;
    y *= 0.5;
    z -= (1 - x) * (1 - x) * y;
  } while (z != prev);
  return z / 3;
}

}  // namespace

DistinctCounter::DistinctCounter(int precision)
    : precision_(precision),
      registers_(std::make_unique<std::atomic<uint8_t>[]>(size_t{1} << precision)) {
  assert(precision >= 4 && precision <= 20);
  for (size_t i = 0; i < (size_t{1} << precision_); ++i) registers_[i].store(0);
}

void DistinctCounter::Merge(const DistinctCounter& other) {
  assert(other.precision_ == precision_);
  for (size_t i = 0; i < (size_t{1} << precision_); ++i) {
    RaiseTo(registers_[i], other.registers_[i].load(std::memory_order_relaxed));
  }
}

double DistinctCounter::Estimate() const {
  const size_t m = size_t{1} << precision_;
  const int q = 64 - precision_;  // register values are 0 .. q + 1
  std::vector<double> count(static_cast<size_t>(q) + 2, 0.0);
  for (size_t i = 0; i < m; ++i) count[registers_[i].load(std::memory_order_relaxed)] += 1;
  const double md = static_cast<double>(m);
  if (count[0] == md) return 0.0;
  double z = md * Tau(1 - count[static_cast<size_t>(q) + 1] / md);
  for (int k = q; k >= 1; --k) z = 0.5 * (z + count[static_cast<size_t>(k)]);
  z += md * Sigma(count[0] / md);
  const double alpha_inf = 1 / (2 * std::log(2.0));
  return alpha_inf * md * md / z;
}

double DistinctCounter::RelativeStandardError() const {
  return 1.04 / std::sqrt(static_cast<double>(uint64_t{1} << precision_));
}

}  // namespace zsim::estimate
