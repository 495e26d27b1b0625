// Least-budget codes (state format 8, ddt/dedup_table.h): what a scan keeps of lzjb, zle, lz4 and
// gzip must decide the block's fate under every budget any profile, ashift and vdev gives,
// exactly as running the compressor with that budget would (it fits when its least budget is at
// most the budget, with the same output).

#include "engine/finish/settled_codes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"

namespace zsim {
namespace {

using A = CompressionAlgorithm;

const Profile kProfiles[] = {Profile::kV23, Profile::kZfs21, Profile::kZfs22, Profile::kZfs23,
                             Profile::kZfs24};
const char* const kVdevs[] = {"disk",       "raidz2:6",   "mirror:3",
                              "draid1:3:5", "draid2:4:9", "draid1:7:10"};
const Compression kCodecs[] = {{A::kLz4, 0}, {A::kZle, 0}, {A::kGzip, 6}, {A::kLzjb, 0}};

bool SameWrite(const zfs::BlockWrite& a, const zfs::BlockWrite& b) {
  return a.kind == b.kind && a.psize == b.psize;
}

TEST(LeastBudgetCodesTest, EncodeAndDecodeKeepLengthAndBounds) {
  for (uint64_t length = 1; length <= 20000; length += length < 700 ? 1 : 37) {
    for (uint64_t extra : {0, 1, 17, 63, 64, 399}) {
      const uint64_t least = length + extra;
      const ddt::PsizeCode code = ddt::EncodeLeastBudget(length, least);
      ASSERT_NE(code, ddt::kNoFitCode);
      ASSERT_LE(code, ddt::kLeastLastCode);
      const ddt::LeastBudget b = ddt::LeastBudgetOf(code);
      ASSERT_TRUE(b.length.has_value());
      if (length <= 112) {
        EXPECT_EQ(*b.length, length);
      } else {
        EXPECT_EQ(*b.length, (length + 511) / 512 * 512);
      }
      EXPECT_LT(b.above, least) << length << " " << extra;
      EXPECT_GE(b.at_most, least) << length << " " << extra;
    }
  }
  EXPECT_EQ(ddt::EncodeLeastBudget(uint64_t{28672} * 512, uint64_t{28672} * 512 + 64),
            ddt::kLeastLastCode);
  EXPECT_EQ(ddt::EncodeLeastBudget(std::nullopt, 0), ddt::kNoFitCode);
  EXPECT_FALSE(ddt::LeastBudgetOf(ddt::kNoFitCode).length.has_value());
}

// Every (length, least) a compressor can give (least within 64 bytes of its output), every
// lsize class, under every profile, ashift 9-16 and vdev: the code's answer is the compressor's.
TEST(LeastBudgetCodesTest, TheCodeDecidesEveryBudgetAsTheCompressorWould) {
  std::vector<uint64_t> lsizes = {512,  1024, 1536,  2048,  3584,  4096,  4608,
                                  5632, 8192, 12800, 16384, 65536, 131072};
  int checked = 0;
  for (const uint64_t lsize : lsizes) {
    const uint64_t largest = zfs::LargestCompressionBudget(lsize);
    // Lengths around every multiple of 512 and the embedding limit, and least at the edges.
    std::vector<uint64_t> lengths;
    for (uint64_t l = 1; l <= std::min<uint64_t>(600, largest); ++l) lengths.push_back(l);
    for (uint64_t unit = 1024; unit <= largest + 512; unit += 512) {
      for (uint64_t l = unit - 70; l <= unit + 3 && l <= largest; l += l < unit - 4 ? 33 : 1) {
        lengths.push_back(l);
      }
    }
    for (uint64_t l = largest - std::min<uint64_t>(largest, 70); l <= largest; ++l) {
      lengths.push_back(l);
    }
    for (const uint64_t length : lengths) {
      for (const uint64_t extra : {0, 1, 9, 17, 40, 64}) {
        const uint64_t least = length + extra;
        const bool fits_largest = least <= largest;
        const ddt::PsizeCode code = ddt::EncodeLeastBudget(
            fits_largest ? std::optional<uint64_t>(length) : std::nullopt, least);
        const ddt::LeastBudget b = ddt::LeastBudgetOf(code);
        for (const Profile profile : kProfiles) {
          for (int ashift = 9; ashift <= 16; ++ashift) {
            for (const char* vdev : kVdevs) {
              const zfs::WritePolicy policy = zfs::DedupPolicyOf(profile, *ParseVdev(vdev), ashift);
              for (const Compression& c : kCodecs) {
                const uint64_t budget = zfs::CompressionBudget(policy, c, lsize);
                const zfs::BlockWrite want =
                    budget == 0 || least > budget
                        ? zfs::BlockWrite{zfs::BlockKind::kUncompressed, lsize}
                        : zfs::AcceptCompressed(policy, lsize, length);
                const std::optional<zfs::BlockWrite> got =
                    zfs::ReplayLeastBudget(policy, c, lsize, b.length, b.above, b.at_most);
                ASSERT_TRUE(got.has_value())
                    << ProfileName(profile) << " ashift " << ashift << " " << vdev << " lsize "
                    << lsize << " length " << length << " least " << least;
                ASSERT_TRUE(SameWrite(*got, want))
                    << ProfileName(profile) << " ashift " << ashift << " " << vdev << " lsize "
                    << lsize << " length " << length << " least " << least;
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000000);
}

// The settler knows at once that no least-budget code can be unknown, whatever the report's
// profile and geometry; zstd's raw codes under another budget may be.
TEST(LeastBudgetCodesTest, OnlyRawCodesMayBeUnknownUnderAnotherBudget) {
  ScanOptions scanned;
  scanned.profile = Profile::kZfs24;
  scanned.ashift = 12;
  scanned.compressions = {{A::kOff, 0}, {A::kLz4, 0}, {A::kGzip, 6}, {A::kLzjb, 0}, {A::kZle, 0}};
  for (const Profile profile : kProfiles) {
    for (int ashift : {9, 12, 13, 16}) {
      for (const char* vdev : kVdevs) {
        ScanOptions report = scanned;
        report.profile = profile;
        report.ashift = ashift;
        report.vdev = *ParseVdev(vdev);
        SCOPED_TRACE(std::string(ProfileName(profile)) + " " + std::to_string(ashift) + " " + vdev);
        EXPECT_FALSE(finish::CodeSettler(state::CodeKind::kLeastBudget, scanned, report, 131072)
                         .may_be_unknown());
        ScanOptions with_zstd = scanned, report_zstd = report;
        with_zstd.compressions.push_back({A::kZstd, 3});
        report_zstd.compressions = with_zstd.compressions;
        EXPECT_EQ(finish::CodeSettler(state::CodeKind::kLeastBudget, with_zstd, report_zstd, 131072)
                      .may_be_unknown(),
                  finish::CodeSettler(state::CodeKind::kRaw, with_zstd, report_zstd, 131072)
                      .may_be_unknown());
      }
    }
  }
}

}  // namespace
}  // namespace zsim
