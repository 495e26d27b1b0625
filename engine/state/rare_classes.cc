#include "engine/state/rare_classes.h"

#include <algorithm>
#include <array>

#include "engine/estimate/anchor_class.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"

namespace zsim::state {

RareClasses::RareClasses(const ddt::DedupTable& table, const SamplingState& sampling,
                         const ScanOptions& options, size_t row) {
  const uint64_t limit = sampling.rare_class_blocks;
  if (limit == 0 || table.sample_shift() != 0 || !sampling.adaptive) return;
  const size_t settings = sampling.sampled.size();
  const std::vector<bool> census =
      estimate::RareClassCensus(options, sampling.sampled, sampling.plan());
  // The settings the census covers, and their anchor (PlanSampling gives them all the same).
  std::vector<size_t> covered;
  int anchor = -1;
  for (size_t c = 0; c < settings && c < sampling.anchors.size(); ++c) {
    if (!sampling.sampled[c] || sampling.anchors[c] < 0) continue;
    if (row * settings + c >= census.size() || !census[row * settings + c]) continue;
    if (anchor >= 0 && sampling.anchors[c] != anchor) continue;  // never: one anchor per plan
    anchor = sampling.anchors[c];
    covered.push_back(c);
  }
  if (covered.empty()) return;
  const size_t a = static_cast<size_t>(anchor);
  // Per class: its entries, their keys while it may be rare, and per setting whether one of
  // them lacks the code.
  using Classes = std::array<bool, estimate::kAnchorClasses>;
  std::array<uint64_t, estimate::kAnchorClasses> count{};
  std::array<std::vector<std::pair<uint64_t, uint64_t>>, estimate::kAnchorClasses> members;
  std::vector<Classes> missing(settings, Classes{});
  table.ForEach([&](const ddt::EntryView& e) {
    if (a >= e.codes.size()) return;
    const ddt::PsizeCode code = e.codes[a];
    if (ddt::IsHoleCode(code) || code == ddt::kPendingCode || e.lsize == 0) return;
    const size_t k = static_cast<size_t>(estimate::AnchorClass(ddt::OutputUnitsOf(code), e.lsize));
    if (++count[k] > limit) return;  // common: the sample covers it
    members[k].emplace_back(e.key.lo, e.key.hi);
    for (size_t c : covered) missing[c][k] = missing[c][k] || e.codes[c] == ddt::kPendingCode;
  });
  keys_.resize(settings);
  for (size_t k = 0; k < count.size(); ++k) {
    if (count[k] == 0 || count[k] > limit) continue;
    for (size_t c : covered) {
      if (missing[c][k]) {
        complete_ = false;
        continue;
      }
      keys_[c].insert(keys_[c].end(), members[k].begin(), members[k].end());
    }
  }
  for (auto& v : keys_) std::sort(v.begin(), v.end());
}

bool EstimateReadsCode(const SamplingState& sampling, size_t row, const RareClasses& rare,
                       const ddt::EntryView& e, size_t c) {
  return estimate::SampleLevel(e.key.lo) >= sampling.LevelOf(row, c) ||
         (e.refcount >= ddt::kHeavyRefcount && !e.is_zero) || rare.Census(c, e.key);
}

bool RareClasses::Census(size_t setting, const ddt::Fingerprint& key) const {
  if (setting >= keys_.size()) return false;
  const std::vector<std::pair<uint64_t, uint64_t>>& v = keys_[setting];
  return std::binary_search(v.begin(), v.end(), std::make_pair(key.lo, key.hi));
}

}  // namespace zsim::state
