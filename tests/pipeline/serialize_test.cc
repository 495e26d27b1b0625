// A scan state written as bytes and read back (state/serialize.h) reports the same figures as
// the state itself, exact, with sampled codecs and under --sample 1/M, and writes the same bytes
// again; bytes cut short, of another kind or made under other options are refused.

#include "engine/state/serialize.h"

#include <gtest/gtest.h>

#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

using testing::ExpectSameFigures;

void BuildTree(testing::TempDir& dir) {
  const std::vector<uint8_t> shared = testing::GenerateBlock(300 * 1024, 0.7, 1);
  dir.WriteFile("a/shared.bin", shared);
  dir.WriteFile("b/shared.copy", shared);
  for (int i = 0; i < 40; ++i) {
    dir.WriteFile("a/" + testing::NumberedName("f", i) + ".txt",
                  testing::GenerateBlock(20000 + i * 9000, 0.6, 10 + i));
  }
  std::vector<uint8_t> zeros(300 * 1024, 0);
  zeros[200 * 1024] = 1;
  dir.WriteFile("b/zeros.img", zeros);
  dir.WriteFile("b/empty", {});
}

ByteView Bytes(const std::string& s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

ScanResult Report(const state::ScanState& s) {
  return finish::Finish(s, finish::ReportOptionsOf(s.options));
}

void ExpectRoundTrip(ScanOptions o) {
  testing::TempDir dir;
  BuildTree(dir);
  o.paths = {dir.path().string()};
  o.threads = 2;
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> s = ScanToState(o, fs.get());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::string bytes = state::SerializeState(*s);
  Result<state::ScanState> back = state::DeserializeState(Bytes(bytes), s->options);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameFigures(Report(*s), Report(*back));
  EXPECT_EQ(Report(*s).memory.table_entries, Report(*back).memory.table_entries);
  EXPECT_EQ(state::SerializeState(*back), bytes);
}

TEST(SerializeTest, ExactStateReadsBackTheSame) {
  ScanOptions o;
  o.recordsizes = {8 * 1024, 128 * 1024};
  o.exact = true;
  ExpectRoundTrip(o);
}

TEST(SerializeTest, SampledCodecsAndKeySamplingReadBackTheSame) {
  ScanOptions o;
  o.recordsizes = {4 * 1024};
  o.compressions = {Compression{CompressionAlgorithm::kLz4, 0},
                    Compression{CompressionAlgorithm::kZstd, 19}};
  o.sample_modulus = 4;
  ExpectRoundTrip(o);
}

TEST(SerializeTest, DamagedOrForeignBytesAreRefused) {
  testing::TempDir dir;
  BuildTree(dir);
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.recordsizes = {16 * 1024, 128 * 1024};
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> s = ScanToState(o, fs.get());
  ASSERT_TRUE(s.ok());
  const std::string bytes = state::SerializeState(*s);
  for (size_t cut : {size_t{0}, size_t{3}, size_t{4}, bytes.size() / 3, bytes.size() - 1}) {
    Result<state::ScanState> r = state::DeserializeState(Bytes(bytes.substr(0, cut)), s->options);
    ASSERT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  }
  EXPECT_FALSE(state::DeserializeState(Bytes(bytes + "x"), s->options).ok());
  std::string other_tag = bytes;
  other_tag[3] = '9';
  EXPECT_FALSE(state::DeserializeState(Bytes(other_tag), s->options).ok());
  ScanOptions one_row = s->options;
  one_row.recordsizes = {16 * 1024};
  EXPECT_FALSE(state::DeserializeState(Bytes(bytes), one_row).ok());
}

}  // namespace
}  // namespace zsim::pipeline
