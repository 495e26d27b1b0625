#include "engine/mpi/distributed_scan.h"

#include <malloc.h>
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "engine/mpi/binding.h"
#include "engine/mpi/census.h"
#include "engine/mpi/distributed_top_up.h"
#include "engine/mpi/heavy_census.h"
#include "engine/mpi/messages.h"
#include "engine/mpi/partition.h"
#include "engine/mpi/peak_rss.h"
#include "engine/mpi/pieces.h"
#include "engine/mpi/reduce.h"
#include "engine/mpi/table_service.h"
#include "engine/mpi/table_stream.h"
#include "engine/mpi/tuning.h"
#include "engine/mpi/work.h"
#include "engine/state/merge.h"
#include "engine/state/save_order.h"

namespace zsim::mpi {
namespace {

// Entries of shards other ranks own that a rank holds before it ships them (looked at after each
// chunk), in wire bytes
// (ZSIM_MPI_SHIP_BYTES changes it): small beside a table worth partitioning, large enough that
// a ship (which holds the scan's workers out of the tables while it reads the shards out) is
// rare: at 24-34 bytes per entry, 100,000 to 170,000 entries.
constexpr uint64_t kShipBytes = uint64_t{4} << 20;

// CPU time of this process so far (every thread): what the partition costs, whatever the load.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// ZSIM_MPI_STATS=1: each rank prints what it did on stderr, one line (bench/e2e/mpi_scaling.py
// reads it): its own share before the reduction, the bytes it moved.
struct RankStats {
  uint64_t files = 0, pieces = 0, bytes_read = 0, blocks = 0, table_entries = 0, table_bytes = 0;
  uint64_t linked_files = 0;  // files with several names this rank counted whole
  uint64_t peak_rss = 0;      // by the end of the scan, before the partition
  double seconds = 0;
  double work_wait_seconds = 0;  // the scan waiting for its next batch of work (work.h)
  // From the end of this rank's scan to its part of the report's state (the stream's end, the
  // barriers, the partition, the reduction, the fit): what the distributed scan adds to a plain
  // scan of the same share, a fixed cost per job.
  double after_scan_seconds = 0;
};

RankStats StatsOf(const state::ScanState& state, const PieceMap& pieces) {
  RankStats r;
  r.files = state.input.files;
  r.linked_files = state.links.size();
  r.bytes_read = state.input.bytes_read;
  for (const auto& [file, p] : pieces) {
    r.pieces += p.pieces;
    r.bytes_read += p.bytes_read;
  }
  r.seconds = state.seconds;
  r.peak_rss = PeakRssBytes();
  for (const state::RowState& row : state.rows) {
    r.table_entries += row.table->entries();
    r.table_bytes += row.table->memory_bytes() + row.distinct->memory_bytes();
    row.table->ForEach([&](const ddt::EntryView& e) { r.blocks += e.refcount; });
  }
  return r;
}

void PrintStats(int rank, const RankStats& r, const WorkTraffic& work, const ReduceStats& reduce,
                const StreamStats& stream, const PartitionStats& exchange,
                const HeavyCensusStats& heavy, const std::vector<ddt::DedupTable*>& owned) {
  uint64_t owned_entries = 0, owned_bytes = 0;
  for (const ddt::DedupTable* t : owned) {
    owned_entries += t->local_entries();
    owned_bytes += t->local_memory_bytes();
  }
  std::fprintf(
      stderr,
      "zsim-mpi-stats rank=%d files=%llu pieces=%llu linked_files=%llu bytes_read=%llu blocks=%llu "
      "table_entries=%llu table_bytes=%llu work_batches=%llu work_bytes=%llu "
      "state_bytes_received=%llu stream_ships=%llu stream_bytes_sent=%llu "
      "stream_entries_sent=%llu stream_entries_received=%llu stream_peak_table_bytes=%llu "
      "stream_shipped_keys_bytes=%llu stream_wakes=%llu exchange_bytes_sent=%llu "
      "exchange_entries_sent=%llu "
      "exchange_rounds=%llu exchange_seconds=%.3f exchange_cpu_seconds=%.3f owned_entries=%llu "
      "owned_table_bytes=%llu census_asked=%llu census_reread=%llu census_reread_bytes=%llu "
      "census_changed=%llu census_origin_bytes=%llu scan_seconds=%.3f work_wait_seconds=%.4f "
      "reduce_seconds=%.4f after_scan_seconds=%.4f scan_peak_rss_bytes=%llu peak_rss_bytes=%llu\n",
      rank, static_cast<unsigned long long>(r.files), static_cast<unsigned long long>(r.pieces),
      static_cast<unsigned long long>(r.linked_files),
      static_cast<unsigned long long>(r.bytes_read),
      static_cast<unsigned long long>(r.blocks + stream.references_sent - stream.references_merged),
      static_cast<unsigned long long>(r.table_entries),
      static_cast<unsigned long long>(r.table_bytes), static_cast<unsigned long long>(work.batches),
      static_cast<unsigned long long>(work.bytes),
      static_cast<unsigned long long>(reduce.bytes_received),
      static_cast<unsigned long long>(stream.ships),
      static_cast<unsigned long long>(stream.bytes_sent),
      static_cast<unsigned long long>(stream.entries_sent),
      static_cast<unsigned long long>(stream.entries_received),
      static_cast<unsigned long long>(stream.peak_table_bytes),
      static_cast<unsigned long long>(stream.shipped_keys_bytes),
      static_cast<unsigned long long>(stream.wakes),
      static_cast<unsigned long long>(exchange.bytes_sent),
      static_cast<unsigned long long>(exchange.entries_sent),
      static_cast<unsigned long long>(exchange.rounds), exchange.seconds, exchange.cpu_seconds,
      static_cast<unsigned long long>(owned_entries), static_cast<unsigned long long>(owned_bytes),
      static_cast<unsigned long long>(heavy.asked), static_cast<unsigned long long>(heavy.reread),
      static_cast<unsigned long long>(heavy.reread_bytes),
      static_cast<unsigned long long>(heavy.changed),
      static_cast<unsigned long long>(heavy.origin_bytes), r.seconds, r.work_wait_seconds,
      reduce.seconds, r.after_scan_seconds, static_cast<unsigned long long>(r.peak_rss),
      static_cast<unsigned long long>(PeakRssBytes()));
}

// The overrides of the exchanges' sizes (tuning.h). Each rank reads its own environment, and the
// ranks must agree on them (the census's counts and the shards' sizes shape what goes on the
// wire): one that differs between ranks is refused on every rank, before any work. Collective.
Status CheckOverridesAlike(int rank) {
  constexpr const char* kNames[] = {"ZSIM_MPI_BATCH_BYTES", "ZSIM_MPI_SHIP_BYTES",
                                    "ZSIM_MPI_EXCHANGE_BYTES", "ZSIM_MPI_SHARD_ENTRIES",
                                    "ZSIM_MPI_CENSUS_AT"};
  constexpr int kCount = static_cast<int>(std::size(kNames));
  uint64_t mine[kCount], root[kCount];
  for (int i = 0; i < kCount; ++i) mine[i] = root[i] = EnvCount(kNames[i]);
  MPI_Bcast(root, kCount, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  // The lowest rank with a value unlike rank 0's, and the first such override: rank x kCount + i.
  int first = std::numeric_limits<int>::max();
  for (int i = 0; i < kCount; ++i) {
    if (mine[i] != root[i]) {
      first = rank * kCount + i;
      break;
    }
  }
  int lowest = first;
  MPI_Allreduce(&first, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (lowest == std::numeric_limits<int>::max()) return Status::Ok();
  const int other = lowest / kCount, which = lowest % kCount;
  uint64_t value = mine[which];
  MPI_Bcast(&value, 1, MPI_UINT64_T, other, MPI_COMM_WORLD);
  return Status::InvalidArgument(std::string(kNames[which]) +
                                 " differs between ranks (rank 0: " + std::to_string(root[which]) +
                                 ", rank " + std::to_string(other) + ": " + std::to_string(value) +
                                 "; unset reads as 0): set it alike on every rank (mpirun -x " +
                                 kNames[which] + ")");
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
  ZSIM_RETURN_IF_ERROR(CheckOverridesAlike(rank));
  // Rank 0's machine sets the RAM figures and the tables' budget for all: the budget decides
  // which keys a sampled table keeps, which must be the same on every rank.
  ScanOptions resolved = pipeline::ResolveOptions(options);
  uint64_t shared[2] = {resolved.ram_bytes, resolved.max_memory_bytes};
  MPI_Bcast(shared, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  resolved.ram_bytes = shared[0];
  resolved.max_memory_bytes = shared[1];
  // Rank 0's view of the paths named, which it walks and hands out: each rank took a scan of
  // block devices alone for one of zvols itself (cli/named_inputs.h), and on several hosts a
  // path may be a block device on some of them only; the row layout must be one.
  uint64_t volblocksize = resolved.volblocksize.value_or(0);
  MPI_Bcast(&volblocksize, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  resolved.volblocksize = volblocksize != 0 ? std::optional<uint64_t>(volblocksize) : std::nullopt;
  // The threads the ranks code on together: the scan's forecasts are of the whole.
  const int all_threads = ThreadsOfAllRanks(resolved.threads);

  pipeline::ScanControl local = control;
  // Rank 0 speaks for the scan: the others' progress lines and cost warnings would repeat it.
  if (rank != 0) {
    local.progress = nullptr;
    local.forecast = nullptr;
    local.top_up_forecast = nullptr;
  } else if (control.forecast) {
    // Rank 0 sized the whole tree, as every rank did; the ranks share its work.
    local.forecast = [all_threads, told = control.forecast](pipeline::CostForecast f) {
      f.threads = all_threads;
      told(f);
    };
  }
  // A save's file records and linked files (and the pieces of files, for theirs) keep their
  // blocks' keys: the entries they name move to other ranks.
  local.record_keys = control.record_files;
  std::unique_ptr<WorkPool> pool;
  const WorkWait work_wait = std::make_shared<std::atomic<uint64_t>>(0);
  // Rank 0 answers the others' requests for work from its scan (work.h WorkServer), and once its
  // scan is over until each has had its last batch: only if the scan asked for its source, past
  // the checks that refuse options (which every rank makes alike, so no rank then asks for work).
  std::unique_ptr<WorkServer> server;
  bool serving = false;
  if (rank == 0) {
    pool = std::make_unique<WorkPool>(pipeline::MakeWalk(resolved, fs),
                                      EnvCount("ZSIM_MPI_BATCH_BYTES"),
                                      pipeline::ChunkBytes(resolved), size);
    if (size > 1) server = std::make_unique<WorkServer>(pool.get(), size, control.cancel);
    local.source = [&] {
      serving = server != nullptr;
      if (serving) server->Start();
      return LocalShare(pool.get(), server.get(), work_wait);
    };
  } else {
    local.source = [work_wait] { return RemoteShare(work_wait); };
  }
  // The tables' entries go to their owners while the ranks read (table_stream.h), once a rank
  // holds kShipBytes of other owners' entries, and the census counts each rank's own references
  // to ceil(8/N): a key referenced ddt::kHeavyRefcount times in all is referenced that often by
  // some rank. From N = 8 on that would be every block, and for costly codecs it costs more than
  // it saves (census.h): the census then stays at 8 own references, and the entries keep their
  // origins, so that after the exchange the owners have the heavy keys still without codes read
  // again and coded (heavy_census.h).
  std::unique_ptr<TableStream> stream;
  // Shared with the scan's serial stage, which an abandoned scan may run after ScanToState.
  std::shared_ptr<BlockOrigins> origins;
  if (size > 1) {
    // The census matters where the scan runs one (pipeline/scan_blocks.cc): sampled codecs
    // following levels, not --sample's occurrence sample.
    const bool census_runs = estimate::CensusRuns(resolved);
    // ZSIM_MPI_CENSUS_AT=8: the census as before the filter of shipped keys (a test shows the
    // gap). Costly codecs: the reread from 2 ranks on (census.h).
    const CensusPlan census =
        PlanCensus(size, EnvCount("ZSIM_MPI_CENSUS_AT"), CensusCodecsCostly(resolved));
    const bool own_census = census_runs && census.own_count;
    if (census_runs && census.reread) {
      origins = std::make_shared<BlockOrigins>(rank);
      local.origin_of_item = [o = origins](const std::string& path, uint64_t begin, uint64_t length,
                                           bool follow) {
        return o->Add(path, begin, length, follow);
      };
    }
    stream = std::make_unique<TableStream>(rank, size, kShipBytes, resolved.max_memory_bytes,
                                           own_census, census_runs, origins != nullptr);
    local.table_gate = stream->gate();
    local.tables_started = [&stream](const std::vector<ddt::DedupTable*>& tables) {
      stream->Start(tables);
    };
    local.chunk_done = [&stream, work_server = server.get()] {
      if (work_server) work_server->Poll();
      stream->AfterChunk();
    };
    if (own_census) local.census_refcount = census.refcount;
    if (census_runs) {
      // The rare classes do not count again a key met after it was shipped (whichever census);
      // the count at ceil(8/N) also codes it as a repeated sighting.
      const ShippedKeys* shipped = &stream->shipped();
      local.shipped_before = [shipped](const ddt::Fingerprint& key) {
        return shipped->Contains(key);
      };
      local.shipped_repeats = own_census;
    }
  }
  // The top-up of rows of few unique blocks, as one process tops them up (distributed_top_up.h):
  // the first sightings this rank's sampled codecs skipped (shared with the scan's workers, which
  // an abandoned scan may still run after ScanToState).
  std::shared_ptr<pipeline::SkippedBlocks> skipped;
  if (estimate::CensusRuns(resolved) && local.top_up) {
    skipped = std::make_shared<pipeline::SkippedBlocks>(estimate::RowBlockSizes(resolved).size());
    local.skipped_blocks = skipped;
  }
  // The pieces of split files this rank read, added up per file (from the serial stage).
  PieceMap pieces;
  local.piece_done = [&pieces](const pipeline::PieceSums& p) {
    pipeline::AddPiece(pieces[p.file], p);
  };
  Result<state::ScanState> scanned = pipeline::ScanToState(resolved, fs, local);
  const auto scan_end = std::chrono::steady_clock::now();
  // Rank 0 answers the others until each has had its last batch (their scans end with it), then
  // every rank ships no more and has merged what others shipped to it (refused options: no rank
  // started the stream).
  WorkTraffic work;
  if (serving) {
    server->Finish();
    work = server->traffic();
  }
  Status streamed = stream ? stream->Finish() : Status::Ok();
  const std::vector<walk::WalkItem> split =
      pool ? pool->SplitFiles() : std::vector<walk::WalkItem>();
  server.reset();
  pool.reset();
  // Refused options: every rank refuses alike before asking for work.
  if (!scanned.ok()) return scanned.status();
  state::ScanState& state = *scanned;

  const bool print_stats = std::getenv("ZSIM_MPI_STATS") != nullptr;
  RankStats mine = print_stats ? StatsOf(state, pieces) : RankStats{};
  mine.work_wait_seconds = double(work_wait->load()) * 1e-9;
  // What others shipped during the scan joins the shards this rank owns (the coarser key space
  // of the two, as state::Merge takes).
  if (stream && !stream->received().empty()) {
    for (size_t r = 0; r < state.rows.size(); ++r) {
      ddt::DedupTable& into = *state.rows[r].table;
      std::unique_ptr<ddt::DedupTable>& got = stream->received()[r];
      into.RaiseSampleShift(got->sample_shift());
      into.Merge(*got);
      got.reset();
    }
    malloc_trim(0);  // the received tables were the stream thread's allocations
  }
  // No collective call spins while a rank still scans (messages.h).
  WaitForAll();
  // The dedup tables partitioned by key (partition.h): each rank keeps its shards of every row's
  // table, whole, out of the state; the rest of the state goes to rank 0 by the tree merge.
  std::vector<std::unique_ptr<ddt::DedupTable>> owned;
  std::vector<ddt::DedupTable*> tables;
  // The links (state/linked_files.h) are a saved state's only (a merge with another state counts
  // a file linked across them once): there they keep their keys, their entries moving to their
  // owners; else their references name entries of the tables leaving the state: dropped.
  if (!control.record_files) state.links.clear();
  for (state::RowState& row : state.rows) {
    owned.push_back(std::move(row.table));
    tables.push_back(owned.back().get());
    row.table = std::make_unique<ddt::DedupTable>(tables.back()->layout());
  }
  PartitionStats exchange;
  const auto partition_start = std::chrono::steady_clock::now();
  const double partition_cpu_start = ProcessCpuSeconds();
  const Status partitioned =
      PartitionTables(tables, static_cast<uint32_t>(std::countr_zero(state.options.sample_modulus)),
                      rank, size, &exchange);
  for (size_t r = 0; r < tables.size(); ++r) {
    state.rows[r].table->RaiseSampleShift(tables[r]->sample_shift());
  }
  // The heavy keys this rank owns that no rank coded during the scan (census.h reread), read again
  // where their origin says and coded, before the states meet: a file found changed is one of
  // this rank's errors.
  HeavyCensusStats heavy;
  Status census_coded;
  if (origins) {
    for (const ddt::DedupTable* t : tables) heavy.origin_bytes += t->origin_bytes();
    heavy.origin_bytes += origins->memory_bytes();
    census_coded =
        CodeHeavyKeys(tables, *origins, resolved, fs, rank, size, &state.input.errors, &heavy);
    local.origin_of_item = nullptr;
    origins.reset();
  }
  exchange.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - partition_start).count();
  exchange.cpu_seconds = ProcessCpuSeconds() - partition_cpu_start;
  // What the top-up below needs of this rank's state, which the reduction takes.
  const state::SamplingState sampling = state.sampling;
  // And its codecs' speeds for the top-up's forecast, told by rank 0.
  TopUpTelling telling;
  telling.codec_seconds.assign(state.options.compressions.size(), 0);
  telling.codec_bytes.assign(state.options.compressions.size(), 0);
  for (const state::RowState& row : state.rows) {
    for (size_t c = 0; c < telling.codec_seconds.size() && c < row.codec_seconds.size() &&
                       c < row.codec_bytes.size();
         ++c) {
      telling.codec_seconds[c] += row.codec_seconds[c];
      telling.codec_bytes[c] += row.codec_bytes[c];
    }
  }
  telling.threads = all_threads;
  if (rank == 0) telling.told = control.top_up_forecast;
  const bool complete = !state.partial;
  const bool written_keys = state.written_keys;
  ReduceStats stats;
  Status reduced = ReduceToRoot(state, pieces, rank, size, &stats);
  if (reduced.ok()) reduced = partitioned;
  if (reduced.ok()) reduced = census_coded;
  if (reduced.ok()) reduced = streamed;
  // The split files, each counted once from its pieces' sums (their state holds no table
  // entries: the ranks' tables hold their blocks).
  if (rank == 0 && reduced.ok() && !split.empty()) {
    // (A file no rank began to read, in an interrupted scan, has no sums and is not counted.)
    std::vector<pipeline::PiecedFile> files;
    for (size_t i = 0; i < split.size(); ++i) {
      pipeline::PiecedFile& f = files.emplace_back();
      f.item = split[i];
      if (auto it = pieces.find(i); it != pieces.end()) f.sums = std::move(it->second);
    }
    // Under a save, with each file's record (and link) from its pieces' keys.
    state::ScanState whole_files =
        pipeline::StateOfPiecedFiles(state.options, std::move(files), control.record_files);
    whole_files.options.paths.clear();
    whole_files.input.paths.clear();
    whole_files.host = state.host;  // one name per host in the merged state
    if (Status s = state::CheckMergeable(state, whole_files); !s.ok()) {
      reduced = Status::Internal("the split files do not merge: " + s.message());
    } else {
      state::Merge(state, whole_files);
    }
  }
  // The whole's budget over the partitioned tables, with rank 0's merged sketches (and the shift
  // the merges may have raised the state's empty tables to).
  WaitForAll();
  uint64_t shared_fit[2] = {0, 0};
  if (rank == 0) {
    for (const state::RowState& row : state.rows) {
      shared_fit[0] += row.distinct->memory_bytes();
      shared_fit[1] = std::max<uint64_t>(shared_fit[1], row.table->sample_shift());
    }
  }
  MPI_Bcast(shared_fit, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  FitPartitionedTables(tables, static_cast<uint32_t>(shared_fit[1]), shared_fit[0],
                       resolved.max_memory_bytes);
  // Then the rows of few unique blocks, topped up where one process would top them up (over the
  // tables as sampled for the whole); rank 0 sets their levels in the merged state.
  if (skipped) {
    pipeline::TopUpStats top_up;
    const std::vector<RowTopUp> topped =
        TopUpDistributed(tables, *skipped, sampling, complete, resolved, written_keys, fs, size,
                         control.cancel, telling, &top_up);
    if (rank == 0) {
      ApplyTopUp(topped, &state);
      // Interrupted during the top-up (mpirun passes the interrupt to every rank): the rows not
      // yet done keep their levels, and the report says it is partial, as one process's does.
      if (control.cancel && control.cancel->load()) state.partial = true;
    }
    skipped.reset();
  }
  if (control.record_files) {
    // A save follows: each rank's shards in the order of their keys, so that the whole table
    // reads in the order a state file writes it (state/save_order.h), whatever N. The records
    // serve a --since only over exact tables, and the links are kept only where no table was
    // sampled more coarsely than --sample asked, as one process's (pipeline/scan.cc).
    const auto asked = static_cast<uint32_t>(std::countr_zero(state.options.sample_modulus));
    bool links = true;
    for (size_t r = 0; r < owned.size(); ++r) {
      owned[r] = state::InKeyOrder(*owned[r]);
      tables[r] = owned[r].get();
      if (tables[r]->sample_shift() != 0) state.has_records = false;
      if (tables[r]->sample_shift() != asked) links = false;
    }
    if (!state.has_records) state.records.clear();
    if (!links) state.links.clear();
  } else {
    state.links.clear();  // the split files' (StateOfPiecedFiles), whose references name nothing
  }
  if (print_stats) {
    mine.after_scan_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - scan_end).count();
    PrintStats(rank, mine, work, stats, stream ? stream->stats() : StreamStats{}, exchange, heavy,
               tables);
  }
  if (rank != 0) {
    ServeTables(std::vector<const ddt::DedupTable*>(tables.begin(), tables.end()));
    return std::optional<state::ScanState>();
  }
  // Rank 0's shards back into its state, with the other ranks' attached: from here on (Finish,
  // SaveState) each table reads as the whole's. The other ranks serve until the tables are gone.
  for (size_t r = 0; r < owned.size(); ++r) state.rows[r].table = std::move(owned[r]);
  if (size > 1) AttachPeerTables(tables, size);
  if (!reduced.ok()) return reduced;
  state.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::optional<state::ScanState>(std::move(state));
}

}  // namespace zsim::mpi
