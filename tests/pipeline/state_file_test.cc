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

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <thread>

#include "engine/ddt/dedup_table.h"
#include "engine/ddt/written_key.h"
#include "engine/estimate/codec_budget.h"
#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/directory_zap.h"
#include "engine/pipeline/scan.h"
#include "engine/state/merge.h"
#include "engine/state/save_order.h"
#include "engine/zfs/write_rules.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

// `zstd_level`: of the reference list's zstd (the six codecs of the earlier default list, so
// that every kind of code column is saved and loaded) (a level under 3 has no early-abort column,
// so the table's layout is the one every kind of codes has).
state::ScanState ScannedState(const testing::TempDir& dir, bool exact = false, int zstd_level = 3) {
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.exact = exact;
  o.compressions = estimate::CostReferenceCompressions();
  for (Compression& c : o.compressions) {
    if (c.algorithm == CompressionAlgorithm::kZstd) c.level = zstd_level;
  }
  o.recordsizes = {16 * 1024};
  o.threads = 1;
  auto fs = io::PosixFileSystem();
  pipeline::ScanControl control;
  control.record_files = true;
  Result<state::ScanState> s = ScanToState(o, fs.get(), control);
  EXPECT_TRUE(s.ok());
  return std::move(*s);
}

// The 13 bytes a saved entry's key takes (state_write.cc PutTable): lo, the top byte of hi, and
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

  // A file listed with bytes in the figures (read in part, format 20) reads back so.
  state::ScanState& listed = *back;
  listed.input.errors = {{"/x/part.img", "cancelled: interrupted while it was read", 3 * M, 5 * M},
                         {"/x/gone.img", "not_found: open", 7 * M, 0}};
  const std::string with_errors = state::EncodeState(listed);
  Result<state::ScanState> errors_back = state::ParseState(
      ByteView(reinterpret_cast<const uint8_t*>(with_errors.data()), with_errors.size()));
  ASSERT_TRUE(errors_back.ok()) << errors_back.status().ToString();
  ASSERT_EQ(errors_back->input.errors.size(), 2u);
  EXPECT_EQ(errors_back->input.errors[1].path, "/x/part.img");  // sorted by path
  EXPECT_EQ(errors_back->input.errors[1].bytes, 3 * M);
  EXPECT_EQ(errors_back->input.errors[1].bytes_in_figures, 5 * M);
  EXPECT_EQ(errors_back->input.errors[0].bytes_in_figures, 0u);

  // A shape whose indirect blocks outnumber its blocks is corrupt, and refused.
  state::ScanState bad = std::move(*s);
  auto node = bad.rows[0].files[1].extract(bad.rows[0].files[1].begin());
  node.key().indirects[0] = node.key().blocks + 1;
  bad.rows[0].files[1].insert(std::move(node));
  const std::string corrupt = state::EncodeState(bad);
  Result<state::ScanState> refused =
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(corrupt.data()), corrupt.size()));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("file shape"), std::string::npos)
      << refused.status().message();
}

// `b` with `a`'s run section figures and its records' stamps: the bytes before the run section
// are the data's, and a stamp as recent as a scan's start is stored as untrusted, which the
// second scan may see where the first did not.
void AlignRunAndStamps(state::ScanState& b, const state::ScanState& a) {
  b.seconds = a.seconds;
  for (size_t r = 0; r < b.rows.size(); ++r) b.rows[r].codec_seconds = a.rows[r].codec_seconds;
  std::map<std::string, int64_t> ctimes;
  for (const state::FileRecord& f : a.records) ctimes[f.path] = f.ctime_ns;
  for (state::FileRecord& f : b.records) f.ctime_ns = ctimes.at(f.path);
}

// A record's or link's references made keys (FileRecord::keys, LinkedFile::keys), as a
// distributed scan's rank keeps them; returns how many.
template <class File>
uint64_t KeysInPlaceOfRefs(File& f, const state::ScanState& s) {
  uint64_t keys = 0;
  for (size_t r = 0; r < f.refs.size(); ++r) {
    auto& k = f.keys.emplace_back();
    for (uint32_t ref : f.refs[r]) k.push_back(s.rows[r].table->KeyOf(ref));
    keys += k.size();
  }
  f.refs.clear();
  return keys;
}

// A distributed scan's ranks keep their records' blocks as keys (FileRecord::keys: their table
// entries move to other ranks). Saved, such records are the references of their entries in the
// table as written: the bytes of the same state whose records hold references. In a part sent
// between ranks (EncodeState with keep_keys) they stay keys, which only ParseState with
// keep_keys reads: a file holding them is refused.
TEST(StateFileTest, RecordsThatKeepKeysAreWrittenAsTheirEntriesReferences) {
  testing::TempDir dir;
  const std::vector<uint8_t> shared = testing::GenerateBlock(96 * 1024, 0.5, 3);
  dir.WriteFile("a/one.bin", shared);
  dir.WriteFile("b/two.bin", shared);
  dir.WriteFile("b/zeros.img", std::vector<uint8_t>(64 * 1024, 0));
  for (int i = 0; i < 12; ++i) {
    dir.WriteFile("c/" + testing::NumberedName("f", i), testing::GenerateBlock(20000, 0.4, 10 + i));
  }
  const state::ScanState with_refs = ScannedState(dir);
  ASSERT_TRUE(with_refs.has_records);
  state::ScanState with_keys = ScannedState(dir);
  ASSERT_EQ(with_keys.records.size(), with_refs.records.size());
  AlignRunAndStamps(with_keys, with_refs);
  uint64_t keys = 0;
  for (state::FileRecord& f : with_keys.records) keys += KeysInPlaceOfRefs(f, with_keys);
  ASSERT_GT(keys, 20u);
  const std::string want = state::EncodeState(with_refs);
  EXPECT_TRUE(state::EncodeState(with_keys) == want) << "keys not written as references";

  const std::string part = state::EncodeState(with_keys, /*keep_keys=*/true);
  EXPECT_NE(part, want);
  const ByteView view(reinterpret_cast<const uint8_t*>(part.data()), part.size());
  Result<state::ScanState> back = state::ParseState(view, true, /*keep_keys=*/true);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->records.size(), with_keys.records.size());
  for (size_t i = 0; i < back->records.size(); ++i) {
    EXPECT_TRUE(back->records[i].refs.empty());
    EXPECT_EQ(back->records[i].keys.size(), with_keys.rows.size());
  }
  const Result<state::ScanState> refused = state::ParseState(view);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("file record"), std::string::npos)
      << refused.status().ToString();
}

