// Throwaway experiment: correlation of cheap proxies with each codec's psize, per unique 128K block.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_set>
#include <vector>
#include <array>
#include <algorithm>
#include "engine/codec/zfs_block.h"
using namespace zsim;
static uint64_t H64(const uint8_t* p, size_t n, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (size_t i = 0; i < n; i += 8) { uint64_t v; std::memcpy(&v, p + i, 8); h = (h ^ v) * 1099511628211ull; h ^= h >> 29; }
  h *= 0x9E3779B97F4A7C15ull; h ^= h >> 32; return h;
}
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
// order-0 entropy estimate in bytes over bytes p[0..n) with stride s
static double Entropy(const uint8_t* p, size_t n, size_t stride, size_t total) {
  uint32_t h[4][256] = {};
  size_t m = 0;
  for (size_t i = 0; i + 3 * stride < n; i += 4 * stride) { h[0][p[i]]++; h[1][p[i + stride]]++; h[2][p[i + 2 * stride]]++; h[3][p[i + 3 * stride]]++; m += 4; }
  double e = 0;
  for (int b = 0; b < 256; ++b) { double c = h[0][b] + h[1][b] + h[2][b] + h[3][b]; if (c > 0) e -= c * std::log2(c / m); }
  return e / m / 8 * total;
}
int main(int argc, char** argv) {
  const size_t B = 131072;
  std::vector<std::vector<uint8_t>> blocks;
  std::unordered_set<uint64_t> seen;
  size_t total = 0;
  for (auto& de : std::filesystem::recursive_directory_iterator(argv[1])) {
    if (!de.is_regular_file()) continue;
    std::ifstream f(de.path(), std::ios::binary);
    std::vector<uint8_t> buf(B);
    while (true) {
      f.read((char*)buf.data(), B);
      size_t got = f.gcount();
      if (got == 0) break;
      std::fill(buf.begin() + got, buf.end(), 0);
      total++;
      bool zero = std::all_of(buf.begin(), buf.end(), [](uint8_t c) { return c == 0; });
      if (!zero && seen.insert(H64(buf.data(), B, 0)).second) blocks.push_back(buf);
      if (got < B) break;
    }
  }
  fprintf(stderr, "blocks %zu unique nonzero %zu\n", total, blocks.size());
  zfs::WritePolicy pol;
  codec::Compressor comp;
  std::vector<uint8_t> scratch(B);
  std::vector<Compression> cs = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kZstd, 3},
                                 {CompressionAlgorithm::kGzip, 6}, {CompressionAlgorithm::kLzjb, 0},
                                 {CompressionAlgorithm::kZle, 0}};
  const char* names[] = {"lz4", "zstd-3", "gzip-6", "lzjb", "zle"};
  size_t N = blocks.size();
  std::vector<std::vector<double>> y(cs.size(), std::vector<double>(N));
  for (size_t c = 0; c < cs.size(); ++c) {
    double t0 = now();
    for (size_t i = 0; i < N; ++i) y[c][i] = (double)codec::CompressZfsBlock(pol, cs[c], {blocks[i].data(), B}, false, comp, {scratch.data(), B}).psize;
    fprintf(stderr, "%s: %.2f s/GB\n", names[c], (now() - t0) / (N * B / 1e9));
  }
  // proxies
  std::vector<std::string> pn;
  std::vector<std::vector<double>> x;
  auto add = [&](const char* name, auto fn) {
    std::vector<double> v(N);
    double t0 = now();
    for (size_t i = 0; i < N; ++i) v[i] = fn(blocks[i].data());
    fprintf(stderr, "proxy %s: %.3f s/GB\n", name, (now() - t0) / (N * B / 1e9));
    pn.push_back(name); x.push_back(v);
  };
  add("entropy-full", [&](const uint8_t* p) { return Entropy(p, B, 1, B); });
  add("entropy-1/16", [&](const uint8_t* p) { return Entropy(p, B, 16, B); });
  add("entropy-1/64", [&](const uint8_t* p) { return Entropy(p, B, 64, B); });
  add("entropy-1/256", [&](const uint8_t* p) { return Entropy(p, B, 256, B); });
  add("zerobytes", [&](const uint8_t* p) { size_t z = 0; for (size_t i = 0; i < B; i += 16) z += p[i] == 0; return (double)z; });
  auto lzslices = [&](const uint8_t* p, size_t nslices, size_t slice) {
    double s = 0; size_t step = B / nslices;
    for (size_t k = 0; k < nslices; ++k) {
      auto r = comp.Compress(cs[0], {p + k * step, slice}, {scratch.data(), slice});
      s += r ? (double)*r : (double)slice;
    }
    return s * (double)B / (nslices * slice);
  };
  add("lz4-4x4K", [&](const uint8_t* p) { return lzslices(p, 4, 4096); });
  add("lz4-2x8K", [&](const uint8_t* p) { return lzslices(p, 2, 8192); });
  add("lz4-8x2K", [&](const uint8_t* p) { return lzslices(p, 8, 2048); });
  add("lz4-1x16K", [&](const uint8_t* p) { return lzslices(p, 1, 16384); });
  add("lz4-4x8K", [&](const uint8_t* p) { return lzslices(p, 4, 8192); });
  add("lz4-raw-full", [&](const uint8_t* p) { auto r = comp.Compress(cs[0], {p, B}, {scratch.data(), B}); return r ? (double)*r : (double)B; });
  add("zle-4x4K", [&](const uint8_t* p) {
    double s = 0; for (int k = 0; k < 4; ++k) { auto r = comp.Compress(cs[4], {p + k * 32768, 4096}, {scratch.data(), 4096}); s += r ? *r : 4096; } return s * 8; });
  // correlations
  for (size_t c = 0; c < cs.size(); ++c) {
    double my = 0; for (double v : y[c]) my += v; my /= N;
    double sy = 0; for (double v : y[c]) sy += (v - my) * (v - my);
    printf("%-7s meanpsize %.0f cv %.3f |", names[c], my, std::sqrt(sy / (N - 1)) / my);
    for (size_t k = 0; k < x.size(); ++k) {
      double mx = 0; for (double v : x[k]) mx += v; mx /= N;
      double sx = 0, sxy = 0; for (size_t i = 0; i < N; ++i) { sx += (x[k][i] - mx) * (x[k][i] - mx); sxy += (x[k][i] - mx) * (y[c][i] - my); }
      double rho = sxy / std::sqrt(sx * sy);
      printf(" %s %.3f", pn[k].c_str(), rho);
    }
    printf("\n");
  }
  // dump csv
  FILE* out = fopen(argv[2], "w");
  fprintf(out, "h"); for (auto n : names) fprintf(out, ",%s", n); for (auto& n : pn) fprintf(out, ",%s", n.c_str()); fprintf(out, "\n");
  for (size_t i = 0; i < N; ++i) { fprintf(out, "%llu", (unsigned long long)H64(blocks[i].data(), B, 7)); for (size_t c = 0; c < cs.size(); ++c) fprintf(out, ",%.0f", y[c][i]); for (auto& v : x) fprintf(out, ",%.1f", v[i]); fprintf(out, "\n"); }
  fclose(out);
}
