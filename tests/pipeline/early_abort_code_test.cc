// zstd early abort from the state's two codes (state format 10): a zstd-3 block's least-budget
// code and its early-abort code (pipeline::CodeBlock), settled as a report settles them
// (finish::CodeSettler), against ZFS's write path run at the report's budget
// (codec::CompressZfsBlock: module/zstd/zfs_zstd.c zfs_zstd_compress_wrap's lz4 pass, zstd-1
// pass, then the real level). Blocks: alphabets of 4 to 7 bits with short copies
// (testing::AlphabetBlock: outputs near 64K, 96K, 108K and 112K, where lz4 fails and zstd-1 and
// zstd-3 part), text-like ones, incompressible ones, of 128K, 256K and 1M, and three single-block
// sizes that are no multiple of 128K. Reports: 2.1 (no early
// abort), 2.2 (budget lsize - lsize/8), 2.4 (budget aligned to gcd_alloc) at ashift 9 to 16 and
// dRAID data widths 2 to 7.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/codec/codec.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/dedup_table.h"
#include "engine/finish/settled_codes.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/block_code.h"
#include "engine/pipeline/scan.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/write_rules.h"
#include "tests/util/test_util.h"
#include "zsim/scan_options.h"

namespace zsim::pipeline {
namespace {

std::vector<std::vector<uint8_t>> Blocks() {
  std::vector<std::vector<uint8_t>> blocks;
  uint64_t seed = 1;
  for (uint64_t alphabet : {16, 64, 108, 128}) {
    for (int step = 0; step < 12; ++step) {
      blocks.push_back(testing::AlphabetBlock(128 * 1024, alphabet, 0.002 * step, seed++));
    }
    blocks.push_back(testing::AlphabetBlock(256 * 1024, alphabet, 0.004, seed++));
  }
  for (double m : {0.05, 0.2, 0.5}) blocks.push_back(testing::GenerateBlock(128 * 1024, m, seed++));
  blocks.push_back(testing::Xorshift64Bytes(9, 128 * 1024));
  blocks.push_back(testing::AlphabetBlock(1 << 20, 100, 0.003, seed++));
  // Single-block files between 128K and a larger recordsize: lsizes that are no multiple of 128K
  // (the budgets' alignment differs there).
  for (uint64_t lsize : {uint64_t{132608}, uint64_t{205312}, uint64_t{716800}}) {
    blocks.push_back(testing::AlphabetBlock(lsize, 108, 0.004, seed++));
  }
  return blocks;
}

ScanOptions Options(Profile profile, const char* vdev, int ashift) {
  ScanOptions o;
  o.profile = profile;
  o.vdev = *ParseVdev(vdev);
  o.ashift = ashift;
  o.compressions = {{CompressionAlgorithm::kZstd, 3}};
  return o;
}

TEST(EarlyAbortCodeTest, TheTwoCodesDecideEveryBudgetAsZfsDoes) {
  const Compression zstd3{CompressionAlgorithm::kZstd, 3};
  const ScanOptions scanned = Options(Profile::kZfs24, "disk", 12);
  const zfs::WritePolicy scan_policy = ScanWritePolicy(scanned);
  const std::vector<ddt::SettingStorage> layout =
      state::TableLayout(scanned, {false}, state::CodeKind::kEarlyAbort, true);
  ASSERT_EQ(layout.size(), 2u);
  struct Alloc {
    const char* vdev;
    int ashift;
  };
  std::vector<Alloc> allocs;
  for (int ashift = 9; ashift <= 16; ++ashift) allocs.push_back({"disk", ashift});
  for (const char* d : {"draid1:2:4", "draid1:3:5", "draid2:5:8", "draid1:6:8", "draid2:7:10"}) {
    allocs.push_back({d, 9});
    allocs.push_back({d, 12});
  }
  codec::Compressor compressor;
  const std::vector<std::vector<uint8_t>> blocks = Blocks();
  size_t decided = 0, abort_decided = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::vector<uint8_t>& block = blocks[i];
    const uint64_t lsize = block.size();
    std::vector<uint8_t> scratch(lsize);
    const BlockCodes codes = CodeBlock(scan_policy, zstd3, block, false, compressor, scratch,
                                       state::CodeKind::kEarlyAbort);
    ddt::DedupTable table(layout);
    const ddt::Fingerprint key{i + 1, (i + 1) << 8};
    table.Insert(key, lsize);
    const std::vector<ddt::PsizeCode> set = {codes.code, codes.probe};
    table.SetCodes(key, set);
    for (Profile profile : {Profile::kZfs21, Profile::kZfs22, Profile::kZfs24}) {
      for (const Alloc& a : allocs) {
        const ScanOptions report = Options(profile, a.vdev, a.ashift);
        const zfs::WritePolicy policy = ScanWritePolicy(report);
        const finish::CodeSettler settler(state::CodeKind::kEarlyAbort, scanned, report,
                                          128 * 1024);
        ASSERT_FALSE(settler.may_be_unknown());
        ddt::PsizeCode settled = ddt::kPendingCode;
        settler.ForEach(table, [&](const ddt::EntryView& s) { settled = s.codes[0]; });
        const ddt::PsizeCode ran = finish::SettledCodeOf(
            codec::CompressZfsBlock(policy, zstd3, block, false, compressor, scratch));
        ++decided;
        EXPECT_EQ(settled, ran) << "block " << i << " (" << lsize << " bytes) under "
                                << ProfileName(profile) << " " << a.vdev << " ashift " << a.ashift
                                << ": codes " << codes.code << " and " << codes.probe;
        // Where zstd alone would fit this budget and early abort stores the block as is.
        const ddt::LeastBudget own = ddt::LeastBudgetOf(codes.code);
        const uint64_t budget = zfs::CompressionBudget(policy, zstd3, lsize);
        abort_decided +=
            zfs::ZstdEarlyAbortApplies(policy, zstd3, lsize) && own.length &&
            (budget >= own.at_most || budget >= zfs::LargestCompressionBudget(lsize)) &&
            ran == ddt::EncodeAllocated(lsize);
      }
    }
  }
  EXPECT_GT(decided, 3000u);
  // The data makes early abort decide, so the early-abort code is what answers.
  EXPECT_GT(abort_decided, 20u);
  std::printf("decided %zu, by early abort against zstd's own fit %zu\n", decided, abort_decided);
}

// A scan codes a block's settings in turn and keeps the probes' runs for the next zstd setting
// (codec::EarlyAbortProbes), lz4's taken from the lz4 setting's own run (SeedLz4Probe): the codes
// must be those of each setting's probes run afresh, on every block, whichever comes first.
TEST(EarlyAbortCodeTest, SharedProbesGiveEachSettingsOwnCode) {
  const ScanOptions scanned = Options(Profile::kZfs24, "disk", 12);
  const zfs::WritePolicy policy = ScanWritePolicy(scanned);
  codec::Compressor compressor;
  size_t compared = 0;
  for (const std::vector<uint8_t>& block : Blocks()) {
    std::vector<uint8_t> scratch(block.size());
    for (bool lz4_first : {true, false}) {
      codec::EarlyAbortProbes probes;
      if (lz4_first) {
        const BlockCodes lz4 = CodeBlock(policy, kLz4, block, false, compressor, scratch,
                                         state::CodeKind::kEarlyAbort, false);
        SeedLz4Probe(kLz4, lz4, &probes);
      }
      for (int level : {3, 7, 19}) {
        const Compression zstd{CompressionAlgorithm::kZstd, level};
        const BlockCodes own = CodeBlock(policy, zstd, block, false, compressor, scratch,
                                         state::CodeKind::kEarlyAbort, false);
        const ddt::PsizeCode fresh = EarlyAbortCode(block, own.code, compressor, scratch);
        const ddt::PsizeCode shared = EarlyAbortCode(block, own.code, compressor, scratch, &probes);
        EXPECT_EQ(shared, fresh) << block.size() << " bytes, zstd-" << level
                                 << (lz4_first ? " after lz4" : "");
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, Blocks().size() * 6);
}

// The same through a scan: the early-abort codes a scan stores with lz4 and two zstd levels in the
// list (the probes shared, seeded by lz4's run; lz4 listed last too, under --exact) are each
// level's codes from a scan of that level alone (its probes its own, lz4 run for them).
TEST(EarlyAbortCodeTest, AScanStoresEachLevelsOwnCodeWithSharedProbes) {
  testing::TempDir dir;
  const std::vector<std::vector<uint8_t>> blocks = Blocks();
  for (size_t i = 0; i < blocks.size(); ++i) {
    dir.WriteFile(testing::NumberedName("b", static_cast<int>(i)), blocks[i]);
  }
  auto fs = io::PosixFileSystem();
  using Codes = std::map<std::pair<uint64_t, uint64_t>, ddt::PsizeCode>;
  // Per key of 128K and more: the early-abort code of each setting of `list` that has one.
  auto probe_codes = [&](const std::vector<Compression>& list) {
    ScanOptions o;
    o.paths = {dir.path().string()};
    o.recordsizes = {128 * 1024};
    o.threads = 2;
    o.exact = true;
    o.compressions = list;
    Result<state::ScanState> s = ScanToState(o, fs.get());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    std::vector<Codes> out(list.size());
    if (!s.ok()) return out;
    const std::vector<size_t> probes = state::ProbeColumns(s->code_kind, list);
    s->rows[0].table->ForEach([&](const ddt::EntryView& e) {
      for (size_t c = 0; c < list.size(); ++c) {
        if (probes[c] != state::kNoProbe) out[c][{e.key.lo, e.key.hi}] = e.codes[probes[c]];
      }
    });
    return out;
  };
  const Compression zstd3{CompressionAlgorithm::kZstd, 3}, zstd19{CompressionAlgorithm::kZstd, 19};
  const Codes alone3 = probe_codes({zstd3})[0], alone19 = probe_codes({zstd19})[0];
  ASSERT_GT(alone3.size(), 50u);
  const std::vector<Codes> first = probe_codes({kLz4, zstd3, zstd19});
  EXPECT_EQ(first[1], alone3);
  EXPECT_EQ(first[2], alone19);
  const std::vector<Codes> last = probe_codes({zstd19, zstd3, kLz4});
  EXPECT_EQ(last[0], alone19);
  EXPECT_EQ(last[1], alone3);
}

}  // namespace
}  // namespace zsim::pipeline
