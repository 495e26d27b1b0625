#include "engine/estimate/adaptive_level.h"

namespace zsim::estimate {

int BaseLevel(const LevelCounts& counts) {
  uint64_t above = 0;
  for (int lv = kMaxSampleLevel; lv > 0; --lv) {
    above += counts[static_cast<size_t>(lv)];
    if (above >= kSampleBlocks) return lv;
  }
  return 0;
}

}  // namespace zsim::estimate
