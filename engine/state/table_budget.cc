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
  std::vector<ddt::DedupTable*> tables;
  std::vector<const ddt::DedupTable*> merged;
  for (size_t r = 0; r < rows.size(); ++r) {
    tables.push_back(rows[r].table.get());
    if (also != nullptr) merged.push_back(r < also->size() ? (*also)[r].table.get() : nullptr);
  }
  FitTablesToShards(tables, merged, limit);
}

void FitTablesToShards(const std::vector<ddt::DedupTable*>& tables,
                       const std::vector<const ddt::DedupTable*>& also, uint64_t limit) {
  if (tables.empty()) return;
  for (;;) {
    const uint32_t shift = tables[0]->sample_shift();
    bool over = false;
    for (size_t r = 0; r < tables.size(); ++r) {
      // fullest_shard() rounds down to a multiple of 4096.
      uint64_t fullest = uint64_t{tables[r]->fullest_shard()} + 4096;
      if (r < also.size() && also[r] != nullptr) {
        const ddt::DedupTable& t = *also[r];
        // Of the other table's keys, those the raised shift leaves.
        const uint32_t drop = shift > t.sample_shift() ? shift - t.sample_shift() : 0;
        fullest += (uint64_t{t.fullest_shard()} + 4096) >> std::min<uint32_t>(drop, 63);
      }
      over = over || fullest > limit;
    }
    if (!over || shift >= 40) return;
    for (ddt::DedupTable* t : tables) t->RaiseSampleShift(shift + 1);
  }
}

}  // namespace zsim::state
