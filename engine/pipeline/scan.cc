#include "engine/pipeline/scan.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "engine/base/mix.h"
#include "engine/base/path_spelling.h"
#include "engine/base/size_suffix.h"
#include "engine/base/thread_cpu.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/dedup_table.h"
#include "engine/ddt/fingerprint.h"
#include "engine/ddt/written_key.h"
#include "engine/estimate/anchor_class.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/distinct_blocks.h"
#include "engine/estimate/interval_top_up.h"
#include "engine/estimate/occurrence_sample.h"
#include "engine/estimate/pilot_level.h"
#include "engine/estimate/ratio_estimator.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/finish.h"
#include "engine/finish/settled_codes.h"
#include "engine/finish/tally.h"
#include "engine/pipeline/block_code.h"
#include "engine/pipeline/breakdown.h"
#include "engine/pipeline/cost_probe.h"
#include "engine/pipeline/directory_zap.h"
#include "engine/pipeline/expected_time.h"
#include "engine/pipeline/input_file.h"
#include "engine/pipeline/read_throttle.h"
#include "engine/pipeline/top_up.h"
#include "engine/state/linked_files.h"
#include "engine/state/scan_state.h"
#include "engine/state/since.h"
#include "engine/state/table_budget.h"
#include "engine/walk/parallel_walker.h"
#include "engine/walk/walker.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/record_layout.h"

namespace zsim::pipeline {
namespace {

// The cores the scan may use: its default thread count. Those of the process's CPU affinity (as
// TBB counts them), not the machine's: a rank mpirun binds to one core of two asked TBB for a
// second thread it would not give, and printed a "TBB Warning" per rank.
int MachineCores() { return std::max(1, tbb::info::default_concurrency()); }

// Chunk of a file handed to one worker. 8 MiB: large enough that a read is one big request and
// per-chunk costs (open, fstat, SEEK_DATA) vanish, small enough that threads x chunk stays modest.
constexpr uint64_t kChunkBytes = 8ull << 20;
// The codecs' CPU time reaches the progress line's pace of work every this many coded bytes
// (one clock reading each), not only at the end of each codec's pass over a chunk.
constexpr uint64_t kLiveCodecBytes = 1ull << 20;

constexpr std::align_val_t kBufferAlignment{4096};
// Workers' buffers: page-aligned (Worker::buffer).
struct AlignedDelete {
  void operator()(uint8_t* p) const { ::operator delete[](p, kBufferAlignment); }
};

using Clock = std::chrono::steady_clock;

using estimate::OccurrenceSample;
using estimate::OccurrenceSums;
using finish::AuxiliarySize;

// The level of a block occurrence in the --sample occurrence sample (estimate/occurrence_sample.h):
// trailing zero bits of a hash of (path below its input, block index, block size), so an
// occurrence has level >= L with probability 2^-L, whatever its content.
int OccurrenceLevel(uint64_t path_hash, uint64_t block_index, uint64_t block_bytes) {
  const uint64_t x = Mix64(path_hash ^ (block_index * kGoldenGamma) ^ (block_bytes << 40));
  return std::countr_zero(x | (uint64_t{1} << estimate::kMaxSampleLevel));
}

// One input file (or zvol) shared by its chunks.
struct FileJob {
  std::string path;
  uint64_t path_hash = 0;  // of the path below its input: chooses the occurrence sample
  bool is_zvol = false;
  uint64_t size = 0;  // as the walk saw it: the layout follows it
  // The bytes of the file this scan reads: [0, size), or a piece of it (file_pieces.h), which
  // the scan reports through ScanControl::piece_done instead of counting the file.
  bool piece = false;
  uint64_t begin = 0, end = 0, piece_file = 0;
  uint64_t identity = 0;   // state::FileIdentity of its device and inode
  uint64_t origin = 0;     // of its first 512 bytes (ScanControl::origin_of_item), 0: none
  uint64_t hinted_to = 0;  // its data asked for up to here (Scan::HintData; the input stage's)
  // --since: the base record a read of this file replaces (changed since the base), -1: none.
  // Its fate is set when the job is handed out, not when it is made ahead of its turn: a scan
  // stopped before then counts that file as not reached, as it does the files the walk had
  // not listed.
  int64_t replaces = -1;
  // Its item among the blocks the sampled codecs skipped (top_up.h), once it has listed one.
  std::atomic<uint32_t> skipped_item{SkippedBlocks::kNoItem};
  uint32_t root = 0;                       // index of its input path
  io::FileInfo info;                       // as the walk saw it (the file's record keeps it)
  std::unique_ptr<InputFile> input;        // one descriptor for every chunk, checked
  std::vector<zfs::RecordLayout> layouts;  // per row
  std::atomic<uint64_t> chunks_left{0};
  std::mutex mu;
  // Guarded by mu: the failure of the chunk at the lowest offset (failed_at), whatever order the
  // chunks failed in, so that the message reported does not depend on the threads' timing.
  Status status;
  uint64_t failed_at = UINT64_MAX;
  // Finished as interrupted (Scan::FinishOpenJobs): the status is final, and a worker whose
  // read returns after an abandon changes nothing. Guarded by mu.
  bool closed = false;
  // Per (row, setting): L0 blocks that are not holes (data or embedded). Metadata model input.
  std::vector<std::atomic<uint64_t>> non_hole;
  std::vector<std::atomic<uint64_t>> zero_blocks;  // per row: L0 blocks read and all zero
  std::vector<std::atomic<uint64_t>> holes;        // per row: records wholly in holes
  // Per row, [2r]: the ranges of its indirect blocks over the blocks read, [2r + 1]: over those
  // not all zero (zfs/indirect_ranges.h), the chunks merged as they finish. Guarded by mu.
  std::vector<zfs::IndirectRanges> ranges;
  // A file with several names, counted whole: the state keeps what it adds (state::LinkedFile).
  bool linked = false;
  // A chunk of it was handed to the workers (the input stage's; Scan::StartJob).
  bool handed_out = false;
  // Per row, when the scan keeps file records or the file is linked: the table entry of every
  // record read. Guarded by mu.
  std::vector<std::vector<uint32_t>> refs;
  // Per row, in place of `refs` when they keep keys (ScanControl::record_keys): the key of every
  // record read that the table kept. Guarded by mu.
  std::vector<std::vector<ddt::Fingerprint>> keys;
  // --sample 1/M, a linked file, or a piece of one whose pieces give it a link (a save's,
  // ScanControl::record_keys): per row, what its sampled occurrences added. Guarded by mu.
  std::vector<OccurrenceSample> occurrences;
  // The file's ledger: the bytes of its chunks that reached the tables (holes jumped over
  // included), and the data bytes read for them. A chunk is counted once its blocks are in the
  // tables, so a file that fails or is interrupted part-way is counted for what the figures hold
  // of it, and read bytes never exceed modelled ones.
  std::atomic<uint64_t> modelled{0}, modelled_read{0};
  FileGroups groups;  // breakdown rows
  // Order-independent hash of (record index, fingerprint) over the featured row's records:
  // equal for files with equal content, whatever order their chunks were processed in.
  std::atomic<uint64_t> content_lo{0}, content_hi{0};
  // Some featured-row record is not all zero: only such files count as whole-file duplicates
  // (zero files cost nothing with compression on and are ZFS's holes, not block cloning's).
  std::atomic<bool> has_data{false};

  void Fail(uint64_t offset, Status s) {
    std::lock_guard<std::mutex> lock(mu);
    if (!closed && offset < failed_at) {
      failed_at = offset;
      status = std::move(s);
    }
  }
};

struct Chunk {
  std::shared_ptr<FileJob> file;
  uint64_t offset = 0;
  uint64_t length = 0;  // bytes of the file in this chunk (the last may be short)
  // For the progress line's expected time (expected_time.h), filled by the worker: data bytes
  // read (holes are not), and its codecs' CPU nanoseconds and nominal CPU seconds.
  uint64_t read = 0;
  uint64_t codec_ns = 0;
  double codec_nominal_seconds = 0;
  // Data bytes of the first row's non-zero blocks seen for the first time.
  uint64_t unique = 0;
};

// A block seen for the first time, waiting for its codes.
struct FirstSeen {
  uint64_t offset;  // in the worker's buffer
  ddt::Fingerprint key;
  bool is_zero;
  // Not a first sighting: a key that has just become heavy (ddt::kHeavyRefcount) and that the
  // sampled codecs may have skipped when it was first seen. They run on it now, whatever its
  // level; the exact settings keep their codes.
  bool census = false;
  // A first sighting that is a repeated one (ScanControl::shipped_before): every codec runs.
  bool every_codec = false;
};

// Everything a worker thread owns (STYLE.md §5: built once, nothing allocated per block).
struct Worker {
  explicit Worker(size_t buffer_bytes, size_t max_block, size_t rows, size_t settings,
                  bool occurrence_sample)
      : buffer(new (kBufferAlignment) uint8_t[buffer_bytes]),
        scratch(new (kBufferAlignment) uint8_t[max_block]),
        sparse_holes(rows, 0),
        codec_ns(rows * settings, 0),
        codec_bytes(rows * settings, 0),
        zero_blocks(rows, 0),
        zero_bytes(rows, 0),
        non_hole(rows * settings, 0),
        levels(settings, 0),
        occurrences(occurrence_sample ? rows : 0, OccurrenceSample(settings)),
        linked_occurrences(occurrence_sample ? settings : 0),
        ranges(2 * rows) {}
  codec::Compressor compressor;
  // Not value-initialised: ReadChunk writes or zero-fills every byte a block reads, and zeroing
  // 8 MiB per thread up front was a visible part of short scans. Page-aligned: the kernel's copy
  // from the page cache into a buffer that malloc had placed 16 bytes past a page boundary ran at
  // half the speed (every 64-byte store straddled two cache lines), and that copy is most of a
  // fingerprint-only scan's time.
  std::unique_ptr<uint8_t[], AlignedDelete> buffer;
  std::unique_ptr<uint8_t[], AlignedDelete> scratch;
  std::vector<uint64_t> sparse_holes;  // per row: records entirely inside a file's holes
  std::vector<std::pair<uint64_t, uint64_t>> extents;  // data ranges of the current chunk
  std::vector<uint64_t> codec_ns, codec_bytes;         // per (row, setting)
  // zstd early abort's probe runs, left out of codec_ns (not zstd's speed) but counted as work by
  // the expected time, as the cost probe times them. (The written keys' checksums, also left out
  // of codec_ns, are not: the probe does not compute them.)
  uint64_t aside_ns = 0;
  uint64_t live_ns = 0;  // the current chunk's codec nanoseconds already in Scan::live_
  BreakdownCollector::Local sampled;              // every row's sampled references
  std::vector<uint64_t> zero_blocks, zero_bytes;  // per row: all-zero records, their lsize
  // The current row's first sightings in the chunk, and their codes (block-major).
  std::vector<FirstSeen> first_seen;
  std::vector<uint64_t> non_hole;  // per (row, setting), the current chunk's non-hole blocks
  std::vector<ddt::PsizeCode> first_codes;
  // Per first sighting: its anchor class had met at most estimate::kRareClassBlocks blocks
  // (Scan::class_seen_), so the sampled codecs run on it whatever its level.
  std::vector<uint8_t> rare;
  // Per first sighting: a sampled codec skipped it; and the chunk's such blocks of the current
  // row, for the top-up (top_up.h).
  std::vector<uint8_t> skipped;
  // Per first sighting: zstd early abort's probe runs, shared by the block's zstd settings and
  // seeded by its lz4 setting's run (codec::EarlyAbortProbes).
  std::vector<codec::EarlyAbortProbes> probes;
  std::vector<SkippedBlock> skipped_blocks;
  // Per setting, the current row's codec levels, read before the chunk's keys are inserted
  // (Scan::ProcessRows).
  std::vector<int> levels;
  // --sample 1/M: per row, the sampled occurrences' sums; the current row's sampled occurrences
  // in the chunk (offset in the buffer, level).
  std::vector<OccurrenceSample> occurrences;
  std::vector<std::pair<uint64_t, int>> occurrence_blocks;
  std::vector<uint32_t> refs;  // the current row's entry references in the chunk (file records)
  std::vector<ddt::Fingerprint> keys;  // and their keys (ScanControl::record_keys)
  // A linked file's sampled occurrences in the current row of the chunk, and the cells touched.
  OccurrenceSample linked_occurrences;
  // Per row, as FileJob::ranges, the current chunk's.
  std::vector<zfs::IndirectRanges> ranges;
  std::vector<uint32_t> linked_cells;
};

// Scans alive in this process, abandoned ones included (WaitForAllScans).
std::atomic<int> g_live_scans{0};

// After a cancel, how long the pipeline may take to drain before the reads still under way are
// abandoned (ScanControl): the partial report must come within a second whatever the disk does.
constexpr std::chrono::milliseconds kAbandonAfter{400};

// How long a scan with sampled codecs waits for the sizing walk before it reads (the codec
// budget, estimate/codec_budget.h).
constexpr std::chrono::milliseconds kPlanWait{1000};

// Seeds the hash of the input paths that names the sizing walk's plan (SamplingState::plan_scope).
constexpr uint64_t kPlanScopeSeed = 0x706c616e73636f70;  // "planscop"

// Shared by the scan and its pipeline thread, which outlives RunScan when reads are abandoned.
class Scan : public std::enable_shared_from_this<Scan> {
 public:
  Scan(const ScanOptions& options, io::FileSystem* fs, const ScanControl& control)
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
    const estimate::SamplingPlan plan =
        estimate::PlanSampling(options_.compressions, options_.exact);
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
    class_seen_ =
        std::make_unique<std::atomic<uint64_t>[]>(rows_.size() * estimate::kAnchorClasses);
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