// The same for files with several names (a distributed save's linked files keep their blocks'
// keys, state::LinkedFile::keys): a file writes them as their entries' references, as links
// that hold references; a part keeps them as keys, which a file never holds.
TEST(StateFileTest, LinksThatKeepKeysAreWrittenAsTheirEntriesReferences) {
  testing::TempDir dir;
  dir.WriteFile("a/one.bin", testing::GenerateBlock(96 * 1024, 0.5, 3));
  dir.WriteFile("b/zeros.img", std::vector<uint8_t>(64 * 1024, 0));
  dir.WriteFile("c/other.bin", testing::GenerateBlock(40000, 0.4, 4));
  std::filesystem::create_hard_link(dir.path() / "a/one.bin", dir.path() / "c/one.link");
  std::filesystem::create_hard_link(dir.path() / "b/zeros.img", dir.path() / "a/zeros.link");
  const state::ScanState with_refs = ScannedState(dir);
  ASSERT_EQ(with_refs.links.size(), 2u);
  state::ScanState with_keys = ScannedState(dir);
  ASSERT_EQ(with_keys.links.size(), 2u);
  AlignRunAndStamps(with_keys, with_refs);
  uint64_t keys = 0;
  for (state::LinkedFile& f : with_keys.links) keys += KeysInPlaceOfRefs(f, with_keys);
  ASSERT_GE(keys, 10u);
  const std::string want = state::EncodeState(with_refs);
  EXPECT_TRUE(state::EncodeState(with_keys) == want) << "keys not written as references";

  const std::string part = state::EncodeState(with_keys, /*keep_keys=*/true);
  EXPECT_NE(part, want);
  const ByteView view(reinterpret_cast<const uint8_t*>(part.data()), part.size());
  Result<state::ScanState> back = state::ParseState(view, true, /*keep_keys=*/true);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->links.size(), 2u);
  for (const state::LinkedFile& f : back->links) {
    EXPECT_TRUE(f.refs.empty());
    EXPECT_EQ(f.keys.size(), with_keys.rows.size());
  }
  // Read back as a part, the keys give the file's bytes again.
  EXPECT_TRUE(state::EncodeState(*back) == want);
  const Result<state::ScanState> refused = state::ParseState(view);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("linked file"), std::string::npos)
      << refused.status().ToString();
}

