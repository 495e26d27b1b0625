// engine/report/codec_choice.h
//
// Which compression the decision (decision.h) recommends, and the codecs its compression advice
// compares against: the cheap default (lz4, lzjb where lz4 is not evaluated) and the fastest of
// the codecs that store within kCodecTie of the smallest. Thresholds are in advice.h.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_CODEC_CHOICE_H_
#define ZSIM_ENGINE_REPORT_CODEC_CHOICE_H_

#include <cstdint>
#include <vector>

#include "zsim/scan_result.h"

namespace zsim::report {

// lz4, zle and lzjb: codecs that cost almost no CPU (the three cheapest of CostRank's order).
bool IsCheapCodec(CompressionAlgorithm algorithm);

// Index of the cheap codec at `block_bytes` (lz4, else lzjb), -1 when neither was evaluated.
int CheapIndex(const std::vector<SettingResult>& results, uint64_t block_bytes);

// Of the settings `candidates` (indices into `results`, not empty), the fastest: of those whose
// measured speed is at least half the fastest's (all of them where one was not timed), the first
// in the order lz4 < zle < lzjb < zstd < gzip, lower level first; of equals, the first in
// `candidates`. So the choice does not follow the noise of the timings, which differ between
// two scans of the same data.
int FastestIndex(const std::vector<SettingResult>& results, const std::vector<int>& candidates);

// Of the codecs at `block_bytes` storing (`used`) within kCodecTie of the smallest, the fastest
// (FastestIndex). -1 when none compresses.
int StrongestWorthwhileIndex(const std::vector<SettingResult>& results, uint64_t block_bytes);

// The compression to recommend at `block_bytes`: the strongest worthwhile codec when it stores
// kStrongerCodecGain less than the cheap one, else the cheap one; the first evaluated at that
// block size when none compresses. -1 when no setting has that block size.
int PickCompression(const std::vector<SettingResult>& results, uint64_t block_bytes);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_CODEC_CHOICE_H_
