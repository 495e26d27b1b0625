#include "engine/estimate/interval_top_up.h"

#include <algorithm>
#include <cmath>

#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"

namespace zsim::estimate {

double IntervalCell::HalfWidth(int level) const {
  if (LevelMeetingTheTarget(per_level, level, units) >= 0) return kTargetRelativeHalfWidth;
  RatioEstimator all;
  for (int lv = std::max(level, 0); lv <= kMaxSampleLevel; ++lv) all.Merge(per_level[size_t(lv)]);
  return all.RelativeHalfWidth95(units);
}

std::vector<int> IntervalTopUpLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                     const std::vector<int>& anchors, const Plan& plan, size_t r,
                                     const std::vector<int>& levels, std::vector<int> to,
                                     const std::vector<IntervalCell>& cells,
                                     uint64_t unique_bytes) {
  const size_t settings = options.compressions.size();
  const std::vector<uint64_t> rows = RowBlockSizes(options);
  if (r >= rows.size() || rows[r] == 0 || unique_bytes == 0 || to.size() != settings ||
      levels.size() != settings || cells.size() != settings || sampled.size() < settings ||
      anchors.size() < settings) {
    return to;
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
  struct Wanted {
    size_t c;
    double seconds;
  };
  std::vector<Wanted> wanted;
  for (size_t c = 0; c < settings; ++c) {
    if (!sampled[c] || anchors[c] >= 0 || near[c] >= 0 || root[c] || to[c] >= 0) continue;
    if (levels[c] <= 0 || levels[c] > plain) continue;
    const IntervalCell& cell = cells[c];
    if (!(cell.uncoded_bytes > 0)) continue;
    const double half = cell.HalfWidth(levels[c]);
    // Narrow enough; or nothing to say (no psize at all: every sampled block embedded).
    if (!std::isfinite(half) || half <= kTargetRelativeHalfWidth) continue;
    const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
    if (!(speed > 0)) continue;
    wanted.push_back(Wanted{c, cell.uncoded_bytes / speed});
  }
  // The cheapest first, within the default codecs' wishes on the row's unique bytes.
  std::stable_sort(wanted.begin(), wanted.end(),
                   [](const Wanted& a, const Wanted& b) { return a.seconds < b.seconds; });
  double left = DefaultCodecWishSeconds(Plan{unique_bytes, 0}, rows[r]);
  for (const Wanted& w : wanted) {
    if (w.seconds > left) break;
    left -= w.seconds;
    to[w.c] = 0;
  }
  return to;
}

}  // namespace zsim::estimate
