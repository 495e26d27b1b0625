#include "engine/state/scan_state.h"

namespace zsim::state {

size_t FeaturedSetting(const std::vector<Compression>& compressions) {
  for (size_t c = 0; c < compressions.size(); ++c) {
    if (compressions[c].algorithm != CompressionAlgorithm::kOff) return c;
  }
  return 0;
}

ScanMemory StateMemory(const ScanState& state) {
  ScanMemory m;
  for (const RowState& r : state.rows) {
    m.table_bytes += r.table->memory_bytes();
    m.table_entries += r.table->entries();
    m.sketch_bytes += r.distinct->memory_bytes();
  }
  return m;
}

}  // namespace zsim::state
