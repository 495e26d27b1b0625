// engine/estimate/rare_difference.h
//
// The certain-at-97.5% bounds of a follower's psize (a costly codec level coded on a sample) on
// its near anchor (a cheaper level of the same codec coded on every block) when few sampled
// blocks differ between the two.
//
// Why: psize is allocated in sectors (4K at ashift 12), so gzip-9's psize equals gzip-6's on
// almost every block (12 of 928 unique 128K blocks of the bundled database sample differ). A
// sample holding none or few of the differing blocks has residuals y - R x of 0: the linearised
// variance (ratio_estimator.h) gives a zero-width interval whatever the unsampled blocks hold.
// Here the difference is a rare-event total instead:
//   - how many unsampled blocks differ: the sampled blocks are those of a fingerprint level, a
//     Bernoulli sample of fraction f = n / N; k of the n differ. The total count K of differing
//     blocks is at most K_U, the largest K with P(Binomial(K, f) <= k) >= 2.5% (the one-sided
//     Clopper-Pearson bound on the count), so at most K_U - k unsampled blocks differ (and no
//     more than are unsampled);
//   - by how much each: nothing ties a follower's psize to its anchor's, only the bounds of the
//     possible: psize is at least 0 (embedded in its block pointer) and at most lsize (stored
//     uncompressed). An unsampled block's psize can so rise by refs x (lsize - anchor) and fall
//     by refs x anchor, both known for every block (the anchor was coded on every one). The
//     bound adds the largest K_U - k rises (falls) among the unsampled blocks.
// The follower's total psize then lies in [sampled psize + unsampled anchor - falls, ... +
// rises]: sound at 97.5% on each side, whatever the data; wide when the blocks are compressible
// (a rise is a whole record), which is the price of a sample that saw no difference.
//
// Thread safety: a value; one thread at a time. Its figures do not depend on the order of the
// blocks (the largest values are kept as a set, summed in order).

#ifndef ZSIM_ENGINE_ESTIMATE_RARE_DIFFERENCE_H_
#define ZSIM_ENGINE_ESTIMATE_RARE_DIFFERENCE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zsim::estimate {

// The largest count K of differing units in a population, at 97.5% one-sided, when a Bernoulli
// sample of fraction `sampled` / `population` holds `seen` of them: the largest K with
// P(Binomial(K, f) <= seen) >= 0.025, capped at seen + (population - sampled). `population`
// when nothing was sampled; `seen` when everything was.
uint64_t DifferingCountUpperBound(uint64_t seen, uint64_t sampled, uint64_t population);

class RareDifferenceBound {
 public:
  // A sampled block: the follower's and the anchor's psize, each times the block's refs.
  void AddSampled(double follower, double anchor) {
    ++sampled_;
    if (follower != anchor) ++differing_;
  }
  // A block not sampled: how far its refs-weighted psize could rise above the anchor's
  // (refs x (lsize - anchor)) and fall below it (refs x anchor).
  void AddUnsampled(double rise, double fall);

  uint64_t sampled() const { return sampled_; }
  uint64_t differing() const { return differing_; }
  uint64_t unsampled() const { return unsampled_; }
  // At most this many unsampled blocks differ (97.5%, DifferingCountUpperBound).
  uint64_t UnsampledDifferingBound() const;
  // {largest fall, largest rise} of the unsampled blocks' total against their anchor's: the sum
  // of the UnsampledDifferingBound() largest falls (rises). Both >= 0.
  std::array<double, 2> Bounds() const;

  // Values kept per side; past it, a count beyond takes the smallest kept value for each further
  // block (at least every value not kept: still a bound).
  static constexpr std::size_t kKept = 1024;

 private:
  static void Keep(std::vector<double>* heap, double v);
  static double SumLargest(std::vector<double> heap, uint64_t count);

  uint64_t sampled_ = 0, differing_ = 0, unsampled_ = 0;
  std::vector<double> rises_, falls_;  // min-heaps of the kKept largest
};

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_RARE_DIFFERENCE_H_
