// engine/pipeline/scan_internal.h
//
// The Scan, internal to the pipeline: one run of RunScan (scan.h), shared by the pipeline's
// stages and by its thread, which outlives RunScan when reads are abandoned. Its members are
// defined by idea, one source file each:
//
//   scan.cc           construction, the pipeline's run, cancel and abandon, the public entry points
//   scan_input.cc     the serial input stage: the walk's files as jobs, chunks, holes, read-ahead
//   scan_blocks.cc    a chunk's blocks: records, fingerprints, the tables, the codecs
//   scan_levels.cc    the sampled codecs' levels: the sizing walk's budget, the pilot, --max-memory
//   scan_files.cc     the serial output stage: a finished file's figures, links, pieces
//   scan_since.cc     --since: the base's files kept, replaced or gone
//   scan_progress.cc  the progress line: the pace of work and the expected time
//   scan_top_up.cc    the top-up after the reading (top_up.h)
//
// Thread safety: as each member says; the stages' order is the pipeline's (scan.h).

#ifndef ZSIM_ENGINE_PIPELINE_SCAN_INTERNAL_H_
#define ZSIM_ENGINE_PIPELINE_SCAN_INTERNAL_H_

#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/block_code.h"
#include "engine/pipeline/breakdown.h"
#include "engine/pipeline/cost_forecast.h"
#include "engine/pipeline/cost_probe.h"
#include "engine/pipeline/expected_time.h"
#include "engine/pipeline/file_pieces.h"
#include "engine/pipeline/read_throttle.h"
#include "engine/pipeline/scan.h"
#include "engine/pipeline/scan_work.h"
#include "engine/pipeline/skipped_blocks.h"
#include "engine/pipeline/table_gate.h"
#include "engine/pipeline/top_up.h"
#include "engine/state/scan_state.h"
#include "engine/walk/parallel_walker.h"
#include "engine/walk/walker.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/record_layout.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"
#include "zsim/status.h"

namespace zsim::pipeline::internal {

// Shared by the scan and its pipeline thread, which outlives RunScan when reads are abandoned.
class Scan : public std::enable_shared_from_this<Scan> {
 public:
  Scan(const ScanOptions& options, io::FileSystem* fs, const ScanControl& control);
  ~Scan();

  // Reads every input and returns what the scan knows.
  state::ScanState Run();
  // Keeps a record of every file read (state::FileRecord): a state a later --since starts from.
  void KeepRecords() { record_ = true; }
  // --since: starts from `base` (its tables and file records) instead of empty tables, and reads
  // only the files whose record does not match the walk (state/since.h). REQUIRES: before Run,
  // state::CheckSince(base, options) ok.
  void StartFrom(state::ScanState base);
  // After Run from a base: false when its state is not what a full scan would give (the tree
  // shrank below the base's codec sample, or the tables had to be sampled): scan in full.
  bool since_complete() const { return since_complete_; }
  // The tables StartFrom loaded fit this scan's --max-memory (or it has none).
  bool BaseFitsBudget() const;
  const SinceSummary& since_summary() const { return since_summary_; }
  // The state of files others read in pieces (StateOfPiecedFiles): this scan reads nothing.
  state::ScanState CountPiecedFiles(std::vector<PiecedFile>& files);
  // Refuses a --max-memory budget the tables could not stay within even by sampling: each
  // row's distinct-block counters and its table's floor (one chunk of entries per shard) are
  // fixed, and the budget must leave room for entries beyond them (256 KiB per row).
  Status CheckBudget() const;

