#include "engine/estimate/pilot_level.h"

#include <algorithm>
#include <cmath>

#include "engine/estimate/codec_budget.h"

namespace zsim::estimate {
namespace {

// The 95% normal quantile, as the estimates' intervals take it (regression_estimator.cc).
constexpr double kZ95 = 1.96;

}  // namespace

std::vector<int> PilotBudgetLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                   bool adaptive, const Plan& plan) {
  const size_t settings = options.compressions.size();
  const std::vector<uint64_t> rows = RowBlockSizes(options);
  std::vector<int> out(rows.size() * settings, -1);
  if (!adaptive || options.exact || options.sample_modulus > 1 || rows.empty() || rows[0] == 0) {
    return out;
  }
  const std::vector<int> budget = BudgetLevels(options, sampled, plan);
  for (size_t r = 0; r < rows.size(); ++r) {
    // The probe reads and counts unique bytes in the first row's block size: a row of larger
    // blocks has at least those unique bytes (fewer duplicates), so its unique blocks are not
    // overestimated; a row of smaller ones could be, and is left alone.
    if (rows[r] < rows[0]) continue;
    const int* row_budget = budget.data() + r * settings;
    // Coded on every unique block of the row: exact settings and sampled ones at level 0 (the
    // budget gives 0 to both), as codec_budget.cc asks NearAnchors.
    std::vector<bool> whole(settings, false);
    for (size_t c = 0; c < settings; ++c) whole[c] = row_budget[c] == 0;
    const std::vector<int> near = NearAnchors(options.compressions, whole);
    std::vector<bool> root(settings, false);
    for (int n : near) {
      if (n >= 0) root[size_t(n)] = true;
    }
    for (size_t c = 0; c < settings && c < sampled.size(); ++c) {
      if (!sampled[c] || near[c] >= 0 || root[c]) continue;
      if (PilotWanted(PlannedBlocks(plan, rows[r]), row_budget[c])) {
        out[r * settings + c] = row_budget[c];
      }
    }
  }
  return out;
}

bool PilotWanted(uint64_t planned_blocks, int budget_level) {
  if (budget_level < 0 || budget_level >= kMaxSampleLevel) return false;
  return (planned_blocks >> budget_level) >= 2 * kPilotMinSample;
}

namespace {

// PilotBlocks over at least `least` points.
std::optional<double> BlocksAsked(const std::vector<PilotPoint>& points, size_t least) {
  const size_t m = points.size();
  if (m < least || m < 4) return std::nullopt;
  // The estimate's line, through the origin: psize ~ a lsize + b anchor (regression_estimator.h),
  // by least squares weighted by the blocks each point stands for; psize ~ a lsize where the
  // anchor adds nothing (no anchor, or one proportional to lsize).
  double w_sum = 0, ss = 0, sx = 0, xx = 0, sy = 0, xy = 0, y_sum = 0;
  for (const PilotPoint& p : points) {
    w_sum += p.weight;
    ss += p.weight * p.lsize * p.lsize;
    sx += p.weight * p.lsize * p.anchor;
    xx += p.weight * p.anchor * p.anchor;
    sy += p.weight * p.lsize * p.psize;
    xy += p.weight * p.anchor * p.psize;
    y_sum += p.weight * p.psize;
  }
  if (!(w_sum > 0)) return std::nullopt;
  const double mean_y = y_sum / w_sum;
  if (!(ss > 0) || !(mean_y > 0)) return std::nullopt;
  double a = sy / ss, b = 0;
  const double det = ss * xx - sx * sx;
  if (det > 1e-9 * ss * xx) {
    a = (sy * xx - sx * xy) / det;
    b = (ss * xy - sx * sy) / det;
  }
  // The residuals' spread about their mean, with the estimate's degrees of freedom (n - 3).
  double e_sum = 0;
  for (const PilotPoint& p : points) e_sum += p.weight * (p.psize - a * p.lsize - b * p.anchor);
  const double e_mean = e_sum / w_sum;
  double e2 = 0;
  for (const PilotPoint& p : points) {
    const double e = p.psize - a * p.lsize - b * p.anchor - e_mean;
    e2 += p.weight * e * e;
  }
  const double sd = std::sqrt(e2 / w_sum * double(m) / double(m - 3));
  const double blocks = kZ95 * sd / (mean_y * kPilotHalfWidth);
  return blocks * blocks;
}

}  // namespace

std::optional<double> PilotBlocks(const std::vector<PilotPoint>& points) {
  return BlocksAsked(points, kPilotMinPoints);
}

bool PilotSettled(const std::vector<PilotPoint>& points, double unique_blocks, int budget_level) {
  if (points.empty() || points.size() % kPilotSettleStep != 0) return false;
  const std::optional<double> wanted = BlocksAsked(points, kPilotSettleStep);
  return wanted && *wanted > kPilotSettledFactor * std::ldexp(unique_blocks, -(budget_level + 1));
}

bool PilotFindsItWide(const std::vector<PilotPoint>& points, double unique_blocks,
                      int budget_level) {
  const std::optional<double> wanted = BlocksAsked(points, kPilotSettleStep);
  if (!wanted || !(unique_blocks > 0) || budget_level <= 0) return false;
  // BlocksAsked is (z s / (ybar kPilotHalfWidth))^2: the relative spread per block is
  // kPilotHalfWidth sqrt(wanted); a sample of n of N blocks has that times sqrt(1/n - 1/N).
  const double n = std::ldexp(unique_blocks, -budget_level);
  const double half =
      kPilotHalfWidth * std::sqrt(*wanted) * std::sqrt(std::max(0.0, 1 / n - 1 / unique_blocks));
  return half > kPilotWideFactor * kTargetRelativeHalfWidth;
}

int PilotLevel(const std::vector<PilotPoint>& points, double unique_blocks, int budget_level) {
  const std::optional<double> wanted = PilotBlocks(points);
  if (!wanted || !(unique_blocks > 0)) return budget_level;
  const double least = std::max(*wanted, double(kPilotMinSample));
  int level = budget_level;
  while (level < kMaxSampleLevel && std::ldexp(unique_blocks, -(level + 1)) >= least) ++level;
  return level;
}

std::vector<int> PilotLevels(const std::vector<std::vector<PilotPoint>>& points,
                             double unique_blocks, const std::vector<int>& budget_levels) {
  std::vector<int> levels(budget_levels.size(), -1);
  for (size_t c = 0; c < levels.size() && c < points.size(); ++c) {
    if (budget_levels[c] >= 0) levels[c] = PilotLevel(points[c], unique_blocks, budget_levels[c]);
  }
  return levels;
}

}  // namespace zsim::estimate