  ~Scan() {
    if (g_live_scans.fetch_sub(1) == 1) g_live_scans.notify_all();
  }

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

// Jumps over the current file's chunks that hold no data at all (SEEK_DATA), never past its
// last chunk (which finishes the file in the output stage): their records are holes in every
// row, counted here without a worker opening the file for each. A 1 TiB file with 1 MiB of
// data is then a handful of chunks, not 131072.
void Scan::SkipHoleChunks() {
  FileJob& job = *current_;
  if (!current_file_ || job.end - job.begin <= chunk_bytes_) return;
  // A piece begins at a chunk boundary: its chunks are the whole file's.
  const uint64_t last_chunk = (job.end - 1) / chunk_bytes_ * chunk_bytes_;
  if (current_offset_ >= last_chunk) return;
  Result<std::optional<uint64_t>> data = current_file_->NextData(current_offset_);
  if (!data.ok()) return;  // the worker reading the chunk will meet and report the error
  WorkScope scope(this);
  if (!scope) return;
  const uint64_t target =
      std::min(data->has_value() ? **data / chunk_bytes_ * chunk_bytes_ : last_chunk, last_chunk);
  if (target <= current_offset_) return;
  for (size_t r = 0; r < rows_.size(); ++r) {
    const zfs::RecordLayout& l = job.layouts[r];
    const uint64_t first = current_offset_ / l.block_bytes;
    const uint64_t last = std::min(l.blocks, target / l.block_bytes);
    if (last > first) {
      skipped_holes_[r] += last - first;
      job.holes[r].fetch_add(last - first, std::memory_order_relaxed);
    }
  }
  job.chunks_left.fetch_sub((target - current_offset_) / chunk_bytes_);
  job.modelled.fetch_add(target - current_offset_, std::memory_order_relaxed);
  skipped_bytes_.fetch_add(target - current_offset_, std::memory_order_relaxed);
  current_offset_ = target;
}

// Calls fn(begin, end) for each data extent of `file` in [from, to) (SEEK_DATA / SEEK_HOLE), at
// most `most` of them, and returns where it stopped: `to` when every extent was met, else the
// end of the last one (the rest not yet looked at).
template <typename Fn>
Result<uint64_t> ForEachDataExtent(io::File& file, uint64_t from, uint64_t to, size_t most, Fn fn) {
  uint64_t pos = from;
  for (size_t met = 0; pos < to && met < most; ++met) {
    Result<std::optional<uint64_t>> data = file.NextData(pos);
    if (!data.ok()) return data.status();
    if (!data->has_value() || **data >= to) return to;
    Result<uint64_t> hole = file.NextHole(**data);
    if (!hole.ok()) return hole.status();
    const uint64_t data_end = std::min(*hole, to);
    if (data_end <= **data) return to;
    fn(**data, data_end);
    pos = data_end;
  }
  return pos < to ? pos : to;
}

// Asks the kernel (io::File::WillNeed) for `job`'s data from job.hinted_to up to `to`, so that
// the disk reads while the workers code: a scan of a cold tree is then limited by the slower of
// the two, not their sum (a worker's read is otherwise a few synchronous readaheads of the
// kernel's window, every core idle meanwhile; and a small file's, one request with nothing
// else in flight). Only data is asked for (SEEK_DATA): the pages of a hole would be zeros in
// the page cache. A sparse file's extents are followed a few at a time; past that, the next
// chunk's call goes on.
void Scan::HintData(FileJob& job, io::File& file, uint64_t to) {
  uint64_t pos = job.hinted_to;
  if (job.info.allocated >= job.size || job.end - job.begin <= chunk_bytes_) {
    // Every byte is allocated (st_blocks): no hole to look for. Or a file of one chunk, whose
    // holes cost little (it is read in one request anyway) and whose extents would cost the
    // input stage two lseeks where files compress (ZFS, btrfs: st_blocks below the size).
    if (to > pos) file.WillNeed(pos, to - pos);
    job.hinted_to = std::max(pos, to);
    return;
  }
  // An error is the worker's to meet and report when it reads: the rest is not hinted.
  const Result<uint64_t> reached = ForEachDataExtent(
      file, pos, to, 16, [&](uint64_t b, uint64_t e) { file.WillNeed(b, e - b); });
  job.hinted_to = std::max(job.hinted_to, reached.ok() ? *reached : to);
}

// The current file's data up to read_ahead_bytes_ past the chunk just handed out, then the files
// after it (FillAhead). A file of one chunk is hinted only when made ahead of its turn.
void Scan::ReadAhead() {
  if (read_ahead_bytes_ == 0) return;
  if (current_file_) {
    FileJob& job = *current_;
    job.hinted_to =
        std::max(job.hinted_to, current_offset_ - std::min(current_offset_, chunk_bytes_));
    const uint64_t to = std::min(job.end, current_offset_ + read_ahead_bytes_);
    if (to > job.hinted_to) HintData(job, *current_file_, to);
  }
  FillAhead();
}

// Makes the walk's next files into jobs ahead of their turn while what is asked for past the
// chunk handed out is under read_ahead_bytes_: each opened (the workers read through that
// descriptor) and its first bytes hinted. At most 64 files ahead (a directory of empty files).
void Scan::FillAhead() {
  const uint64_t current_left = current_ ? current_->end - current_offset_ : 0;
  // At most 8 files per chunk handed out: the chunk waits for them (a tree of small files fills
  // the 64 over its first chunks, then takes one per chunk).
  for (int pulled = 0;
       pulled < 8 && read_ahead_bytes_ != 0 && ahead_bytes_ + current_left < read_ahead_bytes_ &&
       ahead_.size() < 64 && !walk_finished_ && !cancelled_;
       ++pulled) {
    std::shared_ptr<FileJob> job = PullJob();
    if (!job) return;
    if (job->end > job->begin) {
      Reading reading(this, job->path);             // an open that hangs is listed when abandoned
      Result<io::File*> f = job->input->Open(fs_);  // a failure is the workers' to report
      if (f.ok()) {
        HintData(
            *job, **f,
            std::min(job->end, job->begin + (read_ahead_bytes_ - ahead_bytes_ - current_left)));
      }
    }
    ahead_bytes_ += job->hinted_to - job->begin;
    ahead_.push_back(std::move(job));
  }
}

bool Scan::Cancelled() {
  WorkScope scope(this);  // after an abandon, control_.cancel may be gone with the caller
  return !scope || (control_.cancel && control_.cancel->load(std::memory_order_relaxed));
}

void Scan::StartJob(const std::shared_ptr<FileJob>& job) {
  job->handed_out = true;
  if (job->replaces >= 0) {
    WorkScope scope(this);  // FinishSince reads the fates once the scan is over or abandoned
    if (scope) base_fate_[size_t(job->replaces)] = Fate::kReplaced;
  }
  std::lock_guard<std::mutex> lock(open_mu_);
  open_jobs_.emplace(job.get(), job);
}

bool Scan::NextChunk(Chunk* out) {
  for (;;) {
    // Checked before every chunk, so Ctrl-C stops a multi-terabyte image within a chunk.
    if (Cancelled()) {
      cancelled_ = true;
      return false;
    }
    if (current_ && current_offset_ < current_->end) {
      // Registered before its hole chunks are counted: an abandon between the two finishes it
      // with what it holds (SkipHoleChunks counts inside a WorkScope, which then refuses).
      if (!current_->handed_out) StartJob(current_);
      SkipHoleChunks();
      out->file = current_;
      out->offset = current_offset_;
      out->length = std::min(chunk_bytes_, current_->end - current_offset_);
      current_offset_ += out->length;
      ReadAhead();
      return true;
    }
    current_.reset();
    current_file_ = nullptr;
    std::shared_ptr<FileJob> job;
    if (!ahead_.empty()) {
      job = std::move(ahead_.front());
      ahead_.pop_front();
      ahead_bytes_ -= job->hinted_to - job->begin;
    } else {
      job = PullJob();
      if (!job) return false;
    }
    const uint64_t chunks = (job->end - job->begin + chunk_bytes_ - 1) / chunk_bytes_;
    if (chunks == 0) {
      // An empty file: no block, but a dnode. Hand it on as a zero-length chunk.
      StartJob(job);
      job->chunks_left = 1;
      out->file = std::move(job);
      out->offset = 0;
      out->length = 0;
      return true;
    }
    job->chunks_left = chunks;
    if (chunks > 1) {
      // Opened here, to find holes (SkipHoleChunks); the workers read the chunks through the same
      // descriptor. A failure here is the workers' to report for the file.
      Result<io::File*> f = job->input->Open(fs_);
      if (f.ok()) current_file_ = *f;
    }
    current_offset_ = job->begin;
    current_ = std::move(job);
  }
}

std::shared_ptr<FileJob> Scan::PullJob() {
  for (;;) {
    if (Cancelled()) {  // before each entry: a walk of a million directories stops at once
      cancelled_ = true;
      return nullptr;
    }
    std::optional<walk::WalkItem> item = walker_->Next();  // may wait on the storage
    if (!item) {
      walk_finished_ = true;
      return nullptr;
    }
    const bool is_file =
        item->kind == walk::WalkItem::Kind::kFile || item->kind == walk::WalkItem::Kind::kZvol;
    // I/O first, outside the WorkScope: a zvol's size comes from the device itself (lstat of a
    // block device says 0).
    uint64_t size = item->info.size;
    Status size_error;
    if (item->kind == walk::WalkItem::Kind::kZvol && !item->info.size) {
      Result<std::unique_ptr<io::File>> f = fs_->Open(item->path, /*follow=*/true);
      if (f.ok()) {
        size = (*f)->size();
      } else {
        size_error = f.status();
      }
    }
    {
      WorkScope scope(this);
      if (!scope) {
        cancelled_ = true;
        return nullptr;
      }
      if (!is_file) {
        switch (item->kind) {
          case walk::WalkItem::Kind::kDirectory:
            ++input_.directories;
            ++state_
                  .directories[state::DirectoryShape{item->dir_entries, item->dir_name_bytes,
                                                     item->dir_longest_name, item->dir_zap_bytes}];
            break;
          case walk::WalkItem::Kind::kSkipped:
            ++input_.skipped[std::string(walk::SkipReasonName(item->skip_reason))];
            if (item->skip_reason == walk::SkipReason::kExcluded && control_.exclude_matches) {
              walk::CountExcludeMatches(options_.excludes, item->path, control_.exclude_matches);
            }
            break;
          default:
            input_.errors.push_back(PathError{item->path, item->error.ToString()});
            break;
        }
        continue;
      }
      if (!size_error.ok()) {
        input_.errors.push_back(PathError{item->path, size_error.ToString()});
        continue;
      }
      int64_t replaced = -1;
      if (since_ && Reuse(*item, &replaced)) continue;
      std::shared_ptr<FileJob> job = MakeJob(std::move(*item), size);
      job->replaces = replaced;
      if (control_.origin_of_item) {
        job->origin = control_.origin_of_item(
            job->path, job->begin, job->end - job->begin,
            options_.follow_symlinks || job->path == options_.paths[job->root]);
      }
      return job;
    }
  }
}

std::shared_ptr<FileJob> Scan::MakeJob(walk::WalkItem item, uint64_t size) {
  auto job = std::make_shared<FileJob>();
  job->path = std::move(item.path);
  {
    // The path below its input path, seeded with the input path as given (not its position
    // among the inputs): two inputs holding the same names (two copies of one tree) are
    // sampled apart, not block for block alike, and a scan of one input samples it as a scan
    // of several does, so the states of separate scans merge into the state of one
    // (state/merge.h).
    const std::string& root = options_.paths[item.root];
    const size_t skip = job->path.compare(0, root.size(), root) == 0 ? root.size() : 0;
    job->path_hash = XXH3_64bits_withSeed(job->path.data() + skip, job->path.size() - skip,
                                          XXH3_64bits(root.data(), root.size()));
  }
  job->is_zvol = item.kind == walk::WalkItem::Kind::kZvol || options_.volblocksize.has_value();
  job->size = size;
  job->identity = state::FileIdentity(item.info.dev, item.info.ino);
  job->root = static_cast<uint32_t>(item.root);
  job->info = item.info;
  job->piece = item.piece_end != 0;
  job->begin = job->piece ? std::min(item.piece_begin, size) : 0;
  job->end = job->piece ? std::min(item.piece_end, size) : size;
  job->hinted_to = job->begin;
  job->piece_file = item.piece_file;
  // Symlinks are followed only where the walk follows them: an input path, --follow-symlinks.
  const bool follow = options_.follow_symlinks || job->path == options_.paths[item.root];
  // Pieces read apart in time must all read the version the walk listed.
  job->input = std::make_unique<InputFile>(job->path, item.info, job->size, follow,
                                           /*as_listed=*/job->piece);
  job->layouts = Layouts(job->size, job->is_zvol);
  job->non_hole = std::vector<std::atomic<uint64_t>>(rows_.size() * options_.compressions.size());
  job->zero_blocks = std::vector<std::atomic<uint64_t>>(rows_.size());
  job->holes = std::vector<std::atomic<uint64_t>>(rows_.size());
  job->ranges.resize(2 * rows_.size());
  job->linked = !job->piece && item.kind == walk::WalkItem::Kind::kFile && item.info.nlink > 1;
  if ((record_ || job->linked) && control_.record_keys) {
    job->keys.resize(rows_.size());
  } else if (record_ || job->linked) {
    job->refs.resize(rows_.size());
  }
  const bool link_piece = job->piece && item.kind == walk::WalkItem::Kind::kFile &&
                          item.info.nlink > 1 && control_.record_keys;
  if ((job->linked || link_piece) && occurrences_) {
    job->occurrences.assign(rows_.size(), OccurrenceSample(options_.compressions.size()));
  }
  job->groups = breakdown_.Groups(options_.paths[item.root], job->path);
  if (job->piece) return job;  // the file is counted once, from its pieces
  files_found_.fetch_add(1, std::memory_order_relaxed);
  bytes_found_.fetch_add(job->size, std::memory_order_relaxed);
  return job;
}

// Reads the data of [chunk.offset, chunk.offset + chunk.length) into w.buffer, holes as zeros and
// never read, and zeroes the buffer up to fill_end (the end of the chunk's last record).
Status Scan::ReadChunk(Chunk& chunk, Worker& w, io::File& file, uint64_t fill_end) {
  w.extents.clear();
  const uint64_t begin = chunk.offset;
  const uint64_t end = chunk.offset + chunk.length;
  const Result<uint64_t> listed = ForEachDataExtent(
      file, begin, end, SIZE_MAX, [&](uint64_t b, uint64_t e) { w.extents.emplace_back(b, e); });
  if (!listed.ok()) return listed.status();
  uint8_t* base = w.buffer.get();
  uint64_t cursor = begin;
  for (const auto& [b, e] : w.extents) {
    if (b > cursor) std::fill(base + (cursor - begin), base + (b - begin), uint8_t{0});
    if (throttle_) throttle_->Acquire(e - b, control_.cancel);
    ZSIM_RETURN_IF_ERROR(io::ReadFully(file, b, MutableByteView(base + (b - begin), e - b)));
    chunk.read += e - b;
    cursor = e;
  }
  if (fill_end > cursor) std::fill(base + (cursor - begin), base + (fill_end - begin), uint8_t{0});
  return Status::Ok();
}

void Scan::ProcessRows(Chunk& chunk, Worker& w) {
  const size_t settings = options_.compressions.size();
  FileJob& job = *chunk.file;
  // Per-file figures are summed here and added to the file's atomics once per chunk: threads
  // working on chunks of one big file would otherwise share those cache lines per block.
  std::fill(w.non_hole.begin(), w.non_hole.end(), 0);
  uint64_t content_lo = 0, content_hi = 0;
  bool chunk_has_data = false;  // a featured-row record that is not all zero
  for (size_t r = 0; r < rows_.size(); ++r) {
    w.first_seen.clear();
    w.occurrence_blocks.clear();
    const int occurrence_min_level = level_.load(std::memory_order_relaxed);
    // The codec levels, read before this chunk inserts any key (skip_bound_).
    for (size_t c = 0; c < settings; ++c) {
      w.levels[c] = occurrences_ ? EntryLevel(occurrence_min_level)
                                 : SettingLevel(r, c).load(std::memory_order_acquire);
    }
    const zfs::RecordLayout& layout = job.layouts[r];
    const uint64_t bs = layout.block_bytes;
    const uint64_t aux_units = AuxiliarySize(alloc_, bs, options_.copies) / 512;
    const uint64_t first = chunk.offset / bs;
    const uint64_t last = std::min(layout.blocks, (chunk.offset + chunk.length + bs - 1) / bs);
    size_t ext = 0;
    uint64_t row_zero_blocks = 0, row_holes = 0;
    w.refs.clear();
    w.keys.clear();
    // What is kept of each block read, for a record or a linked file: its key where the table
    // entries move to other ranks (record_keys), else its entry's reference.
    const bool keep_key = (record_ || job.linked) && control_.record_keys;
    const bool keep_ref = (record_ || job.linked) && !control_.record_keys;
    zfs::IndirectRanges& read_ranges = w.ranges[2 * r];
    zfs::IndirectRanges& nonzero_ranges = w.ranges[2 * r + 1];
    read_ranges.Clear();
    nonzero_ranges.Clear();
    read_ranges.StartPart(first, last, layout.blocks, bp_shift_);
    nonzero_ranges.StartPart(first, last, layout.blocks, bp_shift_);
    for (uint64_t b = first; b < last; ++b) {
      const uint64_t rec_begin = b * bs;
      const uint64_t rec_data_end = std::min(rec_begin + bs, job.size);
      while (ext < w.extents.size() && w.extents[ext].second <= rec_begin) ++ext;
      const bool has_data = ext < w.extents.size() && w.extents[ext].first < rec_data_end;
      if (!has_data) {
        ++w.sparse_holes[r];  // never written: no block pointer, in every setting
        ++row_holes;
        continue;
      }
      const ByteView block(w.buffer.get() + (rec_begin - chunk.offset), bs);
      const bool is_zero = IsAllZero(block);
      row_zero_blocks += is_zero;
      read_ranges.Add(b);
      if (!is_zero) nonzero_ranges.Add(b);
      const ddt::Fingerprint fp = ddt::ComputeFingerprint(options_.checksum, block);
      breakdown_.Sample(fp, job.groups, static_cast<uint32_t>(r), &w.sampled);
      if (r == 0) {
        content_lo += Mix64(fp.lo ^ (b * kGoldenGamma));
        content_hi += Mix64(fp.hi + b);
        if (!is_zero) chunk_has_data = true;
      }
      rows_[r].distinct->Add(fp.lo, bs, aux_units, is_zero);
      if (occurrences_ && !is_zero) {
        // Chosen by position, whatever the table keeps; every level at or above the final one
        // is complete (the level only rises).
        const int ol = OccurrenceLevel(job.path_hash, b, bs);
        if (ol >= occurrence_min_level)
          w.occurrence_blocks.emplace_back(rec_begin - chunk.offset, ol);
      }
      uint32_t ref = 0;
      const ddt::InsertOutcome outcome =
          rows_[r].table->Insert(fp, bs, is_zero, keep_ref ? &ref : nullptr,
                                 job.origin != 0 ? job.origin + (rec_begin - job.begin) / 512 : 0);
      if (keep_ref && outcome != ddt::InsertOutcome::kSampledOut) w.refs.push_back(ref);
      if (keep_key && outcome != ddt::InsertOutcome::kSampledOut) w.keys.push_back(fp);
      if (outcome == ddt::InsertOutcome::kFirst) {
        // Read here before and shipped to its owner since: the census's repeated sighting.
        const bool again =
            control_.shipped_before && control_.shipped_repeats && any_sampled_ && !occurrences_ &&
            !is_zero &&
            estimate::SampleLevel(fp.lo) < skip_bound_[r].load(std::memory_order_acquire) &&
            control_.shipped_before(fp);
        w.first_seen.push_back(FirstSeen{rec_begin - chunk.offset, fp, is_zero, false, again});
        if (r == 0 && !is_zero) chunk.unique += rec_data_end - rec_begin;
      } else if (outcome == ddt::InsertOutcome::kBecameHeavy && any_sampled_ && !occurrences_ &&
                 !is_zero &&
                 estimate::SampleLevel(fp.lo) < skip_bound_[r].load(std::memory_order_acquire)) {
        // Perhaps skipped at its first sighting: run the sampled codecs on it now (running them
        // again gives the same codes). Every heavy entry has its codes, whatever the timing
        // (not under --sample, whose sampled table does not use them).
        w.first_seen.push_back(FirstSeen{rec_begin - chunk.offset, fp, is_zero, true});
      }
      // Non-hole blocks per setting, for the metadata model: a zero block is a hole exactly
      // where the write rules say so, whatever else the block's codes say.
      uint64_t* non_hole = &w.non_hole[r * settings];
      for (size_t c = 0; c < settings; ++c) non_hole[c] += !(is_zero && zero_is_hole_[c]);
    }
    CompressFirstSightings(r, bs, w);
    if (skipped_) ListSkipped(r, job, chunk.offset, w);
    CompressOccurrences(r, bs, w, job);
    if (row_zero_blocks != 0) {
      job.zero_blocks[r].fetch_add(row_zero_blocks);
      w.zero_blocks[r] += row_zero_blocks;
      w.zero_bytes[r] += row_zero_blocks * bs;  // the file's block size: a small file's is its own
    }
    if (row_holes != 0) job.holes[r].fetch_add(row_holes, std::memory_order_relaxed);
    if (!w.refs.empty() || !w.keys.empty() || !read_ranges.empty()) {
      std::lock_guard<std::mutex> lock(job.mu);
      if (!w.refs.empty()) job.refs[r].insert(job.refs[r].end(), w.refs.begin(), w.refs.end());
      if (!w.keys.empty()) job.keys[r].insert(job.keys[r].end(), w.keys.begin(), w.keys.end());
      job.ranges[2 * r].Merge(read_ranges);
      job.ranges[2 * r + 1].Merge(nonzero_ranges);
    }
  }
  for (size_t i = 0; i < w.non_hole.size(); ++i) {
    if (w.non_hole[i] != 0) job.non_hole[i].fetch_add(w.non_hole[i], std::memory_order_relaxed);
  }
  job.content_lo.fetch_add(content_lo, std::memory_order_relaxed);
  job.content_hi.fetch_add(content_hi, std::memory_order_relaxed);
  if (chunk_has_data) job.has_data.store(true, std::memory_order_relaxed);
}

// Runs every setting over the chunk's first sightings of row `r` (and its keys that just became
// heavy), one setting at a time: the codec's state stays hot, and one pair of thread-CPU clock
// reads per (chunk, setting) gives its speed without charging it other processes' time or the
// clock's own cost per block.
BlockCodes Scan::CodeOf(Compression comp, ByteView block, bool is_zero, Worker& w) const {
  return CodeBlockOfKind(policy_, comp, block, is_zero, w.compressor,
                         MutableByteView(w.scratch.get(), block.size()), state_.code_kind);
}

void Scan::CompressFirstSightings(size_t r, uint64_t bs, Worker& w) {
  const size_t settings = options_.compressions.size();
  const size_t columns = rows_[r].table->settings();  // the settings' codes, then early abort's
  const size_t n = w.first_seen.size();
  if (n == 0) return;
  w.first_codes.assign(n * columns, ddt::kPendingCode);
  w.rare.assign(n, 0);
  w.skipped.assign(n, 0);
  // A few settings per chunk, not per block: whether some setting has an early-abort column.
  const bool any_probe = std::any_of(probe_columns_.begin(), probe_columns_.end(),
                                     [](size_t p) { return p != state::kNoProbe; });
  if (any_probe) w.probes.assign(n, codec::EarlyAbortProbes());
  for (const size_t c : order_) {
    const Compression comp = options_.compressions[c];
    const uint64_t t0 = ThreadCpuNanos();
    uint64_t bytes = 0;
    // Left out of the codec's time: early abort's runs (counted as work: Worker::aside_ns) and
    // the written keys' checksums.
    uint64_t abort_ns = 0, keys_ns = 0;
    // lz4's runs seed the block's early-abort probes (codec::EarlyAbortProbes).
    const bool seeds = any_probe && comp.algorithm == CompressionAlgorithm::kLz4;
    uint64_t live_t = t0, live_bytes = 0;  // published to live_ every kLiveCodecBytes
    // The written keys, where this build's codec writes OpenZFS's bytes (else left pending).
    const bool keyed = key_columns_[c] != state::kNoKey && WritesZfsBytes(comp);
    for (size_t i = 0; i < n; ++i) {
      const FirstSeen& f = w.first_seen[i];
      ddt::PsizeCode& code = w.first_codes[i * columns + c];
      const size_t probe = probe_columns_[c];
      const int lv = estimate::SampleLevel(f.key.lo);
      const bool rare = w.rare[i] && sampling_.anchors[c] >= 0 &&
                        census_on_[r * settings + c].load(std::memory_order_relaxed);
      if (f.census ? !sampling_.sampled[c]
                   : sampling_.sampled[c] && lv < w.levels[c] && !f.every_codec && !rare) {
        // A census entry keeps the exact settings' codes of its first sighting (kPendingCode
        // leaves them). Outside the sample: a zero block's fate is known without compressing it.
        code = f.census ? ddt::kPendingCode : state::UnsampledCode(f.is_zero, zero_is_hole_[c]);
        if (!f.census && !f.is_zero) w.skipped[i] = 1;
        if (probe != state::kNoProbe) w.first_codes[i * columns + probe] = code;
        continue;
      }
      const ByteView block(w.buffer.get() + f.offset, bs);
      const BlockCodes got = CodeOf(comp, block, f.is_zero, w);
      code = got.code;
      if (seeds) SeedLz4Probe(comp, got, &w.probes[i]);
      if (static_cast<int>(c) == class_anchor_ && !f.census && !ddt::IsHoleCode(code)) {
        // Counted before the sampled codecs run (exact settings come first in order_), and only
        // while the class may still be rare: a common class's counter is then only read, not
        // written by every core for every block. A key this rank met before and shipped to its
        // owner (a distributed scan's Bloom filter, asked only here) is coded but not counted
        // again: the counter counts the distinct keys a rank met, at most its class's in all,
        // and a false positive of the filter (a new key) is still coded.
        const int k = estimate::AnchorClass(ddt::OutputUnitsOf(code), bs);
        std::atomic<uint64_t>& seen =
            class_seen_[r * estimate::kAnchorClasses + static_cast<size_t>(k)];
        w.rare[i] = seen.load(std::memory_order_relaxed) < estimate::kRareClassBlocks &&
                    (ShippedBefore(f) ||
                     seen.fetch_add(1, std::memory_order_relaxed) < estimate::kRareClassBlocks);
      }
      if (keyed) {
        // The key ZFS would give it, from the output still in scratch (ddt/written_key.h); a
        // checksum, not the codec's work: timed apart, left out.
        const uint64_t k0 = ThreadCpuNanos();
        ddt::EncodeWrittenKey(
            WrittenKeyWord(policy_, bs, got, MutableByteView(w.scratch.get(), bs)),
            std::span<ddt::PsizeCode>(&w.first_codes[i * columns + key_columns_[c]],
                                      ddt::kWrittenKeyColumns));
        keys_ns += ThreadCpuNanos() - k0;
      }
      if (probe != state::kNoProbe) {
        // zstd early abort's runs (lz4, zstd-1) are not zstd's speed: timed apart, left out.
        const uint64_t p0 = ThreadCpuNanos();
        w.first_codes[i * columns + probe] =
            EarlyAbortCode(block, code, w.compressor,
                           MutableByteView(w.scratch.get(), block.size()), &w.probes[i]);
        abort_ns += ThreadCpuNanos() - p0;
      }
      bytes += bs;
      live_bytes += bs;
      if (live_bytes >= kLiveCodecBytes) {
        const uint64_t now = ThreadCpuNanos();
        live_.codec_ns.fetch_add(now - live_t, std::memory_order_relaxed);
        w.live_ns += now - live_t;
        live_t = now;
        live_bytes = 0;
      }
    }
    w.codec_ns[r * settings + c] += ThreadCpuNanos() - t0 - abort_ns - keys_ns;
    w.aside_ns += abort_ns;
    w.codec_bytes[r * settings + c] += bytes;
  }
  for (size_t i = 0; i < n; ++i) {
    const std::span<const ddt::PsizeCode> codes(w.first_codes.data() + i * columns, columns);
    rows_[r].table->SetCodes(w.first_seen[i].key, codes);
  }
}

void Scan::RaiseSettingLevel(size_t r, size_t c, int level) {
  std::atomic<int>& current = SettingLevel(r, c);
  if (level <= current.load(std::memory_order_relaxed)) return;
  if (level > skip_bound_[r].load(std::memory_order_relaxed)) {
    skip_bound_[r].store(level, std::memory_order_release);
  }
  current.store(level, std::memory_order_release);
}

void Scan::ListSkipped(size_t r, FileJob& job, uint64_t chunk_offset, Worker& w) {
  w.skipped_blocks.clear();
  if (!skipped_->Claim(r)) return;         // the row skipped more keys than a top-up takes
  uint32_t item = SkippedBlocks::kNoItem;  // the file's, once it lists a block
  for (size_t i = 0; i < w.first_seen.size(); ++i) {
    if (!w.skipped[i]) continue;
    if (item == SkippedBlocks::kNoItem) {
      const bool follow = options_.follow_symlinks || job.path == options_.paths[job.root];
      item = skipped_->ItemOf(&job.skipped_item, job.path, follow);
    }
    w.skipped_blocks.push_back(
        SkippedBlock{w.first_seen[i].key, chunk_offset + w.first_seen[i].offset, item});
  }
  if (!w.skipped_blocks.empty()) skipped_->Add(r, w.skipped_blocks);
}

// While the top-up runs, a thread that reports progress every progress interval (at least 10 ms),
// outside its lock; Stop (or the end of the scope: an exception from the top-up) ends it, then
// reports the blocks read again in all.
class Scan::TopUpTicker {
 public:
  TopUpTicker(Scan* scan, const std::atomic<uint64_t>* done) : scan_(scan) {
    if (!scan_->control_.progress) return;
    scan_->top_up_done_ = done;
    thread_ = std::thread([this] {
      const auto interval =
          std::chrono::duration<double>(std::max(scan_->control_.progress_interval_seconds, 0.01));
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
        lock.unlock();
        scan_->MaybeReportProgress(true);
        lock.lock();
      }
    });
  }
  ~TopUpTicker() { Stop(); }
  void Stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    scan_->MaybeReportProgress(true);
    scan_->top_up_done_ = nullptr;
  }

