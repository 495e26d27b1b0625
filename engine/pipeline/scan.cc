#include "engine/pipeline/scan.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/base/path_spelling.h"
#include "engine/base/size_suffix.h"
#include "engine/ddt/dedup_table.h"
#include "engine/ddt/fingerprint.h"
#include "engine/estimate/anchor_class.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/distinct_blocks.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/finish.h"
#include "engine/pipeline/directory_zap.h"
#include "engine/pipeline/scan_internal.h"
#include "engine/state/merge.h"
#include "engine/state/scan_state.h"
#include "engine/state/since.h"
#include "engine/state/table_budget.h"
#include "engine/walk/parallel_walker.h"
#include "engine/walk/walker.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/indirect_ranges.h"
#include "engine/zfs/profile.h"
#include "engine/zfs/write_rules.h"

namespace zsim::pipeline {
namespace {

// Scans alive in this process, abandoned ones included (WaitForAllScans).
std::atomic<int> g_live_scans{0};

// How long a scan with sampled codecs waits for the sizing walk before it reads (the codec
// budget, estimate/codec_budget.h).
constexpr std::chrono::milliseconds kPlanWait{1000};

// Seeds the hash of the input paths that names the sizing walk's plan (SamplingState::plan_scope).
constexpr uint64_t kPlanScopeSeed = 0x706c616e73636f70;  // "planscop"

}  // namespace

namespace internal {

// The cores the scan may use: its default thread count. Those of the process's CPU affinity (as
// TBB counts them), not the machine's: a rank mpirun binds to one core of two asked TBB for a
// second thread it would not give, and printed a "TBB Warning" per rank.
int MachineCores() { return std::max(1, tbb::info::default_concurrency()); }

Scan::Scan(const ScanOptions& options, io::FileSystem* fs, const ScanControl& control)
    : options_(options),
      fs_(fs),
      control_(control),
      alloc_(zfs::AllocationModel::For(options.vdev, options.ashift)) {
  g_live_scans.fetch_add(1);
  ddt::InitFingerprinting();  // on the caller's thread, not a worker's (ddt/fingerprint.h)
  // The featured setting (breakdowns, the report's DDT): the first that compresses.
  featured_ = state::FeaturedSetting(options_.compressions);
  state_.options = options_;
  state_.featured = featured_;
  policy_ = ScanWritePolicy(options_);
  for (uint64_t bs : estimate::RowBlockSizes(options_)) rows_.emplace_back().block_bytes = bs;
  // Per setting, decided once: does an all-zero block become a hole, and does the codec run on
  // a sample only. The dedup table's layout follows: compression=off needs no stored code
  // (psize = lsize), sampled codecs keep codes only for the blocks they ran on.
  const estimate::SamplingPlan plan = estimate::PlanSampling(options_.compressions, options_.exact);
  sampling_.sampled = plan.sampled;
  sampling_.anchors = plan.anchors;
  any_sampled_ = std::find(plan.sampled.begin(), plan.sampled.end(), true) != plan.sampled.end();
  occurrences_ = options_.sample_modulus > 1;
  adaptive_ = estimate::CensusRuns(options_);  // as a distributed scan decides it (engine/mpi)
  sampling_.adaptive = adaptive_;
  // The rare-class census (estimate/anchor_class.h) where the budget samples codecs that
  // regress on an exact anchor (PlanSampling gives them all the same one).
  for (size_t c = 0; c < plan.anchors.size() && adaptive_; ++c) {
    if (plan.sampled[c] && plan.anchors[c] >= 0) class_anchor_ = plan.anchors[c];
  }
  if (class_anchor_ >= 0) sampling_.rare_class_blocks = estimate::kRareClassBlocks;
  plan_wanted_ = any_sampled_ || occurrences_;
  if (occurrences_) entry_level_offset_ = std::countr_zero(options_.sample_modulus);
  bp_shift_ = zfs::BlockPointerShift(options_.profile);
  for (size_t i = 0; i < options_.compressions.size(); ++i) {
    const Compression& c = options_.compressions[i];
    zero_is_hole_.push_back(zfs::ZeroBlockIsHole(policy_, c));
    zero_written_without_dedup_.push_back(zfs::ZeroBlockWrittenOnlyWithoutDedup(policy_, c));
  }
  const std::vector<ddt::SettingStorage> layout =
      state::TableLayout(options_, sampling_.sampled, state_.code_kind, state_.written_keys);
  probe_columns_ = state::ProbeColumns(state_.code_kind, options_.compressions);
  key_columns_ = state::KeyColumns(options_, state_.code_kind, state_.written_keys);
  for (state::RowState& r : rows_) {
    r.table = std::make_unique<ddt::DedupTable>(layout);
    r.distinct = std::make_unique<estimate::DistinctBlocks>(r.block_bytes);
    r.files.resize(options_.compressions.size());
    r.codec_seconds.assign(options_.compressions.size(), 0.0);
    r.codec_bytes.assign(options_.compressions.size(), 0);
    max_block_ = std::max(max_block_, r.block_bytes);
    plan_block_ = std::max(plan_block_, r.block_bytes);
  }
  // A block device named without --volblocksize is a zvol with the profile's default
  // volblocksize (ZVOL_DEFAULT_BLOCKSIZE: 8K through 2.1, 16K from 2.2).
  zvol_block_ =
      options_.volblocksize.value_or(zfs::RulesFor(options_.profile).default_volblocksize);
  max_block_ = std::max(max_block_, zvol_block_);
  chunk_bytes_ = ChunkBytes(options_);
  skipped_holes_.assign(rows_.size(), 0);
  // Exact settings first, so the anchor's psize is known when a sampled codec runs, lz4 first
  // among them: its run of a block seeds zstd's early-abort probes (--exact lists too).
  for (size_t c = 0; c < options_.compressions.size(); ++c) {
    if (!sampling_.sampled[c]) order_.push_back(c);
  }
  std::stable_partition(order_.begin(), order_.end(), [&](size_t c) {
    return options_.compressions[c].algorithm == CompressionAlgorithm::kLz4;
  });
  for (size_t c = 0; c < options_.compressions.size(); ++c) {
    if (sampling_.sampled[c]) order_.push_back(c);
  }
  // Codec levels: 0 (every unique block) to start with.
  const size_t cells = rows_.size() * options_.compressions.size();
  setting_level_ = std::make_unique<std::atomic<int>[]>(cells);
  skip_bound_ = std::make_unique<std::atomic<int>[]>(rows_.size());
  class_seen_ = std::make_unique<std::atomic<uint64_t>[]>(rows_.size() * estimate::kAnchorClasses);
  for (size_t i = 0; i < rows_.size() * estimate::kAnchorClasses; ++i) class_seen_[i].store(0);
  // The census of an empty plan (never turns on later): a codec whose census would cost more
  // than a quarter of the whole cap (zstd-19 at 1M) has none even before the sizing walk's
  // first bytes.
  census_on_ = std::make_unique<std::atomic<bool>[]>(cells);
  const std::vector<bool> census =
      estimate::RareClassCensus(options_, sampling_.sampled, estimate::Plan{});
  for (size_t i = 0; i < cells; ++i) census_on_[i].store(class_anchor_ >= 0 && census[i]);
  for (size_t i = 0; i < cells; ++i) setting_level_[i].store(0);
  for (size_t r = 0; r < rows_.size(); ++r) skip_bound_[r].store(0);
  // --sample 1/M: keep 1/M of the key space from the start.
  const uint32_t shift = static_cast<uint32_t>(std::countr_zero(options_.sample_modulus));
  for (state::RowState& r : rows_) r.table->RaiseSampleShift(shift);
  if (control_.census_refcount != 0) {
    for (state::RowState& r : rows_) r.table->set_census_refcount(control_.census_refcount);
  }
  table_budget_bytes_ = options_.max_memory_bytes;
  if (options_.max_read_bytes_per_second) {
    // One chunk may start at once; beyond it the rate holds.
    throttle_ = std::make_shared<ReadThrottle>(options_.max_read_bytes_per_second, chunk_bytes_);
  } else {
    // One chunk ahead per worker: each chunk is asked for about one chunk's work before a worker
    // reads it. Capped, so that 64 threads keep 128 MiB, not 512 MiB, in flight.
    read_ahead_bytes_ = chunk_bytes_ * static_cast<uint64_t>(std::clamp(options_.threads, 1, 16));
  }
}

Scan::~Scan() {
  if (g_live_scans.fetch_sub(1) == 1) g_live_scans.notify_all();
}

bool Scan::Cancelled() {
  WorkScope scope(this);  // after an abandon, control_.cancel may be gone with the caller
  return !scope || (control_.cancel && control_.cancel->load(std::memory_order_relaxed));
}

void Scan::RunPipeline() {
  const int threads = options_.threads;
  // More threads than cores is legitimate (slow or remote storage); let TBB have them.
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(threads));
  tbb::task_arena arena(threads);
  const size_t tokens = static_cast<size_t>(threads) * 2;
  arena.execute([&] {
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, Chunk*>(tbb::filter_mode::serial_in_order,
                                       [&](tbb::flow_control& fc) -> Chunk* {
                                         auto chunk = std::make_unique<Chunk>();
                                         if (!NextChunk(chunk.get())) {
                                           fc.stop();
                                           return nullptr;
                                         }
                                         return chunk.release();
                                       }) &
            tbb::make_filter<Chunk*, Chunk*>(tbb::filter_mode::parallel,
                                             [&](Chunk* chunk) {
                                               Worker* w = nullptr;
                                               {
                                                 WorkScope scope(this);  // the workers' set
                                                 if (scope) w = &workers_->local();
                                               }
                                               if (w != nullptr) Process(*chunk, *w);
                                               return chunk;
                                             }) &
            tbb::make_filter<Chunk*, void>(tbb::filter_mode::serial_out_of_order, [&](Chunk* raw) {
              std::unique_ptr<Chunk> chunk(raw);
              WorkScope scope(this);
              if (!scope) return;
              bytes_done_ += chunk->length;
              CountForPace(*chunk);
              EnforceTableBudget();
              if (control_.chunk_done) control_.chunk_done();
              MaybeForecast();
              MaybeTellForecast();
              MaybeApplyPilot();
              if (chunk->file->chunks_left.fetch_sub(1) == 1) {
                FinishFile(*chunk->file);
              }
              MaybeReportProgress(false);
            }));
  });
}

