#include "engine/estimate/sample_level.h"

namespace zsim::estimate {
namespace {

bool Is(const Compression& c, CompressionAlgorithm a) { return c.algorithm == a; }

}  // namespace

SamplingPlan PlanSampling(const std::vector<Compression>& settings, bool exact) {
  const size_t n = settings.size();
  SamplingPlan plan;
  plan.sampled.assign(n, false);
  plan.anchors.assign(n, -1);
  if (exact) return plan;
  bool lz4 = false;
  int lowest_gzip = -1, gzip_levels = 0;
  for (size_t c = 0; c < n; ++c) {
    lz4 = lz4 || Is(settings[c], CompressionAlgorithm::kLz4);
    if (Is(settings[c], CompressionAlgorithm::kGzip)) {
      ++gzip_levels;
      if (lowest_gzip < 0 || settings[c].level < settings[static_cast<size_t>(lowest_gzip)].level) {
        lowest_gzip = static_cast<int>(c);
      }
    }
  }
  for (size_t c = 0; c < n; ++c) {
    const Compression& s = settings[c];
    plan.sampled[c] = (Is(s, CompressionAlgorithm::kGzip) &&
                       !(gzip_levels > 1 && static_cast<int>(c) == lowest_gzip)) ||
                      (Is(s, CompressionAlgorithm::kZstd) && s.level >= 2) ||
                      (Is(s, CompressionAlgorithm::kLzjb) && lz4);
  }
  int lz4_index = -1, first_exact = -1;
  for (size_t c = 0; c < n; ++c) {
    if (plan.sampled[c] || Is(settings[c], CompressionAlgorithm::kOff)) continue;
    if (first_exact < 0) first_exact = static_cast<int>(c);
    if (lz4_index < 0 && Is(settings[c], CompressionAlgorithm::kLz4)) {
      lz4_index = static_cast<int>(c);
    }
  }
  for (size_t c = 0; c < n; ++c) {
    if (!plan.sampled[c]) continue;
    int family = -1;
    for (size_t a = 0; a < n; ++a) {
      if (plan.sampled[a] || settings[a].algorithm != settings[c].algorithm) continue;
      // zstd: the highest exact level below this one (zstd-fast-N has negative levels).
      if (family < 0 || settings[a].level > settings[static_cast<size_t>(family)].level) {
        if (settings[a].level < settings[c].level) family = static_cast<int>(a);
      }
    }
    plan.anchors[c] = family >= 0 ? family : lz4_index >= 0 ? lz4_index : first_exact;
  }
  return plan;
}

}  // namespace zsim::estimate
