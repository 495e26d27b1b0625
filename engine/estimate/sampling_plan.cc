#include "engine/estimate/sample_level.h"

namespace zsim::estimate {

namespace {

// Codecs whose psize lz4's predicts closely (a line with an intercept): the LZ77 family. On the
// bundled database sample at 128K, lz4's psize per unique block correlates with lzjb's at 0.997,
// zstd-3's at 0.996 and gzip-6's at 0.991; with zle's at -0.34 (zle only removes zero runs).
bool FollowsLz4(CompressionAlgorithm a) {
  return a == CompressionAlgorithm::kLzjb || a == CompressionAlgorithm::kGzip ||
         a == CompressionAlgorithm::kZstd;
}

}  // namespace

SamplingPlan PlanSampling(const std::vector<Compression>& settings, bool exact) {
  const size_t n = settings.size();
  SamplingPlan plan;
  plan.sampled.assign(n, false);
  plan.anchors.assign(n, -1);  // lsize
  if (exact) return plan;
  int lz4 = -1;
  bool any_follower = false;
  for (size_t c = 0; c < n; ++c) {
    plan.sampled[c] = settings[c].algorithm != CompressionAlgorithm::kOff;
    if (settings[c].algorithm == CompressionAlgorithm::kLz4 && lz4 < 0) lz4 = static_cast<int>(c);
    any_follower = any_follower || FollowsLz4(settings[c].algorithm);
  }
  if (lz4 < 0 || !any_follower) return plan;
  // lz4 on every unique block (its cost is close to the reading's), the regression auxiliary
  // of the LZ77 codecs' samples.
  plan.sampled[static_cast<size_t>(lz4)] = false;
  for (size_t c = 0; c < n; ++c) {
    if (FollowsLz4(settings[c].algorithm)) plan.anchors[c] = lz4;
  }
  return plan;
}

}  // namespace zsim::estimate
