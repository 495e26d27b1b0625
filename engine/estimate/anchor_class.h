// engine/estimate/anchor_class.h
//
// Rare-class census. A sampled codec whose estimate regresses on an exact anchor (lz4, or lzjb
// in a list without lz4: sample_level.h PlanSampling) also runs on every block of a rare anchor
// class: the blocks whose anchor output falls in the same 1/32 of the block size (4K steps at 128K,
// the psize values of 4K sectors), where the whole table holds at most kRareClassBlocks of them.
// Those blocks are then a census, exact, and the sample covers the common classes only.
//
// Why: a regression on lz4's psize leaves almost no residual on the blocks of the common lz4 sizes
// and nearly all of it on the few blocks of rare ones. On the bundled large database sample
// (24,073 unique 128K blocks) 20,502 blocks have lz4 = 12K and 3,289 have 44K; about 280 blocks
// of other sizes hold nearly all of the residual variance (gzip-6: 10 blocks hold 68%). The
// budget's sample of 6,000 holds about 70 of them, and its interval covered the exact figure in
// 85% (gzip-6) and 89% (zstd-3) of 100 resamplings, whatever the interval formula. With the 103
// blocks of classes of at most 16 taken whole: 95% and 96%, and a third of the error. The large
// VM-store sample, whose lz4 sizes spread over every class, is unchanged
// (bench/results/2026-12-04-s39-rare-classes).
//
// Which blocks are coded, independent of the threads' order: a scan counts each row's first
// sightings per class and runs the codec on a block while its class has met at most
// kRareClassBlocks blocks. A class of at most that many blocks in the final table had at most that
// many at any time, so every one of its blocks was coded; a larger class's first blocks were
// coded too, but the estimate leaves them to the sample's level like any other. The census is
// therefore the same for any thread count, and in a merge of states (each part's classes are at
// most the union's) it is the union's.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ESTIMATE_ANCHOR_CLASS_H_
#define ZSIM_ENGINE_ESTIMATE_ANCHOR_CLASS_H_

#include <algorithm>
#include <cstdint>

namespace zsim::estimate {

// Classes per row: 32 steps of the block size, and a last one for outputs of the whole block or
// more (did not fit).
inline constexpr int kAnchorClasses = 33;
// A class of at most this many blocks is a census. 16, not 32: at 32 the database sample's
// coverage was the same (91-97%), and the blocks coded before their class grew past the limit
// cost more: at most 33 x 16 = 528 more blocks per sampled codec and block size (measured at 16:
// 1.8% more codec work on the large database sample, 7% on the VM store, 37% on the file server,
// whose sample is small; at 32: 2.7%, 14%, 40%). Where even that costs more than a quarter of
// the codec's share of the cap, the codec has no census (codec_budget.h RareClassCensus).
inline constexpr uint64_t kRareClassBlocks = 16;

// The class of an anchor output of `units` 512-byte units (ddt::OutputUnitsOf; kNoFitUnits: did
// not fit) in a block of `lsize` bytes. REQUIRES: lsize > 0.
inline int AnchorClass(uint64_t units, uint64_t lsize) {
  constexpr uint64_t kLast = kAnchorClasses - 1;
  if (units >= (lsize + 511) / 512) return static_cast<int>(kLast);  // kNoFitUnits too
  return static_cast<int>(std::min(kLast, units * 512 * kLast / lsize));
}

}  // namespace zsim::estimate

#endif  // ZSIM_ENGINE_ESTIMATE_ANCHOR_CLASS_H_
