// engine/estimate/occurrence_sample.h
//
// A sample of block occurrences (references, not keys) of one row, for the referenced side of a
// table that keeps 1/M of the key space (--sample 1/M). Occurrences are chosen by a hash of the
// file's path and the block's index (pipeline/scan_blocks.cc OccurrenceLevel), never by content: a
// key referenced a million times is then met in proportion to its references and each occurrence
// weighs at most one block, where a sample of kept keys takes or misses all of its references at
// once. Sums per setting, per stratum (0: full blocks, 1: a file's single smaller block, as the
// table's strata) and per occurrence level (0..kMaxSampleLevel); non-zero blocks only (the table
// keeps every all-zero key).
//
// Thread safety: values; one thread at a time, merge per-thread samples with Merge.

#ifndef ZSIM_ENGINE_ESTIMATE_OCCURRENCE_SAMPLE_H_
#define ZSIM_ENGINE_ESTIMATE_OCCURRENCE_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/estimate/ratio_estimator.h"

namespace zsim::estimate {

struct OccurrenceSums {
  uint64_t ne = 0;  // occurrences not embedded
  double lsize = 0, lsize_ne = 0, asize = 0, emb_bytes = 0;
  // x = the occurrence's auxiliary size u, y = its psize or dsize (0 when embedded): their
  // counts and sums are the occurrences', so they are not kept twice.
  RatioEstimator psize_per_u, dsize_per_u;
  uint64_t n() const { return psize_per_u.n(); }
  double u() const { return psize_per_u.sum_x(); }
  double psize() const { return psize_per_u.sum_y(); }
  double dsize() const { return dsize_per_u.sum_y(); }
  // One occurrence of `lsize` bytes, auxiliary size `u`: embedded with `payload` bytes in its
  // block pointer, or stored with these sizes.
  void AddEmbedded(double lsize, double u, double payload);
  void AddStored(double lsize, double u, double psize, double dsize, double asize);
  void Merge(const OccurrenceSums& o);
};

struct OccurrenceSample {
  std::vector<OccurrenceSums> sums;  // [(setting * 2 + stratum) * (kMaxSampleLevel + 1) + level]
  explicit OccurrenceSample(size_t settings = 0);
  OccurrenceSums& At(size_t setting, int stratum, int level);
  const OccurrenceSums& At(size_t setting, int stratum, int level) const;
  // Adds `o`'s sums (same settings; an empty sample adds nothing, and an empty `this` takes
  // `o`'s shape).
  void Merge(const OccurrenceSample& o);
};

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_OCCURRENCE_SAMPLE_H_