 private:
  Scan* scan_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

void Scan::TopUp(const std::vector<int>& budget) {
  const size_t settings = options_.compressions.size();
  std::vector<uint64_t> codec_ns(rows_.size() * settings, 0), codec_bytes(codec_ns.size(), 0);
  // The progress line goes on during the reads again (they may take a while at large recordsizes),
  // from a thread of its own: the workers only count.
  std::atomic<uint64_t> done{0};
  // The ticker starts once the rows are planned and their cost told (a line of its own on
  // stderr, which a progress line drawn meanwhile would run into), the top-up's pace with it.
  std::optional<TopUpTicker> ticker;
  const TopUpStats stats =
      TopUpRows(options_, fs_, &rows_, *skipped_, budget,
                RecodeSpec{state_.code_kind, probe_columns_, key_columns_, 0},
                RecodeControl{throttle_.get(), control_.cancel, &done}, &sampling_, &codec_ns,
                &codec_bytes, control_.interval_top_up, [&](const TopUpPlanned& planned) {
                  top_up_total_.store(planned.blocks, std::memory_order_relaxed);
                  if (control_.top_up_forecast) control_.top_up_forecast(ForecastTopUp(planned));
                  top_up_start_ = Clock::now();
                  ticker.emplace(this, &done);
                });
  if (ticker) ticker->Stop();
  // Its codecs' work, with the workers' (added to the rows at the scan's end).
  for (size_t i = 0; i < codec_ns.size(); ++i) {
    rows_[i / settings].codec_seconds[i % settings] += static_cast<double>(codec_ns[i]) * 1e-9;
    rows_[i / settings].codec_bytes[i % settings] += codec_bytes[i];
  }
  // An interrupt during the top-up: the rows not yet done keep their levels, the scan says it
  // is partial.
  if (control_.cancel && control_.cancel->load()) cancelled_ = true;
  // A row a full scan would top up, whose kept files' blocks lack the codes: not what a full scan
  // gives (a base scanned without the top-up, or for a larger tree).
  if (since_ && stats.unplaced_rows != 0) since_complete_ = false;
  skipped_ = nullptr;
  own_skipped_.reset();
}

// --sample 1/M: every setting over the chunk's sampled occurrences of row `r` (non-zero blocks),
// into the worker's sums per occurrence level.
void Scan::CompressOccurrences(size_t r, uint64_t bs, Worker& w, FileJob& job) {
  if (w.occurrence_blocks.empty()) return;
  // A linked file's own sums too, so a merge can take them back out (state::LinkedFile), and
  // those of a piece of one (MakeJob: its occurrences sized then, read-only since).
  OccurrenceSample* linked = !job.occurrences.empty() ? &w.linked_occurrences : nullptr;
  const size_t settings = options_.compressions.size();
  const double u = double(AuxiliarySize(alloc_, bs, options_.copies));
  OccurrenceSample& sample = w.occurrences[r];
  const int stratum = bs >= rows_[r].block_bytes ? 0 : 1;
  for (size_t c = 0; c < settings; ++c) {
    const Compression comp = options_.compressions[c];
    const uint64_t t0 = ThreadCpuNanos();
    for (const auto& [offset, level] : w.occurrence_blocks) {
      const ByteView block(w.buffer.get() + offset, bs);
      const zfs::BlockWrite bw = codec::CompressZfsBlock(policy_, comp, block, false, w.compressor,
                                                         MutableByteView(w.scratch.get(), bs));
      auto add = [&](OccurrenceSums& o) {
        if (bw.kind == zfs::BlockKind::kEmbedded) {
          o.AddEmbedded(double(bs), u, double(bw.psize));
        } else {
          const zfs::BlockSpace space = alloc_.Block(bw.psize, options_.copies);
          o.AddStored(double(bs), u, double(bw.psize), double(space.dsize), double(space.asize));
        }
      };
      add(sample.At(c, stratum, level));
      if (linked != nullptr) {
        OccurrenceSums& l = linked->At(c, stratum, level);
        w.linked_cells.push_back(static_cast<uint32_t>(&l - linked->sums.data()));
        add(l);
      }
    }
    w.codec_ns[r * settings + c] += ThreadCpuNanos() - t0;
    w.codec_bytes[r * settings + c] += bs * w.occurrence_blocks.size();
  }
  if (linked == nullptr) return;
  std::sort(w.linked_cells.begin(), w.linked_cells.end());
  w.linked_cells.erase(std::unique(w.linked_cells.begin(), w.linked_cells.end()),
                       w.linked_cells.end());
  {
    std::lock_guard<std::mutex> lock(job.mu);
    for (uint32_t i : w.linked_cells) job.occurrences[r].sums[i].Merge(linked->sums[i]);
  }
  for (uint32_t i : w.linked_cells) linked->sums[i] = OccurrenceSums();
  w.linked_cells.clear();
}

void Scan::Process(Chunk& chunk, Worker& w) {
  FileJob& job = *chunk.file;
  if (chunk.length == 0) return;
  // A chunk is read and counted even when another chunk of the file has failed: what a file
  // that fails part-way leaves in the tables is every chunk that could be read, the same set
  // whatever order the threads reach them in (docs/inputs.md).
  if (abandoned_.load()) return;
  const uint64_t at = chunk.offset;
  try {
    std::optional<Reading> reading(std::in_place, this, job.path);  // until the I/O is done
    Result<io::File*> file = job.input->Open(fs_);
    if (!file.ok()) return job.Fail(at, file.status());
    // The chunk's records end at most at the next multiple of the largest block size.
    uint64_t fill_end = chunk.offset + chunk.length;
    for (const zfs::RecordLayout& l : job.layouts) {
      const uint64_t end = std::min(chunk.offset + chunk_bytes_,
                                    (fill_end + l.block_bytes - 1) / l.block_bytes * l.block_bytes);
      fill_end = std::max(fill_end, end);
    }
    Status s = ReadChunk(chunk, w, **file, fill_end);
    if (!s.ok()) return job.Fail(at, std::move(s));
    if (abandoned_.load()) return;  // no more I/O for a result already built
    if (chunk.offset + chunk.length == job.size) {
      // The last chunk: a byte past the size seen by the walk means the file grew while read.
      uint8_t probe = 0;
      Result<size_t> more = (*file)->ReadAt(job.size, MutableByteView(&probe, 1));
      if (more.ok() && *more > 0) {
        return job.Fail(at, Status::Changed("file grew while read: more than the " +
                                            std::to_string(job.size) + " bytes listed"));
      }
    }
    if (chunk.offset == 0 && chunk.length == job.size) {
      // The whole file in this chunk: one that changed while read never reaches the tables.
      // (A file of several chunks is checked once all are done: FinishFile.)
      if (Status same = job.input->CheckUnchanged(); !same.ok())
        return job.Fail(at, std::move(same));
    }
    reading.reset();
    WorkScope scope(this);
    if (!scope) return;  // abandoned while this chunk was read: the result is built already
    live_.read.fetch_add(chunk.read, std::memory_order_relaxed);
    MaybeApplyPlan();
    const CodecWork before = CodecWorkOf(w);
    w.live_ns = 0;
    {
      std::shared_lock<TableGate> gate = ShareTables();
      ProcessRows(chunk, w);
    }
    job.modelled.fetch_add(chunk.length, std::memory_order_relaxed);
    job.modelled_read.fetch_add(chunk.read, std::memory_order_relaxed);
    const CodecWork after = CodecWorkOf(w);
    chunk.codec_ns = after.ns - before.ns;
    chunk.codec_nominal_seconds = after.nominal_seconds - before.nominal_seconds;
    live_.codec_ns.fetch_add(chunk.codec_ns - w.live_ns, std::memory_order_relaxed);
    live_.unique.fetch_add(chunk.unique, std::memory_order_relaxed);
  } catch (const std::bad_alloc&) {
    job.Fail(at, Status::OutOfMemory("out of memory while processing this file"));
  } catch (const std::exception& e) {
    job.Fail(at, Status::Internal(e.what()));
  }
}

// Per chunk until the sizing walk has finished: the sampled codecs follow the budget of the bytes
// it has found so far (a lower bound of the whole tree's, so every level used is complete at the
// final one), and once it has, the --sample occurrence sample its plan.
void Scan::MaybeApplyPlan() {
  if (!plan_wanted_ || !sizer_ || plan_applied_.load(std::memory_order_relaxed)) return;
  const bool finished = sizer_->finished();
  if (adaptive_) RaiseToBudget(SizedPlan());
  if (!finished || plan_applied_.exchange(true)) return;
  level_.store(PlannedLevel());
}

void Scan::RaiseToBudget(const estimate::Plan& sized) {
  const auto grown = [&] {
    return sized.bytes > budget_bytes_.load(std::memory_order_relaxed) ||
           sized.files > budget_files_.load(std::memory_order_relaxed);
  };
  if (!grown()) return;
  std::lock_guard<std::mutex> lock(level_mu_);
  if (!grown()) return;
  // Each part the larger: both are lower bounds of the whole tree's, and the levels only rise.
  const estimate::Plan plan{std::max(sized.bytes, budget_bytes_.load(std::memory_order_relaxed)),
                            std::max(sized.files, budget_files_.load(std::memory_order_relaxed))};
  budget_bytes_.store(plan.bytes, std::memory_order_relaxed);
  budget_files_.store(plan.files, std::memory_order_relaxed);
  const size_t settings = options_.compressions.size();
  const std::vector<int> levels = estimate::BudgetLevels(options_, sampling_.sampled, plan);
  const std::vector<bool> census = estimate::RareClassCensus(options_, sampling_.sampled, plan);
  for (size_t r = 0; r < rows_.size(); ++r) {
    for (size_t c = 0; c < settings; ++c) {
      if (sampling_.sampled[c]) RaiseSettingLevel(r, c, levels[r * settings + c]);
      if (!census[r * settings + c]) census_on_[r * settings + c].store(false);
    }
  }
}

// --max-memory: when the tables outgrow the budget, keep half as much of the key space (every
// row alike). Whether a given M is ever exceeded depends on the data only, so the final M does.
// And whatever the budget, a table nearing its shards' limit samples too (FitTablesToShards).
void Scan::EnforceTableBudget() {
  std::shared_lock<TableGate> gate = ShareTables();
  state::FitTablesToBudget(rows_, table_budget_bytes_);
  state::FitTablesToShards(rows_);
}

void Scan::FinishFile(FileJob& job) {
  {
    std::lock_guard<std::mutex> lock(open_mu_);
    open_jobs_.erase(&job);  // the caller holds the job
  }
  // Every chunk is done (or, after an interrupt, the job is closed and not ok): a file of several
  // chunks that changed since it was opened is reported (its chunks stay in the figures). A file
  // of one chunk was checked before its blocks reached the tables (Process).
  if (job.status.ok() && (job.piece || job.size > chunk_bytes_)) {
    job.status = job.input->CheckUnchanged();
  }
  if (job.piece) {
    if (control_.piece_done) control_.piece_done(SumsOf(job));
    return;
  }
  ++files_done_;
  const uint64_t modelled = job.modelled.load();
  bytes_read_ += job.modelled_read.load();
  modelled_bytes_ += modelled;
  data_bytes_ += job.modelled_read.load();
  const bool whole = job.status.ok();
  const bool linked = job.linked && whole;
  const state::FileIndirects indirects = IndirectsOf(job);
  if (record_ || linked) {
    // Also for a file that failed: the blocks of every chunk it could read are in the tables.
    state::FileRecord rec;
    rec.path = job.path;
    rec.root = job.root;
    rec.dev = job.info.dev;
    rec.ino = job.info.ino;
    rec.size = job.size;
    rec.data_bytes = job.modelled_read.load();
    rec.mtime_ns = job.info.mtime_ns;
    rec.ctime_ns = job.info.ctime_ns;
    rec.is_zvol = job.is_zvol;
    rec.failed = !whole;
    rec.has_data = job.has_data.load();
    rec.content_lo = job.content_lo.load();
    rec.content_hi = job.content_hi.load();
    for (size_t r = 0; r < rows_.size(); ++r) {
      rec.zero_blocks.push_back(job.zero_blocks[r].load());
      rec.holes.push_back(job.holes[r].load());
    }
    rec.indirects = indirects;
    {
      std::lock_guard<std::mutex> lock(job.mu);
      rec.refs = std::move(job.refs);
      rec.keys = std::move(job.keys);
    }
    if (linked) {
      // Its block references move to the link unless the record goes into the state too.
      const uint64_t bytes_read = job.modelled_read.load();
      if (record_) {
        KeepLink(rec, job.groups, job.info, bytes_read, job.occurrences);
      } else {
        KeepLink(std::move(rec), job.groups, job.info, bytes_read, job.occurrences);
      }
    }
    if (record_) {
      if (!state::StampsVouch(rec.mtime_ns, rec.ctime_ns, stamp_floor_ns_)) {
        rec.ctime_ns = state::kUntrustedStamp;
      }
      state_.records.push_back(std::move(rec));
    }
  }
  if (whole) {
    ++whole_files_;
  } else {
    // Listed with what of it is and is not in the figures. Not counted as a file; the chunks
    // that reached the tables stay in them, and count as logical (and read) bytes, in the
    // breakdown and the metadata model, so that every figure covers the same data
    // (docs/inputs.md).
    const uint64_t in_figures = std::min(job.size, modelled);
    file_errors_.push_back(
        PathError{job.path, job.status.ToString(), job.size - in_figures, in_figures});
    if (modelled == 0) return;
  }
  std::vector<uint64_t> non_hole(job.non_hole.size()), zero_blocks(rows_.size());
  for (size_t i = 0; i < non_hole.size(); ++i) non_hole[i] = job.non_hole[i].load();
  for (size_t r = 0; r < rows_.size(); ++r) zero_blocks[r] = job.zero_blocks[r].load();
  // A file in part is never a whole-file duplicate of another.
  AddFileFigures(job.layouts, modelled, non_hole, zero_blocks, indirects, job.groups,
                 ddt::Fingerprint{job.content_lo.load(), job.content_hi.load()},
                 whole && job.has_data.load(), job.identity, whole);
}

// After the pipeline, drained or abandoned (no stage touches the state again): the files an
// interrupt left part-read. A worker whose read returns later changes none of them (closed).
void Scan::FinishOpenJobs() {
  std::vector<std::shared_ptr<FileJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(open_mu_);
    for (auto& [raw, job] : open_jobs_) jobs.push_back(std::move(job));
    open_jobs_.clear();
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const auto& a, const auto& b) { return a->path < b->path; });
  for (const std::shared_ptr<FileJob>& job : jobs) {
    const bool abandoned = std::find(abandoned_files_.begin(), abandoned_files_.end(), job->path) !=
                           abandoned_files_.end();
    // A file of one chunk whose blocks all reached the tables, checked unchanged then (Process),
    // and whose output stage an abandon cut off: it is whole.
    const bool whole =
        !job->piece && job->size <= chunk_bytes_ && job->modelled.load() == job->end - job->begin;
    {
      std::lock_guard<std::mutex> lock(job->mu);
      job->closed = true;
      if (!whole && abandoned) {
        job->status =
            Status::Cancelled("abandoned: a read had not returned " +
                              std::to_string(kAbandonAfter.count()) + " ms after the interrupt");
      } else if (!whole && job->status.ok()) {
        job->status = Status::Cancelled("interrupted while it was read");
      }
    }
    FinishFile(*job);
  }
}

