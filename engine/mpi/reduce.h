// engine/mpi/reduce.h
//
// The ranks' states combined into rank 0's by state::Merge (the one merge logic): a binary tree
// of point-to-point sends of states in the state file's form (state/state_file.h EncodeState),
// log2(N) rounds, each rank sending once. A received part carries no input paths of its own (every
// rank scanned a share of rank 0's inputs), so the merged state names each input once. After each
// merge the tables are brought back within --max-memory (state/table_budget.h), so a receiving rank
// holds at most its budget, one part in transit and the merge's growth before the fit.
// The pieces of split files each rank read (pieces.h) travel in the same messages and add up.
// In a distributed scan the states' dedup tables are empty by then: the tables were partitioned
// by key among the ranks first (partition.h), and only their sample shift travels here.
//
// Thread safety: MPI_THREAD_SERIALIZED; called by every rank's main thread after its scan.

#ifndef ZSIM_ENGINE_MPI_REDUCE_H_
#define ZSIM_ENGINE_MPI_REDUCE_H_

#include <cstdint>

#include "engine/mpi/pieces.h"
#include "engine/state/scan_state.h"
#include "zsim/status.h"

namespace zsim::mpi {

struct ReduceStats {
  uint64_t bytes_received = 0;  // serialized state bytes this rank received
  double seconds = 0;           // this rank's part: encoding, sending, receiving and merging
};

// Merges every rank's `state` into rank 0's, and adds every rank's `pieces` into rank 0's. On
// rank 0 they are then the whole scan's; on the others they are left moved-from. Fails (on the
// receiving rank) when a part does not read back or does not merge (ranks built or run
// differently).
Status ReduceToRoot(state::ScanState& state, PieceMap& pieces, int rank, int size,
                    ReduceStats* stats);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_REDUCE_H_
