// engine/estimate/distinct_blocks.h
//
// DistinctBlocks: what a sampled dedup table cannot count, counted for every block of one
// recordsize. Every non-zero block goes into one of two strata by its lsize:
//   - full blocks (lsize = the recordsize: every block of a multi-block file, every zvol block):
//     one sketch counts their distinct keys;
//   - small blocks (a single-block file, lsize < recordsize): one sketch counts their distinct
//     keys and another their distinct 512-byte units of an auxiliary size the caller gives
//     (zsim: the asize the block would take stored uncompressed, a multiple of 512, so a block
//     offers asize / 512 units named by its key): the sum over distinct small blocks is known as
//     well as their number.
// The dedup table's sample then only has to give each stratum's mean dsize per block (full) or
// per auxiliary byte (small), ratios that vary little (none at all without compression),
// instead of the count itself (finish/sampled_table.cc).
// All-zero blocks are not counted here: the table keeps every zero key exactly.
//
// Memory: 208 KiB per recordsize, whatever the data; standard errors 0.41% (full keys), 0.81%
// (small keys) and 0.29% (small blocks' auxiliary bytes).
//
// Thread safety: Add from any thread concurrently; the getters when no Add runs.

#ifndef ZSIM_ENGINE_ESTIMATE_DISTINCT_BLOCKS_H_
#define ZSIM_ENGINE_ESTIMATE_DISTINCT_BLOCKS_H_

#include <cstdint>

#include "engine/estimate/distinct_counter.h"

namespace zsim::estimate {

class DistinctBlocks {
 public:
  explicit DistinctBlocks(uint64_t full_lsize);

  // One block with fingerprint word `key_lo` (uniformly distributed), its lsize and its
  // auxiliary size in 512-byte units (a function of lsize).
  void Add(uint64_t key_lo, uint64_t lsize, uint64_t aux_units, bool is_zero);

  double full_keys() const { return full_keys_.Estimate(); }
  double small_keys() const { return small_keys_.Estimate(); }
  // Sum of the auxiliary sizes of the distinct small blocks, in bytes.
  double small_aux() const { return 512 * small_units_.Estimate(); }
  // Relative standard errors of the three figures above.
  double full_keys_error() const { return full_keys_.RelativeStandardError(); }
  double small_keys_error() const { return small_keys_.RelativeStandardError(); }
  double small_aux_error() const { return small_units_.RelativeStandardError(); }

  // Counts what `other` counted too: the sketches of two scans merged are the sketch of one scan
  // of both (a key met in both counts once). REQUIRES: other.full_lsize() == full_lsize().
  void Merge(const DistinctBlocks& other);

  // The three counters (full keys, small keys, small units), to keep them in a file.
  DistinctCounter& counter(int i) {
    return i == 0 ? full_keys_ : i == 1 ? small_keys_ : small_units_;
  }
  const DistinctCounter& counter(int i) const {
    return i == 0 ? full_keys_ : i == 1 ? small_keys_ : small_units_;
  }

  uint64_t full_lsize() const { return full_lsize_; }
  uint64_t memory_bytes() const;

 private:
  uint64_t full_lsize_;
  DistinctCounter full_keys_;
  DistinctCounter small_keys_;
  DistinctCounter small_units_;
};

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_DISTINCT_BLOCKS_H_
