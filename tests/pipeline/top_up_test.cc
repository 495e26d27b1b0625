// The top-up after a scan (pipeline/top_up.h): a row of few unique blocks whose skipped blocks
// are all listed is brought down to the budget of its unique bytes, its blocks read again and
// coded as the scan codes them; a block that changed, a file gone, or a block not listed leaves
// the row as it was. And the list's cap per row.

#include "engine/pipeline/top_up.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/codec/codec.h"
#include "engine/ddt/fingerprint.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "engine/estimate/top_up.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/block_code.h"
#include "tests/util/forwarding_file_system.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline::top_up_test {  // named: the module's test files build together
namespace {

constexpr size_t kBlock = 1024;
constexpr int kBlocks = 40;

ScanOptions Options(std::vector<Compression> codecs = {kLzjb, kZle}, size_t block = kBlock) {
  ScanOptions o;
  o.compressions = std::move(codecs);
  o.recordsizes = {block};
  o.ashift = 9;
  o.threads = 2;
  return o;
}

// Block i of the file: 100 to 900 random bytes, then zeros.
std::vector<uint8_t> BlockOf(int i, size_t block = kBlock) {
  std::vector<uint8_t> b =
      testing::Xorshift64Bytes(static_cast<uint64_t>(i) + 77, 100 + size_t(i) * 37 % 800);
  b.resize(block, 0);
  return b;
}

// A scan's row after its reading: kBlocks unique blocks of one file, none coded by the sampled
// codecs (all skipped at the budget's level 2 of a tree of 16,800 planned blocks), every one
// listed but `unlisted`.
struct Fixture {
  testing::TempDir tmp;
  size_t block;
  ScanOptions options;
  std::filesystem::path file;
  std::vector<state::RowState> rows;
  SkippedBlocks skipped{1};
  state::SamplingState sampling;
  std::vector<int> planned;

  state::CodeKind kind;
  bool keys;

  // `codecs` and `block_bytes`: the two sampled settings and the block size.
  // `keys`: sha256, and a table that keeps written keys (state::KeyColumns).
  explicit Fixture(int unlisted = -1, state::CodeKind code_kind = state::CodeKind::kEarlyAbort,
                   std::vector<Compression> codecs = {kLzjb, kZle}, size_t block_bytes = kBlock,
                   bool keys = false)
      : block(block_bytes), options(Options(codecs, block_bytes)), kind(code_kind), keys(keys) {
    if (keys) options.checksum = ChecksumKind::kSha256;
    std::vector<uint8_t> data;
    for (int i = 0; i < kBlocks; ++i) {
      const std::vector<uint8_t> b = BlockOf(i, block);
      data.insert(data.end(), b.begin(), b.end());
    }
    file = tmp.WriteFile("f", data);
    sampling.sampled = {true, true};
    sampling.anchors = {-1, -1};
    sampling.adaptive = true;
    sampling.planned_bytes = 16800 * block;
    planned = estimate::BudgetLevels(options, sampling.sampled, sampling.plan());
    if (block == kBlock) {
      EXPECT_EQ(planned, (std::vector<int>{2, 2}));
    }
    sampling.setting_levels = planned;
    sampling.complete_level = *std::min_element(planned.begin(), planned.end());
    rows.emplace_back().block_bytes = block;
    rows[0].table = std::make_unique<ddt::DedupTable>(
        state::TableLayout(options, sampling.sampled, kind, keys));
    std::atomic<uint32_t> item{SkippedBlocks::kNoItem};
    std::vector<SkippedBlock> listed;
    for (int i = 0; i < kBlocks; ++i) {
      const ddt::Fingerprint key = ddt::ComputeFingerprint(options.checksum, BlockOf(i, block));
      EXPECT_EQ(rows[0].table->Insert(key, block), ddt::InsertOutcome::kFirst);
      if (i == unlisted) continue;
      EXPECT_TRUE(skipped.Claim(0));
      listed.push_back(
          SkippedBlock{key, uint64_t(i) * block, skipped.ItemOf(&item, file.string(), false)});
    }
    skipped.Add(0, listed);
  }

