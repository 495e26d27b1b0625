// State file micro benchmarks (issue 15): a ScanState of N unique blocks as a scan of the six
// codecs of the reference list (the default list of earlier versions, so that the figures stay
// comparable with the recorded ones) builds it (one recordsize, 128K; off derived from lsize, lz4
// and zle inline, zstd-3, gzip-6 and lzjb sampled with side codes for 1 entry in 64;
// refcounts 1..3), then:
//
// BM_StateSave: SaveState to a file (temporary name, fsync, rename). Counters: bytes_per_entry
//   (the file's bytes / unique blocks), MB/s of file written.
// BM_StateLoad: LoadState of that file. MB/s of file read.
// BM_StateReport: LoadState + Finish, what `zsim report FILE --json` spends before printing
//   (the target: under 2 s for 10 million entries).
// BM_StateMerge: Merge of two states of N entries each, half of their keys shared.
//
// range(0) = N. The file goes to $TMPDIR (default /tmp).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/finish.h"
#include "engine/state/merge.h"
#include "engine/state/scan_state.h"
#include "engine/state/state_file.h"

namespace {

using namespace zsim;

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A state of `entries` unique 128K blocks, keys from `seed` onward.
state::ScanState MakeState(uint64_t entries, uint64_t seed) {
  state::ScanState s;
  ScanOptions& o = s.options;
  o.paths = {"/bench"};
  o.compressions = estimate::CostReferenceCompressions();
  o.ddt_format = DdtFormat::kFast;
  o.ram_bytes = uint64_t{64} << 30;
  o.threads = 2;
  const size_t settings = o.compressions.size();
  const estimate::SamplingPlan plan = estimate::PlanSampling(o.compressions, false);
  s.sampling.sampled = plan.sampled;
  s.sampling.anchors = plan.anchors;
  s.featured = state::FeaturedSetting(o.compressions);
  // The layout a scan builds: with zstd-3 one more column, its early-abort code (format 10).
  const std::vector<ddt::SettingStorage> layout =
      state::TableLayout(o, plan.sampled, s.code_kind, s.written_keys);
  const std::vector<size_t> probes = state::ProbeColumns(s.code_kind, o.compressions);
  state::RowState& row = s.rows.emplace_back();
  row.block_bytes = 128 << 10;
  row.table = std::make_unique<ddt::DedupTable>(layout);
  row.distinct = std::make_unique<estimate::DistinctBlocks>(row.block_bytes);
  row.files.resize(settings);
  row.codec_seconds.assign(settings, 0);
  row.codec_bytes.assign(settings, 0);
  std::vector<ddt::PsizeCode> codes(layout.size());
  uint64_t refs = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    const uint64_t h = Mix(seed + i);
    const ddt::Fingerprint key{Mix(h), h};
    const uint32_t r = 1 + static_cast<uint32_t>(h % 3);
    for (uint32_t k = 0; k < r; ++k) row.table->Insert(key, row.block_bytes);
    refs += r;
    for (size_t c = 0; c < settings; ++c) {
      // Least-budget codes: outputs of 4K to 108K (within 112K, the largest budget of 128K),
      // each fitting its own unit's end; early abort lets it through from there.
      const uint64_t out = 4096 * (1 + (h >> (8 + c)) % 27);
      const bool skipped = plan.sampled[c] && (h >> 20) % 64 != 0;
      codes[c] = skipped ? ddt::kPendingCode : ddt::EncodeLeastBudget(out, out);
      if (probes[c] != state::kNoProbe) {
        codes[probes[c]] = skipped ? ddt::kPendingCode : ddt::EncodeProbe(out);
      }
    }
    row.table->SetCodes(key, codes);
    row.distinct->Add(key.lo, row.block_bytes, 256, false);
  }
  for (size_t c = 0; c < settings; ++c)
    row.files[c][state::FileShape{row.block_bytes, 64, 64, 0, {}, {}}] = refs / 64;
  s.input.paths = o.paths;
  s.input.files = refs / 64;
  s.input.bytes_logical = refs * row.block_bytes;
  return s;
}

std::string FilePath() {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/zsim_state_bench.zstate";
}

void BM_StateSave(benchmark::State& st) {
  const state::ScanState s = MakeState(static_cast<uint64_t>(st.range(0)), 1);
  uint64_t bytes = 0;
  for (auto _ : st) {
    if (!state::SaveState(s, FilePath(), &bytes).ok()) st.SkipWithError("save failed");
  }
  st.SetBytesProcessed(static_cast<int64_t>(bytes) * st.iterations());
  st.counters["bytes_per_entry"] = double(bytes) / double(st.range(0));
  st.counters["file_bytes"] = double(bytes);
}

void BM_StateLoad(benchmark::State& st) {
  {
    const state::ScanState s = MakeState(static_cast<uint64_t>(st.range(0)), 1);
    if (!state::SaveState(s, FilePath()).ok()) st.SkipWithError("save failed");
  }
  const uint64_t bytes = std::filesystem::file_size(FilePath());
  for (auto _ : st) {
    Result<state::ScanState> s = state::LoadState(FilePath());
    if (!s.ok()) st.SkipWithError(s.status().ToString().c_str());
    benchmark::DoNotOptimize(s);
  }
  st.SetBytesProcessed(static_cast<int64_t>(bytes) * st.iterations());
}

void BM_StateReport(benchmark::State& st) {
  {
    const state::ScanState s = MakeState(static_cast<uint64_t>(st.range(0)), 1);
    if (!state::SaveState(s, FilePath()).ok()) st.SkipWithError("save failed");
  }
  for (auto _ : st) {
    Result<state::ScanState> s = state::LoadState(FilePath());
    if (!s.ok()) st.SkipWithError(s.status().ToString().c_str());
    const ScanResult r = finish::Finish(*s, finish::ReportOptionsOf(s->options));
    benchmark::DoNotOptimize(r);
  }
}

void BM_StateMerge(benchmark::State& st) {
  const uint64_t n = static_cast<uint64_t>(st.range(0));
  for (auto _ : st) {
    st.PauseTiming();
    state::ScanState a = MakeState(n, 1);
    const state::ScanState b = MakeState(n, 1 + n / 2);
    st.ResumeTiming();
    state::Merge(a, b);
    benchmark::DoNotOptimize(a);
  }
  st.SetItemsProcessed(static_cast<int64_t>(n) * st.iterations());
}

BENCHMARK(BM_StateSave)->Arg(1 << 20)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StateLoad)->Arg(1 << 20)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StateReport)->Arg(1 << 20)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StateMerge)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
