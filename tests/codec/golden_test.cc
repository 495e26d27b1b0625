// Golden vectors from ZFS's own compressors (tests/golden/codec, copied from the project's
// shared golden set; see tests/golden/README.md): lzjb, zle and lz4 must be bit-exact (sha256 of
// the output), gzip too (same zlib 1.2.13), zstd bit-exact with the rows ZFS's routine produced
// on Debian's libzstd 1.5.4, and within 0.5 % of total psize of the rows of ZFS's bundled 1.4.5.

#include <openssl/evp.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/codec/codec.h"
#include "engine/codec/zfs_block.h"
#include "engine/zfs/write_rules.h"
#include "tests/util/test_util.h"
#include "zsim/scan_options.h"

namespace zsim::codec {
namespace {

std::filesystem::path Dir() { return testing::GoldenDir() / "codec"; }

std::string Sha256Hex(ByteView bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &md_len, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < md_len; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", md[i]);
    hex += buf;
  }
  return hex;
}

using Row = std::map<std::string, std::string>;

std::vector<Row> ReadTsv(const std::filesystem::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<Row> rows;
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, '\t')) fields.push_back(f);
    if (header.empty()) {
      header = fields;
      continue;
    }
    Row row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

// The block ZFS compressed: the input file zero-padded to lsize.
const std::vector<uint8_t>& Block(const std::string& file, uint64_t lsize) {
  static std::map<std::string, std::vector<uint8_t>> cache;
  auto it = cache.find(file);
  if (it == cache.end()) {
    std::vector<uint8_t> bytes = testing::ReadFileBytes(Dir() / "inputs" / file);
    bytes.resize(lsize, 0);
    it = cache.emplace(file, std::move(bytes)).first;
  }
  return it->second;
}

Compression FromName(const std::string& name) {
  Result<Compression> c = ParseCompression(name, Profile::kZfs24);
  EXPECT_TRUE(c.ok()) << name;
  return c.ok() ? *c : Compression{};
}

zfs::WritePolicy PolicyFor(const std::string& rule) {
  zfs::WritePolicy p;
  p.dedup = false;  // the vectors assume dedup off (embedding allowed where the version has it)
  if (rule == "v23") {
    p.profile = Profile::kV23;
    p.geometry = {512, 512, 9};
  } else {
    EXPECT_EQ(rule, "2.4-ashift12");
    p.profile = Profile::kZfs24;
    p.geometry = {4096, 4096, 12};
  }
  return p;
}

std::string KindOutcome(const zfs::BlockWrite& w) {
  switch (w.kind) {
    case zfs::BlockKind::kHole:
      return "hole";
    case zfs::BlockKind::kEmbedded:
      return "embedded";
    case zfs::BlockKind::kCompressed:
      return "compressed";
    case zfs::BlockKind::kUncompressed:
      return "reject";
  }
  return "?";
}

std::string AlgorithmFamily(const std::string& algorithm) {
  if (algorithm.starts_with("gzip")) return "gzip";
  if (algorithm.starts_with("zstd")) return algorithm;
  return algorithm;
}

// Size class of an input: its lsize for the stream classes, "edge" for edge-*/abortedge-*.
std::string SizeClass(const Row& row) {
  const std::string& f = row.at("input_file");
  if (f.starts_with("edge-") || f.starts_with("abortedge-")) return "edge";
  return row.at("lsize");
}

struct Tally {
  int rows = 0;
  int bytes_exact = 0;   // length and sha256 equal (or both rejected)
  int length_exact = 0;  // length equal (or both rejected)
  int psize_exact = 0;   // psize and outcome equal
};

