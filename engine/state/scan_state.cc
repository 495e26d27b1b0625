#include "engine/state/scan_state.h"

#include "engine/base/mix.h"

namespace zsim::state {

size_t FeaturedSetting(const std::vector<Compression>& compressions) {
  for (size_t c = 0; c < compressions.size(); ++c) {
    if (compressions[c].algorithm != CompressionAlgorithm::kOff) return c;
  }
  return 0;
}

uint64_t FileIdentity(uint64_t dev, uint64_t ino) {
  // Two of a billion files share a hash with odds of about 3%; a false match only adds a warning.
  return Mix64(Mix64(dev) ^ (ino * kGoldenGamma));
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

bool KeepsLeastBudget(CodeKind kind, const zfs::WritePolicy& scan, Compression c, uint64_t lsize) {
  switch (kind) {
    case CodeKind::kRounded:
    case CodeKind::kRaw:
      return false;
    case CodeKind::kLeastBudget:
      return zfs::LeastBudgetKnown(c);
    case CodeKind::kLeastBudgetZstd:
      break;
  }
  return zfs::LeastBudgetKept(scan, c, lsize);
}

}  // namespace zsim::state
