#include <algorithm>

#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"

namespace zsim::estimate {

namespace {

// Codecs whose sample regresses on lz4's psize: every other codec. lz4 predicts the LZ77
// family closely (per unique block of the bundled database sample at 128K, correlation 0.997
// with lzjb, 0.996 with zstd-3, 0.991 with gzip-6; 0.94-0.96 on the VM store sample); zle less
// (-0.34 and 0.73), where the regression, which fits the slope's sign and an intercept, still
// narrows the interval on the VM store (0.88% to 0.61% in resamplings) and costs nothing on the
// database.
bool FollowsLz4(CompressionAlgorithm a) {
  return a != CompressionAlgorithm::kOff && a != CompressionAlgorithm::kLz4;
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
  if (lz4 < 0) return plan;
  // lz4 on every unique block: its cost is close to the reading's, so its figures are exact
  // for what a scan reads anyway, alone too (sampled alone, it needed three quarters of the
  // bundled database-large's blocks for +-0.5%, and a tree larger than the top-up's lists kept
  // +-1.5%). It is the regression auxiliary of the other codecs' samples.
  plan.sampled[static_cast<size_t>(lz4)] = false;
  if (!any_follower) return plan;
  for (size_t c = 0; c < n; ++c) {
    if (FollowsLz4(settings[c].algorithm)) plan.anchors[c] = lz4;
  }
  return plan;
}

std::vector<int> NearAnchors(const std::vector<Compression>& settings,
                             const std::vector<bool>& whole) {
  const size_t n = settings.size();
  auto family = [](const Compression& c) {
    return c.algorithm == CompressionAlgorithm::kGzip || c.algorithm == CompressionAlgorithm::kZstd;
  };
  auto speed = [&](size_t c) { return NominalCodecBytesPerSecond(settings[c]); };
  // a may anchor c: the same family, kNearAnchorSpeedup times as fast.
  auto faster = [&](size_t a, size_t c) {
    return family(settings[c]) && settings[a].algorithm == settings[c].algorithm && speed(c) > 0 &&
           speed(a) >= kNearAnchorSpeedup * speed(c);
  };
  std::vector<bool> root(n, false);
  for (size_t c = 0; c < n; ++c) {
    root[c] = family(settings[c]);
    for (size_t a = 0; a < n && root[c]; ++a) root[c] = !faster(a, c);
  }
  std::vector<int> out(n, -1);
  for (size_t c = 0; c < n; ++c) {
    if (root[c]) continue;
    for (size_t a = 0; a < n; ++a) {
      // The costliest such root; of equally costly ones, the highest level (the nearest).
      if (!root[a] || !faster(a, c) || a >= whole.size() || !whole[a]) continue;
      const size_t b = static_cast<size_t>(out[c]);
      if (out[c] < 0 || speed(a) < speed(b) ||
          (speed(a) == speed(b) && settings[a].level > settings[b].level)) {
        out[c] = static_cast<int>(a);
      }
    }
  }
  return out;
}

int LevelMeetingTheTarget(const LevelSamples& per_level, int base, double units) {
  RatioEstimator above;
  for (int lv = kMaxSampleLevel; lv >= std::max(base, 0); --lv) {
    above.Merge(per_level[size_t(lv)]);
    if (above.n() >= kMinSampledBlocks &&
        above.RelativeHalfWidth95(units) <= kTargetRelativeHalfWidth) {
      return lv;
    }
  }
  return -1;
}

bool CensusRuns(const ScanOptions& options) {
  const std::vector<bool> sampled = PlanSampling(options.compressions, options.exact).sampled;
  return options.sample_modulus <= 1 &&
         std::find(sampled.begin(), sampled.end(), true) != sampled.end();
}

}  // namespace zsim::estimate
