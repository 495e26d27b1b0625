// engine/mpi/table_service.h
//
// After the partition (partition.h) each rank holds its shards of every row's table. Rank 0 makes
// the report and may save the state: its tables get a ddt::RemotePart (AttachPeerTables) whose
// ForEach asks every other rank for its shards of that row and receives them in batches of about
// 1 MiB (kTagTableBatch), while the others serve such requests (ServeTables) until rank 0 is done.
// So Finish's passes and SaveState read the whole table, as in one process, and no rank ever holds
// more than its shards plus one batch per peer: rank 0 receives one peer's batches at a time, and a
// peer's send waits for rank 0 to take the previous one.
//
// Thread safety: MPI_THREAD_SERIALIZED. On rank 0 the remote parts' ForEach may be called from
// several threads (Finish reads tables on two): each stream holds one lock from its request to its
// last batch. ServeTables runs on a rank's main thread.

#ifndef ZSIM_ENGINE_MPI_TABLE_SERVICE_H_
#define ZSIM_ENGINE_MPI_TABLE_SERVICE_H_

#include <vector>

#include "engine/ddt/dedup_table.h"

namespace zsim::mpi {

// Rank 0: makes each of `tables` (one per row, rank 0's shards) cover every rank's shards. The
// other ranks are released (told the report is done) when the last of the tables (and every copy
// of their remote parts) is destroyed. Collective with ServeTables (an MPI_Gather of the parts'
// sizes first). REQUIRES: size > 1.
void AttachPeerTables(const std::vector<ddt::DedupTable*>& tables, int size);

// The other ranks: answers rank 0's requests for `tables` (one per row, this rank's shards) until
// rank 0 is done.
void ServeTables(const std::vector<const ddt::DedupTable*>& tables);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_TABLE_SERVICE_H_