state::FileIndirects Scan::IndirectsOf(FileJob& job) {
  state::FileIndirects out;
  std::lock_guard<std::mutex> lock(job.mu);  // every chunk is done; the lock says who owns it
  for (size_t r = 0; r < rows_.size(); ++r) {
    out.read.push_back(job.ranges[2 * r].Counts());
    out.nonzero.push_back(job.ranges[2 * r + 1].Counts());
  }
  return out;
}

void Scan::KeepLink(state::FileRecord rec, FileGroups groups, const io::FileInfo& info,
                    uint64_t bytes_read, const std::vector<OccurrenceSample>& occurrences) {
  state::LinkedFile f;
  f.fs = state::LinkedFileSystem(rec.dev, rec.path);
  f.path = std::move(rec.path);
  f.ino = rec.ino;
  f.dev = rec.dev;
  f.size = rec.size;
  f.data_bytes = rec.data_bytes;
  f.allocated = info.allocated;
  f.mtime_ns = info.mtime_ns;
  f.ctime_ns = info.ctime_ns;
  f.directory = groups.directory;
  f.extension = groups.extension;
  f.bytes_read = bytes_read;
  f.has_data = rec.has_data;
  f.content_lo = rec.content_lo;
  f.content_hi = rec.content_hi;
  f.zero_blocks = std::move(rec.zero_blocks);
  f.holes = std::move(rec.holes);
  f.refs = std::move(rec.refs);
  f.keys = std::move(rec.keys);
  f.indirects = std::move(rec.indirects);
  for (const OccurrenceSample& sample : occurrences) {
    auto& cells = f.occurrences.emplace_back();
    for (size_t i = 0; i < sample.sums.size(); ++i) {
      if (sample.sums[i].n() != 0) cells.emplace_back(static_cast<uint32_t>(i), sample.sums[i]);
    }
  }
  f.occurrences.resize(rows_.size());
  state_.links.push_back(std::move(f));
}

