#include "engine/mpi/reduce.h"

#include "engine/mpi/messages.h"
#include "engine/state/merge.h"
#include "engine/state/state_file.h"
#include "engine/state/table_budget.h"

namespace zsim::mpi {

Status ReduceToRoot(state::ScanState& state, int rank, int size, ReduceStats* stats) {
  Status failure;
  for (int step = 1; step < size; step *= 2) {
    if (rank % (2 * step) == step) {
      // This rank's turn to hand its (merged) state down; a failure met on the way is sent as a
      // marker that the receiver turns into its own failure.
      SendLarge(rank - step, failure.ok() ? state::EncodeState(state) : "!" + failure.message());
      return Status::Ok();
    }
    if (rank + step >= size) continue;
    const std::string bytes = ReceiveLarge(rank + step);
    if (stats) stats->bytes_received += bytes.size();
    if (!failure.ok()) continue;
    if (!bytes.empty() && bytes[0] == '!') {
      failure = Status::Internal(bytes.substr(1));
      continue;
    }
    Result<state::ScanState> part =
        state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    if (!part.ok()) {
      failure = Status::Internal("rank " + std::to_string(rank + step) +
                                 "'s scan state does not read back: " + part.status().message());
      continue;
    }
    part->options.paths.clear();
    part->input.paths.clear();
    Status s = state::CheckMergeable(state, *part);
    if (!s.ok()) {
      failure = Status::Internal("rank " + std::to_string(rank + step) +
                                 "'s scan does not merge: " + s.message());
      continue;
    }
    state::Merge(state, *part);
    // Keeps the merged tables within the budget as they grow up the tree; never coarser than
    // one process's (a subset's tables outgrow a budget only if the whole's do).
    state::FitTablesToBudget(state.rows, state.options.max_memory_bytes);
  }
  return failure;
}

}  // namespace zsim::mpi
