#include "engine/estimate/interval_top_up.h"

#include <algorithm>
#include <cmath>

#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"
#include "engine/estimate/top_up.h"

namespace zsim::estimate {

double IntervalCell::HalfWidth(int level) const {
  if (LevelMeetingTheTarget(per_level, level, units) >= 0) return kTargetRelativeHalfWidth;
  RatioEstimator all;
  for (int lv = std::max(level, 0); lv <= kMaxSampleLevel; ++lv) all.Merge(per_level[size_t(lv)]);
  return all.RelativeHalfWidth95(units);
}

std::vector<bool> IntervalTopUpCandidates(const ScanOptions& options,
                                          const std::vector<bool>& sampled,
                                          const std::vector<int>& anchors, const Plan& plan,
                                          size_t r, const std::vector<int>& levels) {
  const size_t settings = options.compressions.size();
  const std::vector<uint64_t> rows = RowBlockSizes(options);
  std::vector<bool> out(settings, false);
  if (r >= rows.size() || rows[r] == 0 || levels.size() != settings || sampled.size() < settings ||
      anchors.size() < settings) {
    return out;
  }
  const int plain = BudgetLevelOf(plan, rows[r]);
  // Near anchors as the estimate finds them (finish/tally.cc): over the settings coded whole.
  std::vector<bool> whole(settings, false);
  for (size_t c = 0; c < settings; ++c) whole[c] = !sampled[c] || levels[c] == 0;
  const std::vector<int> near = NearAnchors(options.compressions, whole);
  std::vector<bool> root(settings, false);
  for (int n : near) {
    if (n >= 0) root[size_t(n)] = true;
  }
  for (size_t c = 0; c < settings; ++c) {
    out[c] = sampled[c] && anchors[c] < 0 && near[c] < 0 && !root[c] && levels[c] > 0 &&
             levels[c] <= plain;
  }
  return out;
}

std::vector<int> IntervalTopUpLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                     const std::vector<int>& anchors, const Plan& plan, size_t r,
                                     const std::vector<int>& levels, std::vector<int> to,
                                     const std::vector<IntervalCell>& cells,
                                     uint64_t unique_bytes) {
  const size_t settings = options.compressions.size();
  const std::vector<uint64_t> rows = RowBlockSizes(options);
  if (r >= rows.size() || unique_bytes == 0 || to.size() != settings || cells.size() != settings) {
    return to;
  }
  const std::vector<bool> candidate =
      IntervalTopUpCandidates(options, sampled, anchors, plan, r, levels);
  // Per setting the rule would take, the nominal codec time of its blocks below the level (those
  // a scan coded early count too: the decision must not depend on which it did).
  std::vector<double> seconds(settings, -1);
  for (size_t c = 0; c < settings; ++c) {
    const IntervalCell& cell = cells[c];
    if (!candidate[c] || to[c] >= 0 || !(cell.below_bytes > 0)) continue;
    const double half = cell.HalfWidth(levels[c]);
    // Narrow enough; or nothing to say (no psize at all: every sampled block embedded).
    if (!std::isfinite(half) || half <= kTargetRelativeHalfWidth) continue;
    const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
    if (speed > 0) seconds[c] = cell.below_bytes / speed;
  }
  const std::vector<bool> taken = WithinTheReferenceWishes(seconds, rows[r], unique_bytes);
  for (size_t c = 0; c < settings; ++c) {
    if (taken[c]) to[c] = 0;
  }
  return to;
}

std::vector<bool> WithinTheReferenceWishes(const std::vector<double>& seconds, uint64_t block_bytes,
                                           uint64_t unique_bytes) {
  std::vector<size_t> order;
  for (size_t c = 0; c < seconds.size(); ++c) {
    if (seconds[c] >= 0) order.push_back(c);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return seconds[a] < seconds[b]; });
  std::vector<bool> whole(seconds.size(), false);
  double left = ReferenceCodecWishSeconds(Plan{unique_bytes, 0}, block_bytes);
  for (size_t c : order) {
    if (seconds[c] > left) break;
    left -= seconds[c];
    whole[c] = true;
  }
  return whole;
}

std::vector<bool> ForeseenWhole(const ScanOptions& options, const std::vector<bool>& wide,
                                const std::vector<int>& levels, uint64_t block_bytes,
                                double planned_blocks, double unique_blocks, double unique_bytes) {
  const size_t settings = options.compressions.size();
  if (wide.size() != settings || levels.size() != settings || block_bytes == 0 ||
      !(planned_blocks > 0) || planned_blocks > double(kTopUpMaxBlocks) || !(unique_bytes > 0)) {
    return std::vector<bool>(settings, false);
  }
  std::vector<double> seconds(settings, -1);
  for (size_t c = 0; c < settings; ++c) {
    const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
    if (!wide[c] || levels[c] <= 0 || !(speed > 0)) continue;
    if (std::ldexp(unique_blocks, -levels[c]) < double(kTopUpMinSample)) continue;
    seconds[c] = unique_bytes * (1 - std::ldexp(1.0, -levels[c])) / speed;
  }
  return WithinTheReferenceWishes(seconds, block_bytes, uint64_t(unique_bytes));
}

}  // namespace zsim::estimate
