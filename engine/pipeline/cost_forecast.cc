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

std::vector<uint64_t> BlockSizes(const ScanOptions& options) {
  if (options.volblocksize) return {*options.volblocksize};
  return options.recordsizes;
}

// Per (row, setting), row-major: the level its codec runs at (0: every block).
std::vector<int> CodedLevels(const ScanOptions& options, uint64_t allocated_bytes,
                             const estimate::SamplingPlan& plan) {
  const std::vector<uint64_t> block_sizes = BlockSizes(options);
  const std::vector<int> budget = estimate::BudgetLevels(options, plan.sampled, allocated_bytes);
  const size_t settings = options.compressions.size();
  std::vector<int> levels(block_sizes.size() * settings, 0);
  for (size_t r = 0; r < block_sizes.size(); ++r) {
    for (size_t c = 0; c < settings; ++c) {
      if (!plan.sampled[c]) continue;
      // The codec budget (estimate/codec_budget.h); under --sample the occurrence sample's plan.
      levels[r * settings + c] = options.sample_modulus > 1
                                     ? estimate::PlanLevel(allocated_bytes, block_sizes[r])
                                     : budget[r * settings + c];
    }
  }
  return levels;
}

}  // namespace

CostForecast ForecastCost(const ScanOptions& options, uint64_t allocated_bytes) {
  CostForecast f;
  f.threads = std::max(1, options.threads);
  const std::vector<uint64_t> block_sizes = BlockSizes(options);
  const estimate::SamplingPlan plan = estimate::PlanSampling(options.compressions, options.exact);
  const std::vector<int> levels = CodedLevels(options, allocated_bytes, plan);
  const size_t settings = options.compressions.size();
  for (size_t r = 0; r < block_sizes.size(); ++r) {
    const uint64_t bs = block_sizes[r];
    f.read_cpu_seconds += double(allocated_bytes) / kReadBytesPerSecond;
    const uint64_t blocks = bs ? allocated_bytes / bs : 0;
    for (size_t c = 0; c < settings; ++c) {
      const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
      if (speed <= 0) continue;
      const uint64_t coded = blocks >> levels[r * settings + c];
      f.codec_cpu_seconds += double(coded) * double(bs) / speed;
    }
  }
  return f;
}

std::vector<double> CodedShares(const ScanOptions& options, uint64_t allocated_bytes) {
  const size_t rows = BlockSizes(options).size();
  const size_t settings = options.compressions.size();
  const estimate::SamplingPlan plan = estimate::PlanSampling(options.compressions, options.exact);
  const std::vector<int> levels = CodedLevels(options, allocated_bytes, plan);
  std::vector<double> shares(settings, 0);
  for (size_t c = 0; c < settings; ++c) {
    if (NominalCodecBytesPerSecond(options.compressions[c]) <= 0) continue;
    for (size_t r = 0; r < rows; ++r) shares[c] += std::ldexp(1.0, -levels[r * settings + c]);
  }
  return shares;
}

}  // namespace zsim::pipeline
