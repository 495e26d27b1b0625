// Fingerprint micro benchmarks (STYLE.md §7): ComputeFingerprint on one block of each ZFS
// recordsize, XXH3-128 (the default) and SHA-256 (--checksum sha256), on random bytes (the
// content does not change the speed of either hash). Counter: bytes processed (MB/s).
// BM_FingerprintAllZero measures IsAllZero, which the pipeline runs on every block too.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/ddt/fingerprint.h"
#include "zsim/scan_options.h"

namespace {

std::vector<uint8_t> RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = rng();
    for (size_t k = 0; k < 8 && i + k < n; ++k) out[i + k] = static_cast<uint8_t>(v >> (8 * k));
  }
  return out;
}

void BM_FingerprintCompute(benchmark::State& state) {
  const auto kind = static_cast<zsim::ChecksumKind>(state.range(0));
  const size_t block_bytes = static_cast<size_t>(state.range(1));
  // 8 MiB of blocks so the larger sizes are not measured hot in L1/L2 on a single buffer.
  const size_t total = std::max<size_t>(block_bytes, size_t{8} << 20);
  const std::vector<uint8_t> data = RandomBytes(total, 42);
  size_t offset = 0;
  for (auto _ : state) {
    const zsim::ddt::Fingerprint fp =
        zsim::ddt::ComputeFingerprint(kind, zsim::ByteView(data.data() + offset, block_bytes));
    benchmark::DoNotOptimize(fp);
    offset += block_bytes;
    if (offset + block_bytes > total) offset = 0;
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(block_bytes));
  state.SetLabel(kind == zsim::ChecksumKind::kXxh128 ? "xxh3-128" : "sha256");
}
BENCHMARK(BM_FingerprintCompute)
    ->ArgsProduct({{int(zsim::ChecksumKind::kXxh128), int(zsim::ChecksumKind::kSha256)},
                   {4 << 10, 16 << 10, 128 << 10, 1 << 20}});

void BM_FingerprintAllZero(benchmark::State& state) {
  const std::vector<uint8_t> zeros(static_cast<size_t>(state.range(0)), 0);
  for (auto _ : state) {
    bool z = zsim::IsAllZero(zsim::ByteView(zeros.data(), zeros.size()));
    benchmark::DoNotOptimize(z);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}
BENCHMARK(BM_FingerprintAllZero)->Arg(128 << 10);

}  // namespace

BENCHMARK_MAIN();