void Scan::AddFileFigures(const std::vector<zfs::RecordLayout>& layouts, uint64_t size,
                          const std::vector<uint64_t>& non_hole,
                          const std::vector<uint64_t>& zero_blocks,
                          const state::FileIndirects& indirects, FileGroups groups,
                          ddt::Fingerprint content, bool has_data, uint64_t identity, bool whole) {
  state_.file_ids.push_back(identity);
  const size_t settings = options_.compressions.size();
  for (size_t r = 0; r < rows_.size(); ++r) {
    for (size_t c = 0; c < settings; ++c) {
      // All-zero blocks matter where the no-dedup write path writes them (state::FileShape).
      const uint64_t zeros = zero_written_without_dedup_[c] ? zero_blocks[r] : 0;
      ++rows_[r].files[c][state::FileShape{layouts[r].block_bytes, layouts[r].blocks,
                                           non_hole[r * settings + c], zeros,
                                           state::IndirectsFor(indirects, r, zero_is_hole_[c])}];
    }
  }
  // lsize per (row, setting): its non-hole blocks x the row's block size; per row, the
  // featured setting's.
  std::vector<uint64_t> setting_lsize(non_hole.size(), 0), setting_zero_lsize(non_hole.size(), 0);
  for (size_t i = 0; i < setting_lsize.size() && i / settings < layouts.size(); ++i) {
    const uint64_t bs = layouts[i / settings].block_bytes;
    setting_lsize[i] = non_hole[i] * bs;
    // The all-zero records that are holes in this setting's table (SettingResult::zero_lsize).
    if (zero_is_hole_[i % settings] && i / settings < zero_blocks.size()) {
      setting_zero_lsize[i] = zero_blocks[i / settings] * bs;
    }
  }
  std::vector<uint64_t> featured_lsize(layouts.size(), 0);
  for (size_t r = 0; r < layouts.size() && r * settings + featured_ < setting_lsize.size(); ++r) {
    featured_lsize[r] = setting_lsize[r * settings + featured_];
  }
  breakdown_.AddFile(groups, size, featured_lsize, setting_lsize, setting_zero_lsize, content,
                     has_data, whole);
}