  RecodeSpec Spec() const {
    return RecodeSpec{kind, state::ProbeColumns(kind, options.compressions),
                      state::KeyColumns(options, kind, keys), rows[0].table->settings()};
  }

  TopUpStats Run(const std::atomic<bool>* cancel = nullptr,
                 std::shared_ptr<io::FileSystem> fs = io::PosixFileSystem(),
                 const std::function<void(const TopUpPlanned&)>& on_planned = {}) {
    codec_ns.assign(2, 0);
    codec_bytes.assign(2, 0);
    return TopUpRows(options, fs.get(), &rows, skipped, planned, Spec(),
                     RecodeControl{nullptr, cancel, &blocks_done}, &sampling, &codec_ns,
                     &codec_bytes, /*interval=*/true, on_planned);
  }

  // Per block (by its key), the table's columns: the sampled codecs' codes, then their
  // early-abort codes (state::ProbeColumns).
  std::vector<std::vector<ddt::PsizeCode>> Codes() const {
    std::vector<std::vector<ddt::PsizeCode>> out(kBlocks);
    rows[0].table->ForEach([&](const ddt::EntryView& e) {
      for (int i = 0; i < kBlocks; ++i) {
        const ddt::Fingerprint k = ddt::ComputeFingerprint(options.checksum, BlockOf(i, block));
        if (k.lo == e.key.lo) out[size_t(i)].assign(e.codes.begin(), e.codes.end());
      }
    });
    return out;
  }
  std::vector<uint64_t> codec_ns, codec_bytes;
  std::atomic<uint64_t> blocks_done{0};
};

void ExpectCodedWhole(state::CodeKind kind, std::vector<Compression> codecs = {kLzjb, kZle},
                      size_t block = kBlock, bool keys = false) {
  Fixture f(-1, kind, codecs, block, keys);
  const TopUpStats stats = f.Run();
  EXPECT_EQ(stats.rows, 1u);
  EXPECT_EQ(stats.failed_rows, 0u);
  EXPECT_EQ(stats.reread, uint64_t(kBlocks));  // 40 blocks: level 0, every block
  // The row's record and the progress count say the same.
  const state::TopUpRecord& record = f.rows[0].top_up;
  EXPECT_EQ(record.blocks, uint64_t(kBlocks));
  EXPECT_EQ(record.bytes, uint64_t(kBlocks) * block);
  EXPECT_GT(record.seconds, 0);
  EXPECT_EQ(record.left, "");
  EXPECT_EQ(f.blocks_done.load(), uint64_t(kBlocks));
  EXPECT_EQ(f.sampling.setting_levels, (std::vector<int>{0, 0}));
  EXPECT_EQ(f.sampling.topped_bytes, (std::vector<uint64_t>{kBlocks * block}));
  EXPECT_EQ(f.codec_bytes, (std::vector<uint64_t>{kBlocks * block, kBlocks * block}));
  const zfs::WritePolicy policy = ScanWritePolicy(f.options);
  codec::Compressor compressor;
  std::vector<uint8_t> scratch(block);
  const std::vector<std::vector<ddt::PsizeCode>> codes = f.Codes();
  const std::vector<size_t> probes = state::ProbeColumns(kind, f.options.compressions);
  // Every column (codes, early-abort codes, written keys) as one recoder coding each block with
  // every setting at once gives them.
  const auto fs = io::PosixFileSystem();
  BlockRecoder reference(f.options, fs.get(), f.Spec());
  const size_t probe_count = size_t(
      std::count_if(probes.begin(), probes.end(), [](size_t p) { return p != state::kNoProbe; }));
  EXPECT_EQ(f.rows[0].table->settings() > 2 + probe_count, keys);  // written-key columns
  std::vector<uint64_t> ns(2, 0);
  for (int i = 0; i < kBlocks; ++i) {
    SCOPED_TRACE(i);
    const std::vector<uint8_t> data = BlockOf(i, block);
    const MutableByteView out(scratch.data(), block);
    for (size_t c = 0; c < 2; ++c) {
      const BlockCodes want =
          CodeBlockOfKind(policy, f.options.compressions[c], data, false, compressor, out, kind);
      ASSERT_EQ(codes[size_t(i)].size(), f.rows[0].table->settings());
      EXPECT_EQ(codes[size_t(i)][c], want.code);
      if (c < probes.size() && probes[c] != state::kNoProbe) {
        EXPECT_EQ(codes[size_t(i)][probes[c]], EarlyAbortCode(data, want.code, compressor, out))
            << "early abort of setting " << c;
      }
    }
    std::vector<ddt::PsizeCode> whole(f.rows[0].table->settings(), ddt::kPendingCode);
    ASSERT_TRUE(reference
                    .Recode(f.file.string(), false, uint64_t(i) * block, block,
                            ddt::ComputeFingerprint(f.options.checksum, data), {true, true}, whole,
                            ns)
                    .ok());
    EXPECT_EQ(codes[size_t(i)], whole);
  }
}

TEST(TopUpTest, ARowOfFewUniqueBlocksIsCodedWholeAsTheScanCodesThem) {
  ExpectCodedWhole(state::CodeKind::kEarlyAbort);
}

// A 1M block under zstd-19 and gzip-9 costs more than a task's nominal share: its settings are
// coded in parts, each reading the block. The codes are those of one coding, and the block is
// counted once (read again, progress, record).
// Counts the reads at each offset, and fails the `fail_read`th read at `fail_offset`.
class CountingReads : public testing::ForwardingFileSystem {
 public:
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    Result<std::unique_ptr<io::File>> f = ForwardingFileSystem::Open(path, follow);
    if (!f.ok()) return f;
    return std::unique_ptr<io::File>(new File(std::move(*f), this));
  }
  std::map<uint64_t, int> reads() {
    std::lock_guard<std::mutex> lock(mu_);
    return reads_;
  }
  uint64_t fail_offset = UINT64_MAX;
  int fail_read = 0;

