// engine/mpi/distributed_scan.h
//
// The distributed scan's entry point (overview in session.h): every rank calls it with the same
// options; rank 0 gets the state one process scanning all of options.paths would fill (timings
// aside: Finish gives the same report, SaveState the same file), the other ranks nothing. Rank
// 0's dedup tables hold its own shards and read the other ranks' through MPI (table_service.h):
// the other ranks return only once rank 0 has destroyed that state (or failed), so rank 0 must
// destroy it before MPI ends, and read it from no more threads than Finish does.
//
// Thread safety: call once per process, from the thread that made the Session.

#ifndef ZSIM_ENGINE_MPI_DISTRIBUTED_SCAN_H_
#define ZSIM_ENGINE_MPI_DISTRIBUTED_SCAN_H_

#include <optional>

#include "engine/io/file_system.h"
#include "engine/mpi/session.h"
#include "engine/pipeline/scan.h"
#include "engine/state/scan_state.h"
#include "zsim/scan_options.h"
#include "zsim/status.h"

namespace zsim::mpi {

// Fails (kInvalidArgument) for the options a single scan refuses, on every rank alike;
// kInternal when the ranks' states do not combine. `control.progress` is used on rank 0 only and
// shows rank 0's own share. REQUIRES: session.active().
Result<std::optional<state::ScanState>> RunDistributedScan(const ScanOptions& options,
                                                           io::FileSystem* fs,
                                                           const pipeline::ScanControl& control,
                                                           const Session& session);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_DISTRIBUTED_SCAN_H_
