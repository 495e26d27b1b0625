// engine/finish/exact_classes.h
//
// ExactClasses: the entries of a table row that an exact setting (every unique block coded)
// took, counted by (refcount bucket, settled code) for the entries of the row's block size, the
// bulk of any row. What such an entry adds to a setting's figures (references, psize, asize, the
// DDT histogram, the key-size mix) is integer sums linear in its class's entries and references,
// so the tally takes each class once after its pass over the table instead of each entry.
//
// Thread safety: none; one per pass.

#ifndef ZSIM_ENGINE_FINISH_EXACT_CLASSES_H_
#define ZSIM_ENGINE_FINISH_EXACT_CLASSES_H_

#include <array>
#include <cstdint>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/zfs/ddt_stats.h"

namespace zsim::finish {

class ExactClasses {
 public:
  ExactClasses(size_t settings, uint64_t block_bytes)
      : units_(block_bytes / 512), counts_(settings) {}

  // Counts one entry of `refs` references whose settled code for setting `c` is `code`: false
  // (nothing counted) for a code that is neither allocated up to the block size nor embedded.
  bool Add(size_t c, ddt::PsizeCode code, uint64_t refs) {
    size_t slot;
    if (code >= 1 && code <= units_) {
      slot = code;
    } else if (code > ddt::kEmbeddedBase && code <= ddt::kEmbeddedBase + kEmbeddedCodes) {
      slot = units_ + (code - ddt::kEmbeddedBase);
    } else {
      return false;
    }
    std::vector<Count>& v = counts_[c][zfs::DdtBucket(refs)];
    if (v.empty()) v.resize(units_ + kEmbeddedCodes + 1);
    ++v[slot].entries;
    v[slot].refs += refs;
    return true;
  }

  // fn(c, bucket, code, entries, references) for every class counted, by setting, bucket, code.
  template <class Fn>
  void ForEach(Fn&& fn) const {
    for (size_t c = 0; c < counts_.size(); ++c) {
      for (int b = 0; b < kBuckets; ++b) {
        const std::vector<Count>& v = counts_[c][b];
        for (size_t slot = 1; slot < v.size(); ++slot) {
          if (v[slot].entries == 0) continue;
          const ddt::PsizeCode code = static_cast<ddt::PsizeCode>(
              slot <= units_ ? slot : ddt::kEmbeddedBase + (slot - units_));
          fn(c, b, code, v[slot].entries, v[slot].refs);
        }
      }
    }
  }

 private:
  static constexpr int kBuckets = 64;            // zfs::DdtBucket of a 64-bit refcount
  static constexpr size_t kEmbeddedCodes = 112;  // payloads of 1..112 bytes
  struct Count {
    uint64_t entries = 0, refs = 0;
  };
  size_t units_;  // allocated codes 1..units_; embedded ones follow
  std::vector<std::array<std::vector<Count>, kBuckets>> counts_;
};

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_EXACT_CLASSES_H_
