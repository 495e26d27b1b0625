// Record cutting micro benchmarks (STYLE.md §7, issue 7): how the pipeline turns a file into
// level-0 blocks before hashing them.
//
// BM_RecordsFileLayout: FileLayout for a spread of file sizes (small files, one-record files,
// many-record files), cycled so the branch predictor sees a realistic mix. Items = files.
// BM_RecordsCut: one 1 MiB chunk cut into records of range(0) bytes, each tested with IsAllZero
// and fingerprinted (XXH3-128), as Scan::ProcessRows does before the DDT; range(1) selects the
// content (0 random, 1 zeros, 2 half of the records zero). Bytes processed = chunk bytes.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/ddt/fingerprint.h"
#include "engine/zfs/record_layout.h"
#include "zsim/scan_options.h"

namespace {

constexpr size_t kChunk = 1 << 20;

void BM_RecordsFileLayout(benchmark::State& state) {
  const uint64_t recordsize = static_cast<uint64_t>(state.range(0));
  std::mt19937_64 rng(7);
  std::vector<uint64_t> sizes(4096);
  for (uint64_t& s : sizes) {
    // Log-uniform from 0 to 4 GiB: mostly small files, some large ones.
    const int bits = static_cast<int>(rng() % 33);
    s = bits == 0 ? 0 : (rng() & ((uint64_t{1} << bits) - 1));
  }
  size_t i = 0;
  uint64_t blocks = 0;
  for (auto _ : state) {
    const zsim::zfs::RecordLayout l = zsim::zfs::FileLayout(sizes[i], recordsize);
    blocks += l.blocks;
    benchmark::DoNotOptimize(blocks);
    i = (i + 1) & (sizes.size() - 1);
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
}
BENCHMARK(BM_RecordsFileLayout)->Arg(4 << 10)->Arg(128 << 10)->Arg(1 << 20);

std::vector<uint8_t> Chunk(int content, size_t record) {
  std::vector<uint8_t> out(kChunk, 0);
  std::mt19937_64 rng(11);
  for (size_t off = 0; off < kChunk; off += record) {
    const bool zero = content == 1 || (content == 2 && (off / record) % 2 == 1);
    if (zero) continue;
    for (size_t k = off; k < off + record; ++k) out[k] = static_cast<uint8_t>(rng());
  }
  return out;
}

void BM_RecordsCut(benchmark::State& state) {
  const size_t record = static_cast<size_t>(state.range(0));
  const std::vector<uint8_t> chunk = Chunk(static_cast<int>(state.range(1)), record);
  uint64_t zero_blocks = 0;
  for (auto _ : state) {
    for (size_t off = 0; off < kChunk; off += record) {
      const zsim::ByteView block(chunk.data() + off, record);
      zero_blocks += zsim::IsAllZero(block) ? 1 : 0;
      const zsim::ddt::Fingerprint fp =
          zsim::ddt::ComputeFingerprint(zsim::ChecksumKind::kXxh128, block);
      benchmark::DoNotOptimize(fp);
    }
  }
  benchmark::DoNotOptimize(zero_blocks);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kChunk));
  state.SetLabel(state.range(1) == 0 ? "random" : state.range(1) == 1 ? "zeros" : "half-zero");
}
BENCHMARK(BM_RecordsCut)->ArgsProduct({{4 << 10, 128 << 10, 1 << 20}, {0, 1, 2}});

}  // namespace

BENCHMARK_MAIN();
