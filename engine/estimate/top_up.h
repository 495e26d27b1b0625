// engine/estimate/top_up.h
//
// The top-up: a row of few unique blocks has its sampled codecs brought down to the level those
// blocks need, after the scan, by reading the blocks it skipped again.
//
// Why: the codec budget (codec_budget.h) fixes a codec's level from the bytes the sizing walk
// finds, before anything is read, so that every unique block at that level is coded whenever the
// threads meet it. Dedup only lowers the unique blocks below the planned ones, and a tree of
// mostly duplicates (cloned VM images, backups of the same files) is left with a handful of
// sampled blocks: the bench's 1.1 GB of images at 16K plans 65,536 blocks (level 4) and holds
// 128 unique ones, of which the codecs ran on 8, and the report gave gzip-6 1.19x within
// [1.01x, 17.2x]. The level cannot be lowered while reading (a block met before was not coded and
// its data is gone), and a level that follows the unique blocks met so far would depend on the
// threads' order.
//
// The rule, a function of the data only. A scan keeps where each first sighting lies that a
// sampled codec skipped, while its row has skipped at most kTopUpMaxBlocks; a row whose table
// ends with at most that many entries therefore has every skipped block listed, whatever order
// the threads met them in. Such a row's budget is then taken from its unique bytes instead of
// the planned ones (RowBudgetLevels: the budget of a tree as large as the row's unique blocks),
// and each sampled setting whose level is the planned budget's (the pilot, pilot_level.h, did not
// raise it), above that budget, and leaves fewer than kTopUpMinSample unique blocks goes down to
// it: the scan reads its listed blocks of the lower
// levels again, checks each one's fingerprint, and codes them (pipeline/block_recode.h). The
// cost is what the budget gives a tree of the row's unique blocks: at most 2 x kBudgetBlocks
// blocks per codec, a few thousand reads. Where a block cannot be read again or has changed,
// the row keeps its levels (its intervals stay honest, only wider).
//
// The state keeps each topped row's unique bytes (state::SamplingState::topped_bytes): the
// estimate's base level (finish/known_codes.h) is RowBudgetLevels of them, which raises a topped
// row's budget where its codecs would cost more than ten reference scans over the rows
// (codec_budget.h CapRowAtReferenceScans), never above the planned budget's. A merge tops a row up
// where the merged table could be topped (unsampled, at most kTopUpMaxBlocks entries) and both
// parts coded its blocks down to the budget of the union's unique bytes (state/merge.cc
// MergeToppedRows): two topped parts, or a topped part and one its budget coded whole. It may
// then rest on more blocks than one scan of both trees, which tops up only where its level
// leaves fewer than kTopUpMinSample.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_TOP_UP_H_
#define ZSIM_ENGINE_ESTIMATE_TOP_UP_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/pilot_level.h"
#include "zsim/scan_options.h"

namespace zsim::estimate {

// The most entries a row's table may end with and be topped up, and the most skipped blocks a
// scan lists per row (about 40 bytes each: 2.6 MB). 65,536 unique blocks give a budget level of
// at most 4 (codec_budget.h BudgetLevel).
inline constexpr uint64_t kTopUpMaxBlocks = uint64_t{1} << 16;
// A level that leaves at least this many of the row's unique blocks (not all zero) stays: the
// fewest the pilot ever leaves a codec (pilot_level.h kPilotMinSample), whose intervals hold as
// the budget's do. The bench's VM store at 128K (5,879 unique blocks, 1,470 at the budget's
// level 2, +-0.3%) would otherwise be coded whole, for 6 s more than its 9.6 s scan.

// Per (row, setting), row-major as BudgetLevels: the budget's levels, each row's from
// row_bytes[r] where it is not 0 and below plan.bytes (a topped row: its unique bytes, their
// blocks counted as those bytes over the block size; raised by CapRowAtReferenceScans, never above
// `plan`'s), else from `plan`. `row_bytes` may be empty (no row topped).
std::vector<int> RowBudgetLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                 const Plan& plan, const std::vector<uint64_t>& row_bytes);

inline constexpr uint64_t kTopUpMinSample = kPilotMinSample;

// Per setting of row `r` (of `rows`): the budget's levels of a row of `unique_bytes` unique bytes
// (RowBudgetLevels' cells of that row), the levels a top-up brings it to.
std::vector<int> UniqueBytesLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                   const Plan& plan, size_t rows, size_t r, uint64_t unique_bytes);

// Per setting of one row: the level a top-up brings it to, or -1 to leave it. `levels`: the
// row's levels the scan ended at (at or above the planned budget's), `planned`: the planned
// budget's (BudgetLevels of the plan), `unique`: RowBudgetLevels' for the row's unique
// bytes; `unique_blocks`: the row's unique blocks not all zero. A sampled setting goes down where
// its level is the planned budget's, above the unique bytes' budget, and leaves fewer than
// kTopUpMinSample blocks (unique_blocks >> level).
std::vector<int> TopUpLevels(const std::vector<bool>& sampled, const std::vector<int>& levels,
                             const std::vector<int>& planned, const std::vector<int>& unique,
                             uint64_t unique_blocks);

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_TOP_UP_H_
