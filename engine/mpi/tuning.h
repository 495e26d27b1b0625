// engine/mpi/tuning.h
//
// What the distributed scan's exchanges share: the overrides of their sizes read from the
// environment (ZSIM_MPI_BATCH_BYTES, ZSIM_MPI_SHIP_BYTES, ZSIM_MPI_EXCHANGE_BYTES,
// ZSIM_MPI_SHARD_ENTRIES, ZSIM_MPI_CENSUS_AT: tests and tuning, docs/scale.md), and how often the
// heap is trimmed while table entries leave a rank.
//
// Thread safety: EnvCount reads the environment, which nothing in zsim writes.

#ifndef ZSIM_ENGINE_MPI_TUNING_H_
#define ZSIM_ENGINE_MPI_TUNING_H_

#include <cstdint>
#include <cstdlib>

namespace zsim::mpi {

// The whole number in the environment variable `name`, or 0 when it is unset, empty or not a
// positive number.
inline uint64_t EnvCount(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? 0 : std::strtoull(v, nullptr, 10);
}

// Entry bytes sent away between two malloc_trim calls: the entries sent were the scan threads'
// allocations, in their malloc arenas, which the main or stream thread's do not reuse; a trim
// gives those pages back (it walks the whole heap: tens of ms at 100-200 MB).
inline constexpr uint64_t kTrimBytes = uint64_t{16} << 20;

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_TUNING_H_
