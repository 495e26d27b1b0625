// engine/finish/sample_base.h
//
// Which codes of a sampled codec the figures use. A scan codes the unique blocks at or above its
// level (estimate/sample_level.h), and may code lower ones too: before its level rose, and in
// one part of a merge whose own plan was smaller. The estimates (tally.cc) use only the blocks at
// or above the base, a level every scan of the same data coded completely, so that the figures
// depend on the data alone; the block-size histogram and the breakdowns use the same codes, so a
// merge of states gives one scan's figures there too.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_FINISH_SAMPLE_BASE_H_
#define ZSIM_ENGINE_FINISH_SAMPLE_BASE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/estimate/sample_level.h"
#include "engine/state/scan_state.h"

namespace zsim::finish {

// The bases of row `row`'s settings (in options.compressions order) for a scan with `options`:
// 0 for an exact setting; the level the scan completed, and with budget levels
// (SamplingState::adaptive) at least the budget's level of the whole plan
// (estimate/codec_budget.h BudgetLevels).
std::vector<int> SampleBases(const ScanOptions& options, const state::SamplingState& sampling,
                             size_t row);

// `code` as the figures see it: a code of a block below `base` is treated as not computed
// (kPendingCode), unless it is a hole (known without a codec) or the entry is heavy
// (ddt::kHeavyRefcount: the census codes those whatever their level).
inline ddt::PsizeCode CodeInSample(ddt::PsizeCode code, int base, uint64_t key_lo,
                                   uint32_t refcount) {
  if (base == 0 || ddt::IsHoleCode(code) || refcount >= ddt::kHeavyRefcount) return code;
  return estimate::SampleLevel(key_lo) < base ? ddt::kPendingCode : code;
}

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_SAMPLE_BASE_H_
