// Throwaway (adapted from ../2026-12-02-cost3/level_probe.cc): per unique non-zero full-size
// block of a tree, zsim's sample level, its refcount (occurrences in the tree) and each codec's
// psize under ZFS's write rules (CompressZfsBlock; embedded -> 0, as finish/tally.cc counts it).
// usage: probe DIR OUT.csv BLOCKBYTES
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>
#include "engine/codec/zfs_block.h"
#include "engine/ddt/fingerprint.h"
#include "engine/estimate/sample_level.h"
using namespace zsim;
struct H { size_t operator()(const std::pair<uint64_t, uint64_t>& p) const { return p.first ^ (p.second * 0x9e3779b97f4a7c15ull); } };
struct Row { uint64_t lo; int lv; uint64_t refs; uint64_t ps[5]; };
int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "usage: probe DIR OUT.csv BLOCKBYTES\n"); return 2; }
  const size_t B = std::stoul(argv[3]);
  std::unordered_map<std::pair<uint64_t, uint64_t>, size_t, H> seen;
  std::vector<Row> rows;
  zfs::WritePolicy pol;
  codec::Compressor comp;
  std::vector<uint8_t> scratch(B), buf(B);
  std::vector<Compression> cs = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kZstd, 3},
                                 {CompressionAlgorithm::kGzip, 6}, {CompressionAlgorithm::kLzjb, 0},
                                 {CompressionAlgorithm::kZle, 0}};
  std::vector<std::filesystem::path> files;
  for (auto& de : std::filesystem::recursive_directory_iterator(argv[1]))
    if (de.is_regular_file()) files.push_back(de.path());
  std::sort(files.begin(), files.end());
  uint64_t full = 0, zero = 0;
  for (auto& p : files) {
    auto fsize = std::filesystem::file_size(p);
    if (fsize < B) continue;  // single-block files: their own size, not counted here
    std::ifstream f(p, std::ios::binary);
    while (true) {
      f.read((char*)buf.data(), B);
      size_t got = f.gcount();
      if (got == 0) break;
      std::fill(buf.begin() + got, buf.end(), 0);
      ++full;
      bool z = std::all_of(buf.begin(), buf.end(), [](uint8_t c) { return c == 0; });
      if (z) { ++zero; if (got < B) break; continue; }
      auto fp = ddt::ComputeFingerprint(ChecksumKind::kXxh128, {buf.data(), B});
      auto [it, fresh] = seen.try_emplace({fp.lo, fp.hi}, rows.size());
      if (fresh) {
        Row r{fp.lo, estimate::SampleLevel(fp.lo), 0, {}};
        for (int k = 0; k < 5; ++k) {
          auto w = codec::CompressZfsBlock(pol, cs[k], {buf.data(), B}, false, comp, {scratch.data(), B});
          r.ps[k] = w.kind == zfs::BlockKind::kEmbedded ? 0 : w.psize;
        }
        rows.push_back(r);
      }
      ++rows[it->second].refs;
      if (got < B) break;
    }
  }
  FILE* out = fopen(argv[2], "w");
  fprintf(out, "lo,lv,refs,lz4,zstd-3,gzip-6,lzjb,zle\n");
  for (auto& r : rows)
    fprintf(out, "%016llx,%d,%llu,%llu,%llu,%llu,%llu,%llu\n", (unsigned long long)r.lo, r.lv,
            (unsigned long long)r.refs, (unsigned long long)r.ps[0], (unsigned long long)r.ps[1],
            (unsigned long long)r.ps[2], (unsigned long long)r.ps[3], (unsigned long long)r.ps[4]);
  fclose(out);
  fprintf(stderr, "full blocks %llu, zero %llu, unique non-zero %zu\n", (unsigned long long)full,
          (unsigned long long)zero, rows.size());
}