 private:
  class File : public testing::ForwardingFile {
   public:
    File(std::unique_ptr<io::File> file, CountingReads* fs)
        : ForwardingFile(std::move(file)), fs_(fs) {}
    Result<size_t> ReadAt(uint64_t offset, MutableByteView dst) override {
      {
        std::lock_guard<std::mutex> lock(fs_->mu_);
        const int n = ++fs_->reads_[offset];
        if (offset == fs_->fail_offset && n == fs_->fail_read) {
          return Status(StatusCode::kIoError, "injected read error");
        }
      }
      return ForwardingFile::ReadAt(offset, dst);
    }

   private:
    CountingReads* fs_;
  };
  std::mutex mu_;
  std::map<uint64_t, int> reads_;
};

TEST(TopUpTest, ACostlyBlockCodedInPartsGetsTheCodesOfOneCoding) {
  std::vector<uint32_t> part;
  const ScanOptions costly =
      Options({{CompressionAlgorithm::kZstd, 19}, {CompressionAlgorithm::kGzip, 9}}, 1024 * 1024);
  EXPECT_EQ(SettingSplit(costly).Parts({0, 0}, 0, 1024 * 1024, &part), 2u);
  EXPECT_EQ(part, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(SettingSplit(costly).Parts({0, -1}, 0, 1024 * 1024, &part),
            1u);  // one setting: one part
  EXPECT_EQ(SettingSplit(costly).Parts({3, 0}, 2, 1024 * 1024, &part), 1u);  // zstd-19 not coded
  EXPECT_EQ(SettingSplit(Options()).Parts({0, 0}, 0, kBlock, &part), 1u);    // lzjb, zle: cheap
  EXPECT_EQ(part, (std::vector<uint32_t>{0, 0}));
  ExpectCodedWhole(state::CodeKind::kEarlyAbort,
                   {{CompressionAlgorithm::kZstd, 19}, {CompressionAlgorithm::kGzip, 9}},
                   1024 * 1024);
  // Under sha256 gzip-9 keeps written keys (zstd does not: state::KeepsWrittenKey), in its part.
  ExpectCodedWhole(state::CodeKind::kEarlyAbort,
                   {{CompressionAlgorithm::kZstd, 19}, {CompressionAlgorithm::kGzip, 9}},
                   1024 * 1024, /*keys=*/true);

  // Each block read once per part: twice.
  const auto counting = std::make_shared<CountingReads>();
  Fixture f(-1, state::CodeKind::kEarlyAbort, costly.compressions, 1024 * 1024);
  EXPECT_EQ(f.Run(nullptr, counting).rows, 1u);
  const std::map<uint64_t, int> reads = counting->reads();
  EXPECT_EQ(reads.size(), size_t(kBlocks));
  for (const auto& [offset, n] : reads) EXPECT_EQ(n, 2) << offset;

  // A part's read failing leaves the row as it was, whichever part it is.
  for (int which : {1, 2}) {
    SCOPED_TRACE(which);
    const auto failing = std::make_shared<CountingReads>();
    failing->fail_offset = 7 * 1024 * 1024;
    failing->fail_read = which;
    Fixture g(-1, state::CodeKind::kEarlyAbort, costly.compressions, 1024 * 1024);
    const std::vector<int> levels = g.sampling.setting_levels;
    const TopUpStats stats = g.Run(nullptr, failing);
    EXPECT_EQ(stats.rows, 0u);
    EXPECT_EQ(stats.failed_rows, 1u);
    EXPECT_EQ(g.sampling.setting_levels, levels);
    EXPECT_TRUE(g.sampling.topped_bytes.empty());
    EXPECT_NE(g.rows[0].top_up.left.find("injected read error"), std::string::npos)
        << g.rows[0].top_up.left;
    for (const std::vector<ddt::PsizeCode>& codes : g.Codes()) {
      for (size_t c = 0; c < 2; ++c) EXPECT_EQ(codes[c], ddt::kPendingCode);
    }
  }
}

// What the top-up will read and code is told once, before it reads anything (the scan's
// forecast of the top-up and its progress line's total rest on it), and is what it then did.
TEST(TopUpTest, ItsPlanIsToldBeforeAnyReadAndIsWhatItDoes) {
  Fixture f;
  int told = 0;
  TopUpPlanned plan;
  const TopUpStats stats = f.Run(nullptr, io::PosixFileSystem(), [&](const TopUpPlanned& p) {
    ++told;
    plan = p;
    EXPECT_EQ(f.blocks_done.load(), 0u);  // nothing read yet
  });
  EXPECT_EQ(told, 1);
  EXPECT_EQ(plan.blocks, uint64_t(kBlocks));
  EXPECT_EQ(plan.bytes, uint64_t(kBlocks) * kBlock);
  EXPECT_EQ(plan.codec_bytes, f.codec_bytes);  // per (row, setting): each codec on every block
  EXPECT_EQ(stats.reread, plan.blocks);

  // Nothing to take up (the row is topped now): not told.
  Fixture again;
  again.sampling.setting_levels = {0, 0};
  told = 0;
  again.Run(nullptr, io::PosixFileSystem(), [&](const TopUpPlanned&) { ++told; });
  EXPECT_EQ(told, 0);
}

// A --since scan keeps its base's code kind (an older state's): a block read again is coded in
// it, as the scan's first sightings are (raw outcomes here, format 7).
TEST(TopUpTest, ATableOfAnotherCodeKindGetsCodesOfItsKind) {
  ExpectCodedWhole(state::CodeKind::kRaw);
}

// Left as it was: levels, no topped bytes (the codes written below the levels are never used).
// The row's record says why where a read failed: `why` is found in it.
void ExpectLeft(Fixture& f, const TopUpStats& stats, bool unplaced = false,
                const std::string& why = "") {
  EXPECT_EQ(stats.rows, 0u);
  EXPECT_EQ(stats.failed_rows, unplaced ? 0u : 1u);
  EXPECT_EQ(stats.unplaced_rows, unplaced ? 1u : 0u);
  EXPECT_EQ(f.sampling.setting_levels, (std::vector<int>{2, 2}));
  EXPECT_TRUE(f.sampling.topped_bytes.empty());
  const std::string& left = f.rows[0].top_up.left;
  if (unplaced) {
    EXPECT_EQ(left, "");  // not taken up: --since reads every file again
  } else {
    EXPECT_EQ(left.rfind(f.file.string() + ": ", 0), 0u) << left;
    EXPECT_NE(left.find(why), std::string::npos) << left;
  }
}

TEST(TopUpTest, ABlockThatChangedSinceItWasReadLeavesTheRow) {
  Fixture f;
  std::vector<uint8_t> data = testing::ReadFileBytes(f.file);
  data[17 * kBlock + 3] ^= 0xff;
  f.tmp.WriteFile("f", data);
  ExpectLeft(f, f.Run(), false, "offset " + std::to_string(17 * kBlock) + " had other data");
}

TEST(TopUpTest, AFileGoneLeavesTheRow) {
  Fixture f;
  std::filesystem::remove(f.file);
  ExpectLeft(f, f.Run(), false, "could not be opened again");
}

// An interrupt before the top-up: nothing read again, no row taken up (no record), the row at its
// levels (the scan then says it is partial).
TEST(TopUpTest, AnInterruptLeavesTheRow) {
  Fixture f;
  const std::atomic<bool> cancel{true};
  const TopUpStats stats = f.Run(&cancel);
  EXPECT_EQ(stats.rows + stats.reread + stats.failed_rows, 0u);
  EXPECT_EQ(f.sampling.setting_levels, (std::vector<int>{2, 2}));
  EXPECT_TRUE(f.sampling.topped_bytes.empty());
  EXPECT_EQ(f.rows[0].top_up.left, "");
}

// Interrupts a scan when a file is opened.
class InterruptOnOpen : public testing::ForwardingFileSystem {
 public:
  explicit InterruptOnOpen(std::atomic<bool>* cancel) : cancel_(cancel) {}
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    cancel_->store(true);
    return ForwardingFileSystem::Open(path, follow);
  }

 private:
  std::atomic<bool>* cancel_;
};

