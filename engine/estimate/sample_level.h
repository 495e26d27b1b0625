// engine/estimate/sample_level.h
//
// Compression sampling by levels. Each fingerprint has a level: the number of trailing zero bits
// of its top 24 bits of `lo` (bits the DDT's shard and slot choice do not use, and independent of
// the dedup sampling bits in `hi`), so a block has level >= L with probability 2^-L. A sampled
// codec runs on the unique blocks whose level is at least its current level, per recordsize:
// the level of its budget (codec_budget.h), from the bytes the sizing walk that runs ahead of
// the scan has found (under --sample, PlanLevel below). The final estimate uses the highest
// level at or above that plan whose sample meets the target: every
// block of those levels went through the codecs whenever it was met, so the estimate depends on
// the data, not on the order the threads met it, and no block below PlanLevel is compressed
// once the plan is known (none of them could serve the estimate), but for the census: a key
// referenced kHeavyRefcount times goes through the sampled codecs whatever its level
// (ddt/dedup_table.h, pipeline/tally.cc).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_SAMPLE_LEVEL_H_
#define ZSIM_ENGINE_ESTIMATE_SAMPLE_LEVEL_H_

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "engine/estimate/ratio_estimator.h"
#include "zsim/scan_options.h"

namespace zsim::estimate {

inline constexpr int kMaxSampleLevel = 24;

// Level of a fingerprint's `lo` word: 0..kMaxSampleLevel.
inline int SampleLevel(uint64_t key_lo) {
  const uint64_t bits = (key_lo >> 40) | (uint64_t{1} << kMaxSampleLevel);
  return std::countr_zero(bits);
}

// Which settings a scan samples, and the auxiliary of each sampled one's ratio estimates.
struct SamplingPlan {
  std::vector<bool> sampled;  // per setting
  // Per setting: for a sampled one, the exact setting whose psize is the auxiliary variable
  // (a regression estimate: psize ~ a s + b x, s the lsize and x that setting's psize,
  // finish/tally.cc); -1 for lsize (a ratio estimate: psize total ~ R x lsize total), and for
  // exact settings.
  std::vector<int> anchors;
};

// A default (not --exact) scan samples every codec (every setting but `off`), each at its own
// level per recordsize (codec_budget.h), but lz4: lz4 runs on every unique block (about 0.4 CPU
// s per GB on the bench machine, near the reading's cost), so its figures are exact, and it is
// the regression auxiliary of the others, whose psize it predicts with a
// correlation of 0.99 or more for the LZ77 codecs on the bundled database sample: their
// intervals shrink by about sqrt(1 - corr^2) (bench/results/2026-12-02-cost3). A list without
// lz4 takes lzjb so where it holds a codec kLzjbAnchorSpeedup times as costly per byte (nominal
// speeds, codec_cost.h: gzip, zstd-4 and up; the v23 default list); other lists without lz4 keep
// lsize. --exact samples nothing.
inline constexpr double kLzjbAnchorSpeedup = 2.5;
SamplingPlan PlanSampling(const std::vector<Compression>& settings, bool exact);

// Near anchors, in one row: per setting, the setting of the same family (gzip levels; zstd
// levels) whose psize is the auxiliary of its ratio estimate, or -1. A costlier level's psize
// follows a cheaper level's of the same codec far more closely than lz4's or lsize (the same
// matcher and entropy coder), so a ratio estimate on it needs few blocks. The roots of a family
// are its settings without a member kNearAnchorSpeedup times as fast (nominal speeds,
// codec_cost.h), from the list alone; a root never follows. Every other setting follows the
// costliest root that is that much faster and `whole` (coded on every unique block of the row).
// The budget (codec_budget.h: which blocks are coded) and the estimate (finish/tally.cc) ask with
// the same `whole` for the roots: the budget never raises a root. E.g. in the six v23 settings
// gzip-9 follows gzip-6 (2.7x its speed); gzip-6 follows nothing, gzip-1 being 2.25x as fast.
inline constexpr double kNearAnchorSpeedup = 2.5;
std::vector<int> NearAnchors(const std::vector<Compression>& settings,
                             const std::vector<bool>& whole);

// Whether a scan with `options` runs the census (pipeline/scan_blocks.cc): some codec is sampled by
// levels, i.e. a sampled codec without --sample's occurrence sample.
bool CensusRuns(const ScanOptions& options);

// Target half width of the 95% interval of a sampled codec's psize total, relative.
inline constexpr double kTargetRelativeHalfWidth = 0.005;
// Fewest sampled blocks a level needs before it may be used.
inline constexpr uint64_t kMinSampledBlocks = 400;

// The level whose sample the estimate of a setting without a regression anchor uses
// (finish/tally.cc): the highest at or above `base` whose blocks (the sum of per_level[lv] from
// there up: per_level[lv] holds the sampled blocks of level lv) number at least
// kMinSampledBlocks and give a relative half width of at most kTargetRelativeHalfWidth over a
// population of `units`. -1 where no level does: the base's sample is used, with the interval it
// gives (RatioEstimator::RelativeHalfWidth95 of all of them).
using LevelSamples = std::array<RatioEstimator, kMaxSampleLevel + 1>;
int LevelMeetingTheTarget(const LevelSamples& per_level, int base, double units);

// The level a scan goes to once the sizing walk has finished: the highest at which a tree of
// `allocated_bytes` cut into blocks of `block_bytes` still leaves kPlanBlocks blocks (before dedup,
// which only lowers the count; the estimate then says so with a wider interval). It depends on the
// tree only, never on the order in which threads meet its blocks: every unique block at this level
// or above goes through the sampled codecs, so the estimates, which use this level or a higher one,
// are the same for any thread count.
inline constexpr uint64_t kPlanBlocks = 16000;
inline int PlanLevel(uint64_t allocated_bytes, uint64_t block_bytes) {
  const uint64_t blocks = block_bytes ? allocated_bytes / block_bytes : 0;
  int level = 0;
  while (level < kMaxSampleLevel && (blocks >> (level + 1)) >= kPlanBlocks) ++level;
  return level;
}

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_SAMPLE_LEVEL_H_
