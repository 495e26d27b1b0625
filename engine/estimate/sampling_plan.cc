#include <algorithm>

#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"

namespace zsim::estimate {

namespace {

// Codecs whose sample regresses on the anchor's psize (lz4, else lzjb): every other codec. lz4
// predicts the LZ77 family closely (per unique block of the bundled database sample at 128K,
// correlation 0.997 with lzjb, 0.996 with zstd-3, 0.991 with gzip-6; 0.94-0.96 on the VM store
// sample); zle less (-0.34 and 0.73), where the regression, which fits the slope's sign and an
// intercept, still narrows the interval on the VM store (0.88% to 0.61% in resamplings) and
// costs nothing on the database.
bool Follows(CompressionAlgorithm a, CompressionAlgorithm anchor) {
  return a != CompressionAlgorithm::kOff && a != anchor;
}

// The exact anchor of a list: its lz4 (about the reading's cost: exact whatever else the list
// holds), else its lzjb where the list holds a codec kLzjbAnchorSpeedup times as costly per byte
// (gzip, zstd-4 and up: the v23 default list is off, gzip-6, lzjb and zle), whose sample lzjb's
// psize narrows for less than it costs; else none (-1). A list of lzjb and zle alone samples both
// on lsize, cheaper than lzjb on every block.
int AnchorOf(const std::vector<Compression>& settings) {
  int lzjb = -1;
  for (size_t c = 0; c < settings.size(); ++c) {
    if (settings[c].algorithm == CompressionAlgorithm::kLz4) return static_cast<int>(c);
    if (settings[c].algorithm == CompressionAlgorithm::kLzjb && lzjb < 0) {
      lzjb = static_cast<int>(c);
    }
  }
  if (lzjb < 0) return -1;
  const double anchor_speed = NominalCodecBytesPerSecond(settings[static_cast<size_t>(lzjb)]);
  for (const Compression& c : settings) {
    const double speed = NominalCodecBytesPerSecond(c);
    if (c.algorithm != CompressionAlgorithm::kOff && speed > 0 &&
        speed * kLzjbAnchorSpeedup <= anchor_speed) {
      return lzjb;
    }
  }
  return -1;
}

}  // namespace

SamplingPlan PlanSampling(const std::vector<Compression>& settings, bool exact) {
  const size_t n = settings.size();
  SamplingPlan plan;
  plan.sampled.assign(n, false);
  plan.anchors.assign(n, -1);  // lsize
  if (exact) return plan;
  for (size_t c = 0; c < n; ++c) {
    plan.sampled[c] = settings[c].algorithm != CompressionAlgorithm::kOff;
  }
  const int anchor = AnchorOf(settings);
  if (anchor < 0) return plan;
  // The anchor on every unique block: lz4's cost is close to the reading's, so its figures are
  // exact for what a scan reads anyway, alone too (sampled alone, it needed three quarters of the
  // bundled database-large's blocks for +-0.5%, and a tree larger than the top-up's lists kept
  // +-1.5%). lzjb, twice lz4's cost, where the list has no lz4: sampled by lsize, the v23 default
  // list's lzjb was topped up to every block of database-large anyway (read again), and gzip-6,
  // on lsize alone, kept +-1.8% (bench/results/2026-12-07-s58-v23-anchor). It is the regression
  // auxiliary of the other codecs' samples.
  const CompressionAlgorithm a = settings[static_cast<size_t>(anchor)].algorithm;
  plan.sampled[static_cast<size_t>(anchor)] = false;
  for (size_t c = 0; c < n; ++c) {
    if (Follows(settings[c].algorithm, a)) plan.anchors[c] = anchor;
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
