// engine/pipeline/scan.h
//
// The pipeline module, overview. RunScan reads every input once and models it for every
// (recordsize, compression) setting at once:
//
//   walk (serial) -> chunk of a file (serial) -> read + records + fingerprint + DDT insert +
//   compress first sightings (parallel) -> file done (serial) ... -> state::ScanState
//
// The pipeline only fills the state (engine/state); the figures come from it through
// finish::Finish (engine/finish), which RunScan calls with the scan's own report options.
//
// One TBB parallel_pipeline; tokens in flight = 2 x threads, each worker owning one chunk buffer
// of kChunkBytes (or the largest recordsize if larger), a Compressor and scratch, so memory in
// flight is about threads x (chunk + 2 x max recordsize) plus the dedup tables. Results never
// depend on thread count or scheduling: every figure is a sum over the tables.
//
// Thread safety: RunScan may be called from any thread; it uses its own task arena.

#ifndef ZSIM_ENGINE_PIPELINE_SCAN_H_
#define ZSIM_ENGINE_PIPELINE_SCAN_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "engine/io/file_system.h"
#include "engine/pipeline/cost_forecast.h"
#include "engine/pipeline/file_pieces.h"
#include "engine/pipeline/table_gate.h"
#include "engine/pipeline/top_up.h"
#include "engine/state/scan_state.h"
#include "engine/walk/walker.h"
#include "zsim/scan_options.h"
#include "zsim/scan_result.h"

