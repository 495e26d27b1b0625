// engine/estimate/codec_budget.h
//
// How many unique blocks a sampled codec of a default scan runs on: a budget fixed before the
// scan codes anything, from the bytes the sizing walk finds (walk/parallel_walker.h WalkSizer),
// per (recordsize, codec). The codec runs on the unique blocks whose level (sample_level.h) is at
// or above BudgetLevel(planned blocks): the highest level at which the planned blocks still leave
// kBudgetBlocks, but never above kBudgetFractionLevel. So a codec runs on kBudgetBlocks to twice
// that many blocks of a tree below kBudgetBlocks << kBudgetFractionLevel blocks (64 GiB at 128K),
// a fixed cost whatever its size, and on 1/2^kBudgetFractionLevel of a larger tree's blocks, a
// cost bounded by the reading (docs/estimation.md has the figures per codec).
//
// Why a plan and not the running interval: the estimate (finish/tally.cc) must take a level at
// or above every level the scan could have used, and depend on the data only, so that the
// figures are the same for any thread count and a merge of two scans' states gives the scan of
// both. A level decided by the blocks met so far depends on which blocks the threads had met,
// and one it skipped cannot be coded afterwards without reading the blocks again. The planned
// bytes only grow while the sizing walk runs (the scan follows them: BudgetLevel of the bytes
// sized so far, which only rises), are kept in the state and add up in a merge, so the
// estimate's base, BudgetLevel of the whole plan, is at or above every level any scan of the
// same data used. The estimate then takes the highest level at or above that base whose blocks
// alone meet the target interval (homogeneous data: a narrower sample), else the base with the
// interval it has. Where the pilot (pilot_level.h) finds the data alike, it raises the levels
// of the first row, and of rows of larger blocks, above the budget's, while the scan reads or
// at its end.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_CODEC_BUDGET_H_
#define ZSIM_ENGINE_ESTIMATE_CODEC_BUDGET_H_

#include <cstdint>
#include <vector>

#include "engine/estimate/sample_level.h"
#include "zsim/scan_options.h"

