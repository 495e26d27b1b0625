// pipeline/cost_probe.h: the read-ahead sample of the expected time. Which records it reads, and
// what it finds on a tree of a unique file, its clone and a file of zeros.

#include "engine/pipeline/cost_probe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/util/faulty_file_system.h"
#include "tests/util/forwarding_file_system.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

constexpr uint64_t kBlock = 128 << 10;

uint64_t Stride(uint64_t data) { return ProbeStridesFor({}, 0, data, kBlock).stride; }

// Without a file sample: about 1/kProbeShare of a large tree's blocks, within the bounds, in
// whole blocks.
TEST(CostProbeTest, StrideIsWholeBlocksAndBounded) {
  const uint64_t big = 64ull << 30;
  EXPECT_EQ(Stride(big) % kBlock, 0u);
  EXPECT_EQ(big / Stride(big), kProbeMaxRecords);
  const uint64_t mid = 3ull << 30;  // 24576 blocks: 384 records
  EXPECT_NEAR(double(mid / Stride(mid)), 24576.0 / kProbeShare, 2);
  // A small tree: about kProbeMinBytes, at most 1/kProbeMostShare of it (less by the stride's
  // rounding up to whole blocks).
  const double least = double(std::min(kProbeMinBytes, 100 * M / kProbeMostShare) / kBlock);
  const double small = double(100 * M) / double(Stride(100 * M));
  EXPECT_LE(small, least);
  EXPECT_GT(small, 0.85 * least);
  // At 1M, kProbeMinRecords blocks are more than kProbeMinBytes.
  EXPECT_EQ(ProbeStridesFor({}, 0, 1000 * M, M).stride, 16 * M);
  EXPECT_EQ(Stride(1000), kBlock);  // a tiny tree: one block
  // A sample of big files: the same strides, within the block the sums' rounding moves.
  const std::vector<walk::SampledFile> images = {{"a.img", 32ull << 30}, {"b.img", 32ull << 30}};
  const ProbeStrides s = ProbeStridesFor(images, 0, big, kBlock);
  EXPECT_NEAR(double(s.stride), double(Stride(big)), double(kBlock));
  EXPECT_EQ(s.stride % kBlock, 0u);
}

// The bytes and records the probe reads of the sample's files at these strides, on average.
struct Reads {
  double bytes = 0, records = 0;
};
Reads ExpectedReads(const std::vector<walk::SampledFile>& files, ProbeStrides s) {
  Reads r;
  for (const walk::SampledFile& f : files) {
    if (f.size < s.stride) {
      const double p = std::min(1.0, double(f.size) / double(s.short_stride));
      r.records += p;
      r.bytes += p * double(std::min(kBlock, f.size));
      continue;
    }
    for (uint64_t offset = 0; offset < f.size; offset += s.stride) {
      r.records += 1;
      r.bytes += double(std::min(kBlock, f.size - offset));
    }
  }
  return r;
}

