// engine/pipeline/cost_forecast.h
//
// What a scan will cost, before it is paid: once the sizing walk has sized the tree, the CPU
// time of reading and fingerprinting it and the most its codecs can take (every sampled codec
// on its budget's blocks, estimate/codec_budget.h; every unique block under --exact). Data that
// dedups needs less: the codecs run on unique blocks only. Speeds are one core's, taken from the
// bench on mixed data (bench/results/2026-12-01-stop14: lz4 0.65-3.5 GB/s, gzip-6 36-107 MB/s); the
// report gives the speeds measured on this CPU (report/codec_speed.h).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_PIPELINE_COST_FORECAST_H_
#define ZSIM_ENGINE_PIPELINE_COST_FORECAST_H_

#include <cstdint>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "zsim/scan_options.h"

namespace zsim::pipeline {

struct CostForecast {
  double read_cpu_seconds = 0;   // reading, fingerprinting, the dedup table
  double codec_cpu_seconds = 0;  // at most, over every (recordsize, codec)
  int threads = 1;               // the threads that run at once: at most the cores (ForecastCost)
  // Per setting of options.compressions: the share of a unique block's bytes its codec runs on,
  // summed over the rows (recordsizes): 1 per row for a codec on every block, 2^-level for a
  // sampled one at the budget's level (0 for off).
  std::vector<double> coded_shares;
  // Wall seconds on `threads` cores, the disk aside.
  double Seconds() const { return (read_cpu_seconds + codec_cpu_seconds) / threads; }
};

// The forecast for `options` (resolved: compressions and threads set) over a tree of `sized`
// (the sizing walk's allocated bytes and the files holding them).
// `cores`: the cores the process may run on; threads beyond them (--threads 64 for slow storage)
// share them, so the forecast's wall time and IsCostly count at most that many (at least 1,
// also for `cores` 0).
CostForecast ForecastCost(const ScanOptions& options, const estimate::Plan& sized, int cores);

// The codecs cost more than this many times the reading, and more than kCostlyCodecSeconds of
// wall time: worth a warning before going on (a small tree's codecs cost many times its
// reading, but a second). Judged on the codecs as measured (expected_time.h MeasuredForecast):
// `--compression all --recordsize 16k,128k,1M` on the bundled file-server and database samples
// measures 9-12 CPU s of codecs, about 100 times the reading, 4-6 s on 2 threads
// (bench/results/2026-12-03-s30-cost).
inline constexpr double kCostlyCodecFactor = 10;
inline constexpr double kCostlyCodecSeconds = 2;
inline bool IsCostly(const CostForecast& f) {
  return f.codec_cpu_seconds > kCostlyCodecFactor * f.read_cpu_seconds &&
         f.codec_cpu_seconds / f.threads > kCostlyCodecSeconds;
}

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_COST_FORECAST_H_
