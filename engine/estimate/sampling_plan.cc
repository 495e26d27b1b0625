#include "engine/estimate/sample_level.h"

namespace zsim::estimate {

SamplingPlan PlanSampling(const std::vector<Compression>& settings, bool exact) {
  const size_t n = settings.size();
  SamplingPlan plan;
  plan.sampled.assign(n, false);
  plan.anchors.assign(n, -1);  // lsize: no setting is exact beside a sampled one but `off`
  if (exact) return plan;
  for (size_t c = 0; c < n; ++c) {
    plan.sampled[c] = settings[c].algorithm != CompressionAlgorithm::kOff;
  }
  return plan;
}

}  // namespace zsim::estimate
