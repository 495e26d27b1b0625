#include "engine/pipeline/cost_forecast.h"

#include <algorithm>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"

namespace zsim::pipeline {
using estimate::kReadBytesPerSecond;
using estimate::NominalCodecBytesPerSecond;

CostForecast ForecastCost(const ScanOptions& options, uint64_t allocated_bytes) {
  CostForecast f;
  f.threads = std::max(1, options.threads);
  std::vector<uint64_t> block_sizes = options.recordsizes;
  if (options.volblocksize) block_sizes = {*options.volblocksize};
  const estimate::SamplingPlan plan = estimate::PlanSampling(options.compressions, options.exact);
  const std::vector<int> budget = estimate::BudgetLevels(options, plan.sampled, allocated_bytes);
  const size_t settings = options.compressions.size();
  for (size_t r = 0; r < block_sizes.size(); ++r) {
    const uint64_t bs = block_sizes[r];
    f.read_cpu_seconds += double(allocated_bytes) / kReadBytesPerSecond;
    const uint64_t blocks = bs ? allocated_bytes / bs : 0;
    for (size_t c = 0; c < settings; ++c) {
      const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
      if (speed <= 0) continue;
      // The codec budget (estimate/codec_budget.h); under --sample the occurrence sample's plan.
      const int level = options.sample_modulus > 1 ? estimate::PlanLevel(allocated_bytes, bs)
                                                   : budget[r * settings + c];
      const uint64_t coded = plan.sampled[c] ? blocks >> level : blocks;
      f.codec_cpu_seconds += double(coded) * double(bs) / speed;
    }
  }
  return f;
}

}  // namespace zsim::pipeline
