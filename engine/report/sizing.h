// engine/report/sizing.h
//
// Special-vdev and dedup-vdev sizing for the recommended setting, as admins ask for it (OpenZFS
// issues #9158 and #16417): for each special_small_blocks threshold (4K up to half the block
// size), what a special vdev would hold: the metadata (as `used` counts it), the data blocks of
// psize at most the threshold (each copy rounded to a sector on a mirror; each block once when
// dedup is recommended), and the DDT unless a dedup vdev takes it; and the dedup vdev's own size
// (the DDT on disk). Either vdev holds pool-critical blocks: it needs the redundancy of the pool
// (a mirror), since losing it loses the pool.
//
// Thread safety: pure function.

#ifndef ZSIM_ENGINE_REPORT_SIZING_H_
#define ZSIM_ENGINE_REPORT_SIZING_H_

#include <cstdint>
#include <vector>

#include "engine/report/decision.h"
#include "zsim/scan_result.h"

namespace zsim::report {

struct SpecialVdevSize {
  uint64_t threshold = 0;  // special_small_blocks; 0: metadata (and DDT) only
  uint64_t small_blocks = 0;
  uint64_t small_block_bytes = 0;
  uint64_t metadata_bytes = 0;
  uint64_t ddt_bytes = 0;  // the DDT when no dedup vdev is added (0 without dedup)
  uint64_t total_bytes = 0;
};

struct VdevSizing {
  std::vector<SpecialVdevSize> special;  // threshold 0 first, then ascending thresholds
  uint64_t dedup_vdev_bytes = 0;         // the DDT on disk (0 when dedup is not recommended)
};

// The sizing of result.results[decision.featured]. Empty when there is none.
VdevSizing SizeVdevs(const ScanResult& result, const Decision& decision);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_SIZING_H_
