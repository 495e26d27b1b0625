// engine/pipeline/tally.h
//
// Tally: from the dedup tables and the shapes of files and directories to the SettingResult of
// every (recordsize, compression): block counts, lsize/psize/asize per reference, the DDT
// histogram, zdb's ratio line, DDT footprint, metadata, `used` and `pool_alloc`.
//
// Thread safety: AddFile/AddDirectory from one thread at a time (the pipeline's serial stage);
// Finish after the pipeline has drained.

#ifndef ZSIM_ENGINE_PIPELINE_TALLY_H_
#define ZSIM_ENGINE_PIPELINE_TALLY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/estimate/distinct_blocks.h"
#include "engine/estimate/ratio_estimator.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/metadata.h"
#include "engine/zfs/record_layout.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_result.h"

namespace zsim::pipeline {

struct DirectoryShape {
  uint64_t entries = 0;
  uint64_t name_bytes = 0;
  uint64_t longest_name = 0;
};

// What the scan did about compression sampling (estimate/sample_level.h).
struct SamplingState {
  std::vector<bool> sampled;  // per setting: a costly codec run on a sample only
  // Every unique block at this level or above went through the sampled codecs (the scan's level
  // is 0 or this, estimate/sample_level.h PlanLevel), so the estimates use it or a higher one.
  // 0: every unique block did (the exact path).
  int complete_level = 0;
  // --sample 1/M: the level of the occurrence sample (tally.h OccurrenceSample) at and above
  // which every occurrence went through every codec. The table's entries use complete_level,
  // log2(M) lower: the table keeps 1/M of the keys, so the sampled codecs meet as many of them
  // as they would meet keys in a full table at the planned level.
  int occurrence_level = 0;
  // Per setting: the exact setting whose psize is the auxiliary variable of a sampled setting's
  // ratio estimates (estimate/sample_level.h PlanSampling): a costly codec's psize follows a
  // cheaper codec's far more closely than it follows lsize, so the same interval needs a much
  // smaller sample. -1: lsize is the auxiliary.
  std::vector<int> anchors;
};

// A sample of block occurrences (references, not keys) of one row, for the referenced side of a
// table that keeps 1/M of the key space (--sample 1/M). Occurrences are chosen by a hash of the
// file's path and the block's index (scan.cc OccurrenceLevel), never by content: a key referenced a
// million times is then met in proportion to its references and each occurrence weighs at most
// one block, where a sample of kept keys takes or misses all of its references at once. Sums
// per setting, per stratum (0: full blocks, 1: a file's single smaller block, as the table's
// strata) and per occurrence level (0..estimate::kMaxSampleLevel); non-zero blocks only (the
// table keeps every all-zero key).
struct OccurrenceSums {
  uint64_t ne = 0;  // occurrences not embedded
  double lsize = 0, lsize_ne = 0, asize = 0, emb_bytes = 0;
  // x = the occurrence's auxiliary size u, y = its psize or dsize (0 when embedded): their
  // counts and sums are the occurrences', so they are not kept twice.
  estimate::RatioEstimator psize_per_u, dsize_per_u;
  uint64_t n() const { return psize_per_u.n(); }
  double u() const { return psize_per_u.sum_x(); }
  double psize() const { return psize_per_u.sum_y(); }
  double dsize() const { return dsize_per_u.sum_y(); }
  // One occurrence of `lsize` bytes, auxiliary size `u`: embedded with `payload` bytes in its
  // block pointer, or stored with these sizes.
  void AddEmbedded(double lsize, double u, double payload);
  void AddStored(double lsize, double u, double psize, double dsize, double asize);
  void Merge(const OccurrenceSums& o);
};
struct OccurrenceSample {
  std::vector<OccurrenceSums> sums;  // [(setting * 2 + stratum) * (kMaxSampleLevel + 1) + level]
  explicit OccurrenceSample(size_t settings = 0);
  OccurrenceSums& At(size_t setting, int stratum, int level);
  const OccurrenceSums& At(size_t setting, int stratum, int level) const;
  void Merge(const OccurrenceSample& o);
};

// The calibration's auxiliary size of a block of `lsize` bytes (FinishSampledTable): the asize it
// would take stored uncompressed. A multiple of 512, so the distinct-block sketch's 512-byte units
// add up to it exactly, and in proportion to the block's dsize (a DVA's dsize is its asize times
// the vdev's deflate ratio), so a ratio per auxiliary byte carries over to dsize without bias. The
// dsize itself is not a multiple of 512 on raidz and dRAID.
uint64_t AuxiliarySize(const zfs::AllocationModel& alloc, uint64_t lsize, int copies);

class Tally {
 public:
  Tally(const ScanOptions& options, const zfs::WritePolicy& policy, size_t rows);
  ~Tally();

  // One finished file: its layout per row and, per (row, setting) (row-major), how many of its
  // L0 blocks are not holes; per row, how many of its L0 blocks (read, not sparse) are all zero.
  void AddFile(const std::vector<zfs::RecordLayout>& layouts,
               const std::vector<std::atomic<uint64_t>>& non_hole,
               const std::vector<std::atomic<uint64_t>>& zero_blocks);
  void AddDirectory(const DirectoryShape& dir);

  // The results of row `row` (one per setting, in the options' order). `sparse_holes` counts the
  // row's records that lie entirely in holes of the files; `distinct` counted every block of the
  // row. Sampled settings and a sampled table give estimates (exact = false, ci95). A sampled
  // table takes its referenced side from `occurrences` when given (every occurrence of level
  // sampling.occurrence_level and up went through every codec), else from its kept keys.
  std::vector<SettingResult> Finish(size_t row, uint64_t block_bytes, const ddt::DedupTable& table,
                                    uint64_t sparse_holes, const SamplingState& sampling,
                                    const estimate::DistinctBlocks& distinct,
                                    const OccurrenceSample* occurrences = nullptr) const;

 private:
  // Finish for a table that kept 1/M of the key space (M > 1).
  std::vector<SettingResult> FinishSampledTable(size_t row, uint64_t block_bytes,
                                                const ddt::DedupTable& table, uint64_t sparse_holes,
                                                const std::vector<int>& level,
                                                const estimate::DistinctBlocks& distinct,
                                                const OccurrenceSample* occurrences,
                                                int occurrence_level) const;
  // What both paths share once blocks, sizes and the histogram are known: DDT footprints,
  // metadata, compressratio, used, pool_alloc.
  void Complete(size_t row, size_t setting, uint64_t ref_dsize, uint64_t dedup_asize,
                SettingResult* s) const;

  const ScanOptions& options_;
  zfs::WritePolicy policy_;
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
  // ZeroBlockIsHole), those blocks and the metadata over them are counted for it. Per setting:
  // does that apply; per (row, setting): the zero blocks' dsize, and the metadata model with them.
  std::vector<bool> zero_written_without_dedup_;
  std::vector<uint64_t> zero_dsize_without_dedup_;
  std::vector<zfs::MetadataTally> metadata_without_dedup_;
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_TALLY_H_