std::vector<zfs::RecordLayout> Scan::Layouts(uint64_t size, bool is_zvol) const {
  std::vector<zfs::RecordLayout> layouts;
  for (const state::RowState& r : rows_) {
    layouts.push_back(is_zvol ? zfs::ZvolLayout(size, zvol_block_)
                              : zfs::FileLayout(size, r.block_bytes));
  }
  return layouts;
}

void Scan::StartFrom(state::ScanState base) {
  since_ = record_ = true;
  state_.code_kind = base.code_kind;  // new entries' codes as the base's
  state_.written_keys = base.written_keys;
  probe_columns_ = state::ProbeColumns(state_.code_kind, options_.compressions);
  key_columns_ = state::KeyColumns(options_, state_.code_kind, state_.written_keys);
  for (size_t r = 0; r < rows_.size(); ++r) {
    rows_[r].table = std::move(base.rows[r].table);
    base_codec_seconds_.push_back(std::move(base.rows[r].codec_seconds));
    base_codec_bytes_.push_back(std::move(base.rows[r].codec_bytes));
    // A key that becomes heavy goes through the sampled codecs whatever its level: a base
    // entry may have skipped them at a level the rescan never reaches.
    skip_bound_[r].store(estimate::kMaxSampleLevel + 1);
  }
  // A base of format 21 or older kept no file's data bytes: its kept files' are not known.
  data_known_ = base.input.bytes_data_known;
  base_records_ = std::move(base.records);
  base_fate_.assign(base_records_.size(), Fate::kGone);
  base_index_.reserve(base_records_.size());
  for (size_t i = 0; i < base_records_.size(); ++i) base_index_.emplace(base_records_[i].path, i);
}

