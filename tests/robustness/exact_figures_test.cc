// Figures that must never be estimated or taken from the wrong write path (issue 18):
// compression=off stores every block as it is, so its physical size is its logical size exactly
// under --sample and --max-memory too; and the `used` column (no dedup) follows the dedup=off
// write path of its profile, where 2.4 with compression=off writes all-zero blocks.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/pipeline/scan.h"
#include "tests/util/test_util.h"

namespace zsim {
namespace {

constexpr uint64_t K = 1024;
constexpr uint64_t M = 1024 * K;
const Compression kOff{CompressionAlgorithm::kOff, 0};
const Compression kLz4{CompressionAlgorithm::kLz4, 0};

const SettingResult& Off(const ScanResult& r) {
  for (const SettingResult& s : r.results) {
    if (s.compression == kOff) return s;
  }
  static const SettingResult kNone;
  ADD_FAILURE() << "no compression=off row";
  return kNone;
}

// Small files of many sizes (their last blocks are partial, so psize per allocated byte varies
// between blocks) beside large ones, some duplicated.
void WriteMixedTree(testing::TempDir& tmp) {
  for (int i = 0; i < 300; ++i) {
    const size_t bytes = 700 + static_cast<size_t>(i) * 193 % (60 * K);
    tmp.WriteFile(testing::NumberedName("small/f", i),
                  testing::GenerateBlock(bytes, 0.5, static_cast<uint64_t>(i)));
  }
  for (int i = 0; i < 5; ++i) {
    tmp.WriteFile(testing::NumberedName("big/b", i),
                  testing::GenerateBlock(8 * M, 0.3, 1000 + static_cast<uint64_t>(i % 4)));
  }
}

TEST(ExactFiguresTest, CompressionOffIsExactUnderSampleAndMaxMemory) {
  testing::TempDir tmp;
  WriteMixedTree(tmp);
  ScanOptions o;
  o.paths = {tmp.path().string()};
  o.recordsizes = {512};  // 90,000 blocks: a 1 MiB table budget must sample
  o.compressions = {kOff, kLz4};
  o.threads = 2;
  auto fs = io::PosixFileSystem();
  Result<ScanResult> exact = pipeline::RunScan(o, fs.get());
  ASSERT_TRUE(exact.ok());
  ASSERT_EQ(Off(*exact).psize, Off(*exact).lsize);

  ScanOptions sampled = o;
  sampled.sample_modulus = 8;
  ScanOptions bounded = o;
  bounded.max_memory_bytes = 1 * M;
  for (const ScanOptions& opts : {sampled, bounded}) {
    Result<ScanResult> r = pipeline::RunScan(opts, fs.get());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const SettingResult& off = Off(*r);
    EXPECT_GT(off.dedup.sample_modulus, 1u);  // the table was sampled
    EXPECT_EQ(off.lsize, Off(*exact).lsize);
    EXPECT_EQ(off.psize, off.lsize);  // stored as is: nothing estimated
    EXPECT_EQ(off.asize, Off(*exact).asize);
    EXPECT_FALSE(off.ci95.has_value());  // so the report prints no "~"
    EXPECT_EQ(off.compressratio, Off(*exact).compressratio);
    EXPECT_LE(off.dedup.total.allocated.psize, off.dedup.total.allocated.lsize);
  }
}

// 10 MiB of zeros: holes on the dedup path of 2.4 with compression=off (dmu_write_policy turns
// off into "empty" when dedup is on), but written as data without dedup, which `used` shows.
TEST(ExactFiguresTest, UsedFollowsTheNoDedupWritePathOfItsProfile) {
  testing::TempDir with_zeros, without;
  const std::vector<uint8_t> data = testing::Xorshift64Bytes(7, 1 * M);
  with_zeros.WriteFile("data", data);
  with_zeros.WriteFile("zeros", std::vector<uint8_t>(10 * M, 0));
  without.WriteFile("data", data);
  auto scan = [](const testing::TempDir& dir, Profile profile) {
    ScanOptions o;
    o.paths = {dir.path().string()};
    o.compressions = {kOff};
    o.profile = profile;
    o.threads = 2;
    Result<ScanResult> r = pipeline::RunScan(o, io::PosixFileSystem().get());
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->results[0] : SettingResult{};
  };
  const SettingResult z24 = scan(with_zeros, Profile::kZfs24);
  const SettingResult n24 = scan(without, Profile::kZfs24);
  // Without dedup the 80 zero records are written: 10 MiB more (plus their indirect blocks).
  EXPECT_GE(z24.used, n24.used + 10 * M);
  EXPECT_LT(z24.used, n24.used + 10 * M + 64 * K);
  // With dedup (2.4) they are holes: the pool holds nearly nothing more.
  EXPECT_LT(z24.pool_alloc, n24.pool_alloc + 64 * K);
  // 2.2 writes zero blocks with dedup too: its no-dedup figure is the same as 2.4's.
  const SettingResult z22 = scan(with_zeros, Profile::kZfs22);
  const SettingResult n22 = scan(without, Profile::kZfs22);
  EXPECT_EQ(z24.used - n24.used, z22.used - n22.used);
}

}  // namespace
}  // namespace zsim
