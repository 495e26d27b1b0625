#include "engine/state/table_budget.h"

#include <algorithm>

namespace zsim::state {

uint64_t TablesBytes(const std::vector<RowState>& rows) {
  uint64_t bytes = 0;
  for (const RowState& r : rows) bytes += r.table->memory_bytes() + r.distinct->memory_bytes();
  return bytes;
}

void FitTablesToBudget(std::vector<RowState>& rows, uint64_t budget_bytes) {
  if (budget_bytes == 0 || rows.empty()) return;
  for (;;) {
    if (TablesBytes(rows) <= budget_bytes) return;
    const uint32_t shift = rows[0].table->sample_shift() + 1;
    if (shift > 40) return;  // 1/2^40 of the keys: nothing left to drop
    for (RowState& r : rows) r.table->RaiseSampleShift(shift);
  }
}

void FitTablesToShards(std::vector<RowState>& rows, const std::vector<RowState>* also,
                       uint64_t limit) {
  if (rows.empty()) return;
  for (;;) {
    const uint32_t shift = rows[0].table->sample_shift();
    bool over = false;
    for (size_t r = 0; r < rows.size(); ++r) {
      // fullest_shard() rounds down to a multiple of 4096.
      uint64_t fullest = uint64_t{rows[r].table->fullest_shard()} + 4096;
      if (also != nullptr && r < also->size()) {
        const ddt::DedupTable& t = *(*also)[r].table;
        // Of the other table's keys, those the raised shift leaves.
        const uint32_t drop = shift > t.sample_shift() ? shift - t.sample_shift() : 0;
        fullest += (uint64_t{t.fullest_shard()} + 4096) >> std::min<uint32_t>(drop, 63);
      }
      over = over || fullest > limit;
    }
    if (!over || shift >= 40) return;
    for (RowState& row : rows) row.table->RaiseSampleShift(shift + 1);
  }
}

}  // namespace zsim::state