bool Scan::Reuse(const walk::WalkItem& item, int64_t* replaced) {
  // A block device's contents change without its stamps: a zvol is always read.
  if (item.kind != walk::WalkItem::Kind::kFile) return false;
  const auto it = base_index_.find(item.path);
  if (it == base_index_.end()) return false;
  const state::FileRecord& rec = base_records_[it->second];
  const io::FileInfo& info = item.info;
  if (!state::Unchanged(rec, static_cast<uint32_t>(item.root), info.dev, info.ino, info.size,
                        info.mtime_ns, info.ctime_ns)) {
    *replaced = static_cast<int64_t>(it->second);  // its fate: when handed out (StartJob)
    return false;
  }
  base_fate_[it->second] = Fate::kKept;
  if (info.nlink > 1) base_linked_.emplace(it->second, info);
  input_.bytes_logical += rec.size;
  input_.bytes_data += rec.data_bytes;
  ++input_.files;
  files_found_.fetch_add(1, std::memory_order_relaxed);
  bytes_found_.fetch_add(rec.size, std::memory_order_relaxed);
  return true;
}

void Scan::FinishSince() {
  const size_t settings = options_.compressions.size();
  // Under --max-memory the tables may have been sampled during the scan, which renumbered their
  // entries: the base's references no longer name them. The caller reads everything again.
  for (const state::RowState& row : rows_) {
    if (row.table->sample_shift() != 0) {
      since_complete_ = false;
      return;
    }
  }
  std::vector<state::FileRecord> records;
  std::vector<uint64_t> non_hole(rows_.size() * settings);
  bool released = false;
  for (size_t i = 0; i < base_records_.size(); ++i) {
    state::FileRecord& rec = base_records_[i];
    if (base_fate_[i] != Fate::kKept) {
      state::ReleaseBlocks(rec, rows_);
      released = true;
      // Not listed by an interrupted walk: gone, or not reached yet.
      if (base_fate_[i] == Fate::kGone && cancelled_) {
        ++since_summary_.not_reached;
      } else {
        ++since_summary_.dropped;
      }
      continue;
    }
    ++since_summary_.kept;
    // What FinishFile and the workers added for it when it was read.
    for (size_t r = 0; r < rows_.size(); ++r) {
      for (size_t c = 0; c < settings; ++c) {
        non_hole[r * settings + c] =
            rec.refs[r].size() - (zero_is_hole_[c] ? rec.zero_blocks[r] : 0);
      }
    }
    const FileGroups groups = breakdown_.Groups(options_.paths[rec.root], rec.path);
    if (const auto linked = base_linked_.find(i); linked != base_linked_.end()) {
      // Not read by this run; no occurrences (--since does not sample the table).
      KeepLink(rec, groups, linked->second, 0, {});
    }
    const std::vector<zfs::RecordLayout> layouts = Layouts(rec.size, rec.is_zvol);
    AddFileFigures(layouts, rec.size, non_hole, rec.zero_blocks, rec.indirects, groups,
                   ddt::Fingerprint{rec.content_lo, rec.content_hi}, rec.has_data,
                   state::FileIdentity(rec.dev, rec.ino), /*whole=*/true);
    for (size_t r = 0; r < layouts.size() && r < rec.zero_blocks.size(); ++r) {
      breakdown_.AddZeroBlocks(r, rec.zero_blocks[r], rec.zero_blocks[r] * layouts[r].block_bytes);
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      skipped_holes_[r] += rec.holes[r];
      for (uint32_t ref : rec.refs[r]) {
        breakdown_.Sample(rows_[r].table->KeyOf(ref), groups, static_cast<uint32_t>(r), &replayed_);
      }
    }
    records.push_back(std::move(rec));
  }
  base_records_.clear();
  since_summary_.read = state_.records.size();
  for (state::FileRecord& rec : state_.records) records.push_back(std::move(rec));
  state_.records = std::move(records);
  if (released) state::DropUnreferenced(rows_, state_.records, state_.links);
}

bool Scan::BaseFitsBudget() const {
  return table_budget_bytes_ == 0 || state::TablesBytes(rows_) <= table_budget_bytes_;
}

void Scan::CheckSinceTables() {
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (rows_[r].table->sample_shift() != 0) since_complete_ = false;  // --max-memory
    state::RebuildDistinct(rows_[r], [&](uint64_t lsize) {
      return AuxiliarySize(alloc_, lsize, options_.copies) / 512;
    });
    for (size_t c = 0; c < options_.compressions.size(); ++c) {
      rows_[r].codec_seconds[c] += base_codec_seconds_[r][c];
      rows_[r].codec_bytes[c] += base_codec_bytes_[r][c];
    }
  }
  if (since_complete_) since_complete_ = state::CodesCover(state_);
}

PieceSums Scan::SumsOf(FileJob& job) const {
  PieceSums p;
  p.file = job.piece_file;
  p.bytes = job.modelled.load();  // the piece's bytes in the figures
  p.pieces = 1;
  for (const std::atomic<uint64_t>& n : job.non_hole) p.non_hole.push_back(n.load());
  for (const std::atomic<uint64_t>& n : job.zero_blocks) p.zero_blocks.push_back(n.load());
  for (const std::atomic<uint64_t>& n : job.holes) p.holes.push_back(n.load());
  {
    std::lock_guard<std::mutex> lock(job.mu);  // every chunk is done; the lock says who owns it
    p.ranges = job.ranges;
    p.keys = std::move(job.keys);
    for (const OccurrenceSample& sample : job.occurrences) {
      auto& cells = p.occurrences.emplace_back();
      for (size_t i = 0; i < sample.sums.size(); ++i) {
        if (sample.sums[i].n() != 0) cells.emplace_back(static_cast<uint32_t>(i), sample.sums[i]);
      }
    }
  }
  p.stamp_floor_ns = stamp_floor_ns_;
  p.bytes_read = job.modelled_read.load();
  p.content_lo = job.content_lo.load();
  p.content_hi = job.content_hi.load();
  p.has_data = job.has_data.load();
  if (!job.status.ok()) {
    p.failed_at = job.begin;
    p.failure = job.status;
  }
  return p;
}

state::ScanState Scan::CountPiecedFiles(std::vector<PiecedFile>& files) {
  start_ = Clock::now();
  const size_t settings = options_.compressions.size();
  for (PiecedFile& f : files) {
    // No piece read (an interrupted scan): not found yet, as one scan counts a file once it
    // starts reading it.
    if (f.sums.pieces == 0) continue;
    walk::WalkItem item = f.item;
    item.piece_begin = item.piece_end = 0;  // the whole file
    const uint64_t size = item.info.size;
    std::shared_ptr<FileJob> job = MakeJob(std::move(item), size);
    PieceSums& p = f.sums;
    // Not every piece read whole (an interrupted scan): the file in part, as one scan counts
    // a file it was reading when interrupted (FinishOpenJobs).
    if (p.bytes != size && p.failure.ok()) {
      p.failure = Status::Cancelled("interrupted before every piece of it was read");
    }
    job->modelled.store(p.bytes);
    job->modelled_read.store(p.bytes_read);
    for (size_t i = 0; i < job->non_hole.size() && i < p.non_hole.size(); ++i) {
      job->non_hole[i].store(p.non_hole[i]);
    }
    for (size_t i = 0; i < job->zero_blocks.size() && i < p.zero_blocks.size(); ++i) {
      job->zero_blocks[i].store(p.zero_blocks[i]);
    }
    for (size_t i = 0; i < job->holes.size() && i < p.holes.size(); ++i) {
      job->holes[i].store(p.holes[i]);
    }
    // Its blocks' keys for its record or link (ScanControl::record_keys), as the pieces' scans
    // kept them, and their stamps vouch as far as the first of those scans began.
    for (size_t r = 0; r < job->keys.size() && r < p.keys.size(); ++r) {
      job->keys[r] = std::move(p.keys[r]);
    }
    stamp_floor_ns_ = p.stamp_floor_ns;
    for (size_t r = 0; r < job->occurrences.size() && r < p.occurrences.size(); ++r) {
      std::vector<OccurrenceSums>& sums = job->occurrences[r].sums;
      for (const auto& [index, cell] : p.occurrences[r]) {
        if (index < sums.size()) sums[index].Merge(cell);
      }
    }
    for (size_t i = 0; i < job->ranges.size() && i < p.ranges.size(); ++i) {
      job->ranges[i] = p.ranges[i];
    }
    job->content_lo.store(p.content_lo);
    job->content_hi.store(p.content_hi);
    job->has_data.store(p.has_data);
    job->status = p.failure;
    FinishFile(*job);  // never opened here: nothing to check again
  }
  sampling_.setting_levels.assign(rows_.size() * settings, 0);
  for (state::RowState& row : rows_) {
    if (occurrences_) row.occurrences = OccurrenceSample(settings);
  }
  CloseInput();
  breakdown_.MoveInto({}, &state_.breakdown);
  state_.has_records = record_;  // its tables are empty, so exact
  return std::move(state_);
}

