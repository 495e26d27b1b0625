// engine/mpi/shipped_keys.h
//
// ShippedKeys: the keys a rank shipped to their owners during the scan (table_stream.h), for the
// census (a sampled codec's codes for every key referenced ddt::kHeavyRefcount times in all,
// pipeline/scan_blocks.cc). A Bloom filter: Contains is true for every key added (no false
// negatives, which the census's exactness needs) and for a few others (a false positive only runs
// the sampled codecs on one more block, whose extra codes Finish ignores; in the rare classes'
// count it is coded, not counted).
//
// It grows by segments, each twice the last (the first holds 2^16 keys), at 16 bits and 8 probes
// per key: a false positive rate under 0.1% per segment, 2 bytes per key shipped (an entry takes
// 23-30 in the table).
//
// Thread safety: none; the table stream adds while it holds the scan's table gate exclusively,
// the scan's workers ask while they hold it shared.

#ifndef ZSIM_ENGINE_MPI_SHIPPED_KEYS_H_
#define ZSIM_ENGINE_MPI_SHIPPED_KEYS_H_

#include <cstdint>
#include <vector>

#include "engine/ddt/fingerprint.h"

namespace zsim::mpi {

class ShippedKeys {
 public:
  void Add(const ddt::Fingerprint& key);
  bool Contains(const ddt::Fingerprint& key) const;
  uint64_t memory_bytes() const;

 private:
  struct Segment {
    std::vector<uint64_t> words;
    uint64_t keys = 0, capacity = 0;
  };
  std::vector<Segment> segments_;
};

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_SHIPPED_KEYS_H_
