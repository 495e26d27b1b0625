#include "engine/estimate/occurrence_sample.h"

#include "engine/estimate/sample_level.h"

namespace zsim::estimate {

void OccurrenceSums::AddEmbedded(double block_lsize, double u, double payload) {
  lsize += block_lsize;
  emb_bytes += payload;
  psize_per_u.Add(u, 0);
  dsize_per_u.Add(u, 0);
}

void OccurrenceSums::AddStored(double block_lsize, double u, double psize, double dsize,
                               double block_asize) {
  ne += 1;
  lsize += block_lsize;
  lsize_ne += block_lsize;
  asize += block_asize;
  psize_per_u.Add(u, psize);
  dsize_per_u.Add(u, dsize);
}

void OccurrenceSums::Merge(const OccurrenceSums& o) {
  ne += o.ne;
  lsize += o.lsize;
  lsize_ne += o.lsize_ne;
  asize += o.asize;
  emb_bytes += o.emb_bytes;
  psize_per_u.Merge(o.psize_per_u);
  dsize_per_u.Merge(o.dsize_per_u);
}

OccurrenceSample::OccurrenceSample(size_t settings) : sums(settings * 2 * (kMaxSampleLevel + 1)) {}

OccurrenceSums& OccurrenceSample::At(size_t setting, int stratum, int level) {
  return sums[(setting * 2 + static_cast<size_t>(stratum)) * (kMaxSampleLevel + 1) +
              static_cast<size_t>(level)];
}
const OccurrenceSums& OccurrenceSample::At(size_t setting, int stratum, int level) const {
  return sums[(setting * 2 + static_cast<size_t>(stratum)) * (kMaxSampleLevel + 1) +
              static_cast<size_t>(level)];
}

void OccurrenceSample::Merge(const OccurrenceSample& o) {
  if (sums.empty()) sums.resize(o.sums.size());
  for (size_t i = 0; i < sums.size() && i < o.sums.size(); ++i) sums[i].Merge(o.sums[i]);
}

}  // namespace zsim::estimate
