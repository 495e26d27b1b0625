// engine/mpi/peak_rss.h
//
// This process's peak resident memory, for the ranks' statistics lines (ZSIM_MPI_STATS=1, read by
// bench/e2e/mpi_scaling.py).
//
// Thread safety: any thread.

#ifndef ZSIM_ENGINE_MPI_PEAK_RSS_H_
#define ZSIM_ENGINE_MPI_PEAK_RSS_H_

#include <cstdint>

namespace zsim::mpi {

// Peak resident memory of this process (VmHWM), 0 when /proc does not say.
uint64_t PeakRssBytes();

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_PEAK_RSS_H_
