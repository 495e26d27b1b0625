// The DDT key words a scan keeps for compressed blocks (ddt/written_key.h): the word
// pipeline::WrittenKeyWord takes from the output CodeBlock left in scratch equals the first word
// of the SHA-256 of the bytes codec::WriteZfsBlock says ZFS writes (which accuracy23_keys checks
// against OpenZFS 2.3.2's own DDT), for every codec a table keeps them for, at every rounding
// (v23's 512 bytes, 2.1's min_alloc, 2.2+'s min_alloc then gcd_alloc, dRAID), for blocks that
// compress, that round up to lsize, and that do not fit. The table's two columns keep its top
// 30 bits and say which entries have none.

#include "engine/ddt/written_key.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/codec/codec.h"
#include "engine/codec/gzip.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/fingerprint.h"
#include "engine/pipeline/block_code.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/write_rules.h"
#include "tests/util/test_util.h"
#include "zsim/scan_options.h"

namespace zsim::pipeline {
namespace {

TEST(WrittenKeyTest, TheWordIsTheChecksumOfTheBytesZfsWrites) {
  std::vector<std::vector<uint8_t>> blocks;
  uint64_t seed = 7;
  for (size_t n : {size_t{4096}, size_t{16384}, size_t{131072}}) {
    for (double m : {0.0, 0.1, 0.3, 0.6, 0.9, 0.99}) {
      blocks.push_back(testing::GenerateBlock(n, m, seed++));
    }
    // Half random, half zeros: an output just over half the block, whose rounding decides.
    std::vector<uint8_t> half = testing::Xorshift64Bytes(seed++, n);
    std::fill(half.begin() + static_cast<ptrdiff_t>(n / 2), half.end(), uint8_t{0});
    blocks.push_back(half);
  }
  const std::vector<Compression> codecs = {{CompressionAlgorithm::kLzjb, 0},
                                           {CompressionAlgorithm::kZle, 0},
                                           {CompressionAlgorithm::kLz4, 0},
                                           {CompressionAlgorithm::kGzip, 6}};
  std::vector<zfs::WritePolicy> policies;
  for (Profile p : {Profile::kV23, Profile::kZfs21, Profile::kZfs23, Profile::kZfs24}) {
    for (int ashift : {9, 12, 13}) policies.push_back(zfs::DedupPolicyOf(p, VdevLayout{}, ashift));
  }
  policies.push_back(zfs::DedupPolicyOf(Profile::kZfs24, *ParseVdev("draid2:5d:8c:0s"), 12));
  codec::Compressor compressor;
  int compressed = 0, stored = 0;
  for (const zfs::WritePolicy& policy : policies) {
    for (const Compression c : codecs) {
      for (const std::vector<uint8_t>& b : blocks) {
        const ByteView block(b.data(), b.size());
        std::vector<uint8_t> scratch(b.size()), other(b.size());
        const BlockCodes codes = CodeBlock(policy, c, block, IsAllZero(block), compressor,
                                           MutableByteView(scratch.data(), scratch.size()));
        const std::optional<uint64_t> word = WrittenKeyWord(
            policy, b.size(), codes, MutableByteView(scratch.data(), scratch.size()));
        // The compressor at the largest budget: the output a least-budget code keeps.
        const std::optional<uint64_t> length =
            codes.fit ? std::optional<uint64_t>(codes.fit->length) : std::nullopt;
        const std::optional<codec::Compressor::Fit> fit = compressor.CompressFit(
            c, block,
            MutableByteView(other.data(),
                            static_cast<size_t>(zfs::LargestCompressionBudget(b.size()))));
        ASSERT_EQ(length.has_value(), fit.has_value());
        if (!fit || zfs::RoundedPsize(policy, fit->length) >= b.size()) {
          EXPECT_FALSE(word.has_value());  // stored as is: the key is the block's own
          ++stored;
          continue;
        }
        ASSERT_EQ(*length, fit->length);
        const uint64_t rounded = zfs::RoundedPsize(policy, fit->length);
        std::fill(other.begin() + static_cast<ptrdiff_t>(fit->length),
                  other.begin() + static_cast<ptrdiff_t>(rounded), uint8_t{0});
        const uint64_t expect = ddt::ZfsChecksumWord0(ddt::ComputeFingerprint(
            ChecksumKind::kSha256, ByteView(other.data(), static_cast<size_t>(rounded))));
        ASSERT_TRUE(word.has_value());
        EXPECT_EQ(*word, expect);
        // Where this policy compresses it, the bytes are WriteZfsBlock's.
        const codec::WrittenBlock w =
            codec::WriteZfsBlock(policy, c, block, IsAllZero(block), compressor,
                                 MutableByteView(other.data(), other.size()));
        if (w.write.kind == zfs::BlockKind::kCompressed) {
          EXPECT_EQ(*word,
                    ddt::ZfsChecksumWord0(ddt::ComputeFingerprint(ChecksumKind::kSha256, w.bytes)));
          ++compressed;
        }
      }
    }
  }
  EXPECT_GT(compressed, 100);
  EXPECT_GT(stored, 20);
}

// The gzip bytes key_check.py found equal to OpenZFS 2.3.2's came from Debian's zlib 1.2.13,
// which this build links (scripts/install-deps): the reference check must pass here, or a scan
// keeps no gzip keys. Another zlib (zlib-ng) fails it, and is then left out, not trusted.
TEST(WrittenKeyTest, TheLinkedZlibWritesTheReferenceBytes) {
  EXPECT_TRUE(codec::GzipWritesReferenceBytes());
  EXPECT_TRUE(WritesZfsBytes({CompressionAlgorithm::kGzip, 6}));
  EXPECT_TRUE(WritesZfsBytes({CompressionAlgorithm::kLz4, 0}));
}

TEST(WrittenKeyTest, ColumnsKeepTheTopThirtyBitsAndSayWhichHaveNone) {
  for (uint64_t w : {uint64_t{0}, ~uint64_t{0}, uint64_t{0x0123456789ABCDEF},
                     uint64_t{0x8000000000000000}, uint64_t{0x7FFF7FFF7FFF7FFF}}) {
    ddt::PsizeCode cols[ddt::kWrittenKeyColumns];
    ddt::EncodeWrittenKey(w, cols);
    for (ddt::PsizeCode c : cols) EXPECT_LE(c, 0x7FFF);  // never a pending or marker value
    const ddt::WrittenKey k = ddt::DecodeWrittenKey(cols);
    EXPECT_EQ(k.kind, ddt::WrittenKey::Kind::kWord);
    EXPECT_EQ(k.word, ddt::KeptWord(w));
    EXPECT_EQ(k.word >> 34, w >> 34);
    EXPECT_EQ(k.word & ((uint64_t{1} << 34) - 1), 0u);
  }
  ddt::PsizeCode none[ddt::kWrittenKeyColumns];
  ddt::EncodeWrittenKey(std::nullopt, none);
  EXPECT_EQ(ddt::DecodeWrittenKey(none).kind, ddt::WrittenKey::Kind::kNone);
  const ddt::PsizeCode pending[] = {ddt::kPendingCode, ddt::kPendingCode};
  EXPECT_EQ(ddt::DecodeWrittenKey(pending).kind, ddt::WrittenKey::Kind::kPending);
  // What a scan never writes: a state file holding it is corrupt.
  for (const auto& bad :
       {std::vector<ddt::PsizeCode>{ddt::kPendingCode, 0},
        std::vector<ddt::PsizeCode>{0, ddt::kPendingCode},
        std::vector<ddt::PsizeCode>{ddt::kNoWrittenKey, 1}, std::vector<ddt::PsizeCode>{0x8001, 0},
        std::vector<ddt::PsizeCode>{0, 0x8000}}) {
    EXPECT_EQ(ddt::DecodeWrittenKey(bad).kind, ddt::WrittenKey::Kind::kCorrupt);
  }
}

TEST(WrittenKeyTest, KeyColumnsFollowTheProbesForTheCodecsOfOpenZfs) {
  ScanOptions o;
  o.compressions = {{CompressionAlgorithm::kOff, 0},
                    {CompressionAlgorithm::kLz4, 0},
                    {CompressionAlgorithm::kZstd, 3},
                    {CompressionAlgorithm::kGzip, 6},
                    {CompressionAlgorithm::kLzjb, 0}};
  o.checksum = ChecksumKind::kSha256;
  const std::vector<bool> sampled = {false, false, false, false, true};
  const auto kind = state::CodeKind::kEarlyAbort;
  // Columns: 5 settings, zstd-3's early-abort column (5), then lz4's two (6), gzip's (8) and
  // lzjb's (10); off has no output, zstd is not OpenZFS's release.
  const std::vector<size_t> keys = state::KeyColumns(o, kind, true);
  EXPECT_EQ(keys, (std::vector<size_t>{state::kNoKey, 6, state::kNoKey, 8, 10}));
  const std::vector<ddt::SettingStorage> layout = state::TableLayout(o, sampled, kind, true);
  ASSERT_EQ(layout.size(), 12u);
  // Stored as their setting: lzjb's beside the entries its sampled codec ran on.
  for (size_t i = 0; i < ddt::kWrittenKeyColumns; ++i) {
    EXPECT_EQ(layout[6 + i].kind, ddt::SettingStorage::Kind::kInline);
    EXPECT_EQ(layout[10 + i].kind, ddt::SettingStorage::Kind::kSide);
  }
  EXPECT_EQ(state::TableLayout(o, sampled, kind, false).size(), 6u);
  EXPECT_EQ(state::KeyColumns(o, kind, false), std::vector<size_t>(5, state::kNoKey));
  // A table of older codes (a --since scan from format 9 or older) leaves no output to key.
  EXPECT_EQ(state::KeyColumns(o, state::CodeKind::kRaw, true),
            std::vector<size_t>(5, state::kNoKey));
  o.checksum = ChecksumKind::kXxh128;
  EXPECT_EQ(state::KeyColumns(o, kind, true), std::vector<size_t>(5, state::kNoKey));
}

TEST(WrittenKeyTest, PoliciesThatRoundAlikeWriteTheSameBytes) {
  const auto p = [](Profile prof, int ashift, const char* vdev = "disk") {
    return zfs::DedupPolicyOf(prof, *ParseVdev(vdev), ashift);
  };
  EXPECT_TRUE(zfs::SamePsizeRounding(p(Profile::kZfs23, 12), p(Profile::kZfs24, 12, "raidz2:6")));
  EXPECT_TRUE(zfs::SamePsizeRounding(p(Profile::kZfs21, 12), p(Profile::kZfs24, 12)));
  EXPECT_FALSE(zfs::SamePsizeRounding(p(Profile::kZfs24, 12), p(Profile::kZfs24, 9)));
  EXPECT_TRUE(zfs::SamePsizeRounding(p(Profile::kV23, 12), p(Profile::kZfs24, 9)));  // 512 both
  EXPECT_FALSE(zfs::SamePsizeRounding(p(Profile::kV23, 12), p(Profile::kZfs24, 12)));
  EXPECT_FALSE(
      zfs::SamePsizeRounding(p(Profile::kZfs24, 12), p(Profile::kZfs24, 12, "draid2:5d:8c:0s")));
  // 2.2+: min_alloc up to min_alloc, then multiples of gcd_alloc.
  const zfs::WritePolicy d = p(Profile::kZfs24, 12, "draid2:5d:8c:0s");
  EXPECT_EQ(zfs::RoundedPsize(d, 100), d.geometry.min_alloc);
  EXPECT_EQ(zfs::RoundedPsize(d, d.geometry.min_alloc + 1),
            (d.geometry.min_alloc / d.geometry.gcd_alloc + 1) * d.geometry.gcd_alloc);
  EXPECT_EQ(zfs::RoundedPsize(p(Profile::kV23, 12), 513), 1024u);
  EXPECT_EQ(zfs::RoundedPsize(p(Profile::kZfs21, 12), 4097), 8192u);
}

}  // namespace
}  // namespace zsim::pipeline