// InKeyOrder: the same entries, each shard's in the order of its keys (its ForEach then gives
// what ForEachInKeyOrder gives), the source's shards freed.
TEST(StateFileTest, ATableInKeyOrderHoldsItsEntriesByKey) {
  testing::TempDir dir;
  for (int i = 0; i < 20; ++i) {
    dir.WriteFile(testing::NumberedName("f", i), testing::GenerateBlock(60000, 0.3, 40 + i));
  }
  state::ScanState s = ScannedState(dir);
  ddt::DedupTable& table = *s.rows[0].table;
  const uint64_t entries = table.entries();
  ASSERT_GT(entries, 50u);
  std::vector<std::pair<ddt::Fingerprint, uint32_t>> want;
  state::ForEachInKeyOrder(table,
                           [&](const ddt::EntryView& e) { want.emplace_back(e.key, e.refcount); });
  const std::unique_ptr<ddt::DedupTable> sorted = state::InKeyOrder(table);
  EXPECT_EQ(table.local_entries(), 0u);
  EXPECT_EQ(sorted->entries(), entries);
  size_t i = 0;
  sorted->ForEach([&](const ddt::EntryView& e) {
    ASSERT_LT(i, want.size());
    EXPECT_EQ(e.key.hi, want[i].first.hi);
    EXPECT_EQ(e.key.lo, want[i].first.lo);
    EXPECT_EQ(e.refcount, want[i].second);
    ++i;
  });
  EXPECT_EQ(i, want.size());
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
  // The same entries (the saved table is in the order of its keys, the references renumbered).
  auto keys_of = [](const state::ScanState& st) {
    std::vector<std::pair<uint64_t, uint64_t>> keys;
    for (uint32_t ref : st.links[0].refs[0]) {
      const ddt::Fingerprint k = st.rows[0].table->KeyOf(ref);
      keys.emplace_back(k.hi, k.lo);
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  EXPECT_EQ(keys_of(*back), keys_of(s));
  EXPECT_EQ(back->links[0].refs[0].size(), s.links[0].refs[0].size());
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

// Format 9 keeps each codec's outcome with its least budget (format 7: raw outcomes): "did not
// fit" (incompressible data), a short exact length (a small compressible file), lengths in
// 512-byte units; they read back as saved, and so does the kind of codes (a state of rounded
// codes, loaded from format 6 or older, saved again stays rounded: its codes mean psize).
TEST(StateFileTest, RawCodesAndTheirKindReadBack) {
  testing::TempDir dir;
  dir.WriteFile("random.bin", testing::Xorshift64Bytes(3, 64 * 1024));
  dir.WriteFile("small.txt", std::vector<uint8_t>(3000, 'a'));
  dir.WriteFile("text.bin", testing::GenerateBlock(100 * 1024, 0.6, 9));
  // zstd-1: no early-abort column, so the older kinds' layout is this table's.
  state::ScanState s = ScannedState(dir, false, 1);
  ASSERT_EQ(s.code_kind, state::CodeKind::kEarlyAbort);
  // In the order of the keys (a saved table is; the scan's is in the order it met them).
  auto codes_of = [](const state::ScanState& st) {
    std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::vector<ddt::PsizeCode>>> by_key;
    st.rows[0].table->ForEach([&](const ddt::EntryView& e) {
      by_key.emplace_back(std::pair{e.key.hi, e.key.lo},
                          std::vector<ddt::PsizeCode>(e.codes.begin(), e.codes.end()));
    });
    std::sort(by_key.begin(), by_key.end());
    std::vector<std::vector<ddt::PsizeCode>> out;
    for (auto& [key, codes] : by_key) out.push_back(std::move(codes));
    return out;
  };
  const std::vector<std::vector<ddt::PsizeCode>> saved = codes_of(s);
  bool no_fit = false, exact = false, units = false;
  for (const auto& codes : saved) {
    for (ddt::PsizeCode c : codes) {
      no_fit |= c == ddt::kNoFitCode;
      exact |= ddt::IsEmbeddedCode(c);
      units |= c > 0 && c < ddt::kEmbeddedBase;
    }
  }
  EXPECT_TRUE(no_fit && exact && units) << no_fit << exact << units;
  // Least-budget codes above the raw ones ("the least budget lies in the next unit").
  // zstd's too since format 9 (16K blocks: no early abort), which format 8 kept raw.
  bool beyond_raw = false, zstd_beyond_raw = false;
  for (const auto& codes : saved) {
    for (size_t i = 0; i < codes.size(); ++i) {
      const bool beyond = codes[i] > ddt::kEmbeddedBase + 112 && codes[i] < ddt::kNoFitCode;
      beyond_raw |= beyond;
      zstd_beyond_raw |=
          beyond && s.options.compressions[i].algorithm == CompressionAlgorithm::kZstd;
    }
  }
  for (state::CodeKind kind :
       {state::CodeKind::kEarlyAbort, state::CodeKind::kLeastBudgetZstd,
        state::CodeKind::kLeastBudget, state::CodeKind::kRaw, state::CodeKind::kRounded}) {
    s.code_kind = kind;
    const std::string bytes = state::EncodeState(s);
    Result<state::ScanState> back =
        state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    if ((kind == state::CodeKind::kRaw && beyond_raw) ||
        (kind == state::CodeKind::kLeastBudget && zstd_beyond_raw)) {
      ASSERT_FALSE(back.ok());  // raw codes stop at the exact lengths
      continue;
    }
    if (kind == state::CodeKind::kRounded) {
      // Rounded codes never say "did not fit": such a file is corrupt.
      ASSERT_FALSE(back.ok());
      EXPECT_NE(back.status().message().find("codec outcome"), std::string::npos)
          << back.status().message();
      continue;
    }
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->code_kind, kind);
    EXPECT_EQ(codes_of(*back), saved);
  }
}

// A least-budget code's least budget lies below the largest budget any profile computes for the
// entry's lsize (the output fit that one): for a 16K block 14,336 bytes, so unit 28 (output in
// (13,824, 14,336]) is the last, and a unit above it (or above 28,672, which no lsize has) in an
// lz4 or zstd column (16K: no early abort, least-budget codes) is corrupt, not "uncompressed".
// A raw code (a state of format 7) stops at the scan's own budget. The message names the column
// and the lsize.
TEST(StateFileTest, ALeastBudgetUnitAboveTheLargestBudgetIsRefused) {
  testing::TempDir dir;
  dir.WriteFile("text.bin", testing::GenerateBlock(64 * 1024, 0.6, 9));
  // --exact: every codec's codes inline (SetCodes rewrites them).
  // zstd-1: no early-abort column, so the raw kind's layout is this table's.
  state::ScanState s = ScannedState(dir, true, 1);
  ASSERT_EQ(s.code_kind, state::CodeKind::kEarlyAbort);
  const std::vector<Compression>& comps = s.options.compressions;
  // Every entry "did not fit" (valid under every kind of raw or least-budget codes) but the one
  // code each case sets.
  std::vector<std::pair<ddt::Fingerprint, std::vector<ddt::PsizeCode>>> entries;
  s.rows[0].table->ForEach([&](const ddt::EntryView& e) {
    std::vector<ddt::PsizeCode> codes(e.codes.begin(), e.codes.end());
    for (ddt::PsizeCode& c : codes) c = c == ddt::kPendingCode ? c : ddt::kNoFitCode;
    EXPECT_EQ(e.lsize, 16u * 1024);
    if (!e.is_zero) entries.emplace_back(e.key, codes);
  });
  ASSERT_FALSE(entries.empty());
  for (const auto& [key, codes] : entries) s.rows[0].table->SetCodes(key, codes);
  const ddt::Fingerprint key = entries[0].first;
  const std::vector<ddt::PsizeCode> codes = entries[0].second;
  for (CompressionAlgorithm algorithm : {CompressionAlgorithm::kLz4, CompressionAlgorithm::kZstd}) {
    size_t col = comps.size();
    for (size_t c = 0; c < comps.size(); ++c) {
      if (comps[c].algorithm == algorithm) col = c;
    }
    ASSERT_LT(col, comps.size());
    ASSERT_EQ(s.rows[0].table->layout()[col].kind, ddt::SettingStorage::Kind::kInline);
    const std::string name = CompressionName(comps[col]);
    auto load_with = [&](ddt::PsizeCode code) {
      std::vector<ddt::PsizeCode> set = codes;
      set[col] = code;
      s.rows[0].table->SetCodes(key, set);
      const std::string bytes = state::EncodeState(s);
      return state::ParseState(
          ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    };
    s.code_kind = state::CodeKind::kEarlyAbort;
    for (ddt::PsizeCode good : {ddt::PsizeCode{28}, ddt::PsizeCode{ddt::kLeastNextBase + 27}}) {
      Result<state::ScanState> back = load_with(good);
      EXPECT_TRUE(back.ok()) << name << " " << good << " " << back.status().ToString();
    }
    for (ddt::PsizeCode bad :
         {ddt::PsizeCode{29}, ddt::PsizeCode{200}, ddt::PsizeCode{ddt::kLeastLastUnit},
          ddt::PsizeCode{ddt::kLeastNextBase + 28}, ddt::PsizeCode{ddt::kLeastLastUnit + 1},
          ddt::PsizeCode{30000}, ddt::PsizeCode{ddt::kEmbeddedBase}}) {
      Result<state::ScanState> back = load_with(bad);
      ASSERT_FALSE(back.ok()) << name << " " << bad;
      const std::string& why = back.status().message();
      EXPECT_NE(why.find("codec outcome"), std::string::npos) << why;
      if (bad <= 200 || bad == ddt::kLeastNextBase + 28) {
        EXPECT_NE(why.find(name + " for a block of 16384 bytes"), std::string::npos) << why;
      }
    }
    // Raw codes: the output fit the scan's budget (the default pool's: aligned to its
    // allocation unit from 2.3 on).
    s.code_kind = state::CodeKind::kRaw;
    const uint64_t budget = zfs::CompressionBudget(
        zfs::DedupPolicyOf(s.options.profile, s.options.vdev, s.options.ashift), comps[col],
        16 * 1024);
    const auto last = static_cast<ddt::PsizeCode>((budget + 511) / 512);
    EXPECT_TRUE(load_with(last).ok()) << name << " " << last;
    Result<state::ScanState> beyond = load_with(static_cast<ddt::PsizeCode>(last + 1));
    ASSERT_FALSE(beyond.ok()) << name << " " << last + 1;
    EXPECT_NE(beyond.status().message().find("the scan gave it"), std::string::npos)
        << beyond.status().message();
    s.code_kind = state::CodeKind::kEarlyAbort;
  }
}

// Format 10 keeps zstd-3's early-abort code in a column of its own: it must go with its codec's
// code (none for a block under 128K or a hole, "never" when zstd fits no budget, never below
// zstd's own least budget nor beyond the largest budget); any other is corrupt, not a figure.
TEST(StateFileTest, AnEarlyAbortCodeThatDoesNotGoWithItsCodecsIsRefused) {
  testing::TempDir dir;
  dir.WriteFile("text.bin", testing::GenerateBlock(128 * 1024, 0.6, 9));
  dir.WriteFile("small.bin", testing::GenerateBlock(16 * 1024, 0.6, 10));
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.exact = true;  // every code inline
  o.recordsizes = {128 * 1024};
  o.compressions = {{CompressionAlgorithm::kZstd, 3}};
  o.threads = 1;
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> scanned = ScanToState(o, fs.get());
  ASSERT_TRUE(scanned.ok());
  state::ScanState& s = *scanned;
  ASSERT_EQ(s.code_kind, state::CodeKind::kEarlyAbort);
  ASSERT_EQ(s.rows[0].table->settings(), 2u);
  std::vector<std::pair<ddt::Fingerprint, std::vector<ddt::PsizeCode>>> big, small;
  s.rows[0].table->ForEach([&](const ddt::EntryView& e) {
    auto& to = e.lsize == 128 * 1024 ? big : small;
    to.emplace_back(e.key, std::vector<ddt::PsizeCode>(e.codes.begin(), e.codes.end()));
  });
  ASSERT_EQ(big.size(), 1u);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_NE(big[0].second[1], ddt::kHoleCode);
  EXPECT_EQ(small[0].second[1], ddt::kHoleCode);
  const auto load_with = [&](const auto& entry, ddt::PsizeCode code, ddt::PsizeCode probe) {
    s.rows[0].table->SetCodes(entry.first, std::vector<ddt::PsizeCode>{code, probe});
    const std::string bytes = state::EncodeState(s);
    Result<state::ScanState> back =
        state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    s.rows[0].table->SetCodes(entry.first, entry.second);
    return back;
  };
  ASSERT_TRUE(load_with(big[0], big[0].second[0], big[0].second[1]).ok());
  const ddt::PsizeCode code = big[0].second[0];
  const uint64_t own = ddt::LeastBudgetOf(code).at_most;
  // Valid: "never", or any class from zstd's own up to the largest budget (112K: unit 224).
  for (ddt::PsizeCode good : {ddt::kNoFitCode, ddt::EncodeProbe(own), ddt::PsizeCode{224}}) {
    Result<state::ScanState> back = load_with(big[0], code, good);
    EXPECT_TRUE(back.ok()) << good << " " << back.status().ToString();
  }
  const struct {
    const char* what;
    bool on_big;
    ddt::PsizeCode code, probe;
  } kBad[] = {
      {"none where one does", true, code, ddt::kHoleCode},
      {"below the codec's own", true, code, ddt::EncodeProbe(own - 1024)},
      {"beyond the largest", true, code, ddt::PsizeCode{225}},
      {"out of range", true, code, ddt::PsizeCode{ddt::kEmbeddedBase + 5}},
      {"fits no budget", true, ddt::kNoFitCode, ddt::PsizeCode{224}},
      {"where none applies", false, small[0].second[0], ddt::PsizeCode{20}},
  };
  for (const auto& bad : kBad) {
    Result<state::ScanState> back = load_with(bad.on_big ? big[0] : small[0], bad.code, bad.probe);
    ASSERT_FALSE(back.ok()) << bad.what;
    EXPECT_NE(back.status().message().find("early-abort"), std::string::npos)
        << back.status().message();
    EXPECT_NE(back.status().message().find(bad.what), std::string::npos) << back.status().message();
  }
}

// Format 12 keeps, under --checksum sha256, the DDT key words of compressed blocks in two more
// columns (ddt/written_key.h): they read back as written, and columns no scan writes (part of a
// marker with bits beside it, a 16th bit set) are corrupt, not keys. (SetCodes cannot store a
// pending column over a set one: ColumnsKeepTheTopSixtyBitsAndSayWhichHaveNone covers those.)
// Each directory shape keeps its micro-ZAP's lz4 size (format 13): measured by the scan, equal
// to the walk's listing built and compressed again, and read back.
TEST(StateFileTest, DirectoriesKeepTheirMicrozapSize) {
  testing::TempDir dir;
  for (int i = 0; i < 40; ++i) dir.WriteFile("d/file" + std::to_string(i), {1});
  dir.WriteFile("top.txt", {1});
  const state::ScanState s = ScannedState(dir);
  std::vector<io::DirEntry> listing;
  for (int i = 0; i < 40; ++i)
    listing.push_back({"file" + std::to_string(i), io::FileType::kRegular});
  const uint64_t forty = MicrozapLz4Bytes(listing);
  const uint64_t root = MicrozapLz4Bytes(std::vector<io::DirEntry>{
      {"d", io::FileType::kDirectory}, {"top.txt", io::FileType::kRegular}});
  ASSERT_GT(forty, 112u);
  const std::map<state::DirectoryShape, uint64_t> want = {{{40, 40 * 5 + 30, 6, forty}, 1},
                                                          {{2, 8, 7, root}, 1}};
  EXPECT_EQ(s.directories, want);
  const std::string bytes = state::EncodeState(s);
  Result<state::ScanState> back =
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->directories, want);
}

// A state of format 12 (the fuzz corpus's seed, written by the zsim before format 13) reads
// with no directory measured: the metadata model then fits each directory, as that zsim did.
TEST(StateFileTest, AFormat12StateReadsWithoutMicrozapSizes) {
  Result<state::ScanState> s =
      state::LoadState(ZSIM_SOURCE_DIR "/tests/fuzz/corpus/state_load/v12_records");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_FALSE(s->directories.empty());
  for (const auto& [d, n] : s->directories) EXPECT_EQ(d.microzap_lz4_bytes, 0u) << d.entries;
}

// Format 13 kept whole-file contents and zero blocks of the first recordsize only: read, they
// stand for every row (state::ContentLsize, state::RowCount), and the report still runs.
TEST(StateFileTest, AFormat13StateReadsWithTheFirstRowsDedupSources) {
  Result<state::ScanState> s =
      state::LoadState(ZSIM_SOURCE_DIR "/tests/fuzz/corpus/state_load/v13_two_recordsizes");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->rows.size(), 2u);
  ASSERT_FALSE(s->breakdown.contents.empty());
  for (const auto& [c, n] : s->breakdown.contents) {
    ASSERT_EQ(c.lsize.size(), 1u);
    EXPECT_EQ(state::ContentLsize(c, 1), c.lsize[0]);
  }
  EXPECT_EQ(s->breakdown.zero_blocks.size(), 1u);
  EXPECT_TRUE(s->breakdown.first_row_only);
  const ScanResult r = finish::Finish(*s, finish::ReportOptionsOf(s->options));
  ASSERT_EQ(r.dedup_sources.size(), 2u);
  EXPECT_GT(r.dedup_sources[0].duplicate_file_bytes, 0u);
  EXPECT_EQ(r.dedup_sources[1].duplicate_file_bytes, r.dedup_sources[0].duplicate_file_bytes);
  EXPECT_EQ(r.dedup_sources[1].zero_blocks, r.dedup_sources[0].zero_blocks);
  EXPECT_EQ(r.dedup_sources[1].zero_block_bytes, r.dedup_sources[0].zero_block_bytes);
}

// Format 18 keeps what the run's top-up did per row (RowState::top_up), a reason naming a long
// path included; a record that cannot be (bytes without blocks, seconds not finite) is refused.
TEST(StateFileTest, TheTopUpRecordSurvivesTheFileAndABadOneIsRefused) {
  testing::TempDir dir;
  dir.WriteFile("a.bin", testing::Xorshift64Bytes(31, 100 * 1024));
  state::ScanState s = ScannedState(dir);
  const std::string reason = "/" + std::string(200000, 'd') + "/a.img: its content changed";
  s.rows[0].top_up = state::TopUpRecord{3, 3 * 16384, 0.25, reason};
  testing::TempDir out;
  const std::string path = (out.path() / "s.zstate").string();
  ASSERT_TRUE(state::SaveState(s, path).ok());
  Result<state::ScanState> loaded = state::LoadState(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->rows[0].top_up.blocks, 3u);
  EXPECT_EQ(loaded->rows[0].top_up.bytes, 3u * 16384);
  EXPECT_EQ(loaded->rows[0].top_up.seconds, 0.25);
  EXPECT_EQ(loaded->rows[0].top_up.left, reason);
  for (const state::TopUpRecord& bad :
       {state::TopUpRecord{0, 512, 0, ""}, state::TopUpRecord{3, 2, 0, ""},
        state::TopUpRecord{1, 512, std::numeric_limits<double>::infinity(), ""},
        state::TopUpRecord{1, 512, -1, ""}}) {
    s.rows[0].top_up = bad;
    ASSERT_TRUE(state::SaveState(s, path).ok());
    Result<state::ScanState> refused = state::LoadState(path);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().ToString().find("corrupt: a row's top-up"), std::string::npos)
        << refused.status().ToString();
  }
}