// A tree of small files: the strides are set by the bytes they read, not by a count of records.
// 8,000 files of 12 KiB (94 MiB): a count of 64 records read 64 files (0.8 MiB); by bytes, the
// short files' stride is the shortest that reads at most an eighth of the tree (kProbeMostShare:
// 11.7 MiB, under kProbeMinBytes), about 1,000 files.
TEST(CostProbeTest, StridesOfSmallFilesAreSetByTheBytesRead) {
  std::vector<walk::SampledFile> files;
  for (int i = 0; i < 8000; ++i) files.push_back({testing::NumberedName("f", i), 12 << 10});
  const uint64_t data = 8000 * (12 << 10);
  const double budget = double(std::min(kProbeMinBytes, data / kProbeMostShare));
  const ProbeStrides s = ProbeStridesFor(files, 0, data, kBlock);
  EXPECT_EQ(s.stride % kBlock, 0u);
  EXPECT_LE(s.short_stride, s.stride);
  const Reads at = ExpectedReads(files, s);
  EXPECT_LE(at.bytes, budget);
  EXPECT_GT(ExpectedReads(files, {s.stride, s.short_stride - 1}).bytes, budget);
  EXPECT_GT(at.records, 950.0);
  // The same files as the sample, at level 3, of a tree 8 times their size: the probe reads the
  // sample only, and the budget is the bigger tree's (kProbeMinBytes), so it reads more of them.
  const ProbeStrides s3 = ProbeStridesFor(files, 3, 8 * data, kBlock);
  const Reads at3 = ExpectedReads(files, s3);
  EXPECT_LE(at3.bytes, double(kProbeMinBytes));
  EXPECT_GT(at3.bytes, 0.99 * double(kProbeMinBytes));
  // At level 7, files of 1 KiB (10,000 standing for 1.28 million): the bytes are few (the
  // sample's 10 MB, under the budget), the records are held to kProbeMaxReads.
  std::vector<walk::SampledFile> tiny;
  for (int i = 0; i < 10000; ++i) tiny.push_back({testing::NumberedName("t", i), 1024});
  const ProbeStrides t = ProbeStridesFor(tiny, 7, 128 * 10000 * 1024ull, kBlock);
  EXPECT_LE(ExpectedReads(tiny, t).records, double(kProbeMaxReads));
  EXPECT_GT(ExpectedReads(tiny, t).records, 0.99 * double(kProbeMaxReads));
  // A sample of sparse files, a tenth of whose apparent bytes hold data: the probe reads a tenth
  // of what their sizes say (holes are skipped), so the strides are several times shorter.
  const ProbeStrides sparse = ProbeStridesFor(files, 0, data / 10, kBlock);
  EXPECT_LT(sparse.short_stride, s.short_stride / 5);
  // A tree of fewer than kProbeMinRecords blocks is read whole.
  const std::vector<walk::SampledFile> few(files.begin(), files.begin() + 300);
  const ProbeStrides whole = ProbeStridesFor(few, 0, 300 * (12 << 10), kBlock);
  for (const walk::SampledFile& f : few) {
    const ProbedRecords p = ProbedRecordsOf(f.path, f.size, whole);
    EXPECT_EQ(p.count, 1u);
    EXPECT_DOUBLE_EQ(p.bytes_each, double(f.size));
  }
}

// A long file: records at multiples of the stride, standing for the file's bytes together. A
// short one: at offset 0 with probability size/short_stride, standing for max(size,
// short_stride).
TEST(CostProbeTest, RecordsOfLongAndShortFiles) {
  const uint64_t stride = 8 * kBlock;
  const ProbeStrides strides{stride, 2 * kBlock};
  const ProbedRecords p = ProbedRecordsOf("long", 20 * kBlock + 5, strides);
  ASSERT_EQ(p.count, 3u);
  EXPECT_EQ(p.stride, stride);
  EXPECT_DOUBLE_EQ(p.bytes_each * 3, double(20 * kBlock + 5));
  EXPECT_EQ(ProbedRecordsOf("empty", 0, strides).count, 0u);
  // A short file of the short stride or more: always, standing for its size.
  const ProbedRecords mid = ProbedRecordsOf("mid", 3 * kBlock, strides);
  EXPECT_EQ(mid.count, 1u);
  EXPECT_TRUE(mid.short_file);
  EXPECT_DOUBLE_EQ(mid.bytes_each, double(3 * kBlock));
  // Short files stand for their bytes on average, also when thousands have one size.
  double probed = 0, bytes = 0;
  for (int i = 0; i < 4000; ++i) {
    const uint64_t size = i % 2 ? 8192 : 4096 + 509 * uint64_t(i % 300);
    bytes += double(size);
    const ProbedRecords s = ProbedRecordsOf(testing::NumberedName("f", i), size, strides);
    if (s.count != 0) {
      EXPECT_EQ(s.count, 1u);
      probed += s.bytes_each;
    }
  }
  EXPECT_NEAR(probed / bytes, 1.0, 0.1);
}

