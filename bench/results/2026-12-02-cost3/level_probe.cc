// Throwaway: per unique block, zsim's sample level and each codec's psize (streaming).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>
#include <algorithm>
#include "engine/codec/zfs_block.h"
#include "engine/ddt/fingerprint.h"
#include "engine/estimate/sample_level.h"
using namespace zsim;
int main(int argc, char** argv) {
  const size_t B = std::stoul(argv[3]);
  std::set<std::pair<uint64_t, uint64_t>> seen;
  zfs::WritePolicy pol;
  codec::Compressor comp;
  std::vector<uint8_t> scratch(B), buf(B);
  std::vector<Compression> cs = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kZstd, 3},
                                 {CompressionAlgorithm::kGzip, 6}, {CompressionAlgorithm::kLzjb, 0},
                                 {CompressionAlgorithm::kZle, 0}};
  FILE* out = fopen(argv[2], "w");
  fprintf(out, "lv,lz4,zstd-3,gzip-6,lzjb,zle,lz4slice\n");
  std::vector<std::filesystem::path> files;
  for (auto& de : std::filesystem::recursive_directory_iterator(argv[1])) if (de.is_regular_file()) files.push_back(de.path());
  std::sort(files.begin(), files.end());
  for (auto& p : files) {
    std::ifstream f(p, std::ios::binary);
    auto fsize = std::filesystem::file_size(p);
    size_t bs = fsize < B ? ((fsize + 511) / 512 * 512) : B;  // single-block file: its own size
    if (bs == 0) continue;
    while (true) {
      f.read((char*)buf.data(), bs);
      size_t got = f.gcount();
      if (got == 0) break;
      std::fill(buf.begin() + got, buf.begin() + bs, 0);
      bool zero = std::all_of(buf.begin(), buf.begin() + bs, [](uint8_t c) { return c == 0; });
      auto fp = ddt::ComputeFingerprint(ChecksumKind::kXxh128, {buf.data(), bs});
      if (!zero && bs == B && seen.insert({fp.lo, fp.hi}).second) {
        fprintf(out, "%d", estimate::SampleLevel(fp.lo));
        for (auto& c : cs) fprintf(out, ",%llu", (unsigned long long)codec::CompressZfsBlock(pol, c, {buf.data(), bs}, false, comp, {scratch.data(), bs}).psize);
        double s = 0; for (int k = 0; k < 4; ++k) { auto r = comp.Compress(cs[0], {buf.data() + k * (B / 4), B / 32}, {scratch.data(), B / 32}); s += r ? *r : B / 32; }
        fprintf(out, ",%.0f\n", s * 8);
      }
      if (got < bs) break;
    }
  }
  fclose(out);
}
