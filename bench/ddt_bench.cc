// Dedup table micro benchmarks (STYLE.md §7, issue 7): DedupTable::Insert (+ SetCodes on a first
// sighting, as the pipeline does) from 1..N threads sharing one table, and the memory the table
// holds per unique block.
//
// Layouts: "default" is what a scan of the reference list builds (the default list of earlier
// versions: off derived from lsize; lz4, zle inline; zstd-3, gzip-6 and lzjb sampled, side codes
// for 1 entry in 64), "exact" what --exact builds (every codec inline). Counter bytes_per_entry
// = memory_bytes() / entries(), issue 7's budget being 32 with those settings.
//
// BM_DdtInsert: every thread inserts its own stream of keys; range(0) is the percentage of
// inserts that hit a key shared by all threads (a duplicate after its first sighting), the rest
// are unique keys. Items processed = inserts.
// BM_DdtFill: one thread fills a fresh table with range(1) unique keys; bytes_per_entry at that
// size (the index grows by doubling, so the figure depends on where the fill stops).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/ddt/fingerprint.h"

namespace {

using zsim::ddt::DedupTable;
using zsim::ddt::Fingerprint;
using zsim::ddt::InsertOutcome;
using zsim::ddt::PsizeCode;
using zsim::ddt::SettingStorage;

constexpr uint64_t kRecord = 128 << 10;
constexpr size_t kSettings = 6;  // off, lz4, zstd-3, gzip-6, lzjb, zle

enum Layout : int { kDefault = 0, kExact = 1 };

std::vector<SettingStorage> MakeLayout(int layout) {
  std::vector<SettingStorage> out(kSettings);
  out[0].kind = SettingStorage::Kind::kFromLsize;
  if (layout == kDefault) {
    out[2].kind = SettingStorage::Kind::kSide;
    out[3].kind = SettingStorage::Kind::kSide;
    out[4].kind = SettingStorage::Kind::kSide;
  }
  return out;
}

// splitmix64: keys spread over the whole key space as real fingerprints are.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

Fingerprint KeyOf(uint64_t id) { return Fingerprint{Mix(id), Mix(id ^ 0xA5A5A5A5A5A5A5A5ull)}; }

// Codes of a first sighting: plausible psizes; side settings only on 1 block in 64.
std::array<PsizeCode, kSettings> CodesFor(uint64_t id, int layout) {
  std::array<PsizeCode, kSettings> c{};
  c[0] = zsim::ddt::EncodeAllocated(kRecord);
  c[1] = zsim::ddt::EncodeAllocated(512 * (1 + id % 200));
  c[5] = zsim::ddt::EncodeAllocated(kRecord);
  const bool sampled = layout == kExact || (Mix(id) & 63) == 0;
  c[2] = sampled ? zsim::ddt::EncodeAllocated(512 * (1 + id % 150)) : zsim::ddt::kPendingCode;
  c[3] = sampled ? zsim::ddt::EncodeAllocated(512 * (1 + id % 160)) : zsim::ddt::kPendingCode;
  c[4] = sampled ? zsim::ddt::EncodeAllocated(512 * (1 + id % 220)) : zsim::ddt::kPendingCode;
  return c;
}

void InsertOne(DedupTable& table, uint64_t id, int layout) {
  const Fingerprint key = KeyOf(id);
  if (table.Insert(key, kRecord) == InsertOutcome::kFirst) {
    const auto codes = CodesFor(id, layout);
    table.SetCodes(key, codes);
  }
}

DedupTable* g_table = nullptr;  // shared by the threads of one BM_DdtInsert run

void BM_DdtInsert(benchmark::State& state) {
  const int layout = static_cast<int>(state.range(0));
  const uint64_t dup_percent = static_cast<uint64_t>(state.range(1));
  // Thread 0 creates the table before the loop; the loop's start is a barrier for all threads,
  // and its end another, after which thread 0 reads and frees it.
  if (state.thread_index() == 0) g_table = new DedupTable(MakeLayout(layout));
  const uint64_t thread_base = (uint64_t(state.thread_index()) + 1) << 40;
  uint64_t n = 0;
  for (auto _ : state) {
    const uint64_t r = Mix(thread_base + n) % 100;
    // Shared keys come from a set of 2^16 that every thread visits: real contention on them.
    const uint64_t id = r < dup_percent ? (Mix(n) & 0xFFFF) : thread_base + n;
    InsertOne(*g_table, id, layout);
    ++n;
  }
  state.SetItemsProcessed(int64_t(state.iterations()));
  if (state.thread_index() == 0) {
    state.counters["bytes_per_entry"] =
        double(g_table->memory_bytes()) / double(std::max<uint64_t>(1, g_table->entries()));
    state.counters["entries"] = double(g_table->entries());
    delete g_table;
    g_table = nullptr;
  }
  state.SetLabel(layout == kDefault ? "default" : "exact");
}
BENCHMARK(BM_DdtInsert)
    ->ArgsProduct({{kDefault, kExact}, {0, 50}})
    ->ThreadRange(1, int(std::max(2u, std::thread::hardware_concurrency())))
    ->UseRealTime();

void BM_DdtFill(benchmark::State& state) {
  const int layout = static_cast<int>(state.range(0));
  const uint64_t keys = static_cast<uint64_t>(state.range(1));
  double bytes_per_entry = 0;
  for (auto _ : state) {
    DedupTable table(MakeLayout(layout));
    for (uint64_t id = 0; id < keys; ++id) InsertOne(table, id, layout);
    bytes_per_entry = double(table.memory_bytes()) / double(table.entries());
    benchmark::DoNotOptimize(bytes_per_entry);
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(keys));
  state.counters["bytes_per_entry"] = bytes_per_entry;
  state.SetLabel(layout == kDefault ? "default" : "exact");
}
BENCHMARK(BM_DdtFill)
    ->ArgsProduct({{kDefault, kExact}, {1 << 20, 3 << 20, 1 << 23}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
