#include "engine/finish/known_codes.h"

#include <algorithm>
#include <cmath>

namespace zsim::finish {

int KnownCodeLevel(const estimate::LevelCounts& kept, uint32_t table_shift, int recorded,
                   bool adaptive) {
  if (!adaptive) return recorded;
  if (table_shift == 0) return std::max(recorded, estimate::BaseLevel(kept));
  const double m = std::ldexp(1.0, static_cast<int>(std::min<uint32_t>(table_shift, 60)));
  double above = 0;
  for (int lv = estimate::kMaxSampleLevel; lv > recorded; --lv) {
    above += double(kept[static_cast<size_t>(lv)]);
    if (m * (above + 4 * std::sqrt(above) + 4) >= double(estimate::kSampleBlocks)) return lv;
  }
  return recorded;
}

std::vector<int> KnownCodeLevels(const ddt::DedupTable& table, const state::SamplingState& sampling,
                                 size_t row) {
  const size_t settings = sampling.sampled.size();
  std::vector<int> out(settings, -1);
  std::vector<estimate::LevelCounts> kept(settings, estimate::LevelCounts{});
  bool any = false;
  for (size_t c = 0; c < settings; ++c) any = any || sampling.sampled[c];
  if (!any) return out;
  table.ForEach([&](const ddt::EntryView& e) {
    const size_t lv = static_cast<size_t>(estimate::SampleLevel(e.key.lo));
    for (size_t c = 0; c < settings && c < e.codes.size(); ++c) {
      if (sampling.sampled[c] && !ddt::IsHoleCode(e.codes[c])) ++kept[c][lv];
    }
  });
  for (size_t c = 0; c < settings; ++c) {
    if (!sampling.sampled[c]) continue;
    const int level =
        KnownCodeLevel(kept[c], table.sample_shift(), sampling.LevelOf(row, c), sampling.adaptive);
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