bool Scan::WaitForPipeline() {
  std::unique_lock<std::mutex> lock(done_mu_);
  std::optional<Clock::time_point> cancel_seen;
  while (!pipeline_done_) {
    done_cv_.wait_for(lock, std::chrono::milliseconds(20));
    if (pipeline_done_) break;
    const Clock::time_point now = Clock::now();
    if (!cancel_seen && control_.cancel && control_.cancel->load()) cancel_seen = now;
    if (cancel_seen && now - *cancel_seen >= kAbandonAfter) {
      lock.unlock();
      Abandon();
      return false;
    }
  }
  return true;
}

void Scan::Abandon() {
  abandoned_.store(true);
  cancelled_ = true;
  // Stages inside a WorkScope do no I/O: they end promptly, and none starts after this.
  while (busy_.load() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::lock_guard<std::mutex> lock(reading_mu_);
  for (const auto& [path, n] : reading_) abandoned_files_.push_back(path);
}

void Scan::CloseInput() {
  std::sort(state_.file_ids.begin(), state_.file_ids.end());
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) state_.host = host;
  input_.bytes_read = bytes_read_;
  input_.files += whole_files_;
  input_.bytes_logical += modelled_bytes_;
  input_.bytes_data += data_bytes_;
  input_.bytes_data_known = data_known_;
  for (PathError& e : file_errors_) input_.errors.push_back(std::move(e));
  std::sort(input_.errors.begin(), input_.errors.end(),
            [](const PathError& a, const PathError& b) { return a.path < b.path; });
}

