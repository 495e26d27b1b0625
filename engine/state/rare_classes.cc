#include "engine/state/rare_classes.h"

#include <algorithm>
#include <array>

#include "engine/estimate/anchor_class.h"
#include "engine/estimate/codec_budget.h"

namespace zsim::state {

namespace {

// An entry of a class still small enough to be rare: its key and which settings lack a code.
struct Member {
  std::pair<uint64_t, uint64_t> key;
  std::vector<bool> missing;
};

}  // namespace

RareClasses::RareClasses(const ddt::DedupTable& table, const SamplingState& sampling,
                         const ScanOptions& options, size_t row) {
  const uint64_t limit = sampling.rare_class_blocks;
  if (limit == 0 || table.sample_shift() != 0 || !sampling.adaptive) return;
  const size_t settings = sampling.sampled.size();
  const std::vector<bool> census =
      estimate::RareClassCensus(options, sampling.sampled, sampling.planned_bytes);
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
  std::array<uint64_t, estimate::kAnchorClasses> count{};
  std::array<std::vector<Member>, estimate::kAnchorClasses> members;
  table.ForEach([&](const ddt::EntryView& e) {
    if (a >= e.codes.size()) return;
    const ddt::PsizeCode code = e.codes[a];
    if (ddt::IsHoleCode(code) || code == ddt::kPendingCode || e.lsize == 0) return;
    const int k = estimate::AnchorClass(ddt::OutputUnitsOf(code), e.lsize);
    if (++count[k] > limit) {
      members[k] = {};  // common: the sample covers it
      return;
    }
    Member m{{e.key.lo, e.key.hi}, std::vector<bool>(settings, false)};
    for (size_t c : covered) m.missing[c] = e.codes[c] == ddt::kPendingCode;
    members[k].push_back(std::move(m));
  });
  keys_.resize(settings);
  for (int k = 0; k < estimate::kAnchorClasses; ++k) {
    if (count[k] == 0 || count[k] > limit) continue;
    for (size_t c : covered) {
      const bool whole = std::none_of(members[k].begin(), members[k].end(),
                                      [&](const Member& m) { return m.missing[c]; });
      if (!whole) {
        complete_ = false;
        continue;
      }
      for (const Member& m : members[k]) keys_[c].push_back(m.key);
    }
  }
  for (auto& v : keys_) std::sort(v.begin(), v.end());
}

bool RareClasses::Census(size_t setting, const ddt::Fingerprint& key) const {
  if (setting >= keys_.size()) return false;
  const std::vector<std::pair<uint64_t, uint64_t>>& v = keys_[setting];
  return std::binary_search(v.begin(), v.end(), std::make_pair(key.lo, key.hi));
}

}  // namespace zsim::state
