#include "engine/pipeline/cost_forecast.h"

#include <algorithm>
#include <cmath>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"

namespace zsim::pipeline {
using estimate::kReadBytesPerSecond;
using estimate::NominalCodecBytesPerSecond;
namespace {

// Per (row, setting), row-major: the level its codec runs at (0: every block).
std::vector<int> CodedLevels(const ScanOptions& options, const estimate::Plan& sized,
                             const estimate::SamplingPlan& plan) {
  const std::vector<uint64_t> block_sizes = estimate::RowBlockSizes(options);
  const std::vector<int> budget = estimate::BudgetLevels(options, plan.sampled, sized);
  const size_t settings = options.compressions.size();
  std::vector<int> levels(block_sizes.size() * settings, 0);
  for (size_t r = 0; r < block_sizes.size(); ++r) {
    for (size_t c = 0; c < settings; ++c) {
      if (!plan.sampled[c]) continue;
      // The codec budget (estimate/codec_budget.h); under --sample the occurrence sample's plan.
      levels[r * settings + c] = options.sample_modulus > 1
                                     ? estimate::PlanLevel(sized.bytes, block_sizes[r])
                                     : budget[r * settings + c];
    }
  }
  return levels;
}

}  // namespace

CostForecast ForecastCost(const ScanOptions& options, const estimate::Plan& sized, int cores) {
  CostForecast f;
  f.threads = std::max(1, std::min(options.threads, cores));
  const std::vector<uint64_t> block_sizes = estimate::RowBlockSizes(options);
  const estimate::SamplingPlan plan = estimate::PlanSampling(options.compressions, options.exact);
  const std::vector<int> levels = CodedLevels(options, sized, plan);
  const size_t settings = options.compressions.size();
  f.coded_shares.assign(settings, 0);
  for (size_t r = 0; r < block_sizes.size(); ++r) {
    const uint64_t bs = block_sizes[r];
    f.read_cpu_seconds += double(sized.bytes) / kReadBytesPerSecond;
    if (bs == 0) continue;
    for (size_t c = 0; c < settings; ++c) {
      const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
      if (speed <= 0) continue;
      // The bytes of the blocks at or above the level (small files' blocks are their size).
      const double coded = std::ldexp(double(sized.bytes), -levels[r * settings + c]);
      f.codec_cpu_seconds += coded / speed;
      f.coded_shares[c] += std::ldexp(1.0, -levels[r * settings + c]);
    }
  }
  return f;
}

}  // namespace zsim::pipeline