state::ScanState Scan::Run() {
  start_ = last_progress_ = Clock::now();
  {
    timespec now{};
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    stamp_floor_ns_ = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  }
  walk::WalkOptions wo;
  wo.follow_symlinks = options_.follow_symlinks;
  wo.one_file_system = options_.one_file_system;
  wo.excludes = options_.excludes;
  const int walk_threads = std::clamp(options_.threads, 1, 16);  // as MakeWalk's
  walker_ = control_.source ? control_.source() : MakeWalk(options_, fs_);
  // The progress line's total and ETA, and the sampled codecs' plan (PlanLevel): a second walk
  // that only adds up sizes runs ahead.
  if (control_.progress || control_.forecast || plan_wanted_) {
    sizer_ = std::make_unique<walk::WalkSizer>(fs_, options_.paths, wo, std::min(walk_threads, 4));
  }
  if (adaptive_) {
    // The codec budget up front: a local tree is sized in moments, and its first chunks are then
    // coded at the whole tree's level. A slow walk is not waited for: the levels follow it.
    const Clock::time_point deadline = Clock::now() + kPlanWait;
    while (!sizer_->finished() && Clock::now() < deadline &&
           !(control_.cancel && control_.cancel->load())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    MaybeApplyPlan();
  }

  const size_t settings = options_.compressions.size();
  // The top-up (top_up.h) in a scan of this process alone, whose tables hold every key it read
  // (not --sample). Under --since the kept files' blocks are not listed: a row is topped up only
  // where the base had coded those its level needs.
  if (control_.top_up && adaptive_ && any_sampled_ && !occurrences_) {
    if (control_.skipped_blocks) {
      skipped_ = control_.skipped_blocks.get();  // the caller's top-up
    } else if (!control_.table_gate) {           // not a distributed scan's shared tables
      own_skipped_ = std::make_unique<SkippedBlocks>(rows_.size());
      skipped_ = own_skipped_.get();
    }
  }
  if (control_.tables_started) {
    std::vector<ddt::DedupTable*> tables;
    for (state::RowState& r : rows_) tables.push_back(r.table.get());
    control_.tables_started(tables);
  }
  workers_ = std::make_unique<tbb::enumerable_thread_specific<Worker>>([this, settings] {
    return Worker(chunk_bytes_, max_block_, rows_.size(), settings, occurrences_);
  });
  // The pipeline on a thread of its own, which holds the Scan: if its reads are abandoned it
  // ends, and lets the Scan go, once they return.
  std::thread pipeline([self = shared_from_this()] {
    self->RunPipeline();
    std::lock_guard<std::mutex> lock(self->done_mu_);
    self->pipeline_done_ = true;
    self->done_cv_.notify_all();
  });
  const bool drained = WaitForPipeline();
  if (drained) {
    pipeline.join();
  } else {
    pipeline.detach();
  }
  const tbb::enumerable_thread_specific<Worker>& workers = *workers_;
  MaybeReportProgress(true);
  // A partial scan keeps the levels it reached: the pilot's if it had answered while reading.
  if (drained) FinishPilot();
  // Stops the probe if the scan was quicker. After an abandon it is only told to stop: it starts
  // no more I/O, and a read of its that hangs is not waited for (the Scan's end joins it).
  if (drained) {
    probe_.reset();
  } else if (probe_) {
    probe_->Stop();
  }
  FinishOpenJobs();
  if (since_) FinishSince();
  // The sampled codecs' complete level: the plan of the whole tree, which the scan never went
  // above (before the plan was known it stayed at 0, where every level is complete). After an
  // interrupt the sizing walk is not waited for.
  int complete_level = level_.load();
  bool planned = false;
  if (sizer_ && plan_wanted_) {
    if (!cancelled_) sizer_->Wait();
    planned = sizer_->finished();
  }
  if (planned) complete_level = PlannedLevel();
  // The budget's bytes: the whole tree's, or after an interrupt those sized so far (at least
  // those any level used followed).
  if (adaptive_) {
    sampling_.planned_bytes = std::max(sizer_->allocated_bytes(), budget_bytes_.load());
    sampling_.planned_files = std::max(sizer_->allocated_files(), budget_files_.load());
    for (const std::string& p : options_.paths) {
      sampling_.plan_scope ^= XXH3_64bits_withSeed(p.data(), p.size(), kPlanScopeSeed);
    }
  }
  // Each sampled codec's complete level: the one it ended at, or the budget of the plan when the
  // scan ended before following it (below it every level it met was coded too).
  sampling_.setting_levels.assign(rows_.size() * settings, 0);
  const std::vector<int> budget =
      adaptive_ ? estimate::BudgetLevels(options_, sampling_.sampled, sampling_.plan())
                : std::vector<int>();
  for (size_t r = 0; r < rows_.size(); ++r) {
    for (size_t c = 0; c < settings; ++c) {
      if (!sampling_.sampled[c]) continue;
      int level = occurrences_ ? EntryLevel(complete_level) : SettingLevel(r, c).load();
      // Under --since too: the plan is the whole new tree's (CodesCover checks that the kept
      // files' entries have their codes at this level).
      if (adaptive_) level = std::max(level, budget[r * settings + c]);
      sampling_.setting_levels[r * settings + c] = level;
    }
  }
  // Only after a whole reading: a row's list is complete when its table ends small.
  if (own_skipped_ && drained && planned && !cancelled_) TopUp(budget);
  if (cancelled_ && sizer_) {
    // What the paths hold, as far as the sizing walk got: the report says how much of it the
    // partial figures cover.
    input_.files_named = sizer_->files();
    input_.bytes_named = sizer_->bytes();
    input_.named_complete = sizer_->finished();
  }
  if (!abandoned_) {
    sizer_.reset();  // stops the walking threads (still under way after a cancel)
    walker_.reset();
  }  // else the pipeline thread may still be inside walker_: the Scan's end stops them

  state_.partial = cancelled_;
  input_.paths = options_.paths;
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (!rows_[r].table->overflowed()) continue;
    // Never expected (state::FitTablesToShards samples long before); said, not hidden.
    input_.errors.push_back(PathError{
        options_.paths.empty() ? std::string() : options_.paths[0],
        Status::OutOfMemory("the dedup table of block size " +
                            std::to_string(rows_[r].block_bytes) +
                            " filled a shard (2^24 - 1 entries): some blocks were left out; "
                            "scan with --sample 1/M")
            .ToString()});
  }
  CloseInput();

  sampling_.complete_level = LowestLevel(sampling_);
  sampling_.occurrence_level = complete_level;
  for (size_t r = 0; r < rows_.size(); ++r) {
    state::RowState& row = rows_[r];
    row.sparse_holes = skipped_holes_[r];
    if (occurrences_) row.occurrences = OccurrenceSample(settings);
    for (const Worker& w : workers) {
      row.sparse_holes += w.sparse_holes[r];
      if (occurrences_) row.occurrences.Merge(w.occurrences[r]);
      for (size_t c = 0; c < settings; ++c) {
        row.codec_seconds[c] += static_cast<double>(w.codec_ns[r * settings + c]) * 1e-9;
        row.codec_bytes[c] += w.codec_bytes[r * settings + c];
      }
    }
  }
  if (since_) CheckSinceTables();
  // Records serve a --since only when complete and their references name entries of exact
  // tables (a raised sample shift renumbered them).
  state_.has_records = record_ && !cancelled_;
  for (const state::RowState& row : rows_) {
    if (row.table->sample_shift() != 0) state_.has_records = false;
  }
  if (!state_.has_records) state_.records.clear();
  // A table sampled more coarsely during the scan (--max-memory, FitTablesToShards) renumbered
  // its entries, which the links' references no longer name: without links a merge counts such
  // files in each part, and says so (state::MergeCounts::shared).
  for (const state::RowState& row : rows_) {
    if (row.table->sample_shift() !=
        static_cast<uint32_t>(std::countr_zero(options_.sample_modulus))) {
      state_.links.clear();
    }
  }
  std::vector<const BreakdownCollector::Local*> sampled{&replayed_};
  for (const Worker& w : workers) {
    sampled.push_back(&w.sampled);
    for (size_t r = 0; r < rows_.size() && r < w.zero_blocks.size(); ++r) {
      breakdown_.AddZeroBlocks(r, w.zero_blocks[r], w.zero_bytes[r]);
    }
  }
  breakdown_.MoveInto(sampled, &state_.breakdown);
  state_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  return std::move(state_);
}