 private:
  bool NextChunk(Chunk* out);
  // The job's first chunk is handed out: from now on an interrupt finishes it (FinishOpenJobs).
  void StartJob(const std::shared_ptr<FileJob>& job);
  // A walked file as a job (layouts, breakdown groups), counted for the progress line (the input
  // summary counts it once finished: FinishFile).
  std::shared_ptr<FileJob> MakeJob(walk::WalkItem item, uint64_t size);
  void Process(Chunk& chunk, Worker& w);
  Status ReadChunk(Chunk& chunk, Worker& w, io::File& file, uint64_t fill_end);
  void ProcessRows(Chunk& chunk, Worker& w);
  void FinishFile(FileJob& job);
  void FinishOpenJobs();
  state::FileIndirects IndirectsOf(FileJob& job);  // per row, from its chunks' ranges
  // What a finished file adds besides its blocks: shapes, breakdown rows, its identity.
  // `size`: its bytes in the figures; `whole`: it counts as a file (not one read in part).
  // `non_hole` per (row, setting), `zero_blocks` per row.
  // `indirects`: per row, its indirect blocks (state::FileIndirects; empty rows: not known).
  void AddFileFigures(const std::vector<zfs::RecordLayout>& layouts, uint64_t size,
                      const std::vector<uint64_t>& non_hole,
                      const std::vector<uint64_t>& zero_blocks,
                      const state::FileIndirects& indirects, FileGroups groups,
                      ddt::Fingerprint content, bool has_data, uint64_t identity, bool whole);
  std::vector<zfs::RecordLayout> Layouts(uint64_t size, bool is_zvol) const;
  PieceSums SumsOf(FileJob& job) const;
  // The input summary's final figures (failed files out, errors sorted) and the file ids.
  void CloseInput();
  void MaybeReportProgress(bool force);
  // `pilot_only`: at the end of the reading, a probe only where the pilot may raise a level.
  void MaybeForecast(bool pilot_only = false);
  // Once: the forecast to control_.forecast, measured by the probe when one runs.
  void MaybeTellForecast();
  // Once the probe's pilot has given its levels (estimate/pilot_level.h): the piloted rows'
  // codecs raised to them. Serial stage, or after the pipeline.
  void MaybeApplyPilot();
  // After the pipeline of a scan that ran to its end: the pilot's levels, waited for and applied
  // (the figures take them whether or not the reading met them).
  void FinishPilot();
  // A worker's codec CPU nanoseconds so far and their nominal CPU seconds (estimate/codec_cost.h).
  struct CodecWork {
    uint64_t ns = 0;
    double nominal_seconds = 0;
  };
  CodecWork CodecWorkOf(const Worker& w) const;
  // The serial stage's account of a chunk done, for the expected time.
  void CountForPace(const Chunk& chunk);
  // `s` (the chunks done) with the live work instead (live_).
  PaceState LivePace(const PaceState& s) const;
  std::optional<CostForecast> forecast_;  // once the sizing walk has finished
  bool forecast_told_ = false;            // control_.forecast called (serial stage only)
  // With the progress line, where the nominal forecast IsCostly, or where the pilot may raise a
  // level (pilot_plan_), once the sizing walk has finished: reads ahead (cost_probe.h).
  std::unique_ptr<CostProbe> probe_;
  // The pilot's plan, set with the forecast (empty budget_levels: no pilot), and whether its
  // levels were applied (to SettingLevel, once).
  PilotPlan pilot_plan_;
  bool pilot_applied_ = false;
  // The work done so far as the workers do it, not as chunks finish: the pace of work would
  // otherwise miss up to 2 x threads chunks in flight, each up to 8 MiB of codec work, most of a
  // small tree's work (the database sample: 11 chunks). Added once per chunk and once per
  // kLiveCodecBytes of coded bytes.
  struct LiveWork {
    std::atomic<uint64_t> read{0}, unique{0}, codec_ns{0};
  };
  LiveWork live_;
  // The live work when the first chunk was done, and when the first chunk was done once the
  // probe was known (expected_time.h PaceState).
  uint64_t live_first_read_ = 0, live_probed_read_ = 0;
  double live_first_codec_ = 0, live_probed_codec_ = 0, probed_seconds_ = -1;

  // Copies: an abandoned pipeline may still run after RunScan has returned.
  const ScanOptions options_;
  io::FileSystem* fs_;
  const ScanControl control_;
  zfs::AllocationModel alloc_;  // the distinct-block sketches' auxiliary size
  zfs::WritePolicy policy_;
  state::ScanState state_;  // what the scan fills
  std::vector<state::RowState>& rows_ = state_.rows;
  uint64_t max_block_ = 0;
  uint64_t zvol_block_ = 0;  // volblocksize of zvol inputs
  uint64_t chunk_bytes_ = 0;
  size_t featured_ = 0;
  std::vector<bool> zero_is_hole_;  // per setting: ZeroBlockIsHole, decided once
  int bp_shift_ = 0;  // block pointers per indirect block, log2 (zfs/indirect_ranges.h)
  std::vector<bool> zero_written_without_dedup_;  // per setting: ZeroBlockWrittenOnlyWithoutDedup
  BreakdownCollector breakdown_;

