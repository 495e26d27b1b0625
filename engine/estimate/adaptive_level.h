// engine/estimate/adaptive_level.h
//
// How far a scan raises a sampled codec's level while it runs (estimate/sample_level.h). Every
// codec of a default scan runs on the unique blocks at or above its level, per (recordsize,
// codec); the level starts at 0 (every block) and only rises: to the highest level that holds
// kSampleBlocks of the unique blocks met so far, and to the plan of the sizing walk
// (PlanLevel) if that is higher. So each codec runs on kSampleBlocks to twice that many blocks
// (plus the first chunks, met at lower levels), whatever the tree's size.
//
// Why a count and not the running interval: the estimate (finish/tally.cc) must take a level
// at or above every level the scan could have risen to, and depend on the data only, so that
// the figures are the same for any thread count. A rise decided by the interval of the blocks
// met so far depends on which blocks the threads had met (data whose kind changes along the
// walk meets the target early and misses it at the end), and a level it skipped cannot be
// coded afterwards without reading the blocks again. A count only grows: the highest level
// holding kSampleBlocks of the whole tree's unique blocks (BaseLevel) is at or above every
// level a scan rose to, whatever the order. The estimate takes the highest level at or above
// that base whose blocks meet the target (homogeneous data: a smaller sample), else the base
// with the interval it has (mixed data: wider than the target).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_ADAPTIVE_LEVEL_H_
#define ZSIM_ENGINE_ESTIMATE_ADAPTIVE_LEVEL_H_

#include <array>
#include <cstdint>

#include "engine/estimate/sample_level.h"

namespace zsim::estimate {

// Unique blocks a sampled codec runs on, at least (about +-1% at a unit spread of 0.3).
inline constexpr uint64_t kSampleBlocks = 4000;

// Unique blocks by level (index = level) of one codec: those it met so far, or the whole tree's.
using LevelCounts = std::array<uint64_t, kMaxSampleLevel + 1>;

// The highest level whose blocks (at or above it) number kSampleBlocks; 0 when none does.
int BaseLevel(const LevelCounts& counts);

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_ADAPTIVE_LEVEL_H_
