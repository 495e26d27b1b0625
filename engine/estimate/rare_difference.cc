// engine/estimate/rare_difference.cc

#include "engine/estimate/rare_difference.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace zsim::estimate {
namespace {

// P(Binomial(trials, p) <= k), summed in log space (trials can be large, p small).
double BinomialCdf(uint64_t k, uint64_t trials, double p) {
  if (k >= trials) return 1;
  const double lp = std::log(p), lq = std::log1p(-p);
  const double lg_n = std::lgamma(double(trials) + 1);
  double sum = 0;
  for (uint64_t i = 0; i <= k; ++i) {
    const double lt = lg_n - std::lgamma(double(i) + 1) - std::lgamma(double(trials - i) + 1) +
                      double(i) * lp + double(trials - i) * lq;
    sum += std::exp(lt);
  }
  return sum;
}

}  // namespace

uint64_t DifferingCountUpperBound(uint64_t seen, uint64_t sampled, uint64_t population) {
  const uint64_t unsampled = population > sampled ? population - sampled : 0;
  if (unsampled == 0) return seen;
  if (sampled == 0) return seen + unsampled;
  const double f = double(sampled) / double(population);
  // P(Binomial(K, f) <= seen) falls as K grows: the largest K in [seen, seen + unsampled] where
  // it is still >= 2.5%, by bisection.
  constexpr double kTail = 0.025;
  uint64_t lo = seen, hi = seen + unsampled;
  if (BinomialCdf(seen, hi, f) >= kTail) return hi;
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (BinomialCdf(seen, mid, f) >= kTail ? lo : hi) = mid;
  }
  return lo;
}

void RareDifferenceBound::AddUnsampled(double rise, double fall) {
  ++unsampled_;
  Keep(&rises_, std::max(0.0, rise));
  Keep(&falls_, std::max(0.0, fall));
}

void RareDifferenceBound::Keep(std::vector<double>* heap, double v) {
  if (heap->size() < kKept) {
    heap->push_back(v);
    std::push_heap(heap->begin(), heap->end(), std::greater<>());
  } else if (v > heap->front()) {
    std::pop_heap(heap->begin(), heap->end(), std::greater<>());
    heap->back() = v;
    std::push_heap(heap->begin(), heap->end(), std::greater<>());
  }
}

double RareDifferenceBound::SumLargest(std::vector<double> heap, uint64_t count) {
  std::sort(heap.begin(), heap.end(), std::greater<>());
  double sum = 0;
  for (size_t i = 0; i < heap.size() && i < count; ++i) sum += heap[i];
  if (count > heap.size() && !heap.empty()) sum += double(count - heap.size()) * heap.back();
  return sum;
}

uint64_t RareDifferenceBound::UnsampledDifferingBound() const {
  const uint64_t total = DifferingCountUpperBound(differing_, sampled_, sampled_ + unsampled_);
  return std::min(unsampled_, total - differing_);
}

std::array<double, 2> RareDifferenceBound::Bounds() const {
  const uint64_t count = UnsampledDifferingBound();
  return {SumLargest(falls_, count), SumLargest(rises_, count)};
}

}  // namespace zsim::estimate
