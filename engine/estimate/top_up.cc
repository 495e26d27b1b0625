#include "engine/estimate/top_up.h"

#include <algorithm>

#include "engine/estimate/codec_budget.h"

namespace zsim::estimate {

std::vector<int> RowBudgetLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                 const Plan& plan, const std::vector<uint64_t>& row_bytes) {
  std::vector<int> out = BudgetLevels(options, sampled, plan);
  const size_t settings = options.compressions.size();
  for (size_t r = 0; r < row_bytes.size() && (r + 1) * settings <= out.size(); ++r) {
    if (row_bytes[r] == 0 || row_bytes[r] >= plan.bytes) continue;
    // The whole budget again for a tree of the row's unique bytes (its share of the cap among
    // rows of that size too), of which this row's cells are taken; raised where the row's
    // codecs would cost more than kListCostFactor reference scans' of those bytes, but never above
    // the planned budget's, which the scan coded while it read.
    const Plan unique{row_bytes[r], 0};
    const std::vector<int> row = BudgetLevels(options, sampled, unique);
    std::vector<int> capped = row;
    CapRowAtReferenceScans(options, sampled, unique, r, &capped);
    for (size_t i = r * settings; i < (r + 1) * settings; ++i) {
      out[i] = std::max(row[i], std::min(capped[i], out[i]));
    }
  }
  return out;
}

std::vector<int> UniqueBytesLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                                   const Plan& plan, size_t rows, size_t r, uint64_t unique_bytes) {
  const size_t settings = options.compressions.size();
  std::vector<uint64_t> row_bytes(rows, 0);
  if (r >= rows) return std::vector<int>(settings, -1);
  row_bytes[r] = unique_bytes;
  const std::vector<int> all = RowBudgetLevels(options, sampled, plan, row_bytes);
  if (all.size() < (r + 1) * settings) return std::vector<int>(settings, -1);
  return std::vector<int>(all.begin() + r * settings, all.begin() + (r + 1) * settings);
}

std::vector<int> TopUpLevels(const std::vector<bool>& sampled, const std::vector<int>& levels,
                             const std::vector<int>& planned, const std::vector<int>& unique,
                             uint64_t unique_blocks) {
  std::vector<int> out(levels.size(), -1);
  for (size_t c = 0; c < levels.size() && c < sampled.size(); ++c) {
    if (!sampled[c] || c >= planned.size() || c >= unique.size()) continue;
    const bool few = (unique_blocks >> levels[c]) < kTopUpMinSample;
    if (levels[c] == planned[c] && unique[c] < levels[c] && few) out[c] = unique[c];
  }
  return out;
}

}  // namespace zsim::estimate
