#include "engine/mpi/partition.h"

#include <malloc.h>
#include <mpi.h>

#include <algorithm>

#include "engine/mpi/entry_wire.h"

namespace zsim::mpi {
namespace {

// Entry bytes a rank queues for the others before a round (at least one shard's): small, so
// that what is in transit (this, what arrives, and the arrivals' table before their merge) stays
// small beside the table.
constexpr size_t kRoundBytes = size_t{1} << 20;
constexpr size_t kTrimBytes = size_t{16} << 20;

// One row's table: rounds until no rank has a shard left to send.
Status ShuffleTable(ddt::DedupTable& table, int rank, int size, PartitionStats* stats) {
  const size_t settings = table.settings();
  std::vector<int> send_counts(size), recv_counts(size), send_at(size), recv_at(size);
  Status failure;
  size_t next = 0, untrimmed = 0;
  for (;;) {
    // Shards in order: their owners come in rank order, so the batch is sorted by destination.
    std::string send;
    std::fill(send_counts.begin(), send_counts.end(), 0);
    while (next < ddt::DedupTable::kShards && send.size() < kRoundBytes) {
      const int owner = OwnerOfShard(next, size);
      if (owner != rank) {
        const size_t before = send.size();
        table.ForEachInShard(next, [&](const ddt::EntryView& e) { AppendEntry(e, &send); });
        table.DropShard(next);
        send_counts[owner] += static_cast<int>(send.size() - before);
      }
      ++next;
    }
    // The shards sent were filled by the scan's threads, in their own malloc arenas, which the
    // main thread's allocations below do not reuse: their pages go back to the system every
    // kTrimBytes sent (a trim walks the whole heap: about 70 ms here at 200 MB), or a rank would
    // end holding both its whole local table and its owned shards.
    untrimmed += send.size();
    if (untrimmed >= kTrimBytes || (next == ddt::DedupTable::kShards && untrimmed > 0)) {
      malloc_trim(0);
      untrimmed = 0;
    }
    for (int d = 0, at = 0; d < size; ++d) {
      send_at[d] = at;
      at += send_counts[d];
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int d = 0; d < size; ++d) {
      recv_at[d] = static_cast<int>(total);
      total += static_cast<size_t>(recv_counts[d]);
    }
    std::string received(total, '\0');
    MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), MPI_BYTE, received.data(),
                  recv_counts.data(), recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
    stats->bytes_sent += send.size();
    stats->entries_sent += send.size() / EntryWireBytes(settings);
    ++stats->rounds;
    std::string().swap(send);
    if (!received.empty()) {
      // The round's entries (one key may come from several ranks) gathered first, then merged
      // as one table: Merge keeps one side record per entry, as the tree merge did.
      ddt::DedupTable part(table.layout());
      part.RaiseSampleShift(table.sample_shift());
      Status s =
          ForEachWireEntry(received, settings, [&](const ddt::EntryView& e) { part.LoadEntry(e); });
      if (!s.ok() && failure.ok()) failure = s;
      std::string().swap(received);
      table.Merge(part);
    }
    int more = next < ddt::DedupTable::kShards ? 1 : 0, any = 0;
    MPI_Allreduce(&more, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (!any) return failure;
  }
}

uint64_t LocalBytes(const std::vector<ddt::DedupTable*>& tables) {
  uint64_t n = 0;
  for (const ddt::DedupTable* t : tables) n += t->local_memory_bytes();
  return n;
}

}  // namespace

int OwnerOfShard(size_t shard, int size) {
  // The ranks that own shards: at most one shard each.
  const size_t owners = std::min<size_t>(static_cast<size_t>(size), ddt::DedupTable::kShards);
  return static_cast<int>(shard * owners / ddt::DedupTable::kShards);
}

Status PartitionTables(const std::vector<ddt::DedupTable*>& tables, uint32_t min_shift, int rank,
                       int size, PartitionStats* stats) {
  // Merge leaves out keys outside the receiving table's space: every part first takes the
  // coarsest space any part kept, as state::Merge does.
  uint32_t shift = min_shift, global = 0;
  for (const ddt::DedupTable* t : tables) shift = std::max(shift, t->sample_shift());
  MPI_Allreduce(&shift, &global, 1, MPI_UINT32_T, MPI_MAX, MPI_COMM_WORLD);
  Status failure;
  for (ddt::DedupTable* t : tables) {
    t->RaiseSampleShift(global);
    Status s = ShuffleTable(*t, rank, size, stats);
    if (!s.ok() && failure.ok()) failure = s;
  }
  return failure;
}

void FitPartitionedTables(const std::vector<ddt::DedupTable*>& tables, uint32_t shift,
                          uint64_t other_bytes, uint64_t budget_bytes) {
  for (ddt::DedupTable* t : tables) t->RaiseSampleShift(shift);
  if (budget_bytes == 0 || tables.empty()) return;
  for (;;) {
    const uint64_t mine = LocalBytes(tables);
    uint64_t whole = 0;
    MPI_Allreduce(&mine, &whole, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (whole + other_bytes <= budget_bytes) return;
    const uint32_t next = tables[0]->sample_shift() + 1;
    if (next > 40) return;  // as state::FitTablesToBudget: nothing left to drop
    for (ddt::DedupTable* t : tables) t->RaiseSampleShift(next);
  }
}

}  // namespace zsim::mpi
