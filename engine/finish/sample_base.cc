#include "engine/finish/sample_base.h"

#include <algorithm>

#include "engine/estimate/codec_budget.h"

namespace zsim::finish {

int SampleBase(const state::SamplingState& sampling, size_t row, size_t setting,
               uint64_t block_bytes) {
  if (setting >= sampling.sampled.size() || !sampling.sampled[setting]) return 0;
  const int complete = sampling.LevelOf(row, setting);
  if (!sampling.adaptive) return complete;
  return std::max(complete, estimate::BudgetLevelOfBytes(sampling.planned_bytes, block_bytes));
}

}  // namespace zsim::finish
