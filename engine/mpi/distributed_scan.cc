#include "engine/mpi/distributed_scan.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "engine/finish/finish.h"
#include "engine/mpi/reduce.h"
#include "engine/mpi/work.h"
#include "engine/state/table_budget.h"

namespace zsim::mpi {
namespace {

// ZSIM_MPI_STATS=1: each rank prints what it did on stderr (the benchmark reads it).
void PrintStats(int rank, const state::ScanState& state, uint64_t batches, uint64_t received) {
  if (std::getenv("ZSIM_MPI_STATS") == nullptr) return;
  uint64_t entries = 0, table_bytes = 0;
  for (const state::RowState& r : state.rows) {
    entries += r.table->entries();
    table_bytes += r.table->memory_bytes() + r.distinct->memory_bytes();
  }
  std::fprintf(stderr,
               "zsim-mpi-stats rank=%d files=%llu bytes_read=%llu table_entries=%llu "
               "table_bytes=%llu batches_served=%llu state_bytes_received=%llu seconds=%.3f\n",
               rank, static_cast<unsigned long long>(state.input.files),
               static_cast<unsigned long long>(state.input.bytes_read),
               static_cast<unsigned long long>(entries),
               static_cast<unsigned long long>(table_bytes),
               static_cast<unsigned long long>(batches), static_cast<unsigned long long>(received),
               state.seconds);
}

}  // namespace

Result<std::optional<ScanResult>> RunDistributedScan(const ScanOptions& options, io::FileSystem* fs,
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
  uint64_t batches = 0;
  if (rank == 0) {
    const char* batch = std::getenv("ZSIM_MPI_BATCH_BYTES");
    pool = std::make_unique<WorkPool>(pipeline::MakeWalk(resolved, fs),
                                      batch ? std::strtoull(batch, nullptr, 10) : 0);
    // Started when the scan asks for its source, past the checks that refuse options (which
    // every rank makes alike, so no rank is then waiting for work).
    local.source = [&] {
      if (size > 1) server = std::thread([&] { batches = ServeWork(pool.get(), size); });
      return LocalShare(pool.get());
    };
  } else {
    local.source = [] { return RemoteShare(); };
  }
  Result<state::ScanState> scanned = pipeline::ScanToState(resolved, fs, local);
  if (server.joinable()) server.join();
  pool.reset();
  // Refused options: every rank refuses alike before asking for work.
  if (!scanned.ok()) return scanned.status();
  state::ScanState& state = *scanned;

  ReduceStats stats;
  PrintStats(rank, state, batches, 0);
  Status reduced = ReduceToRoot(state, rank, size, &stats);
  if (rank != 0) return std::optional<ScanResult>();
  if (!reduced.ok()) return reduced;
  // The whole's budget: the parts each held part of the keys (table_budget.h).
  state::FitTablesToBudget(state.rows, state.options.max_memory_bytes);
  state.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (std::getenv("ZSIM_MPI_STATS") != nullptr) {
    std::fprintf(stderr, "zsim-mpi-stats merged state_bytes_received_by_root=%llu\n",
                 static_cast<unsigned long long>(stats.bytes_received));
  }
  return std::optional<ScanResult>(finish::Finish(state, finish::ReportOptionsOf(state.options)));
}

}  // namespace zsim::mpi