// A state of format 16 (before the top-up) reads with no record and no row topped, and reports.
TEST(StateFileTest, AFormat16StateReadsWithNoTopUp) {
  Result<state::ScanState> s =
      state::LoadState(ZSIM_SOURCE_DIR "/tests/fuzz/corpus/state_load/v16_two_recordsizes");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->rows.size(), 2u);
  EXPECT_TRUE(s->sampling.topped_bytes.empty());
  for (const state::RowState& row : s->rows) {
    EXPECT_EQ(row.top_up.blocks + row.top_up.bytes, 0u);
    EXPECT_EQ(row.top_up.left, "");
  }
  EXPECT_TRUE(finish::Finish(*s, finish::ReportOptionsOf(s->options)).input.top_up.empty());
}

// A state of format 19 (before the errors kept their bytes in the figures, and merges their
// files counted twice) reads with 0 for both, and reports as it did.
TEST(StateFileTest, AFormat19StateReadsWithNothingInPartAndNothingCountedTwice) {
  Result<state::ScanState> s =
      state::LoadState(ZSIM_SOURCE_DIR "/tests/fuzz/corpus/state_load/v19_records");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_GT(s->input.files, 0u);
  EXPECT_EQ(s->input.files_counted_twice, 0u);
  for (const PathError& e : s->input.errors) EXPECT_EQ(e.bytes_in_figures, 0u) << e.path;
  const ScanResult r = finish::Finish(*s, finish::ReportOptionsOf(s->options));
  EXPECT_EQ(r.input.files_counted_twice, 0u);
  EXPECT_EQ(FilesInPart(r.input.errors), 0u);
}