// Distinct non-zero keys count once, with what they stand for; zeros never; the unique share of
// the data covered scales the tree's data bytes. The data covered: the long files' records, and
// the short files' bytes as given, whichever were drawn.
TEST(CostProbeTest, UniqueBytesCountEachKeyOnce) {
  std::vector<ProbedRecord> r = {
      {1, false, 1000},  // a block
      {1, false, 1000},  // and its twin
      {2, true, 1000},   // zeros
      {3, false, 500},   // one standing for fewer bytes
  };
  // 1500 unique of 3500 probed.
  EXPECT_DOUBLE_EQ(UniqueBytes(r, 0, 7000), 3000);
  EXPECT_DOUBLE_EQ(UniqueBytes({}, 0, 7000), 0);
  // A short file drawn, standing for a stride of 4000: 5500 unique of 3500 + 7500 short bytes.
  r.push_back({4, false, 4000, true});
  EXPECT_DOUBLE_EQ(UniqueBytes(r, 7500, 7000), 3500);
}

// Trees of short files of 16 KiB, half of them unique and half in 30 groups of 40 copies (a
// copied header set, as /usr/include holds node's OpenSSL headers 59 times over): the unique
// share is 0.5125. Over 100 trees (other names, so other draws) the probe's estimate is within
// 0.1 of it on at least 95. Were the data covered taken from the draw, each group drawn would
// add 40 strides of data to one of unique bytes, and the estimate swing with the groups drawn.
TEST(CostProbeTest, CopiesOfShortFilesDoNotSwingTheUniqueShare) {
  const uint64_t size = 16 << 10;
  int within = 0;
  for (int t = 0; t < 100; ++t) {
    std::vector<walk::SampledFile> files;
    std::vector<uint64_t> contents;
    const std::string header = "h" + std::to_string(t) + "_",
                      unique = "u" + std::to_string(t) + "_";
    for (int g = 0; g < 30; ++g) {
      const std::string name = testing::NumberedName(header.c_str(), g) + ".h";
      for (int c = 0; c < 40; ++c) {
        files.push_back({testing::NumberedName("copy", c) + "/" + name, size});
        contents.push_back(uint64_t(g + 1));
      }
    }
    for (int u = 0; u < 1200; ++u) {
      files.push_back({testing::NumberedName(unique.c_str(), u), size});
      contents.push_back(uint64_t(1000 + u));
    }
    const uint64_t data = files.size() * size;
    const ProbeStrides strides = ProbeStridesFor(files, 0, data, kBlock);
    std::vector<ProbedRecord> records;
    double short_bytes = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      const ProbedRecords p = ProbedRecordsOf(files[i].path, size, strides);
      ASSERT_TRUE(p.short_file);
      short_bytes += double(size);
      if (p.count == 1) records.push_back({contents[i], false, p.bytes_each, true});
    }
    const double share = UniqueBytes(records, short_bytes, data) / double(data);
    if (std::abs(share - 0.5125) <= 0.1) ++within;
  }
  EXPECT_GE(within, 95);
}

ScanOptions Options(std::vector<Compression> compressions) {
  ScanOptions o;
  o.recordsizes = {kBlock};
  o.compressions = std::move(compressions);
  o.threads = 1;
  return o;
}

// A short file is drawn by its name and size: its copies elsewhere in the tree (a copied tree,
// a database's template copies) are probed with it or not at all, so their twins are met.
TEST(CostProbeTest, CopiesOfShortFilesAreDrawnTogether) {
  const uint64_t stride = 16 * kBlock;
  const ProbeStrides strides{stride, stride};
  int probed = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string name = testing::NumberedName("rel", i);
    const uint64_t size = 8192;
    const uint64_t a = ProbedRecordsOf("pg/base/1/" + name, size, strides).count;
    EXPECT_EQ(ProbedRecordsOf("pg/base/16384/" + name, size, strides).count, a) << name;
    EXPECT_EQ(ProbedRecordsOf(name, size, strides).count, a) << name;
    probed += int(a);
  }
  EXPECT_NEAR(probed, 2000.0 * 8192 / double(stride), 40);  // still size/stride of them
}

