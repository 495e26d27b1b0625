// engine/pipeline/scan_work.h
//
// The scan's units of work, internal to the pipeline: a file being read (FileJob), the chunk of
// it one worker reads (Chunk), a block a chunk holds for the first time (FirstSeen), and what each
// worker thread owns (Worker), with the constants that size them. The Scan (scan_internal.h) and
// its source files share them; nothing outside engine/pipeline includes this header.
//
// Thread safety: a FileJob is shared by the workers of its chunks (atomics, and `mu` for the
// rest); a Chunk and a Worker belong to one thread at a time.

#ifndef ZSIM_ENGINE_PIPELINE_SCAN_WORK_H_
#define ZSIM_ENGINE_PIPELINE_SCAN_WORK_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "engine/codec/codec.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/dedup_table.h"
#include "engine/ddt/fingerprint.h"
#include "engine/estimate/occurrence_sample.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/breakdown.h"
#include "engine/pipeline/input_file.h"
#include "engine/pipeline/skipped_blocks.h"
#include "engine/zfs/indirect_ranges.h"
#include "engine/zfs/record_layout.h"
#include "zsim/status.h"

namespace zsim::pipeline::internal {

// The cores the scan may use: its default thread count (scan.cc).
int MachineCores();

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

// After a cancel, how long the pipeline may take to drain before the reads still under way are
// abandoned (ScanControl): the partial report must come within a second whatever the disk does.
constexpr std::chrono::milliseconds kAbandonAfter{400};

}  // namespace zsim::pipeline::internal

#endif  // ZSIM_ENGINE_PIPELINE_SCAN_WORK_H_
