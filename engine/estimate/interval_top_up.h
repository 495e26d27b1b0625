// engine/estimate/interval_top_up.h
//
// The interval top-up: a sampled codec whose interval is wider than the target, in a row whose
// skipped blocks the scan listed, is coded on every unique block of the row, after the scan, by
// reading the blocks it skipped again (the reads and the listing: pipeline/top_up.h).
//
// Why: the codec budget (codec_budget.h) gives a sampled codec 4,096 to 8,192 blocks of a tree
// whatever their spread, which holds +-0.5% (kTargetRelativeHalfWidth) where psize varies little
// per byte. A codec estimated as a ratio to lsize (no anchor: a list without lz4, and without
// lzjb beside a costlier codec, sample_level.h PlanSampling) on data whose psize varies much does
// not: lz4 alone on the bench's database-large (24,073 unique 128K blocks of two sizes, 12K and
// 44K, at lz4), when it was sampled alone, took 6,000 of them and reported +-1.5% (lzjb alone
// likewise). The interval needs some 18,000 there (the finite population helps little): as
// good as every block, and an interval of a few thousand blocks says how many well. Issue 19 asks
// each codec to sample until its interval is within +-0.5% or every block is done; the pilot
// (pilot_level.h) can only raise a level, and a scan cannot lower one while it reads (a block
// met before was not coded and is gone). A row whose table is small enough to be topped up
// (top_up.h: every skipped first sighting listed) can: this rule takes such a row's codec to
// every block.
//
// The rule, a function of the data only (the codes at or above a level every scan of the data
// reaches, and the row's unique blocks), so the figures stay the same for any thread count:
// a sampled setting of the row
//  - estimated as a ratio to lsize (no plan anchor, estimate/sample_level.h PlanSampling; not a
//    near anchor's root or follower): an anchored one's interval is the regression's, narrow
//    where its anchor follows it, and the rare-class census covers the rest;
//  - at a level above 0 and no higher than the plain budget's of the planned blocks
//    (BudgetLevelOf): not raised by the cap (a cost the user's list chose to bound) nor by the
//    pilot (which found the spread small);
//  - whose estimate gives a relative half width above the target: no level at or above its own
//    has kMinSampledBlocks blocks within the target, as the estimate looks for one
//    (LevelMeetingTheTarget), and all its sampled blocks together are wider,
// goes to level 0, the cheapest first, while the nominal codec time of the bytes below its level
// (codec_cost.h) adds up to at most the reference codecs' wishes on the row's unique bytes (what a
// scan of the reference list of a tree of those bytes spends in its sampled codecs,
// codec_budget.h CostReferenceCompressions). A row is
// then topped up (state::SamplingState::topped_bytes), and its cell at level 0 is exact
// (finish/known_codes.h).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_INTERVAL_TOP_UP_H_
#define ZSIM_ENGINE_ESTIMATE_INTERVAL_TOP_UP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/ratio_estimator.h"
#include "engine/estimate/sample_level.h"
#include "zsim/scan_options.h"

namespace zsim::estimate {

// What a row's table says of one setting: its sampled blocks per level (refcount x lsize against
// refcount x psize of every coded unique block at or above the level the scan ended at, census
// entries and holes out, as the estimate takes them), the units they stand for (every such entry
// but the census's, at any level), and the bytes (lsize) of those below the level, coded or not:
// which of them a scan coded depends on its timing, and the rule must not.
struct IntervalCell {
  LevelSamples per_level;
  double units = 0;
  double below_bytes = 0;
  // The relative half width of the interval the estimate gives (finish/tally.cc) for a sample
  // based at `level`: at most the target where a level at or above it meets the target
  // (LevelMeetingTheTarget), else that of every sampled block; infinity where nothing says.
  double HalfWidth(int level) const;
};

// Per setting of row `r` (of the options' rows) at `levels`: whether the rule above may take it
// (sampled, no plan anchor, not a near anchor's root or follower, a level above 0 and at most the
// plain budget's of `plan`), before its interval is known. The pilot's foresight asks the same
// (pipeline/scan_progress.cc), and a row with none needs no IntervalCell (pipeline/top_up.h).
std::vector<bool> IntervalTopUpCandidates(const ScanOptions& options,
                                          const std::vector<bool>& sampled,
                                          const std::vector<int>& anchors, const Plan& plan,
                                          size_t r, const std::vector<int>& levels);

// Per setting of row `r` (of the options' rows): `to` (the levels a regular top-up brings the
// row's settings to, -1 where it leaves one) with 0 for each setting the rule above takes to
// every block. `levels`: the row's levels the scan ended at; `cells`: per setting, as above
// (empty: no candidate, `to` as it is); `unique_bytes`: the row's unique bytes not all zero.
std::vector<int> IntervalTopUpLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                     const std::vector<int>& anchors, const Plan& plan, size_t r,
                                     const std::vector<int>& levels, std::vector<int> to,
                                     const std::vector<IntervalCell>& cells, uint64_t unique_bytes);

// The settings of a row of `block_bytes` the rule codes whole, of those with `seconds[c]` >= 0
// (the nominal codec time of the blocks below its level): the cheapest first, while they
// add up to at most the reference codecs' wishes on `unique_bytes` (ReferenceCodecWishSeconds).
std::vector<bool> WithinTheReferenceWishes(const std::vector<double>& seconds, uint64_t block_bytes,
                                           uint64_t unique_bytes);

// The pilot's foresight (pilot_level.h): per setting of a row of `block_bytes`, whether the scan
// may code it on every block from the pilot's answer on, because the interval top-up will most
// likely take it whole at the end (and read again every block the scan skips meanwhile). `wide`:
// settings the rule could take (sampled, no anchor, at the plain budget's level) whose pilot
// points foresee an interval far wider than the target (PilotFindsItWide); `levels`: their levels;
// `planned_blocks`: the row's (at least its unique ones); `unique_blocks`, `unique_bytes`: the
// probe's estimate of its unique ones. Only where the row is planned small enough to be topped
// up (kTopUpMaxBlocks) and not so few unique blocks that the top-up of rows of few unique blocks
// takes it anyway (top_up.h: fewer than kTopUpMinSample at the level), and within the same cost
// bound as the rule. Its coding is work done early, never a figure: the estimate still takes the
// rule's decision at the end, from the budget's sample (what the top-up reads again then depends
// on when the pilot answered).
std::vector<bool> ForeseenWhole(const ScanOptions& options, const std::vector<bool>& wide,
                                const std::vector<int>& levels, uint64_t block_bytes,
                                double planned_blocks, double unique_blocks, double unique_bytes);

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_INTERVAL_TOP_UP_H_
