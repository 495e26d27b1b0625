// A sampled table's allocated side, corrected by regression on the referenced ratio
// (estimate/ratio_regression.h, finish/sampled_table.cc): its interval must hold the exact dedup
// ratio when the kept entries' referenced ratio is off for a reason the correction does not
// describe.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engine/pipeline/scan.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

// A tree of 4 KiB records, scanned at recordsize 4K: `unique` records referenced once, of every
// compressibility, then `compressible` and `incompressible` records referenced 3 to 7 times
// each, in random order. With 1/16 of the keys kept, a few dozen kept entries may hold none of
// the duplicated keys, or only of one kind.
void WriteTree(testing::TempDir& tmp, uint64_t seed, int unique, int compressible,
               int incompressible) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  uint64_t block_seed = seed * 100000;
  std::vector<std::vector<uint8_t>> records;
  for (int i = 0; i < unique; ++i) {
    records.push_back(testing::GenerateBlock(4 * K, 0.9 * u(rng), block_seed++));
  }
  for (int i = 0; i < compressible + incompressible; ++i) {
    const std::vector<uint8_t> r =
        testing::GenerateBlock(4 * K, i < compressible ? 0.97 : 0.0, block_seed++);
    const int refs = 3 + static_cast<int>(rng() % 5);
    for (int j = 0; j < refs; ++j) records.push_back(r);
  }
  std::shuffle(records.begin(), records.end(), rng);
  for (size_t f = 0; f * 64 < records.size(); ++f) {
    std::vector<uint8_t> data;
    for (size_t i = f * 64; i < std::min(records.size(), f * 64 + 64); ++i) {
      data.insert(data.end(), records[i].begin(), records[i].end());
    }
    tmp.WriteFile("tree/" + testing::NumberedName("part", static_cast<int>(f)), data);
  }
}

struct Draw {
  double truth;                // the exact scan's dedup ratio (referenced / allocated dsize)
  double estimate, low, high;  // the 1/16 table's, and its 95% interval
  bool Holds() const { return low <= truth && truth <= high; }
};

Draw ScanExactAndSampled(uint64_t seed, int unique, int compressible, int incompressible) {
  testing::TempDir tmp;
  // A relative input path: the occurrence sample hashes paths, so one sample per seed.
  const testing::ScopedWorkingDirectory cwd(tmp.path());
  WriteTree(tmp, seed, unique, compressible, incompressible);
  ScanOptions o;
  o.paths = {"tree"};
  o.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
  o.recordsizes = {4 * K};
  o.ashift = 9;  // so that 4 KiB records compress to several sizes
  o.threads = 2;
  auto fs = io::PosixFileSystem();
  Result<ScanResult> exact = RunScan(o, fs.get());
  EXPECT_TRUE(exact.ok()) << exact.status().ToString();
  o.sample_modulus = 16;
  Result<ScanResult> sampled = RunScan(o, fs.get());
  EXPECT_TRUE(sampled.ok()) << sampled.status().ToString();
  if (!exact.ok() || !sampled.ok()) return {};
  const DedupResult& e = exact->results[0].dedup;
  const DedupResult& s = sampled->results[0].dedup;
  EXPECT_EQ(s.sample_modulus, 16u);
  EXPECT_TRUE(s.ratio_ci95.has_value());
  if (!s.ratio_ci95) return {};
  return {double(e.total.referenced.dsize) / double(e.total.allocated.dsize),
          double(s.total.referenced.dsize) / double(s.total.allocated.dsize), (*s.ratio_ci95)[0],
          (*s.ratio_ci95)[1]};
}

// 250 unique records and 60 duplicated ones (20 kept entries or so): the regression's
// correction alone held the exact ratio on 33 of 40 seeds, 15-23% off on the others (the kept
// entries held no duplicated key, and the correction moved their ratio to the referenced
// side's, which the duplicated keys weigh); running from the uncorrected estimate to the
// corrected one, on all 40.
TEST(SampledCorrectionTest, IntervalHoldsWhereTheKeptEntriesMissTheDuplicatedKeys) {
  constexpr int kSeeds = 40;
  int held = 0;
  double width = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const Draw d = ScanExactAndSampled(static_cast<uint64_t>(seed), 250, 30, 30);
    SCOPED_TRACE(testing::NumberedName("seed", seed));
    EXPECT_GT(d.truth, 1.5);
    held += d.Holds();
    width += (d.high - d.low) / d.truth;
  }
  EXPECT_GE(held, kSeeds * 9 / 10);
  // Not by being wide: 0.46 of the ratio on average (0.71 with the uncorrected estimate's
  // own, wider, spread; 0.30 with the corrected interval alone).
  EXPECT_LT(width / kSeeds, 0.6);
}

// Without duplicated keys the kept entries' referenced ratio is their allocated one, and the
// correction moves it to the occurrences' (a census here), which is the truth: the interval
// stays the corrected one's: 2.8% wide on average. (Run to the uncorrected estimate here
// too, it was 5.3% wide, more than 5% on some seeds.)
TEST(SampledCorrectionTest, WithoutDuplicatesTheCorrectedIntervalStands) {
  for (int seed = 1; seed <= 10; ++seed) {
    const Draw d = ScanExactAndSampled(static_cast<uint64_t>(seed), 1000, 0, 0);
    SCOPED_TRACE(testing::NumberedName("seed", seed));
    EXPECT_TRUE(d.Holds()) << d.truth << " in [" << d.low << ", " << d.high << "]";
    EXPECT_LT((d.high - d.low) / d.truth, 0.05);
    EXPECT_NEAR(d.estimate / d.truth, 1.0, 0.02);
  }
}

}  // namespace
}  // namespace zsim::pipeline
