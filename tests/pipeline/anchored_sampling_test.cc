// Codec sampling with an exact auxiliary (estimate/sample_level.h PlanSampling,
// estimate/regression_estimator.h): with lz4 in the list, lz4 runs on every unique block and the
// other codecs' samples regress on its psize. Their intervals must hold the exact figures, be
// narrower than the same codec's on lsize from the same coded blocks (and the first blocks of
// each lz4 class: estimate/anchor_class.h), and the figures must not depend on the thread count.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/estimate/anchor_class.h"
#include "engine/estimate/codec_budget.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

constexpr size_t kRecord = 2048;
constexpr int kRecords = 16384;  // 32 MiB in 8 files, every record unique

const Compression kLz4{CompressionAlgorithm::kLz4, 0};
const Compression kGzip1{CompressionAlgorithm::kGzip, 1};
const Compression kZle{CompressionAlgorithm::kZle, 0};

// Record i: 64 to 2047 random bytes, then zeros: psize varies from embedded to stored whole,
// and every codec's psize follows the random bytes.
void WriteTree(testing::TempDir& tmp) {
  for (int f = 0; f < 8; ++f) {
    std::vector<uint8_t> data;
    for (int i = f * kRecords / 8; i < (f + 1) * kRecords / 8; ++i) {
      const size_t n = 64 + (static_cast<size_t>(i) * 7919) % (kRecord - 64);
      std::vector<uint8_t> r = testing::Xorshift64Bytes(static_cast<uint64_t>(i) * 31 + 7, n);
      r.resize(kRecord, 0);
      data.insert(data.end(), r.begin(), r.end());
    }
    std::string name = "f";
    name += std::to_string(f);  // not "f" + ...: GCC 12's -Wrestrict misfires on it
    tmp.WriteFile(name, data);
  }
}

ScanResult Scan(const testing::TempDir& tmp, std::vector<Compression> codecs, bool exact,
                int threads) {
  ScanOptions o;
  o.paths = {tmp.path().string()};
  o.compressions = std::move(codecs);
  o.recordsizes = {kRecord};
  o.ashift = 9;  // psize in 512-byte steps
  o.exact = exact;
  o.threads = threads;
  auto fs = io::PosixFileSystem();
  Result<ScanResult> r = RunScan(o, fs.get());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ScanResult{};
}

double HalfWidth(const SettingResult& s) {
  return ((*s.ci95)[1] - (*s.ci95)[0]) / 2 / s.compressratio;
}

TEST(AnchoredSamplingTest, LzCodecsRegressOnAnExactLz4) {
  // The budget leaves 4,096-8,192 blocks: level 2 here.
  ASSERT_EQ(estimate::BudgetLevel(kRecords), 2);
  testing::TempDir tmp;
  WriteTree(tmp);
  const ScanResult exact = Scan(tmp, {kLz4, kGzip1, kZle}, true, 2);
  const ScanResult sampled = Scan(tmp, {kLz4, kGzip1, kZle}, false, 2);
  const ScanResult on_lsize = Scan(tmp, {kGzip1, kZle}, false, 2);  // no lz4: gzip on lsize
  ASSERT_EQ(sampled.results.size(), 3u);
  ASSERT_EQ(on_lsize.results.size(), 2u);

  // lz4 is the auxiliary: coded on every unique block, exact.
  EXPECT_TRUE(sampled.results[0].exact);
  EXPECT_FALSE(sampled.results[0].ci95.has_value());
  EXPECT_EQ(sampled.results[0].psize, exact.results[0].psize);
  EXPECT_EQ(sampled.results[0].codec_bytes, exact.results[0].codec_bytes);

  // gzip-1 regresses on it: the interval holds the exact ratio, meets +-0.5%, and is under half
  // as wide as gzip-1's on lsize, from the same coded blocks.
  const SettingResult& g = sampled.results[1];
  const SettingResult& ge = exact.results[1];
  const SettingResult& gl = on_lsize.results[0];
  ASSERT_FALSE(g.exact);
  ASSERT_TRUE(g.ci95.has_value());
  ASSERT_TRUE(gl.ci95.has_value());
  EXPECT_LE((*g.ci95)[0], ge.compressratio + 0.01);
  EXPECT_GE((*g.ci95)[1], ge.compressratio - 0.01);
  EXPECT_LE(HalfWidth(g), 0.005);
  EXPECT_LT(HalfWidth(g), 0.5 * HalfWidth(gl)) << HalfWidth(g) << " vs " << HalfWidth(gl);
  EXPECT_NEAR(double(g.psize) / double(ge.psize), 1.0, 0.005);
  // The same blocks, and the first blocks of each lz4 class (estimate/anchor_class.h: at most
  // 16 of each of the 33) besides.
  EXPECT_GE(g.codec_bytes, gl.codec_bytes);
  EXPECT_LE(g.codec_bytes - gl.codec_bytes, 33 * estimate::kRareClassBlocks * kRecord);
  EXPECT_LT(double(g.codec_bytes), 0.35 * double(ge.codec_bytes));

  // zle regresses on lz4 too (here its psize follows the random bytes as lz4's does).
  const SettingResult& z = sampled.results[2];
  const SettingResult& ze = exact.results[2];
  const SettingResult& zl = on_lsize.results[1];
  ASSERT_TRUE(z.ci95.has_value());
  ASSERT_TRUE(zl.ci95.has_value());
  EXPECT_LE((*z.ci95)[0], ze.compressratio + 0.01);
  EXPECT_GE((*z.ci95)[1], ze.compressratio - 0.01);
  EXPECT_LT(HalfWidth(z), 0.5 * HalfWidth(zl)) << HalfWidth(z) << " vs " << HalfWidth(zl);
  // Its psize follows lz4's more closely than gzip-1's does: the pilot (estimate/pilot_level.h)
  // may give it a higher level, never a lower one.
  EXPECT_LE(z.codec_bytes, g.codec_bytes);

  // The same figures for any thread count.
  for (int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    const ScanResult t = Scan(tmp, {kLz4, kGzip1, kZle}, false, threads);
    ASSERT_EQ(t.results.size(), 3u);
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_EQ(t.results[c].psize, sampled.results[c].psize);
      EXPECT_EQ(t.results[c].asize, sampled.results[c].asize);
      EXPECT_EQ(t.results[c].ci95, sampled.results[c].ci95);
    }
  }
}

}  // namespace
}  // namespace zsim::pipeline
