// engine/state/table_budget.h
//
// --max-memory on a state's dedup tables: when the tables and sketches of every row together
// exceed the budget, every row keeps half as much of the key space, until they fit. A scan
// applies it after each chunk; a state merged from parts (a distributed scan, engine/mpi) applies
// it once more, so that its tables keep the key space one scan of the whole input would keep:
// whether a sample of the key space outgrows the budget depends on the keys only, and the
// tables only grow, so the sample of the whole is the coarsest its parts' memory ever asked for.
//
// Thread safety: as DedupTable::RaiseSampleShift (any thread, alongside inserts).

#ifndef ZSIM_ENGINE_STATE_TABLE_BUDGET_H_
#define ZSIM_ENGINE_STATE_TABLE_BUDGET_H_

#include <cstdint>
#include <vector>

#include "engine/state/scan_state.h"

namespace zsim::state {

// What --max-memory counts of `rows`: their dedup tables and distinct-count sketches.
uint64_t TablesBytes(const std::vector<RowState>& rows);

// Raises every row's sample shift (alike, at most to 40) until memory fits `budget_bytes`;
// 0 means no budget.
void FitTablesToBudget(std::vector<RowState>& rows, uint64_t budget_bytes);

// Raises every row's sample shift (alike) while some shard of some table holds more than
// ddt::DedupTable::kShardEntriesToSample entries (2^31 in a table, about 50 GiB): a shard holds
// at most 2^24 - 1, and a key met beyond would be left out. Half the limit leaves room for the
// keys the chunks in flight add before the next check. `also` (a table about to be merged into
// the rows', or none) counts as if added. `limit`: the entries per shard that make it sample
// (a test's smaller one).
void FitTablesToShards(std::vector<RowState>& rows, const std::vector<RowState>* also = nullptr,
                       uint64_t limit = ddt::DedupTable::kShardEntriesToSample);
// The same over bare tables (a distributed scan's stream holds some outside a state, engine/mpi):
// `also`, when not empty, holds per table the one about to be merged into it, or null.
void FitTablesToShards(const std::vector<ddt::DedupTable*>& tables,
                       const std::vector<const ddt::DedupTable*>& also = {},
                       uint64_t limit = ddt::DedupTable::kShardEntriesToSample);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_TABLE_BUDGET_H_