Status Scan::CheckBudget() const {
  if (table_budget_bytes_ == 0) return Status::Ok();
  constexpr uint64_t kRoomPerRow = 256 * 1024;  // about 9,000 entries: a usable sample
  uint64_t floor = 0;
  for (const state::RowState& r : rows_)
    floor += r.table->floor_bytes() + r.distinct->memory_bytes();
  const uint64_t need = floor + kRoomPerRow * rows_.size();
  if (table_budget_bytes_ >= need) return Status::Ok();
  const uint64_t mib = uint64_t{1} << 20;
  const uint64_t suggest = (need + mib - 1) / mib;
  return Status::InvalidArgument(
      "--max-memory " + FormatBytes(table_budget_bytes_) + " is too small for " +
      std::to_string(rows_.size()) + " block size(s) x " +
      std::to_string(options_.compressions.size()) +
      " compression setting(s): the distinct-block counters and the smallest dedup tables take " +
      FormatBytes(floor) + " however much is sampled, and entries need room beyond that; give " +
      "at least --max-memory " + std::to_string(suggest) + "M");
}

}  // namespace internal

using internal::Scan;

std::unique_ptr<walk::WalkSource> MakeWalk(const ScanOptions& options, io::FileSystem* fs) {
  walk::WalkOptions wo;
  wo.follow_symlinks = options.follow_symlinks;
  wo.one_file_system = options.one_file_system;
  wo.excludes = options.excludes;
  wo.directory_zap_bytes = MicrozapLz4Bytes;
  // Walking threads: listing directories and stat'ing files waits on the storage, not the CPU,
  // so up to 16 of them overlap those waits even when fewer cores scan. Following symlinks needs
  // each path's ancestors (loop detection): that walk is serial.
  if (options.follow_symlinks) return std::make_unique<walk::Walker>(fs, options.paths, wo);
  return std::make_unique<walk::ParallelWalker>(fs, options.paths, wo,
                                                std::clamp(options.threads, 1, 16));
}