// Short files in three directories, each a copy of the others (a template and two copies): the
// probe finds the unique bytes a third of the data, where a draw by the whole path found nearly
// all of it (each copy probed without its twins, taken for unique).
TEST(CostProbeTest, UniqueBytesOfCopiedShortFiles) {
  testing::TempDir tmp;
  std::vector<walk::SampledFile> files;
  const uint64_t size = 8192;
  const int n = 200;
  for (int i = 0; i < n; ++i) {
    const std::vector<uint8_t> bytes = testing::Xorshift64Bytes(1000 + uint64_t(i), size);
    for (const char* dir : {"template/", "copy1/", "copy2/"}) {
      const std::string path = tmp.WriteFile(dir + testing::NumberedName("f", i), bytes).string();
      files.push_back({path, size});
    }
  }
  std::sort(files.begin(), files.end(),
            [](const walk::SampledFile& a, const walk::SampledFile& b) { return a.path < b.path; });
  const uint64_t data = 3 * n * size;
  std::shared_ptr<io::FileSystem> fs = io::PosixFileSystem();
  const ScanOptions o = Options({Compression{CompressionAlgorithm::kLz4, 0}});
  CostProbe probe(fs.get(), files, 0, data, o, zfs::WritePolicy{}, {1.0}, 1.0);
  std::optional<ProbeFigures> f;
  while (!(f = probe.figures())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_NEAR(f->unique_bytes / double(data), 1.0 / 3, 0.02);
}

// The codecs are timed on 1.5% of the forecast's nominal codec work, counted by each record's own
// size: a forecast whose 1.5% is 7.5 blocks' worth times 8 whole records, or 64 (the most) of
// 12 KiB, the source sample's files; counted as whole blocks, those were 8 too, whose cost per
// byte came out up to a third above the scan's.
TEST(CostProbeTest, TimedRecordsAreCountedByTheirOwnSize) {
  const double per_byte = 1e-8;  // nominal CPU seconds per byte, the whole list
  const double forecast = 7.5 * double(kBlock) * per_byte / 0.015;
  const std::vector<uint64_t> blocks(500, kBlock);
  EXPECT_EQ(ProbeTimedRecords(forecast, per_byte, blocks), 8u);
  // 12 KiB records: 7.5 blocks' worth is 80 of them, held to 64.
  const std::vector<uint64_t> small(500, 12 << 10);
  EXPECT_EQ(ProbeTimedRecords(forecast, per_byte, small), kProbeMaxTimed);
  // Mixed, in the order given: 4 whole blocks, then 3.5 blocks' worth of small ones (38).
  std::vector<uint64_t> mixed(4, kBlock);
  mixed.insert(mixed.end(), 100, 12 << 10);
  EXPECT_EQ(ProbeTimedRecords(forecast, per_byte, mixed), 4u + 38u);
  // Never fewer than kProbeMinTimed, never more than there are, none without a codec cost.
  EXPECT_EQ(ProbeTimedRecords(forecast / 100, per_byte, blocks), kProbeMinTimed);
  EXPECT_EQ(ProbeTimedRecords(forecast, per_byte, std::vector<uint64_t>(5, 512)), 5u);
  EXPECT_EQ(ProbeTimedRecords(forecast, 0, blocks), 0u);
}

// The codecs' cost per byte from a few timed records, corrected by lz4's cost on every record.
// Half the records cost 10 ns per byte (lz4: 0.1), half 30 (lz4: 1.0); the ten timed happen to
// be eight costly and two cheap: their mean alone says 26, the regression the tree's 20.
TEST(CostProbeTest, CodecCostOfTheFewTimedIsCorrectedByLz4) {
  std::vector<TimedRecord> r;
  for (int i = 0; i < 100; ++i) {
    const bool costly = i % 2 == 0;
    TimedRecord t;
    t.stands_for = 1e6;
    t.bytes = 131072;
    t.lz4_ns = (costly ? 1.0 : 0.1) * double(t.bytes);
    const bool timed = costly ? i < 16 : i == 1 || i == 3;
    if (timed) t.codecs_ns = (costly ? 30.0 : 10.0) * double(t.bytes);
    r.push_back(t);
  }
  EXPECT_NEAR(CodecCpuPerByte(r) * 1e9, 20.0, 1e-6);
  // A record's size does not weigh: what it stands for does (a 16 KiB file's record stands for as
  // many bytes of the tree as a long file's).
  for (TimedRecord& t : r) {
    if (t.lz4_ns < 0.5 * double(t.bytes)) {  // the cheap ones, as small records
      t.lz4_ns /= 8;
      t.bytes /= 8;
      if (t.codecs_ns >= 0) t.codecs_ns /= 8;
    }
  }
  EXPECT_NEAR(CodecCpuPerByte(r) * 1e9, 20.0, 1e-6);
  // A tiny file whose lz4 cost per byte (its call's fixed cost) is far above every timed
  // record's is held to their range: it counts as the costliest timed ones.
  TimedRecord tiny;
  tiny.stands_for = 1e6;
  tiny.bytes = 512;
  tiny.lz4_ns = 50.0 * 512;
  r.push_back(tiny);
  EXPECT_NEAR(CodecCpuPerByte(r) * 1e9, (50 * 30.0 + 50 * 10.0 + 30.0) / 101, 1e-6);
  // Fewer than three timed: their mean; none: 0.
  std::vector<TimedRecord> two(r.begin(), r.begin() + 2);
  two[1].codecs_ns = 10.0 * double(two[1].bytes);
  EXPECT_NEAR(CodecCpuPerByte(two) * 1e9, 20.0, 1e-6);
  for (TimedRecord& t : two) t.codecs_ns = -1;
  EXPECT_EQ(CodecCpuPerByte(two), 0);
}

// 32 MiB random, its clone, 64 MiB of zeros and a sparse image: the unique bytes are the first
// file's and the image's data, and the codecs have a cost per byte; with compression off, none.
TEST(CostProbeTest, ClonesAndZerosAreNotUnique) {
  testing::TempDir tmp;
  const std::vector<uint8_t> random = testing::Xorshift64Bytes(7, 32 * M);
  const std::string a = tmp.WriteFile("a/template", random).string();
  const std::string b = tmp.WriteFile("b/clone", random).string();
  const std::string z = tmp.WriteFile("c/zeros", std::vector<uint8_t>(64 * M, 0)).string();
  // A sparse image: a 64 MiB hole, then 8 MiB of other random data.
  const std::string sparse = (tmp.path() / "d.img").string();
  {
    std::ofstream out(sparse, std::ios::binary);
    out.seekp(64 * M);
    const std::vector<uint8_t> tail = testing::Xorshift64Bytes(11, 8 * M);
    out.write(reinterpret_cast<const char*>(tail.data()), std::streamsize(tail.size()));
  }
  const std::vector<walk::SampledFile> files = {
      {a, 32 * M}, {b, 32 * M}, {z, 64 * M}, {sparse, 72 * M}};
  std::shared_ptr<io::FileSystem> fs = io::PosixFileSystem();
  const ScanOptions on = Options(
      {Compression{CompressionAlgorithm::kLz4, 0}, Compression{CompressionAlgorithm::kGzip, 6}});
  std::optional<ProbeFigures> f;
  {
    CostProbe probe(fs.get(), files, 0, 128 * M, on, zfs::WritePolicy{}, {1.0, 0.5}, 10.0);
    while (!(f = probe.figures())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // 128 MiB at 128 KiB: 1024 blocks, 64 records (every 16th block): 16 in the template, 4 in
  // the sparse image's data (its hole is not read), of 68 with data: 20/68 of the data bytes.
  EXPECT_NEAR(f->unique_bytes, 128.0 * M * 20 / 68, double(M));
  EXPECT_GT(f->codec_cpu_per_byte, 0);
  // The template alone, among files sampled at level 1: all it stands for is unique.
  {
    CostProbe probe(fs.get(), {files[0]}, 1, 128 * M, on, zfs::WritePolicy{}, {1.0, 0.5}, 10.0);
    while (!(f = probe.figures())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_DOUBLE_EQ(f->unique_bytes, double(128 * M));
  const ScanOptions off = Options({Compression{CompressionAlgorithm::kOff, 0}});
  {
    CostProbe probe(fs.get(), files, 0, 128 * M, off, zfs::WritePolicy{}, {0.0}, 0.0);
    while (!(f = probe.figures())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(f->codec_cpu_per_byte, 0);
}

// A sparse file of 1 TiB apparent size holding 4 MiB at its start and 4 MiB in its middle: the
// records visited are those holding data (64 at a 128 KiB stride), not one per stride of the
// apparent size (8 Mi of them); and the probe over it finishes, all its data unique.
TEST(CostProbeTest, HugeSparseFileVisitsOnlyItsData) {
  testing::TempDir tmp;
  const uint64_t apparent = 1ull << 40;
  const std::string path = (tmp.path() / "huge.img").string();
  {
    std::ofstream out(path, std::ios::binary);
    const std::vector<uint8_t> head = testing::Xorshift64Bytes(3, 4 * M);
    const std::vector<uint8_t> middle = testing::Xorshift64Bytes(5, 4 * M);
    out.write(reinterpret_cast<const char*>(head.data()), std::streamsize(head.size()));
    out.seekp(std::streamoff(apparent / 2));
    out.write(reinterpret_cast<const char*>(middle.data()), std::streamsize(middle.size()));
  }
  std::error_code ec;
  std::filesystem::resize_file(path, apparent, ec);
  if (ec)
    GTEST_SKIP() << "the temp dir's file system refuses a 1 TiB sparse file: " << ec.message();
  std::shared_ptr<io::FileSystem> fs = io::PosixFileSystem();
  Result<std::unique_ptr<io::File>> file = fs->Open(path, false);
  ASSERT_TRUE(file.ok());
  Result<std::optional<uint64_t>> after_head = (*file)->NextData(8 * M);
  if (!after_head.ok() || !*after_head || **after_head != apparent / 2) {
    GTEST_SKIP() << "the temp dir's file system does not report holes (SEEK_DATA)";
  }
  const uint64_t data = 8 * M;
  const ProbeStrides strides = ProbeStridesFor({}, 0, data, kBlock);
  const uint64_t stride = strides.stride;
  ASSERT_EQ(stride, kBlock);
  const ProbedRecords p = ProbedRecordsOf(path, apparent, strides);
  EXPECT_EQ(p.count, apparent / stride);
  std::vector<uint64_t> visited;
  for (std::optional<uint64_t> k = NextProbedRecord(**file, apparent, p, 0, kBlock); k;
       k = NextProbedRecord(**file, apparent, p, *k + 1, kBlock)) {
    visited.push_back(*k);
    ASSERT_LE(visited.size(), 1000u) << "the records visited follow the apparent size";
  }
  ASSERT_EQ(visited.size(), 64u);
  EXPECT_EQ(visited[0], 0u);
  EXPECT_EQ(visited[31], 31u);
  EXPECT_EQ(visited[32], apparent / 2 / stride);
  EXPECT_EQ(visited[63], apparent / 2 / stride + 31);
  const ScanOptions on = Options({Compression{CompressionAlgorithm::kLz4, 0}});
  std::optional<ProbeFigures> f;
  {
    CostProbe probe(fs.get(), {{path, apparent}}, 0, data, on, zfs::WritePolicy{}, {1.0}, 1.0);
    while (!(f = probe.figures())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_DOUBLE_EQ(f->unique_bytes, double(data));
}

// An exception on the probe's thread (an allocation failure while reading) ends the probe, not
// the process: no figures, failed() says so.
TEST(CostProbeTest, ExceptionEndsTheProbeNotTheProcess) {
  testing::TempDir tmp;
  const std::string a = tmp.WriteFile("a", testing::Xorshift64Bytes(9, 4 * M)).string();
  testing::FaultyFileSystem fs;
  fs.ThrowBadAllocAt(a, 0);
  const ScanOptions on = Options({Compression{CompressionAlgorithm::kLz4, 0}});
  CostProbe probe(&fs, {{a, 4 * M}}, 0, 4 * M, on, zfs::WritePolicy{}, {1.0}, 1.0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!probe.failed() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(probe.failed());
  EXPECT_FALSE(probe.figures());
}

// A symlink to a file is probed through as the scan reads it: with --follow-symlinks, or when an
// input path names it; else it is left out (the scan does not read it either).
TEST(CostProbeTest, SymlinksFollowTheScansOption) {
  testing::TempDir tmp;
  const std::string a = tmp.WriteFile("a", testing::Xorshift64Bytes(13, 4 * M)).string();
  const std::string link = (tmp.path() / "link").string();
  std::filesystem::create_symlink(a, link);
  std::shared_ptr<io::FileSystem> fs = io::PosixFileSystem();
  const auto unique = [&](const ScanOptions& o) {
    CostProbe probe(fs.get(), {{link, 4 * M}}, 0, 4 * M, o, zfs::WritePolicy{}, {1.0}, 1.0);
    std::optional<ProbeFigures> f;
    while (!(f = probe.figures())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return f->unique_bytes;
  };
  ScanOptions o = Options({Compression{CompressionAlgorithm::kLz4, 0}});
  o.paths = {tmp.path().string()};
  EXPECT_EQ(unique(o), 0);  // not followed: nothing probed
  o.follow_symlinks = true;
  EXPECT_DOUBLE_EQ(unique(o), double(4 * M));
  o.follow_symlinks = false;
  o.paths = {link};  // an input path that is a symlink
  EXPECT_DOUBLE_EQ(unique(o), double(4 * M));
}

// The pilot (estimate/pilot_level.h) in the probe: 2,560 records of 128 KiB, each 30,000 random
// bytes then zeros, which lz4 and gzip-6 store in the same 4K sectors; and a file system whose
// second open of a path fails (a file gone between the probe's reading and the pilot's).
class SecondOpenFails : public testing::ForwardingFileSystem {
 public:
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    if (fail_ && opens_[path]++ > 0) return Status::FromErrno(path, ENOENT);
    return ForwardingFileSystem::Open(path, follow);
  }
  void FailSecondOpens() { fail_ = true; }

 private:
  bool fail_ = false;
  std::map<std::string, int> opens_;  // the probe opens from one thread
};

TEST(CostProbeTest, PilotRaisesAlikeCodecsAndGivesNoLevelsWhenARecordIsGone) {
  testing::TempDir tmp;
  std::vector<walk::SampledFile> files;
  for (int f = 0; f < 10; ++f) {
    std::vector<uint8_t> bytes;
    for (int r = 0; r < 256; ++r) {
      std::vector<uint8_t> rec = testing::Xorshift64Bytes(uint64_t(f * 256 + r) + 1, 30000);
      rec.resize(kBlock, 0);
      bytes.insert(bytes.end(), rec.begin(), rec.end());
    }
    files.push_back({tmp.WriteFile(testing::NumberedName("f", f), bytes).string(), bytes.size()});
  }
  const uint64_t data = 10 * 256 * kBlock;
  const ScanOptions options = Options(
      {Compression{CompressionAlgorithm::kLz4, 0}, Compression{CompressionAlgorithm::kGzip, 6}});
  // gzip-6 at the budget's level 0 (2,560 planned blocks), anchored on lz4 (setting 0).
  const PilotPlan plan{{-1, 0}, {-1, 0}, {}, {}};
  auto run = [&](io::FileSystem* fs) {
    CostProbe probe(fs, files, 0, data, options, zfs::WritePolicy{}, {1.0, 1.0}, 10.0, plan);
    while (!probe.finished()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::make_pair(probe.pilot_levels(), probe.figures());
  };
  SecondOpenFails fs;
  const auto [levels, figures] = run(&fs);
  ASSERT_TRUE(levels.has_value());
  ASSERT_EQ(levels->size(), 2u);
  EXPECT_EQ((*levels)[0], -1);
  // No spread about the line: the floor decides. 2,560 unique blocks leave kPilotMinSample at
  // level 1 (1,280), not at 2 (640).
  EXPECT_EQ((*levels)[1], 1);
  ASSERT_TRUE(figures.has_value());
  EXPECT_NEAR(figures->unique_bytes, double(data), double(kBlock));
  // The pilot reads its records again: with every second open failing it gives no levels, and
  // the probe still gives the expected time its figures.
  fs.FailSecondOpens();
  const auto [none, still] = run(&fs);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_TRUE(still.has_value());
}

// --max-rate holds for the probe's reads too, the pilot's second reads included: every byte it
// reads is asked of the scan's throttle first. And a probe waiting on the throttle stops when
// told to, without levels.
class CountingFileSystem : public testing::ForwardingFileSystem {
 public:
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    Result<std::unique_ptr<io::File>> f = ForwardingFileSystem::Open(path, follow);
    if (!f.ok()) return f;
    return std::unique_ptr<io::File>(new Counted(std::move(*f), &read_));
  }
  uint64_t bytes_read() const { return read_.load(); }

 private:
  class Counted : public testing::ForwardingFile {
   public:
    Counted(std::unique_ptr<io::File> f, std::atomic<uint64_t>* read)
        : ForwardingFile(std::move(f)), read_(read) {}
    Result<size_t> ReadAt(uint64_t offset, MutableByteView dst) override {
      Result<size_t> n = ForwardingFile::ReadAt(offset, dst);
      if (n.ok()) read_->fetch_add(*n);
      return n;
    }

   private:
    std::atomic<uint64_t>* read_;
  };
  std::atomic<uint64_t> read_{0};
};

TEST(CostProbeTest, EveryReadWaitsOnTheThrottle) {
  testing::TempDir tmp;
  std::vector<walk::SampledFile> files;
  for (int f = 0; f < 4; ++f) {
    const std::vector<uint8_t> bytes = testing::Xorshift64Bytes(uint64_t(f) + 1, 64 * kBlock);
    files.push_back({tmp.WriteFile(testing::NumberedName("f", f), bytes).string(), bytes.size()});
  }
  const uint64_t data = 4 * 64 * kBlock;
  const ScanOptions options = Options(
      {Compression{CompressionAlgorithm::kLz4, 0}, Compression{CompressionAlgorithm::kGzip, 6}});
  const PilotPlan plan{{-1, 0}, {-1, 0}, {}, {}};
  {
    // A rate no read waits for: the bytes asked equal the bytes read, which are more than the
    // first pass's (the pilot reads its records again).
    CountingFileSystem fs;
    auto throttle = std::make_shared<ReadThrottle>(uint64_t(1) << 40, data);
    CostProbe probe(&fs, files, 0, data, options, zfs::WritePolicy{}, {1.0, 1.0}, 10.0, plan,
                    throttle);
    while (!probe.finished()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(probe.figures().has_value());
    ASSERT_TRUE(probe.pilot_levels().has_value());
    EXPECT_FALSE(probe.pilot_levels()->empty());
    const uint64_t stride = ProbeStridesFor(files, 0, data, kBlock).stride;
    const uint64_t first_pass = 4 * ((64 * kBlock + stride - 1) / stride) * kBlock;
    EXPECT_GT(fs.bytes_read(), first_pass);
    EXPECT_EQ(throttle->requested(), fs.bytes_read());
  }
  {
    // 1 KiB/s, bursts of 1 KiB: the probe's first record is paid for 128 s on, and the probe
    // may read 2 s ahead of that. Stop ends the wait before it reads anything: within 30 s here
    // (50 ms in fact), where the wait would take two minutes.
    CountingFileSystem fs;
    auto throttle = std::make_shared<ReadThrottle>(1 << 10, 1 << 10);
    auto probe = std::make_unique<CostProbe>(&fs, files, 0, data, options, zfs::WritePolicy{},
                                             std::vector<double>{1.0, 1.0}, 10.0, plan, throttle);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    probe->Stop();
    const auto stopped = std::chrono::steady_clock::now();
    while (!probe->finished() &&
           std::chrono::steady_clock::now() - stopped < std::chrono::seconds(30)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(probe->finished());
    EXPECT_FALSE(probe->pilot_levels().has_value());
    EXPECT_FALSE(probe->figures().has_value());
    EXPECT_EQ(fs.bytes_read(), 0u);
  }
}

}  // namespace
}  // namespace zsim::pipeline
