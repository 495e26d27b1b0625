// engine/estimate/distinct_counter.h
//
// DistinctCounter: how many distinct 64-bit hashes were added, in a fixed few kilobytes, without
// keeping them. A HyperLogLog sketch (Flajolet et al., 2007): 2^p one-byte registers; a hash
// picks a register with its top p bits and offers the position of the first 1 bit of the rest;
// each register keeps the highest position offered. Duplicates change nothing, and the result
// does not depend on the order of Add calls, so it is the same for any thread count.
//
// The estimate is Ertl's improved raw estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", 2017, section 4): unbiased from 0 to far beyond 2^64 / 2^p without the
// empirical bias tables of HyperLogLog++, with relative standard error about 1.04 / sqrt(2^p).
// Below about 2^p / 10 distinct hashes it is far better than that (almost every hash has a
// register of its own), which the error bound does not claim.
//
// Why zsim has it: a dedup table sampled 1/M (--sample, --max-memory) sees only 1/M of the
// distinct blocks, and scaling that count by M carries the sample's whole error (about
// sqrt(M / distinct)). The sketch counts every distinct block, so the dedup ratio's denominator
// stays within a fraction of a percent however small M makes the table (finish/sampled_table.cc).
//
// Thread safety: Add from any thread concurrently (relaxed atomics: a register only rises);
// Estimate when no Add runs.

#ifndef ZSIM_ENGINE_ESTIMATE_DISTINCT_COUNTER_H_
#define ZSIM_ENGINE_ESTIMATE_DISTINCT_COUNTER_H_

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>

namespace zsim::estimate {

class DistinctCounter {
 public:
  // 2^precision registers (and bytes). REQUIRES: 4 <= precision <= 20.
  explicit DistinctCounter(int precision = 16);
  DistinctCounter(const DistinctCounter&) = delete;
  DistinctCounter& operator=(const DistinctCounter&) = delete;

  // `hash` must be uniformly distributed (a fingerprint word is).
  void Add(uint64_t hash) {
    const uint64_t index = hash >> (64 - precision_);
    // Position of the first 1 bit after the index bits, 1-based; q + 1 when they are all zero.
    const uint64_t rest = (hash << precision_) | (uint64_t{1} << (precision_ - 1));
    const auto rank = static_cast<uint8_t>(std::countl_zero(rest) + 1);
    RaiseTo(registers_[index], rank);
  }

  // Adds everything `other` saw (register-wise maximum; safe alongside Add from other threads).
  // REQUIRES: same precision.
  void Merge(const DistinctCounter& other);

  // Estimated number of distinct hashes added (0 for none).
  double Estimate() const;
  // Relative standard error of Estimate() in the worst range: 1.04 / sqrt(2^precision).
  double RelativeStandardError() const;

  // Register i (i < 2^precision), and setting it: to keep a counter in a file and restore it.
  uint8_t register_at(size_t i) const { return registers_[i].load(std::memory_order_relaxed); }
  void set_register(size_t i, uint8_t v) { registers_[i].store(v, std::memory_order_relaxed); }

  uint64_t memory_bytes() const { return uint64_t{1} << precision_; }
  int precision() const { return precision_; }

 private:
  // reg = max(reg, v), atomically.
  static void RaiseTo(std::atomic<uint8_t>& reg, uint8_t v) {
    uint8_t old = reg.load(std::memory_order_relaxed);
    while (v > old && !reg.compare_exchange_weak(old, v, std::memory_order_relaxed)) {
    }
  }

  int precision_;
  std::unique_ptr<std::atomic<uint8_t>[]> registers_;
};

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_DISTINCT_COUNTER_H_
