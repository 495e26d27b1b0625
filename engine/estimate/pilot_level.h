// engine/estimate/pilot_level.h
//
// The pilot: how many blocks a sampled codec needs, seen on a small sample early in the scan.
// The codec budget (codec_budget.h) fixes a sampled codec's blocks from the tree's size alone,
// enough for +-0.5% at a unit spread of 0.16; homogeneous data needs far fewer (docs/estimation.md
// has the figures). The pilot measures the spread on a few hundred distinct records the cost
// probe reads anyway (pipeline/cost_probe.h), and raises the codec's level where the whole
// tree's unique blocks leave enough at a higher one. Where its points foresee the budget's sample
// far wider than the target, it may instead let the scan code a codec on every block from its
// answer on (PilotFindsItWide; interval_top_up.h ForeseenWhole): work the interval top-up would
// otherwise do by reading the blocks again, never a level the estimate takes.
//
// The rule. A sampled setting's estimate is a regression of psize on lsize and its anchor's
// psize (finish/tally.cc); its interval's relative half width at n sampled blocks is about
// z s / (ybar sqrt(n)), s the residual standard deviation and ybar the mean psize. The pilot fits
// the same line to its points and asks for n* = (z s / (ybar kPilotHalfWidth))^2 blocks, at least
// kPilotMinSample: half the target's width (a quarter of its variance), as the pilot's spread is
// itself an estimate from a few hundred blocks, and the refcounts the estimate weights by are not
// in it. The level is the highest at or above the budget's at which the row's unique blocks
// (the probe's estimate) still leave n*. The estimate then computes its interval from the blocks
// it has, as before (how often it holds at the pilot's levels: docs/estimation.md).
//
// Why the figures still depend on the data only: the pilot's records are the probe's, a function
// of the tree (the sizing walk's file sample, sorted by path, and strides from its size), and
// the points are the lowest-keyed distinct ones; the scan only ever raises a level it records
// (the blocks below it go uncoded, or coded early where the pilot foresaw the interval top-up,
// and the estimate ignores any it had coded unless the top-up took the codec whole), and at its
// end takes the
// pilot's levels whether or not it met them while reading (pipeline/scan_levels.cc). A merge takes
// the higher level of each part (state/merge.cc), as for any level.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_PILOT_LEVEL_H_
#define ZSIM_ENGINE_ESTIMATE_PILOT_LEVEL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "zsim/scan_options.h"

namespace zsim::estimate {

// One distinct block under one sampled setting, as ZFS would store it: its lsize, its anchor's
// psize (the lsize again where the setting has no anchor) and its own psize, in bytes; and the
// blocks of the tree it stands for (the probe draws long files' records by stride and short
// files by chance, each standing for its share of the tree: cost_probe.h).
struct PilotPoint {
  double lsize = 0;
  double anchor = 0;
  double psize = 0;
  double weight = 1;
};

// The pilot codes the kPilotRecords distinct records of lowest key; with fewer than
// kPilotMinPoints points it raises nothing.
inline constexpr size_t kPilotRecords = 256;
inline constexpr size_t kPilotMinPoints = 64;
// The half width the pilot sizes for: half the estimate's target (sample_level.h).
inline constexpr double kPilotHalfWidth = kTargetRelativeHalfWidth / 2;
// The fewest unique blocks a raised level is expected to leave a codec.
inline constexpr uint64_t kPilotMinSample = 1024;

// Whether the pilot may raise a row's levels: its budget's sample (planned blocks at the
// budget's level) holds at least twice kPilotMinSample blocks. Below, the pilot's own cost would
// eat what it saves. A function of the plan, so the scan and a report agree on it.
bool PilotWanted(uint64_t planned_blocks, int budget_level);

// Per (row, setting), row-major as BudgetLevels: the budget's level (BudgetLevels of
// `plan`) of each sampled setting the pilot may raise, -1 for the others; all -1 where
// PilotWanted is false. Not --exact, not --sample (not `adaptive`); not a near anchor's root or
// follower (sample_level.h NearAnchors): a follower's estimate rests on its root coded whole, and
// its level on the root's. Not a row of smaller blocks than the first: the cost probe counts
// unique bytes in the first row's block size, which a row of larger blocks has at least of (the
// pilot then takes the row for smaller than it is, and raises less) and a smaller one may not.
std::vector<int> PilotBudgetLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                   bool adaptive, const Plan& plan);

// The level the pilot gives a setting whose budget gives `budget_level`, for a row of
// `unique_blocks` unique blocks (the probe's estimate; 0: not known): at least budget_level.
int PilotLevel(const std::vector<PilotPoint>& points, double unique_blocks, int budget_level);

// True when `points` (a prefix, in key order, of the pilot's) already leave the budget's level:
// at a multiple of kPilotSettleStep points, they ask for more than kPilotSettledFactor times the
// blocks one level up would leave. The pilot then codes no more for it and gives budget_level:
// a VM store's spread (the bench's asks for 5-20 times its unique blocks) costs 32 records, not
// 256. Few points, but only ever to stop short of a raise, and the codecs the pilot runs
// compete with the scan's first tenth, whose pace the expected time measures.
inline constexpr size_t kPilotSettleStep = 32;
inline constexpr double kPilotSettledFactor = 4;
bool PilotSettled(const std::vector<PilotPoint>& points, double unique_blocks, int budget_level);

// Whether `points` (at least kPilotSettleStep of them) foresee the budget's sample of a setting
// estimated on lsize far wider than the target: the interval they give a sample at
// `budget_level` of `unique_blocks` (with its finite population) is more than kPilotWideFactor
// times kTargetRelativeHalfWidth. What the interval top-up (interval_top_up.h) will then most
// likely code whole; a factor of 2, as the points are few (32 where the pilot settled early)
// and a setting near the target is better left to the rule's own look at the budget's sample.
inline constexpr double kPilotWideFactor = 2;
bool PilotFindsItWide(const std::vector<PilotPoint>& points, double unique_blocks,
                      int budget_level);

// PilotLevel per setting: for each budget_levels[c] >= 0 over points[c], -1 for the others.
std::vector<int> PilotLevels(const std::vector<std::vector<PilotPoint>>& points,
                             double unique_blocks, const std::vector<int>& budget_levels);

// The blocks PilotLevel asks for (before kPilotMinSample): nullopt when the points cannot say
// (too few, or no psize at all).
std::optional<double> PilotBlocks(const std::vector<PilotPoint>& points);

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_PILOT_LEVEL_H_
