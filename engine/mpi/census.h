// engine/mpi/census.h
//
// The census of a distributed scan (pipeline/scan_blocks.cc, docs/scale.md "The census"): the
// sampled codecs code every key referenced ddt::kHeavyRefcount (8) times in all. Across N ranks a
// key referenced 8 times in all is referenced ceil(8/N) times by some rank, so each rank counts its
// own references to ceil(8/N), with a filter of the keys it shipped (a key met again after its
// entry left counts as seen). From N = 8 on that count would be 1, i.e. every block: the ranks
// then keep the census at 8 of their own references (a key met again after shipping is not a
// repeated one), and after the exchange the owners code the heavy keys still without codes by
// reading one of their blocks again (heavy_census.h).
//
// The same after-the-exchange census from N = 2 on where the sampled codecs are costly
// (CensusCodecsCostly): the count at ceil(8/N) runs every sampled codec on each key a rank meets
// ceil(8/N) times, and on every key it meets again after shipping it, heavy in all or not. With
// `--compression all` at N = 2 on the file-server sample that doubled the codecs' CPU time
// (30.9-32.7 CPU s, where one process takes 15.1; bench/results/2026-12-06-s50-census), against
// 16.7-18.8 s with the count at 8 and the reread, which read no block again there (the rest
// above one process: keys first met on both ranks). The reread costs 8 bytes of origin per
// entry (heavy_census.h), which the reference codecs' waste does not repay (about a tenth of
// their CPU time at N = 2, measured with the six of the earlier default list: the VM-store sample
// at 16K, 2.0 against 1.8 s). Either way the ranks keep the filter of the keys they shipped for the
// rare classes (pipeline::ScanControl::shipped_before).

#ifndef ZSIM_ENGINE_MPI_CENSUS_H_
#define ZSIM_ENGINE_MPI_CENSUS_H_

#include <cstdint>

#include "zsim/scan_options.h"

namespace zsim::mpi {

struct CensusPlan {
  uint32_t refcount = 0;   // a rank's own references that make a key heavy
  bool own_count = false;  // counted on the rank's own references, with the shipped-keys filter
  bool reread = false;     // the owners code what is left after the exchange (heavy_census.h)
};

// The census for `ranks` ranks (>= 1). `costly_codecs` (CensusCodecsCostly): from 2 ranks on, 8
// own references and the reread, as from 8 ranks on. `override_at` (ZSIM_MPI_CENSUS_AT, tests):
// when >= 2, the census at that many own references (at most ddt::kHeavyRefcount) and nothing
// after the exchange, the census before its fixes; 0 or 1: none. Pure.
CensusPlan PlanCensus(int ranks, unsigned long override_at, bool costly_codecs);

// Sampled codecs at least this many times as costly per byte as the reference list's
// (estimate::CostReferenceCompressions, the default list of earlier versions; nominal
// speeds, estimate/codec_cost.h) take the reread from 2 ranks on. The reference list is 1;
// `gzip-9` alone 2.1, `zstd-19` alone 5.3, `--compression all` 42.
inline constexpr double kCensusRereadCostFactor = 2;

// Whether the sampled codecs of `options` (resolved: the list given, not empty) cost
// kCensusRereadCostFactor times the reference list's sampled codecs per byte, whatever the
// profile, or more. A function of the options: every rank decides alike. Pure.
bool CensusCodecsCostly(const ScanOptions& options);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_CENSUS_H_
