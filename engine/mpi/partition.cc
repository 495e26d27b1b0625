#include "engine/mpi/partition.h"

#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

#include "engine/mpi/entry_wire.h"
#include "engine/mpi/tuning.h"

namespace zsim::mpi {
namespace {

// Entry bytes a rank sends in one round, to all owners together: small, so that what is in
// transit (this, what arrives, and the arrivals' table before their merge) stays small beside the
// table. A shard larger than that goes over several rounds. ZSIM_MPI_EXCHANGE_BYTES changes it
// (tests: shards split over many rounds).
constexpr size_t kRoundBytes = size_t{1} << 20;

// Bytes one rank sends per round: kRoundBytes (or the override), whole entries, and at most
// INT_MAX / size, so that what an owner receives in a round from all the others, and each count
// and displacement of the all-to-all, fits MPI's int however large a shard is.
size_t RoundBytes(size_t entry_bytes, int size) {
  size_t round = kRoundBytes;
  if (const uint64_t n = EnvCount("ZSIM_MPI_EXCHANGE_BYTES"); n > 0) round = n;
  round = std::min(round, static_cast<size_t>(INT_MAX) / static_cast<size_t>(size));
  return std::max(entry_bytes, round / entry_bytes * entry_bytes);
}

// A shard's entries on their way to its owner, sent from `at` on.
struct Outgoing {
  int owner = 0;
  std::string bytes;
  size_t at = 0;
};

// One row's table: rounds until no rank has an entry left to send.
Status ShuffleTable(ddt::DedupTable& table, int rank, int size, PartitionStats* stats) {
  const size_t settings = table.settings();
  const bool origins = table.keeps_origins();
  const size_t round = RoundBytes(EntryWireBytes(table), size);
  std::vector<int> send_counts(size), recv_counts(size), send_at(size), recv_at(size);
  Status failure;
  std::deque<Outgoing> queue;
  size_t next = 0, queued = 0, untrimmed = 0;
  for (;;) {
    // Shards in order, each read out and freed, until a round's worth waits: their owners come
    // in rank order, so the queue is sorted by destination.
    while (next < ddt::DedupTable::kShards && queued < round) {
      const int owner = OwnerOfShard(next, size);
      if (owner != rank) {
        Outgoing out{owner, {}, 0};
        table.ForEachInShard(next,
                             [&](const ddt::EntryView& e) { AppendEntry(e, &out.bytes, origins); });
        table.DropShard(next);
        queued += out.bytes.size();
        untrimmed += out.bytes.size();
        if (!out.bytes.empty()) queue.push_back(std::move(out));
      }
      ++next;
    }
    // This round: at most `round` bytes from the queue's front (round and every cut are whole
    // entries).
    std::string send;
    std::fill(send_counts.begin(), send_counts.end(), 0);
    while (!queue.empty() && send.size() < round) {
      Outgoing& out = queue.front();
      const size_t n = std::min(out.bytes.size() - out.at, round - send.size());
      send.append(out.bytes, out.at, n);
      send_counts[out.owner] += static_cast<int>(n);
      out.at += n;
      queued -= n;
      if (out.at == out.bytes.size()) queue.pop_front();
    }
    // The shards sent were filled by the scan's threads, in their own malloc arenas, which the
    // main thread's allocations below do not reuse: their pages go back to the system every
    // kTrimBytes sent (a trim walks the whole heap: about 70 ms here at 200 MB), or a rank would
    // end holding both its whole local table and its owned shards.
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
    // Never expected (RoundBytes bounds every sender): said, not written out of bounds.
    if (total > static_cast<size_t>(INT_MAX)) {
      std::fprintf(stderr, "zsim: rank %d would receive %zu table bytes in one round\n", rank,
                   total);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::string received(total, '\0');
    MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), MPI_BYTE, received.data(),
                  recv_counts.data(), recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
    stats->bytes_sent += send.size();
    stats->entries_sent += send.size() / EntryWireBytes(table);
    ++stats->rounds;
    std::string().swap(send);
    if (!received.empty()) {
      // The round's entries (one key may come from several ranks) gathered first, then merged
      // as one table: Merge keeps one side record per entry, as the tree merge did.
      ddt::DedupTable part(table.layout());
      if (origins) part.KeepOrigins();
      part.RaiseSampleShift(table.sample_shift());
      Status s = ForEachWireEntry(
          received, settings, [&](const ddt::EntryView& e) { part.LoadEntry(e); }, origins);
      if (!s.ok() && failure.ok()) failure = s;
      std::string().swap(received);
      table.Merge(part);
    }
    int more = next < ddt::DedupTable::kShards || !queue.empty() ? 1 : 0, any = 0;
    MPI_Allreduce(&more, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (!any) return failure;
  }
}

// Raises every rank's tables alike, one step at a time (up to 40), while some shard's entries,
// added up over the ranks, exceed `limit`. Collective.
void FitShardSums(const std::vector<ddt::DedupTable*>& tables, uint64_t limit) {
  if (tables.empty()) return;
  constexpr size_t kShards = ddt::DedupTable::kShards;
  std::vector<uint64_t> mine(tables.size() * kShards), sums(mine.size());
  for (;;) {
    for (size_t t = 0; t < tables.size(); ++t) {
      for (size_t k = 0; k < kShards; ++k) mine[t * kShards + k] = tables[t]->shard_entries(k);
    }
    MPI_Allreduce(mine.data(), sums.data(), static_cast<int>(mine.size()), MPI_UINT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    const uint32_t shift = tables[0]->sample_shift();
    if (*std::max_element(sums.begin(), sums.end()) <= limit || shift >= 40) return;
    for (ddt::DedupTable* t : tables) t->RaiseSampleShift(shift + 1);
  }
}

// The entries per shard past which the partitioned tables sample: one process's
// (ddt::DedupTable::kShardEntriesToSample), or ZSIM_MPI_SHARD_ENTRIES (a test's smaller one).
uint64_t ShardLimit() {
  if (const uint64_t n = EnvCount("ZSIM_MPI_SHARD_ENTRIES"); n > 0) {
    return std::min<uint64_t>(n, ddt::DedupTable::kShardEntriesToSample);
  }
  return ddt::DedupTable::kShardEntriesToSample;
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
  for (ddt::DedupTable* t : tables) t->RaiseSampleShift(global);
  // An owner's shard becomes the sum of every rank's part: while the parts could add up past
  // what a shard holds (2^24 - 1), Merge would leave keys out, so they are sampled first.
  FitShardSums(tables, ddt::DedupTable::kMaxShardEntries);
  Status failure;
  for (ddt::DedupTable* t : tables) {
    Status s = ShuffleTable(*t, rank, size, stats);
    if (!s.ok() && failure.ok()) failure = s;
  }
  // Each shard whole on its owner now: sampled as one process samples its table (a shard past
  // kShardEntriesToSample, state::FitTablesToShards), every rank alike.
  FitShardSums(tables, ShardLimit());
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