// An interrupt while a row's blocks are read again (on the first block's open, one thread): the
// row keeps its levels, and its record holds the one block read and the interrupt.
TEST(TopUpTest, AnInterruptDuringARowSaysSo) {
  Fixture f;
  f.options.threads = 1;
  std::atomic<bool> cancel{false};
  const TopUpStats stats = f.Run(&cancel, std::make_shared<InterruptOnOpen>(&cancel));
  EXPECT_EQ(stats.rows, 0u);
  EXPECT_EQ(stats.failed_rows, 1u);
  EXPECT_EQ(f.sampling.setting_levels, (std::vector<int>{2, 2}));
  EXPECT_TRUE(f.sampling.topped_bytes.empty());
  EXPECT_EQ(f.rows[0].top_up.blocks, 1u);
  EXPECT_EQ(f.rows[0].top_up.bytes, kBlock);
  EXPECT_EQ(f.rows[0].top_up.left, kTopUpInterrupted);
  EXPECT_EQ(f.blocks_done.load(), 1u);
}

TEST(TopUpTest, ABlockNotListedLeavesTheRow) {
  Fixture f(/*unlisted=*/5);
  ExpectLeft(f, f.Run(), /*unplaced=*/true);
}

// Levels at or below the unique bytes' budget, raised above the planned budget (the pilot's), or
// leaving at least kTopUpMinSample unique blocks are left alone.
TEST(TopUpTest, OnlyLevelsAtThePlannedBudgetAboveTheUniqueBytesOnesGoDown) {
  EXPECT_EQ(estimate::TopUpLevels({true, true, false, true}, {3, 5, 0, 1}, {3, 3, 0, 1},
                                  {0, 0, 0, 1}, 40),
            (std::vector<int>{0, -1, -1, -1}));
  // 8,191 blocks leave 1,023 at level 3, 8,192 leave 1,024.
  EXPECT_EQ(estimate::TopUpLevels({true}, {3}, {3}, {0}, 8191), (std::vector<int>{0}));
  EXPECT_EQ(estimate::TopUpLevels({true}, {3}, {3}, {0}, 8192), (std::vector<int>{-1}));
  Fixture f;
  f.sampling.setting_levels = {4, 2};  // lzjb raised by a pilot
  const TopUpStats stats = f.Run();
  EXPECT_EQ(stats.rows, 1u);
  EXPECT_EQ(f.sampling.setting_levels, (std::vector<int>{4, 0}));
  EXPECT_EQ(f.codec_bytes[0], 0u);
}

