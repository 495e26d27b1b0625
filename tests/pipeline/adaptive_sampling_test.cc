// Codec sampling through the C++ API (estimate/adaptive_level.h): every codec of a default scan
// is sampled, its level rising as unique blocks come in; the figures do not depend on the
// thread count, also where the data changes kind along the walk.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

constexpr size_t kRecord = 1024;
constexpr int kRecords = 48000;  // 47 MiB in 12 files

const Compression kLz4{CompressionAlgorithm::kLz4, 0};
const Compression kZle{CompressionAlgorithm::kZle, 0};

// 1 KiB records, each unique: `random_bytes(i)` random bytes then zeros.
template <typename RandomBytes>
void WriteTree(testing::TempDir& tmp, RandomBytes random_bytes) {
  for (int f = 0; f < 12; ++f) {
    std::vector<uint8_t> data;
    for (int i = f * kRecords / 12; i < (f + 1) * kRecords / 12; ++i) {
      const size_t n = random_bytes(i);
      std::vector<uint8_t> r = testing::Xorshift64Bytes(static_cast<uint64_t>(i) * 31 + 5, n);
      r.resize(kRecord, 0);
      data.insert(data.end(), r.begin(), r.end());
    }
    std::string name = "f";
    name += std::to_string(f);  // not "f" + ...: GCC 12's -Wrestrict misfires on it
    tmp.WriteFile(name, data);
  }
}

ScanResult Scan(const testing::TempDir& tmp, bool exact, int threads) {
  ScanOptions o;
  o.paths = {tmp.path().string()};
  o.compressions = {kLz4, kZle};
  o.recordsizes = {kRecord};
  o.ashift = 9;  // psize in 512-byte steps: the records' sizes differ
  o.exact = exact;
  o.threads = threads;
  auto fs = io::PosixFileSystem();
  Result<ScanResult> r = RunScan(o, fs.get());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ScanResult{};
}

// The sampled scan against the exact one: fewer blocks coded, psize within `tolerance`, the
// interval holding the exact ratio, and the same figures for 1, 2 and 3 threads.
void ExpectSampledLikeExact(const testing::TempDir& tmp, double max_coded, double tolerance) {
  const ScanResult exact = Scan(tmp, true, 2);
  const ScanResult sampled = Scan(tmp, false, 2);
  ASSERT_EQ(sampled.results.size(), 2u);
  const ScanResult one = Scan(tmp, false, 1), three = Scan(tmp, false, 3);
  for (size_t c = 0; c < 2; ++c) {
    SCOPED_TRACE(c);
    const SettingResult& e = exact.results[c];
    const SettingResult& s = sampled.results[c];
    EXPECT_TRUE(e.exact);
    ASSERT_FALSE(s.exact);
    EXPECT_LT(double(s.codec_bytes), max_coded * double(e.codec_bytes));
    EXPECT_NEAR(double(s.psize) / double(e.psize), 1.0, tolerance);
    ASSERT_TRUE(s.ci95.has_value());
    EXPECT_LE((*s.ci95)[0], e.compressratio + 0.01);
    EXPECT_GE((*s.ci95)[1], e.compressratio - 0.01);
    for (const ScanResult* t : {&one, &three}) {
      EXPECT_EQ(t->results[c].psize, s.psize);
      EXPECT_EQ(t->results[c].asize, s.asize);
      EXPECT_EQ(*t->results[c].ci95, *s.ci95);
    }
  }
}

TEST(AdaptiveSamplingTest, AlikeBlocksAreSampledWithinTheTarget) {
  testing::TempDir tmp;
  // 400-447 random bytes per record (lz4 and zle store 512), every 50th record 80 (embedded):
  // a unit spread of 14%. 48,000 unique blocks: the codecs rise to level 1 from the plan
  // (48,000 >> 1 >= 16,000), to 2 after 16,000 blocks and to 3 after 32,000 (kSampleBlocks at
  // each), so they code about 30% of the blocks (more when the sizing walk ends late).
  WriteTree(tmp, [](int i) { return i % 50 == 0 ? size_t{80} : size_t{400} + size_t(i % 48); });
  ExpectSampledLikeExact(tmp, 0.6, 0.01);
}

// Files alike first, mixed later (the walk meets them in any order): a rise decided by the
// interval of the blocks met so far made the figures depend on which files the threads had
// met; a rise by counts does not.
TEST(AdaptiveSamplingTest, DataThatChangesKindAlongTheWalkGivesTheSameFiguresForAnyThreadCount) {
  testing::TempDir tmp;
  WriteTree(tmp, [](int i) {
    if (i < kRecords / 2) return size_t{400};
    return (i * 7919) % 3 ? size_t{400} : size_t{kRecord};  // a third stored whole
  });
  ExpectSampledLikeExact(tmp, 0.6, 0.03);
}

}  // namespace
}  // namespace zsim::pipeline
