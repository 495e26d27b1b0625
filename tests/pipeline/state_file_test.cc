// The state file's loader against states whose bytes are well formed but say something a table
// cannot hold: a dedup table key given twice (it would shift the entry references the file
// records and links name, giving wrong figures) or outside the table's sample is refused with a
// message. And a state with file records and links reads back whole, and so do the indirect
// blocks the read stage counted for a sparse file (zfs/indirect_ranges.h), per row over the
// blocks read and over those not all zero, in its record and its file shapes.

#include "engine/state/state_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

state::ScanState ScannedState(const testing::TempDir& dir) {
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.recordsizes = {16 * 1024};
  o.threads = 1;
  auto fs = io::PosixFileSystem();
  pipeline::ScanControl control;
  control.record_files = true;
  Result<state::ScanState> s = ScanToState(o, fs.get(), control);
  EXPECT_TRUE(s.ok());
  return std::move(*s);
}

// The 13 bytes a saved entry's key takes (state_file.cc PutTable): lo, the top byte of hi, and
// hi's low 32 bits.
std::string SavedKey(const ddt::Fingerprint& k) {
  std::string b(13, '\0');
  std::memcpy(b.data(), &k.lo, 8);
  b[8] = static_cast<char>(k.hi >> 56);
  const uint32_t low = static_cast<uint32_t>(k.hi);
  std::memcpy(b.data() + 9, &low, 4);
  return b;
}

TEST(StateFileTest, ASparseFilesIndirectBlocksAreCountedAndReadBack) {
  testing::TempDir dir;
  // 32 MiB at 16K in v23: 2048 blocks, L1 ranges of 2 MiB (128 pointers of 16K), one L2. Data
  // in the ranges at 0, 10M and 20M, the one at 10M all zero bytes (read, then a hole where
  // compression makes zero blocks holes); read in 8 MiB chunks, the L2 range over all of them.
  constexpr uint64_t M = 1 << 20;
  const std::filesystem::path path = dir.path() / "image.raw";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const std::vector<uint8_t> head = testing::GenerateBlock(256 * 1024, 0.5, 3);
  const std::vector<uint8_t> zeros(32 * 1024, 0);
  const std::vector<uint8_t> tail = testing::GenerateBlock(64 * 1024, 0.5, 4);
  ASSERT_EQ(::pwrite(fd, head.data(), head.size(), 0), static_cast<ssize_t>(head.size()));
  ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), 10 * M), static_cast<ssize_t>(zeros.size()));
  ASSERT_EQ(::pwrite(fd, tail.data(), tail.size(), 20 * M), static_cast<ssize_t>(tail.size()));
  ASSERT_EQ(::ftruncate(fd, 32 * M), 0);
  ::close(fd);
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.recordsizes = {16 * 1024};
  o.profile = Profile::kV23;
  o.compressions = {Compression{CompressionAlgorithm::kOff, 0},
                    Compression{CompressionAlgorithm::kLzjb, 0}};
  o.threads = 2;
  auto fs = io::PosixFileSystem();
  pipeline::ScanControl control;
  control.record_files = true;
  Result<state::ScanState> s = ScanToState(o, fs.get(), control);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->records.size(), 1u);
  const state::FileIndirects& got = s->records[0].indirects;
  ASSERT_EQ(got.read.size(), 1u);
  EXPECT_EQ(got.read[0], (std::vector<uint64_t>{3, 1}));
  EXPECT_EQ(got.nonzero[0], (std::vector<uint64_t>{2, 1}));
  // compression off writes the zero blocks (3 L1 ranges), lzjb makes them holes (2).
  ASSERT_EQ(s->rows[0].files[0].size(), 1u);
  EXPECT_EQ(s->rows[0].files[0].begin()->first.indirects, (std::vector<uint64_t>{3, 1}));
  EXPECT_EQ(s->rows[0].files[1].begin()->first.indirects, (std::vector<uint64_t>{2, 1}));

  const std::string bytes = state::EncodeState(*s);
  Result<state::ScanState> back =
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->records[0].indirects.read, got.read);
  EXPECT_EQ(back->records[0].indirects.nonzero, got.nonzero);
  EXPECT_EQ(back->rows[0].files, s->rows[0].files);
}

TEST(StateFileTest, ATableKeyGivenTwiceIsRefused) {
  testing::TempDir dir;
  dir.WriteFile("a.bin", testing::GenerateBlock(200 * 1024, 0.5, 7));
  const std::filesystem::path linked =
      dir.WriteFile("b.bin", testing::GenerateBlock(64 * 1024, 0.5, 8));
  std::filesystem::create_hard_link(linked, dir.path() / "c.bin");
  const state::ScanState s = ScannedState(dir);
  ASSERT_TRUE(s.has_records);
  ASSERT_EQ(s.links.size(), 1u);
  const std::string bytes = state::EncodeState(s);
  // Reads back whole, records and links included.
  Result<state::ScanState> back =
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->records.size(), s.records.size());
  ASSERT_EQ(back->links.size(), 1u);
  EXPECT_EQ(back->links[0].path, s.links[0].path);
  EXPECT_EQ(back->links[0].refs, s.links[0].refs);
  EXPECT_EQ(back->links[0].fs, s.links[0].fs);

  // Two entries of one shard (the same top byte of hi), the second given the first's key.
  std::vector<ddt::Fingerprint> keys;
  s.rows[0].table->ForEach([&](const ddt::EntryView& e) { keys.push_back(e.key); });
  ASSERT_GE(keys.size(), 2u);
  const std::string first = SavedKey(keys[0]), second = SavedKey(keys[1]);
  std::string bad = bytes;
  const size_t at = bad.find(second);
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, second.size(), first);
  // Past the checksums (a writer's bug would write them right): the parser itself refuses.
  Result<state::ScanState> refused =
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bad.data()), bad.size()), false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("given twice"), std::string::npos)
      << refused.status().message();
  // With them checked, the changed byte is found first.
  EXPECT_FALSE(
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bad.data()), bad.size())).ok());
  // The fuzz corpus's seed of this case (tests/fuzz/corpus/state_load/repeated_key) is written
  // when asked.
  if (const char* seed = std::getenv("ZSIM_WRITE_REPEATED_KEY_SEED")) {
    std::ofstream(seed, std::ios::binary)
        .write(bad.data(), static_cast<std::streamsize>(bad.size()));
  }
}

}  // namespace
}  // namespace zsim::pipeline