TEST(CodecGoldenTest, EveryVectorMatchesZfsBlockByBlock) {
  const std::vector<Row> rows = ReadTsv(Dir() / "vectors.tsv");
  ASSERT_EQ(rows.size(), 5328u);
  Compressor compressor;
  std::vector<uint8_t> scratch(16 << 20);
  std::map<std::string, Tally> tally;  // "<algorithm family> <rule> <library>"
  // zstd psize sums per size class: [class][library] (2.4-ashift12 rule).
  std::map<std::string, std::map<std::string, uint64_t>> zstd_psize;
  std::map<std::string, std::map<std::string, std::map<std::string, uint64_t>>> zstd_level_psize;

  for (const Row& row : rows) {
    const std::string& algorithm = row.at("algorithm");
    const std::string& library = row.at("library");
    const std::string& rule = row.at("rule");
    const uint64_t lsize = std::stoull(row.at("lsize"));
    const Compression c = FromName(algorithm);
    const zfs::WritePolicy policy = PolicyFor(rule);
    const std::vector<uint8_t>& block = Block(row.at("input_file"), lsize);
    SCOPED_TRACE(row.at("input_file") + " " + algorithm + " " + rule + " " + library);

    const uint64_t budget = zfs::CompressionBudget(policy, c, lsize);
    EXPECT_EQ(budget, std::stoull(row.at("budget")));

    const bool ours = library == "zfs" || library == "zlib-1.2.13" || library == "system-1.5.4";
    zfs::BlockWrite write =
        codec::CompressZfsBlock(policy, c, block, IsAllZero(block), compressor, scratch);
    if (c.algorithm == CompressionAlgorithm::kZstd && rule == "2.4-ashift12") {
      zstd_psize[SizeClass(row)][library] += std::stoull(row.at("psize_stored"));
      zstd_level_psize[SizeClass(row)][algorithm][library] += std::stoull(row.at("psize_stored"));
      if (library == "system-1.5.4") zstd_psize[SizeClass(row)]["zsim"] += write.psize;
    }
    if (!ours) continue;

    // The compressor's own answer at this budget (all-zero blocks too: the vectors keep it).
    std::optional<size_t> c_len;
    std::string sha = "-";
    if (budget > 0) {
      MutableByteView dst(scratch.data(), budget);
      c_len = ZfsCompress(policy, c, block, compressor, dst);
      if (c_len) sha = Sha256Hex(ByteView(scratch.data(), *c_len));
    }
    const std::string want_len = row.at("compressed_len_or_reject");
    const std::string got_len = c_len ? std::to_string(*c_len) : "reject";
    Tally& t = tally[AlgorithmFamily(algorithm) + " " + rule + " " + library];
    ++t.rows;
    EXPECT_EQ(got_len, want_len);
    EXPECT_EQ(sha, row.at("sha256_of_compressed_bytes"));
    if (got_len == want_len) ++t.length_exact;
    if (got_len == want_len && sha == row.at("sha256_of_compressed_bytes")) ++t.bytes_exact;

    // What ZFS stores.
    const std::string outcome = row.at("outcome");
    const std::string want_kind = outcome.starts_with("reject") ? "reject" : outcome;
    EXPECT_EQ(KindOutcome(write), want_kind);
    const uint64_t want_psize = std::stoull(row.at("psize_stored"));
    EXPECT_EQ(write.psize, want_psize);
    if (KindOutcome(write) == want_kind && write.psize == want_psize) ++t.psize_exact;
  }

  std::printf("%-40s %6s %11s %12s %11s\n", "algorithm rule library", "rows", "bit-exact",
              "len-exact", "psize-exact");
  for (const auto& [key, t] : tally) {
    std::printf("%-40s %6d %11d %12d %11d\n", key.c_str(), t.rows, t.bytes_exact, t.length_exact,
                t.psize_exact);
  }

  // zstd through Debian's 1.5.4 against ZFS's bundled 1.4.5, psize under 2.4-ashift12.
  std::printf("\nzstd psize, 2.4-ashift12: zsim(1.5.4) vs ZFS bundled 1.4.5, all 6 levels\n");
  for (const auto& [size_class, sums] : zstd_psize) {
    const double bundled = static_cast<double>(sums.at("zfs-bundled-1.4.5"));
    const double zsim = static_cast<double>(sums.at("zsim"));
    const double delta = zsim - bundled;
    std::printf("  %-8s bundled %10.0f zsim %10.0f delta %+8.0f (%+.3f %%)\n", size_class.c_str(),
                bundled, zsim, delta, 100.0 * delta / bundled);
    for (const auto& [level, lib] : zstd_level_psize.at(size_class)) {
      const double b = static_cast<double>(lib.at("zfs-bundled-1.4.5"));
      const double s = static_cast<double>(lib.at("system-1.5.4"));
      std::printf("      %-14s %+8.0f (%+.3f %%)\n", level.c_str(), s - b, 100.0 * (s - b) / b);
    }
    // The bound holds per size class of stream blocks. The "edge" blocks are not a size class:
    // they were built to land exactly on 1.4.5's 111/112/113-byte embedding threshold, so any
    // other zstd crosses it (README of the golden set: +801 B on zstd-3 etc.). Reported only.
    if (size_class != "edge") {
      EXPECT_LE(std::abs(delta), 0.005 * bundled) << "size class " << size_class;
    }
  }
}

