// engine/mpi/census.h
//
// The census of a distributed scan (pipeline/scan.cc, docs/scale.md "The census"): the sampled
// codecs code every key referenced ddt::kHeavyRefcount (8) times in all. Across N ranks a key
// referenced 8 times in all is referenced ceil(8/N) times by some rank, so each rank counts its
// own references to ceil(8/N), with a filter of the keys it shipped (a key met again after its
// entry left counts as seen). From N = 8 on that count would be 1, i.e. every block: the ranks
// then keep the census at 8 of their own references and no filter, and after the exchange the
// owners code the heavy keys still without codes by reading one of their blocks again
// (heavy_census.h).

#ifndef ZSIM_ENGINE_MPI_CENSUS_H_
#define ZSIM_ENGINE_MPI_CENSUS_H_

#include <cstdint>

namespace zsim::mpi {

struct CensusPlan {
  uint32_t refcount = 0;   // a rank's own references that make a key heavy
  bool own_count = false;  // counted on the rank's own references, with the shipped-keys filter
  bool reread = false;     // the owners code what is left after the exchange (heavy_census.h)
};

// The census for `ranks` ranks (>= 1). `override_at` (ZSIM_MPI_CENSUS_AT, tests): when >= 2, the
// census at that many own references (at most ddt::kHeavyRefcount) and nothing after the
// exchange, the census before its fixes; 0 or 1: none. Pure.
CensusPlan PlanCensus(int ranks, unsigned long override_at);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_CENSUS_H_
