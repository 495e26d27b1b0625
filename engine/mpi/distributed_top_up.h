// engine/mpi/distributed_top_up.h
//
// The top-up of a distributed scan (the rule: estimate/top_up.h; one process: pipeline/top_up.h),
// so that its figures are those of one process scanning the same paths. After the exchange
// (partition.h) each rank's tables hold its shards, and each rank listed the first sightings its
// own sampled codecs skipped (pipeline::SkippedBlocks, ScanControl::skipped_blocks). Row by row,
// in step on every rank:
//  - the row's entries and unique bytes are summed over the ranks, and it goes on only where one
//    process would top it up: at most kTopUpMaxBlocks entries in all, no sampled table, and no
//    rank's list overflowed (a rank that met a key again after shipping it lists it again);
//  - its levels are the higher of each rank's (what the merge of their states takes), and its
//    target levels the budget of the summed unique bytes, alike on every rank;
//  - each owner's entries to code go to every rank (at most kTopUpMaxBlocks keys in all), every
//    rank reads again and codes those it listed (pipeline::RecodeBlocks), and sends the codes to
//    the key's owner;
//  - the row is topped up where every owner got the codes of all its entries to code and no read
//    failed, on every rank (a file changed since: the row keeps its levels, as one process does).
// The first two steps run for every row before any is read again, so that rank 0 can tell the
// cost first (TopUpTelling), as one process does. Rank 0 then sets the levels in the merged
// state (ApplyTopUp), after the ranks' states meet.
//
// Thread safety: collective, from every rank's main thread, after PartitionTables.

#ifndef ZSIM_ENGINE_MPI_DISTRIBUTED_TOP_UP_H_
#define ZSIM_ENGINE_MPI_DISTRIBUTED_TOP_UP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/pipeline/top_up.h"
#include "engine/state/scan_state.h"
#include "zsim/scan_options.h"

namespace zsim::mpi {

// A row's outcome: the level of each setting it was topped up to (-1: left), empty where the row
// was not topped up; its unique bytes; per setting the codecs' CPU nanoseconds and bytes over
// every rank (whether or not the row was topped up: the work was done); and its record: the
// blocks coded (each once, as one process reads them; where the row was left, what the ranks read
// before), the slowest rank's seconds and, where it was left, the first rank's reason (empty where
// the row was not taken up).
struct RowTopUp {
  std::vector<int> to;
  uint64_t unique_bytes = 0;
  std::vector<uint64_t> codec_ns, codec_bytes;
  state::TopUpRecord record;
};

// What the top-up's forecast (pipeline::TopUpForecast) takes of this rank: its scan's codec CPU
// seconds and bytes per setting (summed over the rows), which are summed over the ranks; every
// rank's threads together (the same on every rank); and where to tell it, once every row is
// planned and before anything is read again (rank 0's ScanControl::top_up_forecast; null on
// the others, which still take part in the sums).
struct TopUpTelling {
  std::vector<double> codec_seconds;
  std::vector<uint64_t> codec_bytes;
  int threads = 1;
  std::function<void(const pipeline::TopUpForecast&)> told;
};

// See the top of the file. `tables`: this rank's shards, one per row; `sampling`: this rank's
// state's; `complete`: this rank's scan read everything (none is topped up unless every rank's
// did); `written_keys`: its tables keep written keys (ScanState::written_keys); `cancel` (may be
// null): an interrupt stops this rank's reads, and the rows not yet done are left on every rank.
// The same result on every rank.
std::vector<RowTopUp> TopUpDistributed(const std::vector<ddt::DedupTable*>& tables,
                                       const pipeline::SkippedBlocks& skipped,
                                       const state::SamplingState& sampling, bool complete,
                                       const ScanOptions& options, bool written_keys,
                                       io::FileSystem* fs, int size,
                                       const std::atomic<bool>* cancel, const TopUpTelling& telling,
                                       pipeline::TopUpStats* stats);

// Sets the topped rows' levels (and the complete level, the lowest) and unique bytes in the
// merged `state`, adds the codecs' work to its rows and sets their top-up records.
void ApplyTopUp(const std::vector<RowTopUp>& rows, state::ScanState* state);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_DISTRIBUTED_TOP_UP_H_