state::ScanState StateOfPiecedFiles(const ScanOptions& options, std::vector<PiecedFile> files,
                                    bool keep_records) {
  ScanControl control;
  control.record_keys = keep_records;
  auto scan = std::make_shared<Scan>(options, nullptr, control);
  if (keep_records) scan->KeepRecords();
  return scan->CountPiecedFiles(files);
}

uint64_t ChunkBytes(const ScanOptions& options) {
  // As the Scan's rows and zvols cut them (max_block_).
  uint64_t max_block =
      options.volblocksize.value_or(zfs::RulesFor(options.profile).default_volblocksize);
  if (!options.volblocksize) {
    for (uint64_t rs : options.recordsizes) max_block = std::max(max_block, rs);
  }
  return std::max(internal::kChunkBytes, max_block);
}

void WaitForAllScans() {
  for (int n = g_live_scans.load(); n != 0; n = g_live_scans.load()) g_live_scans.wait(n);
}

ScanOptions ResolveOptions(const ScanOptions& in) {
  ScanOptions o = in;
  for (std::string& p : o.paths) p = WithoutTrailingSlashes(std::move(p));
  if (o.compressions.empty()) o.compressions = DefaultCompressions(o.profile);
  if (!o.ddt_format) {
    o.ddt_format = zfs::RulesFor(o.profile).has_fast_dedup ? DdtFormat::kFast : DdtFormat::kLegacy;
  }
  if (o.threads == 0) {
    o.threads = internal::MachineCores();
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGESIZE);
  const uint64_t this_ram =
      pages > 0 && page_bytes > 0 ? uint64_t(pages) * uint64_t(page_bytes) : 0;
  if (o.ram_bytes == 0) o.ram_bytes = this_ram;
  // The dedup tables may take half of this machine's RAM unless told otherwise.
  if (o.max_memory_bytes == 0) o.max_memory_bytes = this_ram / 2;
  return o;
}