  // Compression sampling (estimate/sample_level.h).
  state::SamplingState& sampling_ = state_.sampling;
  std::vector<size_t> order_;  // settings in the order blocks are compressed
  // The sizing walk's plan (PlanLevel of the largest block size): 0 until it has finished. The
  // --sample occurrence sample's level, and under --sample the sampled codecs' (EntryLevel).
  std::atomic<int> level_{0};
  std::atomic<bool> plan_applied_{false};
  // Without --sample, each (row, setting) of a sampled codec has its own level, which only
  // rises (estimate/codec_budget.h): the budget of the bytes the sizing walk has found so far,
  // up to the whole tree's. Written under level_mu_ only.
  std::unique_ptr<std::atomic<int>[]> setting_level_;
  std::mutex level_mu_;
  // The sized bytes and files the levels follow so far (each only grows). Guarded by level_mu_
  // for writes; read without it to return early.
  std::atomic<uint64_t> budget_bytes_{0}, budget_files_{0};
  estimate::Plan SizedPlan() const {
    return {sizer_->allocated_bytes(), sizer_->allocated_files()};
  }
  // Per row: the highest of its settings' levels, stored before any of them rises. A key that
  // becomes heavy (ddt::kHeavyRefcount) below it may have skipped a sampled codec at its first
  // sighting, and goes through the sampled codecs again (the census). The first sighting's
  // thread read its levels before inserting the key, and the heavy sighting's thread reads the
  // bound after the shard's mutex has shown it that insert: it reads a bound at least as high.
  std::unique_ptr<std::atomic<int>[]> skip_bound_;
  // The rare-class census: the setting whose code gives a block's class (-1: no census), and per
  // (row, class) the first sightings met so far (row-major, estimate::kAnchorClasses per row).
  int class_anchor_ = -1;
  std::unique_ptr<std::atomic<uint64_t>[]> class_seen_;
  // Per (row, setting): the census runs for it (estimate::RareClassCensus of the bytes sized so
  // far); only ever turned off, under level_mu_ (RaiseToBudget).
  std::unique_ptr<std::atomic<bool>[]> census_on_;
  // File records (KeepRecords) and --since (StartFrom).
  bool record_ = false;
  // CLOCK_REALTIME_COARSE when Run began: a record stamped at or after it cannot vouch for the
  // content read (state/since.h StampsVouch).
  int64_t stamp_floor_ns_ = 0;
  bool since_ = false;
  bool since_complete_ = true;
  SinceSummary since_summary_;
  enum class Fate : uint8_t { kGone, kKept, kReplaced };
  std::vector<state::FileRecord> base_records_;
  std::vector<Fate> base_fate_;
  // Kept base records of files with several names: their stat now (state::LinkedFile).
  std::unordered_map<size_t, io::FileInfo> base_linked_;
  std::unordered_map<std::string, size_t> base_index_;  // path -> base_records_
  std::vector<std::vector<double>> base_codec_seconds_;
  std::vector<std::vector<uint64_t>> base_codec_bytes_;
  BreakdownCollector::Local replayed_;  // the kept files' references
  // A walked file whose base record matches it (identity, size, mtime, ctime): counted, not read
  // (true). Else false, and `*replaced` is the base record a read of it replaces, or -1.
  bool Reuse(const walk::WalkItem& item, int64_t* replaced);
  // After the pipeline: the kept files' figures added, the others' blocks taken out.
  void FinishSince();
  // After the levels: the sketches rebuilt from the (exact) tables, and whether every entry the
  // estimates use has its codes.
  void CheckSinceTables();
  std::atomic<int>& SettingLevel(size_t r, size_t c) {
    return setting_level_[r * options_.compressions.size() + c];
  }
  // Raises the level of (r, c) to `level` if higher. REQUIRES: level_mu_ held.
  void RaiseSettingLevel(size_t r, size_t c, int level);
  // Raises every sampled codec's level to the budget of `plan`.
  void RaiseToBudget(const estimate::Plan& plan);
  bool any_sampled_ = false;
  bool adaptive_ = false;  // codec levels follow the budget (not under --sample)
  // --sample 1/M: an occurrence sample (tally.h OccurrenceSample) gives the referenced side. Its
  // level follows level_: every occurrence until the plan, then those of the plan's level and up,
  // also under --exact: that runs every codec on every kept key, and taking every occurrence
  // would compress every block read (ten times the work of an exact scan on data that dedups
  // ten to one), where the plan's 16,000 to 32,000 occurrences give the referenced side to
  // within its interval (about +-0.5% to +-2%: psize per u, with no exact codec to anchor it).
  bool occurrences_ = false;
  bool plan_wanted_ = false;  // a sampled codec or the occurrence sample needs the plan
  // --sample 1/M: log2(M). The sampled codecs run on the table's kept keys from this many levels
  // below level_ (SamplingState::occurrence_level).
  int entry_level_offset_ = 0;
  int EntryLevel(int level) const { return std::max(0, level - entry_level_offset_); }
  uint64_t plan_block_ = 0;  // the largest block size of the rows (fewest blocks)
  int PlannedLevel() const { return estimate::PlanLevel(sizer_->allocated_bytes(), plan_block_); }
  // The threads that run at once: --threads beyond the cores share them (the forecasts' pace).
  int ThreadsAtOnce() const { return std::min(options_.threads, MachineCores()); }
  void MaybeApplyPlan();
  void CompressFirstSightings(size_t r, uint64_t bs, Worker& w);
  // The top-up (top_up.h): where the first sightings of row `r` a sampled codec skipped lie, for
  // a scan that may top its rows up (skipped_). `chunk_offset`: of the worker's buffer in the file.
  SkippedBlocks* skipped_ = nullptr;
  std::unique_ptr<SkippedBlocks> own_skipped_;  // a scan that tops up itself
  void ListSkipped(size_t r, FileJob& job, uint64_t chunk_offset, Worker& w);
  // After the reading: the rows topped up, from the levels the scan ended at and the budget's.
  void TopUp(const std::vector<int>& budget);
  // What a top-up that will read and code `planned` costs (ScanControl::top_up_forecast).
  TopUpForecast ForecastTopUp(const TopUpPlanned& planned) const;
  class TopUpTicker;
  // The table code of `block` under `comp`: its raw outcome (CodeKind::kRaw), or its psize
  // rounded under the scan's policy (a --since scan from a state of rounded codes).
  BlockCodes CodeOf(Compression comp, ByteView block, bool is_zero, Worker& w) const;
  // A first sighting of a key this rank shipped to its owner before (ScanControl::shipped_before).
  bool ShippedBefore(const FirstSeen& f) const {
    return f.every_codec ||
           (control_.shipped_before && !f.is_zero && control_.shipped_before(f.key));
  }
  // Per setting, the table column of its early-abort code (state::ProbeColumns of the tables'
  // code kind), or state::kNoProbe.
  std::vector<size_t> probe_columns_;
  // Per setting, the first table column of its written keys (state::KeyColumns), or kNoKey.
  std::vector<size_t> key_columns_;
  void CompressOccurrences(size_t r, uint64_t bs, Worker& w, FileJob& job);
  // A linked file counted whole (state::LinkedFile): from its record, its stat as the walk saw
  // it, the bytes this run read of it and, under --sample, its occurrences' sums per row. Takes
  // the record's lists over (a record the state keeps too is given as a copy).
  void KeepLink(state::FileRecord rec, FileGroups groups, const io::FileInfo& info,
                uint64_t bytes_read, const std::vector<OccurrenceSample>& occurrences);
  // Dedup sampling (--max-memory): the tables' memory budget, 0 for none.
  uint64_t table_budget_bytes_ = 0;
  void EnforceTableBudget();
  // The tables' gate held shared (ScanControl::table_gate), or nothing when there is none.
  std::shared_lock<TableGate> ShareTables() {
    return control_.table_gate ? std::shared_lock<TableGate>(*control_.table_gate)
                               : std::shared_lock<TableGate>();
  }