void Scan::MaybeReportProgress(bool force) {
  if (!control_.progress) return;
  const Clock::time_point now = Clock::now();
  if (!force && std::chrono::duration<double>(now - last_progress_).count() <
                    control_.progress_interval_seconds) {
    return;
  }
  last_progress_ = now;
  Progress p;
  p.files_done = files_done_;
  p.bytes_done = bytes_done_ + skipped_bytes_.load(std::memory_order_relaxed);
  p.bytes_discovered = bytes_found_.load(std::memory_order_relaxed);
  p.files_discovered = files_found_.load(std::memory_order_relaxed);
  p.walk_finished = walk_finished_;
  if (sizer_ && !walk_finished_) {
    p.walk_finished = sizer_->finished();
    p.bytes_discovered = std::max(p.bytes_discovered, sizer_->bytes());
    p.files_discovered = std::max(p.files_discovered, sizer_->files());
  }
  p.seconds = std::chrono::duration<double>(now - start_).count();
  if (forecast_) {
    // The codecs run on the same share of the blocks from the first chunk on
    // (estimate/codec_budget.h), so the work per byte read is steady enough for the pace, which
    // holds this machine's speeds, its load and its disk (expected_time.h).
    PaceState s = pace_;
    s.seconds = p.seconds;
    s.read_total = sizer_ ? sizer_->data_bytes() : 0;
    const std::optional<ProbeFigures> probed = probe_ ? probe_->figures() : std::nullopt;
    const ShownExpected shown =
        ExpectedToShow(*forecast_, s, LivePace(s), probed, probe_ != nullptr && !probe_->failed(),
                       ThreadsAtOnce());
    p.expected_seconds = shown.seconds;
    p.codec_share = shown.codec_share;
  }
  // The top-up, once it read a block again (a scan whose rows need none says nothing of it).
  if (top_up_done_ && top_up_done_->load(std::memory_order_relaxed) != 0) {
    p.topping_up = true;
    p.top_up_blocks = top_up_done_->load(std::memory_order_relaxed);
    p.top_up_total = top_up_total_.load(std::memory_order_relaxed);
    p.top_up_seconds = std::chrono::duration<double>(now - top_up_start_).count();
  }
  control_.progress(p);
}

TopUpForecast Scan::ForecastTopUp(const TopUpPlanned& planned) const {
  const size_t settings = options_.compressions.size();
  // Each codec's CPU seconds per byte as the workers measured it, over every row.
  std::vector<double> seconds(settings, 0);
  std::vector<uint64_t> bytes(settings, 0);
  for (const Worker& w : *workers_) {
    for (size_t i = 0; i < w.codec_ns.size() && i < w.codec_bytes.size(); ++i) {
      seconds[i % settings] += double(w.codec_ns[i]) * 1e-9;
      bytes[i % settings] += w.codec_bytes[i];
    }
  }
  std::vector<uint64_t> block_sizes;
  for (const state::RowState& row : rows_) block_sizes.push_back(row.block_bytes);
  return ForecastTopUpOf(options_, planned, seconds, bytes, block_sizes, ThreadsAtOnce());
}

Scan::CodecWork Scan::CodecWorkOf(const Worker& w) const {
  CodecWork work;
  work.ns = w.aside_ns;
  const size_t settings = options_.compressions.size();
  for (size_t i = 0; i < w.codec_ns.size(); ++i) {
    work.ns += w.codec_ns[i];
    const double speed = estimate::NominalCodecBytesPerSecond(options_.compressions[i % settings]);
    if (speed > 0) work.nominal_seconds += double(w.codec_bytes[i]) / speed;
  }
  return work;
}

void Scan::CountForPace(const Chunk& chunk) {
  pace_.read_done += chunk.read;
  pace_.codec_cpu_seconds += double(chunk.codec_ns) * 1e-9;
  pace_.codec_nominal_seconds += chunk.codec_nominal_seconds;
  if (pace_.first_seconds < 0) {
    pace_.first_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    pace_.first_read_done = pace_.read_done;
    live_first_read_ = live_.read.load(std::memory_order_relaxed);
    live_first_codec_ = double(live_.codec_ns.load(std::memory_order_relaxed)) * 1e-9;
  }
  if (probed_seconds_ < 0 && probe_ && probe_->figures()) {
    probed_seconds_ = std::chrono::duration<double>(Clock::now() - start_).count();
    live_probed_read_ = live_.read.load(std::memory_order_relaxed);
    live_probed_codec_ = double(live_.codec_ns.load(std::memory_order_relaxed)) * 1e-9;
  }
}

PaceState Scan::LivePace(const PaceState& s) const {
  PaceState live = s;
  live.read_done = live_.read.load(std::memory_order_relaxed);
  live.codec_cpu_seconds = double(live_.codec_ns.load(std::memory_order_relaxed)) * 1e-9;
  live.unique_done = live_.unique.load(std::memory_order_relaxed);
  live.first_read_done = live_first_read_;
  live.first_codec_cpu_seconds = live_first_codec_;
  live.probed_seconds = probed_seconds_;
  live.probed_read_done = live_probed_read_;
  live.probed_codec_cpu_seconds = live_probed_codec_;
  return live;
}

void Scan::MaybeForecast(bool pilot_only) {
  if (forecast_ || !sizer_ || !sizer_->finished()) return;
  forecast_ = ForecastCost(options_, SizedPlan(), MachineCores());
  // The probe measures the codecs for the progress line, and for the warning of a costly scan
  // where the nominal speeds (slower than this CPU's) find one.
  const std::vector<int> pilot =
      estimate::PilotBudgetLevels(options_, sampling_.sampled, adaptive_, SizedPlan());
  if (std::any_of(pilot.begin(), pilot.end(), [](int level) { return level >= 0; })) {
    std::vector<uint64_t> planned;
    for (uint64_t block : estimate::RowBlockSizes(options_)) {
      planned.push_back(estimate::PlannedBlocks(SizedPlan(), block));
    }
    // Where the interval top-up could take a setting at the end (estimate/interval_top_up.h):
    // it runs (not under --since, whose rows keep a base's codes, nor for a table --sample
    // samples), no plan anchor, the plain budget's level. --max-memory is always set (half the
    // RAM by default: ResolveOptions), and a row the top-up can take (at most kTopUpMaxBlocks
    // planned blocks, a table of a few MiB) is sampled only under a budget below that; if it is,
    // the top-up does not run and the early codes go unused, no figure changes. (The test here
    // was `max_memory_bytes == 0`, never true of a resolved scan: the foresight never ran.)
    const size_t settings = options_.compressions.size();
    std::vector<bool> foreseeable(pilot.size(), false);
    const bool runs =
        control_.top_up && control_.interval_top_up && !since_ && options_.sample_modulus <= 1;
    const std::vector<int> budget =
        estimate::BudgetLevels(options_, sampling_.sampled, SizedPlan());
    for (size_t r = 0; r < planned.size() && runs && settings != 0; ++r) {
      const std::vector<int> row(budget.begin() + ptrdiff_t(r * settings),
                                 budget.begin() + ptrdiff_t((r + 1) * settings));
      const std::vector<bool> candidate = estimate::IntervalTopUpCandidates(
          options_, sampling_.sampled, sampling_.anchors, SizedPlan(), r, row);
      for (size_t c = 0; c < settings; ++c) {
        foreseeable[r * settings + c] = pilot[r * settings + c] > 0 && candidate[c];
      }
    }
    pilot_plan_ = PilotPlan{pilot, sampling_.anchors, std::move(planned), std::move(foreseeable)};
  }
  const bool measured = control_.progress || (control_.forecast && IsCostly(*forecast_));
  if (!pilot_plan_.budget_levels.empty() || (measured && !pilot_only)) {
    walk::FileSample& sample = sizer_->file_sample();
    const int level = sample.level();
    // The probe's CPU seconds count in the pace where it shares the scan's cores
    // (expected_time.h ExpectedSeconds); with fewer threads than cores it runs on an idle one.
    if (options_.threads >= MachineCores()) {
      pace_.probe_started_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    }
    probe_ = std::make_unique<CostProbe>(fs_, sample.Take(), level, sizer_->data_bytes(), options_,
                                         policy_, forecast_->coded_shares,
                                         forecast_->codec_cpu_seconds, pilot_plan_, throttle_);
  }
}

void Scan::MaybeApplyPilot() {
  if (pilot_applied_ || !probe_ || pilot_plan_.budget_levels.empty()) return;
  const std::optional<std::vector<int>> levels = probe_->pilot_levels();
  if (!levels) return;
  pilot_applied_ = true;
  // Per (row, setting), row-major; empty when the pilot could not read its records again.
  const size_t settings = options_.compressions.size();
  std::lock_guard<std::mutex> lock(level_mu_);
  for (size_t i = 0; i < levels->size() && i < rows_.size() * settings; ++i) {
    const int level = (*levels)[i];
    if (level > 0) RaiseSettingLevel(i / settings, i % settings, level);
    // 0: the interval top-up foreseen (cost_probe.h). The codec runs on every block from here
    // on, which the top-up would otherwise read again; the levels recorded at the end are the
    // budget's all the same (every block below it is coded only from here), and the estimate
    // takes the rule's decision then.
    if (level == 0 && i < pilot_plan_.budget_levels.size() && pilot_plan_.budget_levels[i] > 0) {
      SettingLevel(i / settings, i % settings).store(0, std::memory_order_release);
    }
  }
}

void Scan::FinishPilot() {
  if (!adaptive_ || !sizer_ || cancelled_) return;
  sizer_->Wait();
  if (!sizer_->finished()) return;
  MaybeForecast(/*pilot_only=*/true);  // where the reading ended before the sizing walk
  if (!probe_ || pilot_plan_.budget_levels.empty()) return;
  // Waits for the pilot's answer, not the probe's timing after it; Ctrl-C makes the scan partial.
  while (!probe_->pilot_levels() && !probe_->finished()) {
    if (Cancelled()) {
      cancelled_ = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  probe_->Stop();
  if (!cancelled_) MaybeApplyPilot();
}

void Scan::MaybeTellForecast() {
  if (forecast_told_ || !forecast_ || !control_.forecast) return;
  if (probe_ && !probe_->failed()) {
    const std::optional<ProbeFigures> probed = probe_->figures();
    if (!probed) return;  // still measuring
    forecast_told_ = true;
    control_.forecast(MeasuredForecast(*forecast_, *probed));
    return;
  }
  // Not measured (the nominal forecast found the codecs cheap, or the probe failed): nominal.
  forecast_told_ = true;
  control_.forecast(*forecast_);
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

}  // namespace

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
  return std::max(kChunkBytes, max_block);
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
    o.threads = MachineCores();
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
