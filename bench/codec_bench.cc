// Codec micro benchmarks (STYLE.md §7): every ZFS codec on text, binaries, database pages and
// random data, cut into blocks of 4K, 16K, 128K and 1M, each block compressed at ZFS's budget
// lsize - lsize/8. One iteration compresses the whole 1 MiB sample block by block, so small
// blocks are not measured cache-hot on a single buffer. Counters: MB/s (input) and ratio
// (input bytes / output bytes, a block that does not fit counted at its lsize).
// BM_Liblz4 is liblz4's LZ4_compress_default on the same blocks and budget: the reference for
// the speed targets (our lz4 >= 0.8x, lzjb >= 0.45x, zle >= 2x).
//
// The samples are the 1 MiB golden inputs (tests/golden/codec/inputs), found relative to this
// source file or through $ZSIM_BENCH_DATA.

#include <benchmark/benchmark.h>
#include <lz4.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/codec/codec.h"
#include "zsim/scan_options.h"

namespace {

using zsim::ByteView;
using zsim::Compression;
using zsim::CompressionAlgorithm;
using zsim::MutableByteView;

constexpr const char* kDataNames[] = {"text", "elf", "sqlite", "random"};
constexpr size_t kSampleBytes = 1 << 20;

std::filesystem::path DataDir() {
  if (const char* env = std::getenv("ZSIM_BENCH_DATA")) return env;
  return std::filesystem::path(__FILE__).parent_path() / ".." / "tests" / "golden" / "codec" /
         "inputs";
}

const std::vector<uint8_t>& Sample(int data) {
  static std::map<int, std::vector<uint8_t>> cache;
  auto it = cache.find(data);
  if (it != cache.end()) return it->second;
  std::ifstream in(DataDir() / (std::string(kDataNames[data]) + "-1048576.bin"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  bytes.resize(kSampleBytes, 0);
  return cache.emplace(data, std::move(bytes)).first->second;
}

// Runs `compress(block, dst) -> optional<size_t>` over every block of the sample.
template <typename Fn>
void RunBlocks(benchmark::State& state, Fn&& compress) {
  const int data = static_cast<int>(state.range(0));
  const size_t block_bytes = static_cast<size_t>(state.range(1));
  const std::vector<uint8_t>& sample = Sample(data);
  if (sample.empty() || zsim::IsAllZero(sample)) {
    state.SkipWithError("sample data not found; set ZSIM_BENCH_DATA");
    return;
  }
  const size_t budget = block_bytes - block_bytes / 8;
  std::vector<uint8_t> dst(budget);
  uint64_t out_bytes = 0;
  for (auto _ : state) {
    out_bytes = 0;
    for (size_t off = 0; off + block_bytes <= sample.size(); off += block_bytes) {
      const std::optional<size_t> n =
          compress(ByteView(sample.data() + off, block_bytes), MutableByteView(dst));
      out_bytes += n ? *n : block_bytes;
      benchmark::DoNotOptimize(dst.data());
    }
  }
  state.SetLabel(kDataNames[data]);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * sample.size()));
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(sample.size()) / 1e6,
                                              benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ratio"] = static_cast<double>(sample.size()) / static_cast<double>(out_bytes);
}

void BM_Codec(benchmark::State& state, Compression c) {
  zsim::codec::Compressor compressor;
  RunBlocks(state,
            [&](ByteView src, MutableByteView dst) { return compressor.Compress(c, src, dst); });
}

void BM_Liblz4(benchmark::State& state) {
  RunBlocks(state, [](ByteView src, MutableByteView dst) -> std::optional<size_t> {
    // Same framing room as ZFS's lz4: 4 header bytes out of the budget.
    const int n = LZ4_compress_default(
        reinterpret_cast<const char*>(src.data()), reinterpret_cast<char*>(dst.data() + 4),
        static_cast<int>(src.size()), static_cast<int>(dst.size() - 4));
    if (n <= 0) return std::nullopt;
    return static_cast<size_t>(n) + 4;
  });
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"data", "block"});
  b->ArgsProduct({{0, 1, 2, 3}, {4 << 10, 16 << 10, 128 << 10, 1 << 20}});
}

void BM_Lzjb(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kLzjb, 0}); }
void BM_Zle(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kZle, 0}); }
void BM_Lz4Zfs(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kLz4, 0}); }
void BM_Gzip1(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kGzip, 1}); }
void BM_Gzip6(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kGzip, 6}); }
void BM_Gzip9(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kGzip, 9}); }
void BM_Zstd1(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kZstd, 1}); }
void BM_Zstd3(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kZstd, 3}); }
void BM_Zstd9(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kZstd, 9}); }
void BM_Zstd19(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kZstd, 19}); }
void BM_ZstdFast1(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kZstd, -1}); }
void BM_ZstdFast10(benchmark::State& s) { BM_Codec(s, {CompressionAlgorithm::kZstd, -10}); }

BENCHMARK(BM_Liblz4)->Apply(Shapes);
BENCHMARK(BM_Lz4Zfs)->Apply(Shapes);
BENCHMARK(BM_Lzjb)->Apply(Shapes);
BENCHMARK(BM_Zle)->Apply(Shapes);
BENCHMARK(BM_Gzip1)->Apply(Shapes);
BENCHMARK(BM_Gzip6)->Apply(Shapes);
BENCHMARK(BM_Gzip9)->Apply(Shapes);
BENCHMARK(BM_Zstd1)->Apply(Shapes);
BENCHMARK(BM_Zstd3)->Apply(Shapes);
BENCHMARK(BM_Zstd9)->Apply(Shapes);
BENCHMARK(BM_Zstd19)->Apply(Shapes);
BENCHMARK(BM_ZstdFast1)->Apply(Shapes);
BENCHMARK(BM_ZstdFast10)->Apply(Shapes);

}  // namespace

BENCHMARK_MAIN();