namespace zsim::pipeline {

struct Progress {
  uint64_t files_done = 0;
  uint64_t bytes_done = 0;  // logical bytes of the files/chunks finished
  // Logical bytes and files found so far: by a sizing walk running ahead of the scan when
  // progress is asked for (walk/parallel_walker.h WalkSizer), else by the scan's own walk.
  uint64_t bytes_discovered = 0;
  uint64_t files_discovered = 0;
  bool walk_finished = false;  // the figures above are the totals
  double seconds = 0;
  // Once the cost probe has measured (expected_time.h ExpectedToShow): the whole scan's expected
  // wall seconds and the codecs' share of the work. 0 before (and without a sized tree).
  double expected_seconds = 0;
  double codec_share = 0;
  // After the reading, while the top-up (top_up.h) reads blocks of rows of few unique blocks
  // again to code them: true, the blocks it read again so far, of how many in all, and the
  // seconds since it started.
  bool topping_up = false;
  uint64_t top_up_blocks = 0;
  uint64_t top_up_total = 0;
  double top_up_seconds = 0;
};

// What the top-up (top_up.h) is about to cost, once the reading has ended and it is known which
// rows it takes up: the sizing walk's forecast could not hold it (it depends on how much of the
// tree dedups away). The codecs' time is at the speeds the scan measured on this CPU (a codec
// that coded nothing yet: its nominal speed), spread over the scan's threads; the reads again
// are not counted (a few thousand blocks just read, mostly in the page cache).
struct TopUpForecast {
  uint64_t rows = 0;                  // rows of few unique blocks taken up
  std::vector<uint64_t> block_sizes;  // theirs, in row order
  bool volblocksize = false;          // the rows are a zvol's (--volblocksize)
  uint64_t blocks = 0;                // blocks read again
  uint64_t bytes = 0;
  double codec_cpu_seconds = 0;
  double seconds = 0;  // wall, on the scan's threads (a distributed scan's: every rank's)
};

// The forecast of a top-up of `planned` (per (row, setting) codec bytes, row-major): each
// setting's codec at its measured CPU seconds per byte (`codec_seconds` over `codec_bytes`, per
// setting), or its nominal speed where it coded nothing, over `threads` threads; `row_block_sizes`
// the rows' block sizes. One process's scan and a distributed scan's (engine/mpi) both tell it.
TopUpForecast ForecastTopUpOf(const ScanOptions& options, const TopUpPlanned& planned,
                              const std::vector<double>& codec_seconds,
                              const std::vector<uint64_t>& codec_bytes,
                              const std::vector<uint64_t>& row_block_sizes, int threads);

struct ScanControl {
  // When set to true the scan stops feeding the pipeline, drains, and returns a partial result
  // (ScanResult::partial). If the pipeline has not drained 0.4 s after the flag was seen (a read
  // or a stat that takes seconds, or never returns), the reads under way are abandoned, and
  // RunScan returns at once. Either way the result holds the chunks that reached the tables and
  // lists each file read in part (input.errors, "cancelled", with its bytes in the figures).
  // A file whose reads were abandoned is listed as such. The abandoned reads finish on the scan's
  // own threads, which then end (WaitForAllScans): until then they may still use `fs` and its
  // files, so `fs` must outlive them (the command's PosixFileSystem is static); `cancel` and
  // `progress` are not used again.
  const std::atomic<bool>* cancel = nullptr;
  // Called from the pipeline's serial stage at most every `progress_interval_seconds`, and after
  // the reading from the top-up's thread as often (one call at a time).
  std::function<void(const Progress&)> progress;
  double progress_interval_seconds = 0.2;
  // Called once from the pipeline's serial stage with the scan's forecast (cost_forecast.h): when
  // the sizing walk has sized the tree, or, where the cost probe runs (with `progress`, or when
  // the nominal forecast IsCostly), once it has measured the codecs on this CPU
  // (expected_time.h MeasuredForecast). Not called when the scan ends first.
  std::function<void(const CostForecast&)> forecast;
  // Called once from the scan's thread before a top-up reads anything again, with what it will
  // cost; not called where no row is taken up.
  std::function<void(const TopUpForecast&)> top_up_forecast;
  // When set, the scan takes its files from the source this returns instead of walking
  // options.paths itself (a distributed scan's share, engine/mpi). The source's items must come
  // from a walk of options.paths (item.root indexes them). The sizing walk (progress, the
  // sampling plan) still walks all of options.paths, so the plan is that of the whole input.
  std::function<std::unique_ptr<walk::WalkSource>()> source;
  // For the source's pieces of files (walk::WalkItem::piece_end != 0): called from the serial
  // stage once a piece's chunks are all processed, with what it found; after an interrupt,
  // from the scan's own thread once the pipeline has ended, for each piece read in part (its
  // chunks that reached the tables, and the interrupt as its failure). The scan counts neither
  // the file nor its shape: the caller adds the pieces up and counts each file once
  // (StateOfPiecedFiles). Pieces are read only when the source hands them out.
  std::function<void(const PieceSums&)> piece_done;
  // When set: per glob of options.excludes, how many walked entries it excluded (an entry several
  // globs match counts for each; an excluded directory once, its contents never walked). This
  // process's walk only: under a distributed scan, this rank's share.
  std::vector<uint64_t>* exclude_matches = nullptr;
  // Keep a record of every file read (state::FileRecord: about 170 bytes and its path per file,
  // 4 bytes per block per recordsize), so that a saved state can be the base of a --since scan.
  // Dropped when the tables end up sampled (--sample, --max-memory). A piece of a file gives its
  // blocks to its PieceSums instead (with `record_keys`), for StateOfPiecedFiles.
  bool record_files = false;
  // Each record, and each linked file (state::LinkedFile), keeps per row the key of every block
  // it read (FileRecord::keys, LinkedFile::keys, 16 bytes a block) instead of its table entry's
  // reference, and so does each piece of a file with `record_files` (PieceSums::keys): the
  // records and links of a distributed scan's rank saving a state, whose table entries move to
  // other ranks (engine/mpi).
  bool record_keys = false;
  // A distributed scan's exchange of table entries while it reads (engine/mpi/table_stream.h).
  // When set, `tables_started` is called once from the scan's thread with the rows' tables (in
  // row order) before the first chunk is read; from then until the pipeline has drained, the scan
  // changes the tables only while it holds `table_gate` shared (see TableGate), and whoever holds
  // it exclusively may read out, drop and merge into them. After the pipeline the scan reads
  // only their sample shift and overflow flag (atomics) before returning them in the state.
  TableGate* table_gate = nullptr;
  std::function<void(const std::vector<ddt::DedupTable*>&)> tables_started;
  // Called from the serial stage after each chunk, once the tables are sampled to the budget,
  // not holding `table_gate`.
  std::function<void()> chunk_done;
  // A distributed scan's census (engine/mpi/census.h), when the sampled codecs follow levels
  // (not under --sample): with `census_refcount` not 0 the tables say kBecameHeavy at that many
  // references (this process's own). `shipped_before` is true for a key read here before and
  // shipped to its owner since (table_stream.h): such a first sighting is not counted again in
  // the rare classes (estimate/anchor_class.h), and where `shipped_repeats` it is treated as a
  // repeated one: every codec runs on it, the sampled ones whatever the key's level (the count
  // at ceil(8/N), which cannot see the key's count any more). Called from the workers while they
  // hold `table_gate` shared.
  uint32_t census_refcount = 0;
  std::function<bool(const ddt::Fingerprint&)> shipped_before;
  bool shipped_repeats = false;
  // A distributed scan's census after the exchange (engine/mpi/heavy_census.h): when set, called
  // from the serial stage for each file or piece of a file the scan reads, with its path, the
  // bytes [begin, begin + length) it reads and whether the path is opened following symlinks; it
  // returns the origin of the item's first 512 bytes (0: none), and a block's origin, given to
  // the tables' Insert, is that plus the block's offset in the item / 512.
  std::function<uint64_t(const std::string& path, uint64_t begin, uint64_t length, bool follow)>
      origin_of_item;
  // The top-up of rows of few unique blocks (top_up.h). False: none, as where it cannot run (a
  // block changed since it was read): the intervals of rows left with few sampled blocks (tests).
  bool top_up = true;
  // With `top_up`: the interval top-up too (estimate/interval_top_up.h). False: a sampled
  // codec keeps its sample's interval, however wide (tests of the budget's sampling itself).
  bool interval_top_up = true;
  // A distributed scan's top-up (engine/mpi/distributed_top_up.h): when set (with `top_up`),
  // the scan lists the first sightings its sampled codecs skipped there, one row per row, and
  // leaves the top-up to the caller, after the tables' exchange (shared: an abandoned scan's
  // workers may still list after ScanToState has returned). Unset, a scan of this process alone
  // tops up itself; a distributed one (`table_gate` set) does not.
  std::shared_ptr<SkippedBlocks> skipped_blocks;
};

// What ScanSince did.
struct SinceSummary {
  uint64_t kept = 0;     // files whose record matched: not read
  uint64_t read = 0;     // files new, changed or failed before: read
  uint64_t dropped = 0;  // base records taken out (changed, gone, failed before)
  // Base records of files an interrupted scan had not listed: gone, or not reached (left out of
  // the partial state, which is no base anyway).
  uint64_t not_reached = 0;
  // The base could not give the full scan's figures (the tree shrank below the sample its
  // codecs ran on, or the tables outgrew --max-memory): every file was read again.
  bool full_rescan = false;
};

// Runs the scan and reports it: Finish(ScanToState(...), the scan's report options). Fails
// (kInvalidArgument) only for options ValidateScanOptions refuses; every problem with an input path
// is recorded in the result (input.errors, input.skipped), never a failure of the scan.
Result<ScanResult> RunScan(const ScanOptions& options, io::FileSystem* fs,
                           const ScanControl& control = {});

// Runs the scan and returns what it knows, for Finish, Merge or a state file. Fails as RunScan.
Result<state::ScanState> ScanToState(const ScanOptions& options, io::FileSystem* fs,
                                     const ScanControl& control = {});

// `zsim scan --since`: the state a full scan of options.paths would give (timings and
// input.bytes_read aside: it counts what this run read), reading only the files whose record in
// `base` (a state saved with file records) does not match the walk: new ones, and those whose
// device, inode, size, mtime or ctime changed; the blocks of those and of the files gone are
// taken back out of the tables. Fails (kInvalidArgument) as ScanToState, and when `base` cannot
// serve these options (state::CheckSince), before reading anything.
Result<state::ScanState> ScanSince(const ScanOptions& options, state::ScanState base,
                                   io::FileSystem* fs, const ScanControl& control = {},
                                   SinceSummary* summary = nullptr);

// A file read in pieces: the walk's item (piece fields aside) and every piece's sums added up.
struct PiecedFile {
  walk::WalkItem item;
  PieceSums sums;
};

// The state of files read in pieces (the other scans' states hold their blocks), each counted
// as one scan of the whole file counts it: the file and its bytes, its shape per setting, its
// breakdown rows and whole-file content, or its error (the first failed piece's) and no shape.
// A file whose pieces do not cover it (a scan interrupted) counts in the files and bytes found
// only, as a file one scan left unfinished does; one with no piece read is not counted at all. For
// state::Merge into the scans' merged state. `keep_records`: the pieces were read with
// ScanControl::record_files and record_keys (their sums hold their blocks' keys): each file gets
// its record (state::FileRecord, keys in place of references), and a linked one its link (its
// blocks' keys), as one scan of the whole file keeps them. REQUIRES: `options` resolved, the
// scans' own.
state::ScanState StateOfPiecedFiles(const ScanOptions& options, std::vector<PiecedFile> files,
                                    bool keep_records = false);

// The chunk size of a scan with `options` (resolved): the pieces of a file begin at multiples of
// it. At least every block size the scan cuts, so a piece holds whole records.
uint64_t ChunkBytes(const ScanOptions& options);

// The walk of options.paths a scan makes (serial with --follow-symlinks, else parallel).
// REQUIRES: options resolved (threads > 0).
std::unique_ptr<walk::WalkSource> MakeWalk(const ScanOptions& options, io::FileSystem* fs);

// Blocks until every scan started in this process has ended, abandoned ones included (their
// threads end once their reads return). For tests; the command exits with _exit instead.
void WaitForAllScans();

// Options with every default filled in (compressions, ddt format, threads, RAM).
ScanOptions ResolveOptions(const ScanOptions& options);

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_SCAN_H_