Result<state::ScanState> ScanToState(const ScanOptions& options, io::FileSystem* fs,
                                     const ScanControl& control) {
  ZSIM_RETURN_IF_ERROR(ValidateScanOptions(options));
  const ScanOptions resolved = ResolveOptions(options);
  auto scan = std::make_shared<Scan>(resolved, fs, control);
  ZSIM_RETURN_IF_ERROR(scan->CheckBudget());
  if (control.record_files) scan->KeepRecords();
  return scan->Run();
}

Result<state::ScanState> ScanSince(const ScanOptions& options, state::ScanState base,
                                   io::FileSystem* fs, const ScanControl& control,
                                   SinceSummary* summary) {
  ZSIM_RETURN_IF_ERROR(ValidateScanOptions(options));
  const ScanOptions resolved = ResolveOptions(options);
  ZSIM_RETURN_IF_ERROR(state::CheckSince(base, resolved));
  SinceSummary ignored;
  if (summary == nullptr) summary = &ignored;
  {
    auto scan = std::make_shared<Scan>(resolved, fs, control);
    scan->StartFrom(std::move(base));
    ZSIM_RETURN_IF_ERROR(scan->CheckBudget());
    // A saved table above this scan's --max-memory would be sampled, which renumbers the
    // entries the records name: then the tree is read again, under the budget.
    if (scan->BaseFitsBudget()) {
      state::ScanState s = scan->Run();
      *summary = scan->since_summary();
      if (scan->since_complete() || s.partial) return s;
    }
  }
  // The base could not give the full scan's figures: read everything.
  *summary = SinceSummary{};
  summary->full_rescan = true;
  ScanControl full = control;
  full.record_files = true;
  Result<state::ScanState> s = ScanToState(options, fs, full);
  if (s.ok()) summary->read = s->input.files;  // records are dropped when the tables were sampled
  return s;
}