// Format 21 keeps the files of the codec budget's plan; a state of format 20 reads without them
// (0), its budget the bytes' alone, as it was scanned: its report needs no block it never coded.
TEST(StateFileTest, AFormat20StateReadsWithItsPlansBytesAlone) {
  Result<state::ScanState> s =
      state::LoadState(ZSIM_SOURCE_DIR "/tests/fuzz/corpus/state_load/v20_records");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_GT(s->input.files, 1u);
  EXPECT_EQ(s->sampling.planned_files, 0u);
  const ScanResult r = finish::Finish(*s, finish::ReportOptionsOf(s->options));
  EXPECT_FALSE(r.results.empty());
}

// Format 22 keeps the data the files hold (InputSummary::bytes_data, the base of the saved
// figures): a scan's is its bytes read, a sparse file's hole not counted; the file and a merge
// of two halves keep it; a --since rescan that reads nothing gives the full scan's. A state of
// format 21 reads with it unknown (the reports then rest on each row's logical size), and so
// does its merge with a new state and a --since rescan from it.
TEST(StateFileTest, TheFilesDataSurvivesTheFileAMergeAndASinceRescan) {
  testing::TempDir dir;
  dir.WriteFile("a/text.bin", testing::GenerateBlock(300000, 0.5, 7));
  dir.WriteFile("b/rand.bin", testing::Xorshift64Bytes(43, 200000));
  {
    const int fd = ::open((dir.path() / "b" / "sparse.img").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    const std::vector<uint8_t> block = testing::Xorshift64Bytes(44, 4096);
    ASSERT_EQ(::pwrite(fd, block.data(), block.size(), 8 << 20), 4096);  // a hole before it
    ::close(fd);
  }
  // Stamps in a past the coarse file-time clock has left: a file stamped at the scan's start
  // would be read again by the rescan below (pipeline/scan_files.cc StampsVouch).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto fs = io::PosixFileSystem();
  auto scan = [&](std::vector<std::string> paths) {
    ScanOptions o;
    o.paths = std::move(paths);
    o.recordsizes = {128 * 1024};
    o.compressions = {{CompressionAlgorithm::kLz4, 0}};
    o.threads = 2;
    ScanControl c;
    c.record_files = true;
    return ScanToState(o, fs.get(), c);
  };
  const std::string a = (dir.path() / "a").string(), b = (dir.path() / "b").string();
  Result<state::ScanState> whole = scan({a, b});
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(whole->input.bytes_data_known);
  EXPECT_EQ(whole->input.bytes_data, whole->input.bytes_read);
  EXPECT_LT(whole->input.bytes_data, whole->input.bytes_logical);  // the hole
  ASSERT_GE(whole->input.bytes_data, 300000u + 200000u + 4096u);
  const std::string path = (dir.path() / "whole.zstate").string();
  ASSERT_TRUE(state::SaveState(*whole, path).ok());
  Result<state::ScanState> loaded = state::LoadState(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(loaded->input.bytes_data_known);
  EXPECT_EQ(loaded->input.bytes_data, whole->input.bytes_data);
  // Two halves merged: the whole's.
  Result<state::ScanState> half_a = scan({a});
  Result<state::ScanState> half_b = scan({b});
  ASSERT_TRUE(half_a.ok() && half_b.ok());
  state::Merge(*half_a, *half_b);
  EXPECT_TRUE(half_a->input.bytes_data_known);
  EXPECT_EQ(half_a->input.bytes_data, whole->input.bytes_data);
  // A --since rescan of the unchanged tree reads nothing and gives the same data.
  ScanOptions o = loaded->options;
  o.threads = 2;
  Result<state::ScanState> since = pipeline::ScanSince(o, std::move(*loaded), fs.get(), {});
  ASSERT_TRUE(since.ok()) << since.status().ToString();
  EXPECT_EQ(since->input.bytes_read, 0u);
  EXPECT_TRUE(since->input.bytes_data_known);
  EXPECT_EQ(since->input.bytes_data, whole->input.bytes_data);
  // Format 21: unknown, alone, merged with a new state, and as a --since base.
  Result<state::ScanState> v21 =
      state::LoadState(ZSIM_SOURCE_DIR "/tests/fuzz/corpus/state_load/v21_records");
  ASSERT_TRUE(v21.ok()) << v21.status().ToString();
  EXPECT_FALSE(v21->input.bytes_data_known);
  const ScanResult old = finish::Finish(*v21, finish::ReportOptionsOf(v21->options));
  EXPECT_FALSE(old.input.bytes_data_known);
  // A merge with a part that did not keep it (as a format-21 part reads).
  Result<state::ScanState> new_part = scan({a});
  Result<state::ScanState> old_part = scan({b});
  ASSERT_TRUE(new_part.ok() && old_part.ok());
  old_part->input.bytes_data_known = false;
  state::Merge(*new_part, *old_part);
  EXPECT_FALSE(new_part->input.bytes_data_known);
  // A --since rescan from a base that did not keep it.
  Result<state::ScanState> base = state::LoadState(path);
  ASSERT_TRUE(base.ok());
  base->input.bytes_data_known = false;
  Result<state::ScanState> from_old = pipeline::ScanSince(o, std::move(*base), fs.get(), {});
  ASSERT_TRUE(from_old.ok());
  EXPECT_FALSE(from_old->input.bytes_data_known);
}

// Format 19 keeps each breakdown row's all-zero records per setting: the saved figures of a
// directory of zeros count them under a codec that makes them holes, as the headline does
// (before, "saved 0 B" beside a headline of 4 MiB of all-zero records stored as holes). A file
// and a merge keep them; a state of format 18 reads without them and says so, and so does its
// merge with a new one.
TEST(StateFileTest, TheBreakdownsZeroRecordsSurviveTheFileAndAMergeWithAnOldStateDropsThem) {
  testing::TempDir dir;
  dir.WriteFile("z/zeros.bin", std::vector<uint8_t>(4 << 20, 0));
  dir.WriteFile("r/rand.bin", testing::Xorshift64Bytes(41, 4 << 20));
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.recordsizes = {128 * 1024};
  o.compressions = {{CompressionAlgorithm::kOff, 0}, {CompressionAlgorithm::kLz4, 0}};
  o.threads = 2;
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> scanned = ScanToState(o, fs.get());
  ASSERT_TRUE(scanned.ok());
  const ScanResult r = finish::Finish(*scanned, finish::ReportOptionsOf(scanned->options));
  ASSERT_EQ(r.breakdowns.size(), 2u);
  for (const Breakdowns& b : r.breakdowns) {
    SCOPED_TRACE(CompressionName(b.compression));
    EXPECT_TRUE(b.zero_lsize_known);
    const bool holes = b.compression.algorithm != CompressionAlgorithm::kOff;
    for (const BreakdownRow& row : b.directories) {
      const bool zeros = row.name.ends_with("/z");
      // The zeros are holes in both tables (off: as dedup writes them, 2.4), counted as the
      // headline's SettingResult::zero_lsize counts them. lz4 stores them as holes (saved 4 MiB);
      // off writes them without dedup (report/decision.h BreakdownSaved: saves nothing).
      EXPECT_EQ(row.zero_lsize, zeros ? uint64_t{4} << 20 : 0) << row.name;
      EXPECT_EQ(row.lsize, zeros ? 0 : uint64_t{4} << 20) << row.name;
      EXPECT_EQ(b.zero_written_without_dedup, !holes);
    }
  }
  const std::string path = (dir.path() / "s.zstate").string();
  ASSERT_TRUE(state::SaveState(*scanned, path).ok());
  Result<state::ScanState> back = state::LoadState(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  testing::ExpectSameFigures(finish::Finish(*back, finish::ReportOptionsOf(back->options)), r);

  Result<state::ScanState> old =
      state::LoadState(ZSIM_SOURCE_DIR "/tests/fuzz/corpus/state_load/v18_records");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_FALSE(state::ZeroLsizeKept(old->breakdown));
  for (const Breakdowns& b :
       finish::Finish(*old, finish::ReportOptionsOf(old->options)).breakdowns) {
    EXPECT_FALSE(b.zero_lsize_known);
  }
  // Two new parts merge with their zeros; a new part and one that kept none, without.
  Result<state::ScanState> twice = state::LoadState(path), other = state::LoadState(path),
                           stripped = state::LoadState(path);
  ASSERT_TRUE(twice.ok() && other.ok() && stripped.ok());
  state::Merge(*twice, *other);
  EXPECT_TRUE(state::ZeroLsizeKept(twice->breakdown));
  for (auto* rows : {&stripped->breakdown.directories, &stripped->breakdown.extensions}) {
    for (state::BreakdownRowSums& row : *rows) row.setting_zero_lsize.clear();
  }
  state::Merge(*twice, *stripped);
  EXPECT_FALSE(state::ZeroLsizeKept(twice->breakdown));
}

// Format 14 keeps them per row: a saved scan of two recordsizes reads back with each row's.
TEST(StateFileTest, DedupSourcesPerRowSurviveTheFile) {
  testing::TempDir dir;
  const std::vector<uint8_t> file = testing::Xorshift64Bytes(21, 130 * 1024);
  dir.WriteFile("a.bin", file);
  dir.WriteFile("b.bin", file);
  std::vector<uint8_t> z = testing::Xorshift64Bytes(22, 512 * 1024);
  std::fill(z.begin() + 128 * 1024, z.begin() + 384 * 1024, 0);
  dir.WriteFile("z.bin", z);
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.recordsizes = {16 * 1024, 128 * 1024};
  o.compressions = {{CompressionAlgorithm::kLz4, 0}};
  o.threads = 1;
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> scanned = ScanToState(o, fs.get());
  ASSERT_TRUE(scanned.ok());
  const std::string path = (dir.path() / "s.zstate").string();
  ASSERT_TRUE(state::SaveState(*scanned, path).ok());
  Result<state::ScanState> back = state::LoadState(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->breakdown.contents, scanned->breakdown.contents);
  EXPECT_EQ(back->breakdown.zero_blocks, (std::vector<uint64_t>{16, 2}));
  EXPECT_EQ(back->breakdown.zero_bytes, (std::vector<uint64_t>{256 * 1024, 256 * 1024}));
  ASSERT_EQ(back->breakdown.contents.size(), 2u);  // a.bin and b.bin's content, z.bin's
  const auto copied = std::find_if(back->breakdown.contents.begin(), back->breakdown.contents.end(),
                                   [](const auto& content) { return content.second == 2; });
  ASSERT_NE(copied, back->breakdown.contents.end());
  EXPECT_EQ(copied->first.lsize, (std::vector<uint64_t>{144 * 1024, 256 * 1024}));
}

// Format 15 keeps the contents' shift: a sampled set of contents reads back with it, a content
// the shift does not keep (no writer leaves one) is refused, and format 14 reads with shift 0.
TEST(StateFileTest, TheContentsShiftSurvivesTheFileAndAContentItDropsIsRefused) {
  testing::TempDir dir;
  dir.WriteFile("a.bin", testing::Xorshift64Bytes(31, 64 * 1024));
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.recordsizes = {128 * 1024};
  o.compressions = {{CompressionAlgorithm::kLz4, 0}};
  o.threads = 1;
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> scanned = ScanToState(o, fs.get());
  ASSERT_TRUE(scanned.ok());
  state::BreakdownState& b = scanned->breakdown;
  b.contents.clear();
  b.content_shift = 3;
  b.contents[state::BreakdownState::Content{8, 1, {4096}}] = 2;   // lo: 3 low zero bits
  b.contents[state::BreakdownState::Content{16, 2, {8192}}] = 1;  // 4
  b.contents[state::BreakdownState::Content{5, 3, {state::kWholeContentBytes}}] = 2;  // whole
  const std::string bytes = state::EncodeState(*scanned);
  Result<state::ScanState> back =
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->breakdown.content_shift, 3u);
  EXPECT_EQ(back->breakdown.contents, b.contents);

  b.contents[state::BreakdownState::Content{12, 4, {4096}}] = 1;  // 2 low zero bits: dropped
  const std::string corrupt = state::EncodeState(*scanned);
  Result<state::ScanState> refused =
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(corrupt.data()), corrupt.size()));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("a content its shift does not keep"), std::string::npos)
      << refused.status().message();

  Result<state::ScanState> v14 =
      state::LoadState(ZSIM_SOURCE_DIR "/tests/fuzz/corpus/state_load/v14_records");
  ASSERT_TRUE(v14.ok()) << v14.status().ToString();
  EXPECT_EQ(v14->breakdown.content_shift, 0u);
  EXPECT_FALSE(v14->breakdown.contents.empty());
}

