// engine/pipeline/file_pieces.h
//
// Files read in pieces. A distributed scan (engine/mpi) hands a large file out as byte ranges at
// chunk boundaries (walk::WalkItem::piece_end != 0), each read by one rank's scan. A chunk's
// records are the whole file's records of its range (block indexes, the last partial record
// and the layout all follow the file's size), so the pieces' blocks are exactly the blocks of
// one read of the whole file. What is per file (its shape per setting, whole-file content,
// breakdown rows, whether it changed while read) is not counted by the scans that read the
// pieces: each gives a PieceSums instead (ScanControl::piece_done), the pieces of a file add up
// (AddPiece, in any order), and StateOfPiecedFiles (scan.h) counts each file once from them.
//
// Thread safety: values.

#ifndef ZSIM_ENGINE_PIPELINE_FILE_PIECES_H_
#define ZSIM_ENGINE_PIPELINE_FILE_PIECES_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "engine/ddt/fingerprint.h"
#include "engine/estimate/occurrence_sample.h"
#include "engine/zfs/indirect_ranges.h"
#include "zsim/status.h"

namespace zsim::pipeline {

struct PieceSums {
  uint64_t file = 0;   // walk::WalkItem::piece_file: the file's number among the split ones
  uint64_t bytes = 0;  // of the file covered by the pieces added (piece_end - piece_begin)
  uint64_t pieces = 0;
  std::vector<uint64_t> non_hole;     // per (row, setting): L0 blocks that are not holes
  std::vector<uint64_t> zero_blocks;  // per row: L0 blocks read and all zero
  std::vector<uint64_t> holes;        // per row: records wholly in holes
  // Per row, [2r]: indirect-block ranges over the blocks read, [2r + 1]: over those not all
  // zero (zfs/indirect_ranges.h: pieces merge in any order).
  std::vector<zfs::IndirectRanges> ranges;
  uint64_t bytes_read = 0;
  // Order-independent sums over the featured row's records (pipeline/scan_work.h FileJob).
  uint64_t content_lo = 0, content_hi = 0;
  bool has_data = false;  // some featured-row record is not all zero
  // Per row, when the scans keep keys for their records (ScanControl::record_files and
  // record_keys): the key of every block read that the table kept, in no particular order (the
  // whole file's record and link). Empty otherwise.
  std::vector<std::vector<ddt::Fingerprint>> keys;
  // Per row, with `keys` under --sample 1/M, for a file with several names: what its sampled
  // occurrences added, by index into estimate::OccurrenceSample::sums, the cells touched only
  // (its link's, state::LinkedFile::occurrences). Empty otherwise.
  std::vector<std::vector<std::pair<uint32_t, estimate::OccurrenceSums>>> occurrences;
  // The earliest start (CLOCK_REALTIME_COARSE) of the scans that read the pieces: the file's
  // stamps vouch for its content only from before it (state/since.h StampsVouch).
  int64_t stamp_floor_ns = std::numeric_limits<int64_t>::max();
  // The failed piece that starts first (its offset and status), so the file's error is the
  // same whichever scan read which piece. Ok when none failed.
  uint64_t failed_at = std::numeric_limits<uint64_t>::max();
  Status failure;
};

// Adds the pieces of `from` into `into` (the same file).
void AddPiece(PieceSums& into, const PieceSums& from);

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_FILE_PIECES_H_
