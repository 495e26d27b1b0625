// engine/finish/tally.h
//
// Tally: from the dedup tables and the shapes of files and directories to the SettingResult of
// every (recordsize, compression): block counts, lsize/psize/asize per reference, the DDT
// histogram, zdb's ratio line, DDT footprint, metadata, `used` and `pool_alloc`.
//
// Thread safety: a value: AddFiles/AddDirectories, then Finish, from one thread at a time.

#ifndef ZSIM_ENGINE_FINISH_TALLY_H_
#define ZSIM_ENGINE_FINISH_TALLY_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/estimate/distinct_blocks.h"
#include "engine/estimate/occurrence_sample.h"
#include "engine/estimate/ratio_estimator.h"
#include "engine/finish/settled_codes.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/ddt_footprint.h"
#include "engine/zfs/metadata.h"
#include "engine/zfs/record_layout.h"
#include "zsim/scan_result.h"

namespace zsim::finish {

// The calibration's auxiliary size of a block of `lsize` bytes (FinishSampledTable): the asize it
// would take stored uncompressed. A multiple of 512, so the distinct-block sketch's 512-byte units
// add up to it exactly, and in proportion to the block's dsize (a DVA's dsize is its asize times
// the vdev's deflate ratio), so a ratio per auxiliary byte carries over to dsize without bias. The
// dsize itself is not a multiple of 512 on raidz and dRAID.
uint64_t AuxiliarySize(const zfs::AllocationModel& alloc, uint64_t lsize, int copies);

// An estimate of a count of blocks or bytes, rounded to the nearest; 0 for anything not above 0.
inline uint64_t Round(double v) { return v <= 0 ? 0 : static_cast<uint64_t>(std::llround(v)); }

// The sizes of the DDT's entries, (unique, duplicate): how often two of them differ
// (zfs::DdtKeySizeMix, zfs::DdtLeafLz4Bytes).
using KeySizeMixes = std::array<zfs::DdtKeySizeMix, 2>;
// The ZAP hashes of the DDT's entries in key order, (unique, duplicate), where the table holds
// ZFS's own keys (zfs::DdtFootprintInput::unique_hashes).
using ZapHashes = std::array<std::vector<uint64_t>, 2>;

class Tally {
 public:
  // `options`: the scan's content options with the report's allocation, RAM and DDT format.
  Tally(const ScanOptions& options, size_t rows);
  ~Tally();

  // `count` files of one shape as row `row` lays them out under setting `setting`.
  void AddFiles(size_t row, size_t setting, const state::FileShape& shape, uint64_t count);
  // `count` directories of one shape.
  void AddDirectories(const state::DirectoryShape& dir, uint64_t count);
  // Per setting, the first table column of the written keys (state::KeyColumns) that hold the
  // report's DDT keys of its compressed blocks (the scan's pool rounded outputs as the report's
  // does, zfs::SamePsizeRounding), or state::kNoKey. None before this is called.
  void set_written_keys(std::vector<size_t> columns) { written_keys_ = std::move(columns); }

  // The results of row `row` (one per setting, in the options' order). `sparse_holes` counts the
  // row's records that lie entirely in holes of the files; `distinct` counted every block of the
  // row. Sampled settings and a sampled table give estimates (exact = false, ci95). A sampled
  // table takes its referenced side from `occurrences` when given (every occurrence of level
  // sampling.occurrence_level and up went through every codec), else from its kept keys.
  // `codes` reads the table's codes as the report's pool stores them (settled_codes.h).
  std::vector<SettingResult> Finish(size_t row, uint64_t block_bytes, const ddt::DedupTable& table,
                                    const CodeSettler& codes, uint64_t sparse_holes,
                                    const state::SamplingState& sampling,
                                    const estimate::DistinctBlocks& distinct,
                                    const estimate::OccurrenceSample* occurrences = nullptr) const;

 private:
  // Finish for a table that kept 1/M of the key space (M > 1).
  std::vector<SettingResult> FinishSampledTable(size_t row, uint64_t block_bytes,
                                                const ddt::DedupTable& table,
                                                const CodeSettler& codes, uint64_t sparse_holes,
                                                const std::vector<int>& level,
                                                const estimate::DistinctBlocks& distinct,
                                                const estimate::OccurrenceSample* occurrences,
                                                int occurrence_level) const;
  // What both paths share once blocks, sizes and the histogram are known: DDT footprints,
  // metadata, compressratio, used, pool_alloc.
  // `mixes`: the sizes of the entries whose psize the path knows (a sampled setting's sampled
  // entries, a sampled table's kept ones), per class.
  // `hashes`: the entries' ZAP hashes where the table holds ZFS's own keys, else null.
  void Complete(size_t row, size_t setting, uint64_t ref_dsize, uint64_t dedup_asize,
                SettingResult* s, const KeySizeMixes& mixes,
                const ZapHashes* hashes = nullptr) const;
  // The metadata model of (row, setting) (`written_zeros`: the one of the no-dedup write path,
  // metadata_without_dedup_) told which of its files hold an embedded block, from `s`'s blocks.
  zfs::MetadataTally MetadataOf(size_t row, size_t setting, const SettingResult& s,
                                bool written_zeros = false) const;

  ScanOptions options_;
  std::vector<size_t> written_keys_;
  zfs::AllocationModel alloc_;
  size_t rows_;
  size_t settings_;
  // One metadata model per (row, setting), row-major.
  std::vector<zfs::MetadataTally> metadata_;
  // Per (row, setting), row-major: L0 blocks that are not holes, and their lsize. Exact whatever
  // the table kept: the referenced side of a sampled table's figures.
  std::vector<uint64_t> non_hole_blocks_;
  std::vector<uint64_t> non_hole_lsize_;
  // ... and their auxiliary size (AuxiliarySize).
  std::vector<uint64_t> non_hole_aux_;
  // `used` is the no-dedup figure: where the dedup=on write path turns all-zero blocks into holes
  // and the dedup=off one writes them (compression=off, 2.3.3/2.4: zfs/write_rules.h
  // ZeroBlockWrittenOnlyWithoutDedup), those blocks and the metadata over them are counted for
  // it. Per setting: does that apply; per (row, setting): the zero blocks' dsize, and the
  // metadata model with them.
  std::vector<bool> zero_written_without_dedup_;
  std::vector<uint64_t> zero_dsize_without_dedup_;
  std::vector<zfs::MetadataTally> metadata_without_dedup_;
};

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_TALLY_H_
