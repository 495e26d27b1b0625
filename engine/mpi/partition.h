// engine/mpi/partition.h
//
// The key-partitioned dedup table of a distributed scan. Each rank owns a range of the tables'
// shards (the key's top 8 bits, ddt::DedupTable::ShardOf): rank k of N owns shards
// [256k/N, 256(k+1)/N). During the scan each rank ships most of those entries already
// (table_stream.h); after it every rank sends the entries of the shards it does not own that are
// left to their owner, in batched all-to-all rounds (MPI_Alltoallv, at most 1 MiB from each rank
// per round, ZSIM_MPI_EXCHANGE_BYTES to change it; a shard larger than that split over rounds),
// freeing each shard once read out, and merges what it receives by ddt::DedupTable::Merge, the one
// merge logic: the owner's shards then hold exactly the entries one process's table holds there. A
// rank holds at most its own table, one serialized shard on its way out, one round in transit and
// the shards it owns: for data spread evenly, about the whole table over N.
//
// Limits: what a rank sends per round is also kept under INT_MAX / N bytes, so an owner's receive
// counts and displacements (MPI ints, the sum over N - 1 senders) fit at any shard size; ranks
// past 256 own no shard; a shard holds at most 2^24 - 1 entries whoever owns it
// (ddt/dedup_table.h): before the exchange every rank raises the sample shift alike while some
// shard's parts, added up over the ranks, could exceed that (so Merge never leaves a key out), and
// after it while some owner's shard holds more than ddt::DedupTable::kShardEntriesToSample (2^23),
// as one process's table samples (state::FitTablesToShards). ZSIM_MPI_SHARD_ENTRIES gives a
// smaller such limit (tests).
//
// --max-memory on the partitioned tables: the whole's memory is the sum of the parts' (a shard
// lives on one rank, and a shard a rank sent away costs it nothing), so every rank raises the
// sample shift alike while that sum (an all-reduce) and the sketches exceed the budget: the kept
// key space is the one the whole table would keep (state/table_budget.h).
//
// Thread safety: MPI_THREAD_SERIALIZED; every rank calls each function, from its main thread,
// in the same order (they are collective).

#ifndef ZSIM_ENGINE_MPI_PARTITION_H_
#define ZSIM_ENGINE_MPI_PARTITION_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "zsim/status.h"

namespace zsim::mpi {

// The rank that owns `shard` among `size` ranks (ranks past 256 own none).
int OwnerOfShard(size_t shard, int size);

struct PartitionStats {
  uint64_t bytes_sent = 0;    // entry bytes this rank sent to other owners
  uint64_t entries_sent = 0;  // and how many entries
  uint64_t rounds = 0;        // all-to-all rounds, every row
  double seconds = 0;         // wall time of the partition (set by the caller)
  double cpu_seconds = 0;     // and this process's CPU time in it
};

// Raises every table to the coarsest sample shift any rank's tables have (and `min_shift`), then
// moves every entry to its shard's owner: afterwards `tables` (one per row, the same rows on every
// rank) hold this rank's shards, each shard the whole scan's (sampled further, alike, while a
// shard would outgrow its limit: see Limits above). Fails when a batch does not read back
// (ranks built differently); the entries are then incomplete.
Status PartitionTables(const std::vector<ddt::DedupTable*>& tables, uint32_t min_shift, int rank,
                       int size, PartitionStats* stats);

// --max-memory over the partitioned `tables`: raises every rank's tables to `shift` first, then
// alike, one step at a time (up to 40), while the sum of every rank's tables plus `other_bytes`
// (the sketches) exceeds `budget_bytes` (0: no budget). `shift` and `other_bytes` must be the same
// on every rank.
void FitPartitionedTables(const std::vector<ddt::DedupTable*>& tables, uint32_t shift,
                          uint64_t other_bytes, uint64_t budget_bytes);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_PARTITION_H_
