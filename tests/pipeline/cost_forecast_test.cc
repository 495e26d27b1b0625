// ForecastCost (engine/pipeline/cost_forecast.h): threads beyond the cores share them, so the
// forecast's wall time and the costly-scan warning count the cores.

#include "engine/pipeline/cost_forecast.h"

#include <gtest/gtest.h>

#include "engine/pipeline/scan.h"

namespace zsim::pipeline {
namespace {

ScanOptions AllCodecs(int threads) {
  ScanOptions o;
  o.compressions = AllCompressions(o.profile);
  o.recordsizes = {16 << 10, 128 << 10, 1 << 20};
  o.threads = threads;
  return ResolveOptions(o);
}

// 150 MB of 3,000 files: the file-server sample's size, where --compression all is costly.
constexpr estimate::Plan kSized{150'000'000, 3'000};

TEST(CostForecastTest, ThreadsBeyondTheCoresCountAsTheCores) {
  const CostForecast on_cores = ForecastCost(AllCodecs(2), kSized, 2);
  const CostForecast many = ForecastCost(AllCodecs(64), kSized, 2);
  EXPECT_EQ(on_cores.threads, 2);
  EXPECT_EQ(many.threads, 2);
  EXPECT_DOUBLE_EQ(many.Seconds(), on_cores.Seconds());
  EXPECT_TRUE(IsCostly(on_cores)) << on_cores.codec_cpu_seconds;
  // Counted at 64 threads the same codec work would be under kCostlyCodecSeconds of wall time.
  CostForecast as_asked = many;
  as_asked.threads = 64;
  EXPECT_FALSE(IsCostly(as_asked)) << as_asked.codec_cpu_seconds;
  EXPECT_TRUE(IsCostly(many));
}

TEST(CostForecastTest, FewerThreadsThanCoresKeepTheirCount) {
  EXPECT_EQ(ForecastCost(AllCodecs(1), kSized, 8).threads, 1);
  EXPECT_EQ(ForecastCost(AllCodecs(3), kSized, 8).threads, 3);
  EXPECT_EQ(ForecastCost(AllCodecs(3), kSized, 0).threads, 1);  // no core count: one
}

}  // namespace
}  // namespace zsim::pipeline