Result<ScanResult> RunScan(const ScanOptions& options, io::FileSystem* fs,
                           const ScanControl& control) {
  Result<state::ScanState> state = ScanToState(options, fs, control);
  if (!state.ok()) return state.status();
  return finish::Finish(*state, finish::ReportOptionsOf(state->options));
}

TopUpForecast ForecastTopUpOf(const ScanOptions& options, const TopUpPlanned& planned,
                              const std::vector<double>& codec_seconds,
                              const std::vector<uint64_t>& codec_bytes,
                              const std::vector<uint64_t>& row_block_sizes, int threads) {
  const size_t settings = options.compressions.size();
  TopUpForecast f;
  f.blocks = planned.blocks;
  f.bytes = planned.bytes;
  if (settings == 0) return f;
  std::vector<bool> row_taken(row_block_sizes.size(), false);
  for (size_t i = 0; i < planned.codec_bytes.size(); ++i) {
    if (planned.codec_bytes[i] == 0) continue;
    const size_t c = i % settings;
    if (i / settings < row_taken.size()) row_taken[i / settings] = true;
    const double nominal = estimate::NominalCodecBytesPerSecond(options.compressions[c]);
    const bool measured = c < codec_bytes.size() && c < codec_seconds.size() && codec_bytes[c] > 0;
    const double per_byte = measured      ? codec_seconds[c] / double(codec_bytes[c])
                            : nominal > 0 ? 1.0 / nominal
                                          : 0.0;
    f.codec_cpu_seconds += double(planned.codec_bytes[i]) * per_byte;
  }
  for (size_t r = 0; r < row_taken.size(); ++r) {
    if (row_taken[r]) f.block_sizes.push_back(row_block_sizes[r]);
  }
  f.rows = f.block_sizes.size();
  f.volblocksize = options.volblocksize.has_value();
  f.seconds = f.codec_cpu_seconds / double(std::max(1, threads));
  return f;
}

}  // namespace zsim::pipeline