namespace zsim::estimate {

// Unique blocks a sampled codec runs on, at least: +-0.5% at a unit spread (coefficient of
// variation of psize/lsize) of 0.16, +-1.5% at 0.5.
inline constexpr uint64_t kBudgetBlocks = 4096;
// The highest budget level: a tree of more than kBudgetBlocks << 7 blocks is coded 1 block in
// 128, which keeps the reference codecs' CPU time under the reading's (bench/results).
inline constexpr int kBudgetFractionLevel = 7;

// The block size of each row of a scan: options.volblocksize, else options.recordsizes.
inline std::vector<uint64_t> RowBlockSizes(const ScanOptions& options) {
  if (options.volblocksize) return {*options.volblocksize};
  return options.recordsizes;
}

// What the sizing walk found, which the budget follows: the bytes the files hold (allocated,
// holes excluded) and how many files hold any. Both only grow while the walk runs.
struct Plan {
  uint64_t bytes = 0;
  uint64_t files = 0;  // 0: not counted (states before format 21): the bytes alone
};

// The blocks of `plan` in a row of `block_bytes` (0 for a block size of 0): a file smaller than
// the block size is one block of its own size, so a tree of small files has more blocks than its
// bytes over the block size. At least both: max(bytes / block, files). (A file's last block
// makes the true count at most bytes / block + files; the lower bound keeps the sample the
// budget asks for: source-large at 128K plans 78,579 blocks for its 80,701, where the bytes
// alone said 9,908 and coded half of every sampled codec's blocks.)
uint64_t PlannedBlocks(const Plan& plan, uint64_t block_bytes);

// The level for a tree of `planned_blocks` blocks.
int BudgetLevel(uint64_t planned_blocks);

// BudgetLevel of the blocks of `plan` in a row of `block_bytes`.
inline int BudgetLevelOf(const Plan& plan, uint64_t block_bytes) {
  return BudgetLevel(PlannedBlocks(plan, block_bytes));
}

// The cap on a scan's codec work, in nominal CPU seconds (codec_cost.h). The reference codecs stay
// below it up to about 110 GB at 128K, and above that cost the cap, a fixed sum, while the
// reading grows with the tree; a long list (--compression all, several recordsizes) costs the
// cap on any tree, its costliest codecs running on fewer blocks. A constant, not a share of the
// reading: a cap growing with the tree could lower a level as the tree grows (see below). 28:
// `--compression all` at 16K, 128K and 1M then plans at most ten times the reference codecs' work
// on a tree they code whole (84 MB: the file-server sample; issue 19), and the reference codecs are
// not capped up to 100 GiB. That is nominal work on the planned bytes: the top-up then spent the
// whole cap on the unique ones, 15 reference scans' time, which CapRowAtReferenceScans (below) now
// bounds.
inline constexpr double kCapSeconds = 28;
// The fewest planned blocks of its row the cap leaves a codec: it raises a level no further than
// the highest at which the row's planned blocks still leave this many. Without it the cap left
// `--compression all` at 1M on a 50 MiB tree no block at all of zstd-16..19 (level 6 of 50
// blocks), and an estimate that is a ratio to its sample had nothing to divide: psize 0, "194x".
// Four blocks give a point estimate, which the interval's certain bounds (ratio_interval.h: a
// sample worth fewer than kMinIntervalBlocks) then qualify, and which the advice does not take
// for settled (report/codec_choice.cc). A floor of 32, a real interval, would cost some 56
// nominal s more on the file-server sample (84 MB) under `--compression all` at 16K, 128K and
// 1M, beyond issue 19's ten reference scans; 4 costs 4 s (24.5 to 28.7 s, a scan of the reference
// list 2.9 s). Never a fall as the tree grows: the floor's level rises with the planned blocks, as
// the cap's.
inline constexpr uint64_t kCapFloorBlocks = 4;

// The most a row of few unique blocks may cost once topped up (top_up.h): its sampled codecs'
// wishes on the row's unique bytes at most kListCostFactor / rows times the reference codecs'
// (CostReferenceCompressions) on the same bytes, so that a long list over
// several recordsizes costs at most about ten reference scans of the same tree (issue 19), where
// the cap alone, a constant, let it cost what it costs a large tree: `--compression all` at 16K,
// 128K and 1M on the file-server sample (45 MB unique per row) spent 25 CPU s in its codecs, the
// default scan 1.5, and took 15.4 times the reference scan's time. A tree of many unique blocks
// (not topped up) has its budget from the cap alone: there the reference codecs' own budget is a
// large share of it.
inline constexpr double kListCostFactor = 10;

// The list the caps on a scan's codecs are measured against: off, lz4, zstd-3, gzip-6, lzjb and
// zle, whatever the profile and the default list (which held these six in earlier versions).
// Fixed: the levels of a saved state's sampled codecs rest on it, and a report of
// that state must find the same levels (finish/finish.cc CheckBudgetLevels).
const std::vector<Compression>& CostReferenceCompressions();

// The nominal seconds the reference codecs (CostReferenceCompressions) wish for in a row of
// `block_bytes` of a tree of `plan`, summed: what a scan of that list spends in its codecs (the
// reference of CapRowAtReferenceScans and of the interval top-up, interval_top_up.h). 0 for a block
// size of 0.
double ReferenceCodecWishSeconds(const Plan& plan, uint64_t block_bytes);

// Raises the levels of row r's sampled settings (row-major as BudgetLevels; the other cells are
// left) as the cap does (water filling, at most to the floor's level), for a cap of
// kListCostFactor / rows times the reference codecs' wishes on `plan` in that row (every recordsize
// of the scan counts, topped or not: at 11 or more nothing is left beyond the reference codecs, and
// the others go to the floor). The reference codecs in the list are not raised further by it (the
// constant cap may have raised them): their whole wishes, the reference scan's cost, are taken from
// the cap whatever their levels (a bound on the safe side), and the others share what is left.
void CapRowAtReferenceScans(const ScanOptions& options, const std::vector<bool>& sampled,
                            const Plan& plan, size_t r, std::vector<int>* levels);

// Near anchors (sample_level.h NearAnchors): a setting whose near anchor is coded on every unique
// block of a row codes the blocks of level kNearAnchorLevel and up, half of them, in a row of at
// least kNearAnchorMinBlocks planned blocks; its estimate is a ratio to the anchor's psize
// (finish/tally.cc), where psize rounds to 512 bytes (NearAnchorsLowerLevels, below). Level 1,
// no higher: the anchor stops being coded whole at a budget level of
// 1 (8,192 blocks), where the follower's own budget takes it to 1, so no level falls as the tree
// grows. 512 blocks: a smaller row is coded whole, exactly, as before. Half of 512, some 256
// blocks, is not by itself a sample a normal interval may rest on: at 4K sectors a follower's
// psize differs from its anchor's on few blocks (gzip-9 on gzip-6: 12 of 928 unique 128K blocks
// of the database sample), and a sample holding fewer than 30 of them takes the wider bounds of
// a rare difference (estimate/rare_difference.h) instead of the linearised variance.
inline constexpr int kNearAnchorLevel = 1;
inline constexpr uint64_t kNearAnchorMinBlocks = 512;

// True where near anchors lower a follower's level: psize rounds to 512 bytes under the options'
// profile and allocation (zfs/write_rules.h PsizeRoundingUnit: v23 on any pool, 2.x at ashift 9).
// At a coarser unit (4K sectors, ashift 12: the default) a follower's psize equals its anchor's
// on almost every block, a sample of half a row holds too few differences, and their honest
// bounds (rare_difference.h) span some +-30% of psize (file-server sample, zstd-4 at 16K): such
// a row is coded whole, exactly. The anchor still serves as the estimator where the budget
// itself samples a follower (finish/tally.cc). Fixed by options a merge of states must share
// (state/merge.cc refuses another rounding unit), so a merge's levels are each state's.
bool NearAnchorsLowerLevels(const ScanOptions& options);

// Per (row, setting), row-major (rows: options.volblocksize, else options.recordsizes): each
// sampled setting's level for a tree of `plan`, 0 for the others. A setting's wish is
// its budget's blocks (kBudgetBlocks, 1 in 2^kBudgetFractionLevel of a large tree, or all of a
// small one) at its nominal speed. When the wishes add up to more than the cap, the cap is
// shared out as water fills vessels: every wish below a common share is granted, the rest get
// that share, and a setting above it codes 1 block in 2^L for the smallest L that fits its share.
// Then the near anchors' followers (above). Every level is BudgetLevel or higher, and never falls
// as the plan grows (the wishes grow with the tree and the cap does not, so the share only
// shrinks), which is what lets the scan follow the sizing walk's running sum.
std::vector<int> BudgetLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                              const Plan& plan);

// Per (row, setting), row-major: whether the rare-class census (anchor_class.h) runs for it: a
// sampled setting with an anchor (sample_level.h PlanSampling) whose census could cost at most
// kRareClassShareOfTheCap of the cap's share (kCapSeconds where the cap does not bind): at most
// kAnchorClasses x kRareClassBlocks blocks of the row at the codec's nominal speed. gzip-6 at
// 128K: 66 MiB, 1.7 nominal s, always; zstd-19 at 1M: 528 MiB, about 90 s, never. Never turns
// back on as the plan grows (the share only shrinks), so a scan that follows the sizing
// walk's running sum and the estimate, which takes the whole plan's, agree: every class the
// estimate takes whole was coded whole.
inline constexpr double kRareClassShareOfTheCap = 0.25;
std::vector<bool> RareClassCensus(const ScanOptions& options, const std::vector<bool>& sampled,
                                  const Plan& plan);

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_CODEC_BUDGET_H_
