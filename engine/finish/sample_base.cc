#include "engine/finish/sample_base.h"

#include <algorithm>

#include "engine/estimate/codec_budget.h"

namespace zsim::finish {

std::vector<int> SampleBases(const ScanOptions& options, const state::SamplingState& sampling,
                             size_t row) {
  const size_t settings = options.compressions.size();
  std::vector<int> bases(settings, 0);
  std::vector<int> budget;
  if (sampling.adaptive) {
    budget = estimate::BudgetLevels(options, sampling.sampled, sampling.planned_bytes);
  }
  for (size_t c = 0; c < settings && c < sampling.sampled.size(); ++c) {
    if (!sampling.sampled[c]) continue;
    bases[c] = sampling.LevelOf(row, c);
    const size_t i = row * settings + c;
    if (i < budget.size()) bases[c] = std::max(bases[c], budget[i]);
  }
  return bases;
}

}  // namespace zsim::finish
