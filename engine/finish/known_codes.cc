#include "engine/finish/known_codes.h"

#include <algorithm>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "engine/estimate/top_up.h"

namespace zsim::finish {

std::vector<int> KnownCodeLevels(const ScanOptions& options, const state::SamplingState& sampling,
                                 size_t row) {
  const size_t settings = options.compressions.size();
  std::vector<int> out(settings, -1);
  std::vector<int> budget;
  if (sampling.adaptive) {
    budget = estimate::RowBudgetLevels(options, sampling.sampled, sampling.plan(),
                                       sampling.topped_bytes);
  }
  const bool topped = row < sampling.topped_bytes.size() && sampling.topped_bytes[row] != 0;
  for (size_t c = 0; c < settings && c < sampling.sampled.size(); ++c) {
    if (!sampling.sampled[c]) continue;
    int level = sampling.LevelOf(row, c);
    const size_t i = row * settings + c;
    // A topped row's setting at level 0 was coded on every unique block of the row (the interval
    // top-up, estimate/interval_top_up.h; or a merge of parts that both were): exact.
    if (topped && level == 0) continue;
    if (i < budget.size()) level = std::max(level, budget[i]);
    out[c] = level == 0 ? -1 : level;
  }
  return out;
}

ddt::PsizeCode KnownCode(const ddt::EntryView& e, size_t c, int level, uint32_t table_shift) {
  const ddt::PsizeCode code = c < e.codes.size() ? e.codes[c] : ddt::kPendingCode;
  if (level < 0 || code == ddt::kPendingCode || ddt::IsHoleCode(code)) return code;
  if (estimate::SampleLevel(e.key.lo) >= level) return code;
  const bool census = table_shift == 0 && e.refcount >= ddt::kHeavyRefcount;
  return census ? code : ddt::kPendingCode;
}

}  // namespace zsim::finish
