#include "engine/mpi/census.h"

#include <algorithm>

#include "engine/ddt/dedup_table.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"

namespace zsim::mpi {

CensusPlan PlanCensus(int ranks, unsigned long override_at, bool costly_codecs) {
  const uint32_t n = static_cast<uint32_t>(std::max(ranks, 1));
  if (override_at >= 2) {
    const auto at =
        static_cast<uint32_t>(std::min<unsigned long>(override_at, ddt::kHeavyRefcount));
    return CensusPlan{at, at < ddt::kHeavyRefcount, false};
  }
  if (n == 1) return CensusPlan{ddt::kHeavyRefcount, false, false};
  if (costly_codecs) return CensusPlan{ddt::kHeavyRefcount, false, true};
  const uint32_t at = (ddt::kHeavyRefcount + n - 1) / n;
  // One own reference would make every block heavy (a duplicate's count is at least 2, so the
  // tables would never say kBecameHeavy): from N = 8 on, 8 own references, no repeated sighting
  // after a ship, and the heavy keys left without codes are coded after the exchange.
  if (at < 2) return CensusPlan{ddt::kHeavyRefcount, false, true};
  return CensusPlan{at, at < ddt::kHeavyRefcount, false};
}

bool CensusCodecsCostly(const ScanOptions& options) {
  const auto sampled_cost = [](const std::vector<Compression>& settings, bool exact) {
    return estimate::NominalSecondsPerByte(settings,
                                           estimate::PlanSampling(settings, exact).sampled);
  };
  const double listed = sampled_cost(options.compressions, options.exact);
  const double defaults = sampled_cost(estimate::CostReferenceCompressions(), false);
  return listed > 0 && listed >= kCensusRereadCostFactor * defaults;
}

}  // namespace zsim::mpi