  // Serial input stage state.
  std::unique_ptr<walk::WalkSource> walker_;
  std::unique_ptr<walk::WalkSizer> sizer_;  // when progress is shown or a codec is sampled
  std::shared_ptr<FileJob> current_;
  io::File* current_file_ = nullptr;  // current_'s open file when it has several chunks
  uint64_t current_offset_ = 0;
  std::vector<uint64_t> skipped_holes_;     // per row: records of chunks SkipHoleChunks passed
  std::atomic<uint64_t> skipped_bytes_{0};  // their bytes, for progress
  void SkipHoleChunks();
  // Read-ahead: the data asked of the kernel before the workers read it, at most
  // read_ahead_bytes_ past the chunk handed out (none under --max-rate): the current file's next
  // chunks, then the files after it, made into jobs, opened and hinted ahead of their turn
  // (ahead_, whose hinted bytes are ahead_bytes_).
  uint64_t read_ahead_bytes_ = 0;
  std::deque<std::shared_ptr<FileJob>> ahead_;
  uint64_t ahead_bytes_ = 0;
  void ReadAhead();
  void FillAhead();
  void HintData(FileJob& job, io::File& file, uint64_t to);
  // The walk's next file as a job, the entries before it that are not files counted; nullptr
  // at the walk's end (walk_finished_) or when the scan stops (cancelled_).
  std::shared_ptr<FileJob> PullJob();
  InputSummary& input_ = state_.input;