TEST(StateFileTest, WrittenKeysReadBackAndColumnsNoScanWritesAreRefused) {
  testing::TempDir dir;
  dir.WriteFile("text.bin", testing::GenerateBlock(64 * 1024, 0.6, 9));
  dir.WriteFile("random.bin", testing::Xorshift64Bytes(4, 16 * 1024));
  ScanOptions o;
  o.paths = {dir.path().string()};
  o.exact = true;
  o.recordsizes = {16 * 1024};
  o.compressions = {{CompressionAlgorithm::kLz4, 0}};
  o.checksum = ChecksumKind::kSha256;
  o.threads = 1;
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> scanned = ScanToState(o, fs.get());
  ASSERT_TRUE(scanned.ok());
  state::ScanState& s = *scanned;
  ASSERT_TRUE(s.written_keys);
  ASSERT_EQ(s.rows[0].table->settings(), 1u + ddt::kWrittenKeyColumns);
  std::map<std::pair<uint64_t, uint64_t>, std::vector<ddt::PsizeCode>> codes;
  int words = 0, none = 0;
  s.rows[0].table->ForEach([&](const ddt::EntryView& e) {
    codes[{e.key.lo, e.key.hi}].assign(e.codes.begin(), e.codes.end());
    const ddt::WrittenKey k = ddt::DecodeWrittenKey(e.codes.subspan(1));
    words += k.kind == ddt::WrittenKey::Kind::kWord;
    none += k.kind == ddt::WrittenKey::Kind::kNone;
  });
  EXPECT_EQ(words, 4);  // the text's four blocks compress
  EXPECT_EQ(none, 1);   // the random one is stored as is
  const std::string bytes = state::EncodeState(s);
  Result<state::ScanState> back =
      state::ParseState(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->written_keys);
  size_t seen = 0;
  back->rows[0].table->ForEach([&](const ddt::EntryView& e) {
    ++seen;
    const std::vector<ddt::PsizeCode> read(e.codes.begin(), e.codes.end());
    EXPECT_EQ(read, (codes[{e.key.lo, e.key.hi}]));
  });
  EXPECT_EQ(seen, codes.size());
  ddt::Fingerprint key{};
  std::vector<ddt::PsizeCode> original;
  s.rows[0].table->ForEach([&](const ddt::EntryView& e) {
    if (ddt::DecodeWrittenKey(e.codes.subspan(1)).kind == ddt::WrittenKey::Kind::kWord) {
      key = e.key;
      original.assign(e.codes.begin(), e.codes.end());
    }
  });
  for (const std::vector<ddt::PsizeCode>& cols :
       {std::vector<ddt::PsizeCode>{ddt::kNoWrittenKey, 7}, std::vector<ddt::PsizeCode>{0x9000, 1},
        std::vector<ddt::PsizeCode>{1, 0x8003}}) {
    std::vector<ddt::PsizeCode> bad = original;
    std::copy(cols.begin(), cols.end(), bad.begin() + 1);
    s.rows[0].table->SetCodes(key, bad);
    const std::string corrupt = state::EncodeState(s);
    s.rows[0].table->SetCodes(key, original);
    Result<state::ScanState> r = state::ParseState(
        ByteView(reinterpret_cast<const uint8_t*>(corrupt.data()), corrupt.size()));
    ASSERT_FALSE(r.ok()) << cols[0];
    EXPECT_NE(r.status().message().find("written key"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace zsim::pipeline
