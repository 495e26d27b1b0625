#include "engine/pipeline/cost_forecast.h"

#include <algorithm>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"

namespace zsim::pipeline {
namespace {

// Reading from the page cache, fingerprinting (xxh128) and the dedup table, per core: the
// "rest" of the default scan's CPU time in the bench (0.88 s for 3.2 GB).
constexpr double kReadBytesPerSecond = 3.5e9;

}  // namespace

double NominalCodecBytesPerSecond(const Compression& c) {
  constexpr double M = 1e6;
  switch (c.algorithm) {
    case CompressionAlgorithm::kOff:
      return 0;
    case CompressionAlgorithm::kLz4:
      return 700 * M;
    case CompressionAlgorithm::kLzjb:
      return 500 * M;
    case CompressionAlgorithm::kZle:
      return 2000 * M;
    case CompressionAlgorithm::kGzip:
      return c.level <= 1 ? 90 * M : c.level <= 5 ? 60 * M : c.level == 6 ? 40 * M : 15 * M;
    case CompressionAlgorithm::kZstd:
      return c.level <= 0    ? 600 * M
             : c.level <= 1  ? 400 * M
             : c.level <= 3  ? 250 * M
             : c.level <= 6  ? 120 * M
             : c.level <= 9  ? 60 * M
             : c.level <= 15 ? 25 * M
                             : 6 * M;
  }
  return 100 * M;
}

CostForecast ForecastCost(const ScanOptions& options, uint64_t allocated_bytes) {
  CostForecast f;
  f.threads = std::max(1, options.threads);
  std::vector<uint64_t> block_sizes = options.recordsizes;
  if (options.volblocksize) block_sizes = {*options.volblocksize};
  const estimate::SamplingPlan plan = estimate::PlanSampling(options.compressions, options.exact);
  for (uint64_t bs : block_sizes) {
    f.read_cpu_seconds += double(allocated_bytes) / kReadBytesPerSecond;
    const uint64_t blocks = bs ? allocated_bytes / bs : 0;
    // The codec budget (estimate/codec_budget.h); under --sample the occurrence sample's plan.
    const int level = options.sample_modulus > 1
                          ? estimate::PlanLevel(allocated_bytes, bs)
                          : estimate::BudgetLevelOfBytes(allocated_bytes, bs);
    for (size_t c = 0; c < options.compressions.size(); ++c) {
      const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
      if (speed <= 0) continue;
      const uint64_t coded = plan.sampled[c] ? blocks >> level : blocks;
      f.codec_cpu_seconds += double(coded) * double(bs) / speed;
    }
  }
  return f;
}

}  // namespace zsim::pipeline
