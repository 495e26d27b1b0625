#include "engine/state/table_budget.h"

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

}  // namespace zsim::state