TEST(CodecGoldenTest, RawOutputAtSevenEighthsBudgetMatches) {
  // The 0.6.4 .. 2.2 budget, lsize - lsize/8 with no alignment and no early abort.
  const std::vector<Row> rows = ReadTsv(Dir() / "raw_budget_7of8.tsv");
  ASSERT_EQ(rows.size(), 2775u);
  Compressor compressor;
  std::vector<uint8_t> dst(16 << 20);
  int checked = 0;
  for (const Row& row : rows) {
    const std::string& library = row.at("library");
    if (library != "zfs" && library != "zlib-1.2.13" && library != "system-1.5.4") continue;
    const uint64_t lsize = std::stoull(row.at("lsize"));
    const uint64_t budget = std::stoull(row.at("budget"));
    ASSERT_EQ(budget, lsize - lsize / 8);
    SCOPED_TRACE(row.at("input_file") + " " + row.at("algorithm") + " " + library);
    const std::vector<uint8_t>& block = Block(row.at("input_file"), lsize);
    const std::optional<size_t> c_len = compressor.Compress(FromName(row.at("algorithm")), block,
                                                            MutableByteView(dst.data(), budget));
    EXPECT_EQ(c_len ? std::to_string(*c_len) : "reject", row.at("compressed_len_or_reject"));
    EXPECT_EQ(c_len ? Sha256Hex(ByteView(dst.data(), *c_len)) : "-",
              row.at("sha256_of_compressed_bytes"));
    ++checked;
  }
  EXPECT_EQ(checked, 111 * (3 + 9 + 6));
}

// State format 8 keeps, for lzjb, zle, lz4 and gzip, the output under the largest budget
// (lsize - lsize/8) and the smallest budget it fits (Compressor::CompressFit). Every budget ZFS
// used in the vectors (v23, 2.4 at ashift 12, and lsize - lsize/8) must then have the answer ZFS
// gave: it fits exactly when that least budget is at most the budget, with the same output. The
// 111/112/113-byte edge blocks are the cases where a compressor gives up short of its budget.
TEST(CodecGoldenTest, LeastBudgetDecidesEveryBudgetAsZfsDid) {
  std::vector<Row> rows = ReadTsv(Dir() / "vectors.tsv");
  for (Row& row : ReadTsv(Dir() / "raw_budget_7of8.tsv")) rows.push_back(std::move(row));
  Compressor compressor;
  std::vector<uint8_t> dst(16 << 20);
  int checked = 0, fits = 0, short_of_end = 0;
  for (const Row& row : rows) {
    const std::string& library = row.at("library");
    if (library != "zfs" && library != "zlib-1.2.13") continue;  // zstd keeps raw codes
    const Compression c = FromName(row.at("algorithm"));
    ASSERT_TRUE(zfs::LeastBudgetKnown(c));
    const uint64_t lsize = std::stoull(row.at("lsize"));
    const uint64_t budget = std::stoull(row.at("budget"));
    if (budget == 0) continue;  // v23's 512-byte blocks: the compressor is not called
    SCOPED_TRACE(row.at("input_file") + " " + row.at("algorithm") + " budget " +
                 std::to_string(budget));
    const std::vector<uint8_t>& block = Block(row.at("input_file"), lsize);
    const std::optional<Compressor::Fit> fit = compressor.CompressFit(
        c, block, MutableByteView(dst.data(), zfs::LargestCompressionBudget(lsize)));
    const std::string want = row.at("compressed_len_or_reject");
    const bool fit_here = fit && fit->least_budget <= budget;
    EXPECT_EQ(fit_here ? std::to_string(fit->length) : "reject", want);
    if (fit_here) {
      EXPECT_EQ(Sha256Hex(ByteView(dst.data(), fit->length)), row.at("sha256_of_compressed_bytes"));
    }
    fits += fit_here;
    short_of_end += fit && fit->length <= budget && !fit_here;
    ++checked;
  }
  std::printf("checked %d budgets: %d fit, %d refused with the output shorter than the budget\n",
              checked, fits, short_of_end);
  EXPECT_GT(checked, 3000);
  EXPECT_GT(short_of_end, 0);  // the vectors do hold compressors giving up short of the end
}

TEST(CodecGoldenTest, ZfsBytesDecodeToTheInputAndOursEqualThem) {
  const std::vector<Row> rows = ReadTsv(Dir() / "compressed" / "MANIFEST.tsv");
  Compressor compressor;
  int files = 0;
  for (const Row& row : rows) {
    if (row.at("file") == "-") continue;
    SCOPED_TRACE(row.at("file"));
    const uint64_t lsize = std::stoull(row.at("lsize"));
    const Compression c = FromName(row.at("algorithm"));
    const std::vector<uint8_t> zfs_bytes =
        testing::ReadFileBytes(Dir() / "compressed" / row.at("file"));
    const std::vector<uint8_t>& block = Block(row.at("input_file"), lsize);
    std::vector<uint8_t> decoded(lsize, 0xAA);
    EXPECT_OK(Decompress(c, zfs_bytes, decoded));
    EXPECT_EQ(decoded, block);
    std::vector<uint8_t> ours(std::stoull(row.at("budget")));
    const std::optional<size_t> n = compressor.Compress(c, block, ours);
    ASSERT_TRUE(n.has_value());
    ours.resize(*n);
    EXPECT_EQ(ours, zfs_bytes);
    ++files;
  }
  EXPECT_EQ(files, 148);
}

}  // namespace
}  // namespace zsim::codec
