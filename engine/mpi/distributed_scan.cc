#include "engine/mpi/distributed_scan.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "engine/mpi/pieces.h"
#include "engine/mpi/reduce.h"
#include "engine/mpi/work.h"
#include "engine/state/merge.h"
#include "engine/state/table_budget.h"

namespace zsim::mpi {
namespace {

// Peak resident memory of this process (VmHWM), 0 when /proc does not say.
uint64_t PeakRssBytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof(line), f)) {
    if (std::sscanf(line, "VmHWM: %llu kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib * 1024;
}

// ZSIM_MPI_STATS=1: each rank prints what it did on stderr, one line (bench/e2e/mpi_scaling.py
// reads it): its own share before the reduction, the bytes it moved.
struct RankStats {
  uint64_t files = 0, pieces = 0, bytes_read = 0, blocks = 0, table_entries = 0, table_bytes = 0;
  double seconds = 0;
};

RankStats StatsOf(const state::ScanState& state, const PieceMap& pieces) {
  RankStats r;
  r.files = state.input.files;
  r.bytes_read = state.input.bytes_read;
  for (const auto& [file, p] : pieces) {
    r.pieces += p.pieces;
    r.bytes_read += p.bytes_read;
  }
  r.seconds = state.seconds;
  for (const state::RowState& row : state.rows) {
    r.table_entries += row.table->entries();
    r.table_bytes += row.table->memory_bytes() + row.distinct->memory_bytes();
    row.table->ForEach([&](const ddt::EntryView& e) { r.blocks += e.refcount; });
  }
  return r;
}

void PrintStats(int rank, const RankStats& r, const WorkTraffic& work, uint64_t state_received) {
  std::fprintf(
      stderr,
      "zsim-mpi-stats rank=%d files=%llu pieces=%llu bytes_read=%llu blocks=%llu "
      "table_entries=%llu table_bytes=%llu work_batches=%llu work_bytes=%llu "
      "state_bytes_received=%llu scan_seconds=%.3f peak_rss_bytes=%llu\n",
      rank, static_cast<unsigned long long>(r.files), static_cast<unsigned long long>(r.pieces),
      static_cast<unsigned long long>(r.bytes_read), static_cast<unsigned long long>(r.blocks),
      static_cast<unsigned long long>(r.table_entries),
      static_cast<unsigned long long>(r.table_bytes), static_cast<unsigned long long>(work.batches),
      static_cast<unsigned long long>(work.bytes), static_cast<unsigned long long>(state_received),
      r.seconds, static_cast<unsigned long long>(PeakRssBytes()));
}

}  // namespace

Result<std::optional<state::ScanState>> RunDistributedScan(const ScanOptions& options,
                                                           io::FileSystem* fs,
                                                           const pipeline::ScanControl& control,
                                                           const Session& session) {
  const auto start = std::chrono::steady_clock::now();
  const int rank = session.rank();
  const int size = session.size();
  ZSIM_RETURN_IF_ERROR(ValidateScanOptions(options));
  // Rank 0's machine sets the RAM figures and the tables' budget for all: the budget decides
  // which keys a sampled table keeps, which must be the same on every rank.
  ScanOptions resolved = pipeline::ResolveOptions(options);
  uint64_t shared[2] = {resolved.ram_bytes, resolved.max_memory_bytes};
  MPI_Bcast(shared, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  resolved.ram_bytes = shared[0];
  resolved.max_memory_bytes = shared[1];

  pipeline::ScanControl local = control;
  if (rank != 0) local.progress = nullptr;
  std::unique_ptr<WorkPool> pool;
  std::thread server;
  WorkTraffic work;
  if (rank == 0) {
    const char* batch = std::getenv("ZSIM_MPI_BATCH_BYTES");
    pool = std::make_unique<WorkPool>(pipeline::MakeWalk(resolved, fs),
                                      batch ? std::strtoull(batch, nullptr, 10) : 0,
                                      pipeline::ChunkBytes(resolved));
    // Started when the scan asks for its source, past the checks that refuse options (which
    // every rank makes alike, so no rank is then waiting for work).
    local.source = [&] {
      if (size > 1)
        server = std::thread([&] { work = ServeWork(pool.get(), size, control.cancel); });
      return LocalShare(pool.get());
    };
  } else {
    local.source = [] { return RemoteShare(); };
  }
  // The pieces of split files this rank read, added up per file (from the serial stage).
  PieceMap pieces;
  local.piece_done = [&pieces](const pipeline::PieceSums& p) {
    pipeline::AddPiece(pieces[p.file], p);
  };
  Result<state::ScanState> scanned = pipeline::ScanToState(resolved, fs, local);
  if (server.joinable()) server.join();
  const std::vector<walk::WalkItem> split =
      pool ? pool->SplitFiles() : std::vector<walk::WalkItem>();
  pool.reset();
  // Refused options: every rank refuses alike before asking for work.
  if (!scanned.ok()) return scanned.status();
  state::ScanState& state = *scanned;

  const bool print_stats = std::getenv("ZSIM_MPI_STATS") != nullptr;
  const RankStats mine = print_stats ? StatsOf(state, pieces) : RankStats{};
  ReduceStats stats;
  Status reduced = ReduceToRoot(state, pieces, rank, size, &stats);
  if (print_stats) PrintStats(rank, mine, work, stats.bytes_received);
  if (rank != 0) return std::optional<state::ScanState>();
  if (!reduced.ok()) return reduced;
  // The split files, each counted once from its pieces' sums.
  if (!split.empty()) {
    std::vector<pipeline::PiecedFile> files;
    for (size_t i = 0; i < split.size(); ++i) {
      pipeline::PiecedFile& f = files.emplace_back();
      f.item = split[i];
      if (auto it = pieces.find(i); it != pieces.end()) f.sums = std::move(it->second);
    }
    state::ScanState whole_files = pipeline::StateOfPiecedFiles(state.options, files);
    whole_files.options.paths.clear();
    whole_files.input.paths.clear();
    whole_files.host = state.host;  // one name per host in the merged state
    if (Status s = state::CheckMergeable(state, whole_files); !s.ok()) {
      return Status::Internal("the split files do not merge: " + s.message());
    }
    state::Merge(state, whole_files);
  }
  // The whole's budget: the parts each held part of the keys (table_budget.h).
  state::FitTablesToBudget(state.rows, state.options.max_memory_bytes);
  state.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::optional<state::ScanState>(std::move(state));
}

}  // namespace zsim::mpi