// A row of more entries than kTopUpMaxBlocks is never read again (its list may lack blocks).
TEST(TopUpTest, ARowOfMoreEntriesThanTheCapIsLeft) {
  Fixture f;
  for (uint64_t i = 0; i < estimate::kTopUpMaxBlocks; ++i) {
    f.rows[0].table->Insert(ddt::Fingerprint{testing::SplitMix64(7, i), testing::SplitMix64(9, i)},
                            kBlock);
  }
  const TopUpStats stats = f.Run();
  EXPECT_EQ(stats.rows + stats.failed_rows + stats.unplaced_rows + stats.reread, 0u);
  EXPECT_EQ(f.sampling.setting_levels, (std::vector<int>{2, 2}));
  EXPECT_TRUE(f.sampling.topped_bytes.empty());
}

// A row lists at most kTopUpMaxBlocks distinct keys; a key listed again (a rank that met it
// again after shipping its entry) is kept once, so only more distinct keys overflow the row.
TEST(TopUpTest, AListHoldsAtMostTheCapOfDistinctKeysPerRow) {
  SkippedBlocks s(2);
  std::vector<SkippedBlock> blocks;
  for (uint64_t i = 0; i < estimate::kTopUpMaxBlocks; ++i) {
    blocks.push_back(SkippedBlock{
        ddt::Fingerprint{testing::SplitMix64(1, i), testing::SplitMix64(2, i)}, i * 512, 0});
  }
  s.Add(1, blocks);
  s.Add(1, blocks);
  EXPECT_FALSE(s.overflowed(1));
  EXPECT_TRUE(s.Claim(1));
  EXPECT_EQ(s.row(1).size(), estimate::kTopUpMaxBlocks);
  s.Add(1, {SkippedBlock{ddt::Fingerprint{3, 4}, 0, 0}});
  EXPECT_TRUE(s.overflowed(1));
  EXPECT_FALSE(s.Claim(1));
  EXPECT_TRUE(s.row(1).empty());
  EXPECT_TRUE(s.Claim(0));
  EXPECT_FALSE(s.overflowed(0));
}

TEST(TopUpTest, TheBudgetOfAToppedRowIsThatOfItsUniqueBytes) {
  ScanOptions o = Options();
  o.recordsizes = {kBlock, 4 * kBlock};
  const std::vector<bool> sampled = {true, true};
  const uint64_t planned = 16800 * kBlock;
  EXPECT_EQ(estimate::RowBudgetLevels(o, sampled, estimate::Plan{planned}, {}),
            estimate::BudgetLevels(o, sampled, estimate::Plan{planned}));
  // Row 0 topped with 40 blocks' bytes: level 0 there; row 1 keeps the planned budget.
  const std::vector<int> topped =
      estimate::RowBudgetLevels(o, sampled, estimate::Plan{planned}, {40 * kBlock, 0});
  const std::vector<int> whole = estimate::BudgetLevels(o, sampled, estimate::Plan{planned});
  EXPECT_EQ(topped, (std::vector<int>{0, 0, whole[2], whole[3]}));
  EXPECT_EQ(whole[0], 2);
  // Bytes above the plan change nothing.
  EXPECT_EQ(estimate::RowBudgetLevels(o, sampled, estimate::Plan{planned}, {2 * planned, 0}),
            whole);
}

}  // namespace
}  // namespace zsim::pipeline::top_up_test