  // Files (not pieces) and their sizes as the walk found them, for the progress line.
  std::atomic<uint64_t> files_found_{0}, bytes_found_{0};
  // The files started (jobs made) and not yet finished: those an interrupt leaves part-read are
  // finished after the pipeline (FinishOpenJobs).
  std::mutex open_mu_;
  std::unordered_map<FileJob*, std::shared_ptr<FileJob>> open_jobs_;  // Guarded by open_mu_.

  // Serial output stage state.
  std::vector<PathError> file_errors_;
  // The files finished whole, and the modelled bytes of every file finished (whole, or in part:
  // FileJob::modelled), which CloseInput adds to the input summary.
  uint64_t whole_files_ = 0;
  uint64_t modelled_bytes_ = 0;
  uint64_t data_bytes_ = 0;  // of the files read: InputSummary::bytes_data
  bool data_known_ = true;   // false from a --since base that did not keep it
  uint64_t files_done_ = 0;
  uint64_t bytes_done_ = 0;
  uint64_t bytes_read_ = 0;
  PaceState pace_;  // the serial stage's, for the expected time (seconds set when reported)
  Clock::time_point start_;
  Clock::time_point last_progress_;
  // While the top-up runs (after the reading), the blocks it read again so far, for the progress
  // line (TopUp's ticker thread reports them); null before.
  const std::atomic<uint64_t>* top_up_done_ = nullptr;
  // The blocks it reads again in all (0 until its rows are planned), and when it started.
  std::atomic<uint64_t> top_up_total_{0};
  Clock::time_point top_up_start_;
  std::atomic<bool> cancelled_{false};
  // --max-rate: the workers' reads and the probe's (which holds it too: an abandoned scan's
  // probe thread is joined last).
  std::shared_ptr<ReadThrottle> throttle_;
  std::atomic<bool> walk_finished_{false};

  // Cancellation. The pipeline runs on a thread of its own while Run() watches ScanControl.cancel;
  // once it is set, the pipeline has kAbandonAfter to drain. If a read (or a walk's stat) still
  // has not returned by then, the scan is abandoned: no stage starts touching the shared state
  // again (WorkScope), Run() waits for those that are, and builds the partial result from the
  // chunks that reached the tables (FinishOpenJobs), listing the files whose reads were under
  // way as abandoned. The pipeline thread keeps the Scan alive and ends once those reads return.
  class WorkScope {
   public:
    explicit WorkScope(Scan* scan) : scan_(scan) {
      scan_->busy_.fetch_add(1);
      if (scan_->abandoned_.load()) {
        scan_->busy_.fetch_sub(1);
        scan_ = nullptr;
      }
    }
    ~WorkScope() {
      if (scan_ != nullptr) scan_->busy_.fetch_sub(1);
    }
    WorkScope(const WorkScope&) = delete;
    WorkScope& operator=(const WorkScope&) = delete;
    explicit operator bool() const { return scan_ != nullptr; }

   private:
    Scan* scan_;
  };
  // A file whose read is under way, for the list of abandoned ones.
  class Reading {
   public:
    Reading(Scan* scan, const std::string& path) : scan_(scan), path_(path) {
      std::lock_guard<std::mutex> lock(scan_->reading_mu_);
      ++scan_->reading_[path_];
    }
    ~Reading() {
      std::lock_guard<std::mutex> lock(scan_->reading_mu_);
      if (--scan_->reading_[path_] == 0) scan_->reading_.erase(path_);
    }
    Reading(const Reading&) = delete;
    Reading& operator=(const Reading&) = delete;

   private:
    Scan* scan_;
    const std::string& path_;
  };
  void RunPipeline();
  bool WaitForPipeline();  // false: abandoned
  void Abandon();
  bool Cancelled();  // the cancel flag is set or the scan abandoned: feed no more
  std::atomic<bool> abandoned_{false};
  std::atomic<int> busy_{0};  // stages inside a WorkScope
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  bool pipeline_done_ = false;  // Guarded by done_mu_.
  std::mutex reading_mu_;
  std::map<std::string, int> reading_;        // Guarded by reading_mu_.
  std::vector<std::string> abandoned_files_;  // reading_ when abandoned
  std::unique_ptr<tbb::enumerable_thread_specific<Worker>> workers_;
};

}  // namespace zsim::pipeline::internal

#endif  // ZSIM_ENGINE_PIPELINE_SCAN_INTERNAL_H_
