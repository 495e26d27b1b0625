#include "engine/state/value_io.h"

#include <algorithm>

namespace zsim::state {
namespace {

void PutMoments(FrameWriter& w, const estimate::RatioEstimator& r) {
  const estimate::RatioEstimator::Moments m = r.moments();
  w.U64(m.n);
  for (double v : {m.sx, m.sy, m.sxx, m.syy, m.sxy}) w.F64(v);
}

estimate::RatioEstimator GetMoments(FrameReader& r) {
  estimate::RatioEstimator::Moments m;
  m.n = r.U64();
  m.sx = r.F64();
  m.sy = r.F64();
  m.sxx = r.F64();
  m.syy = r.F64();
  m.sxy = r.F64();
  return estimate::RatioEstimator::FromMoments(m);
}

}  // namespace

void PutKeys(FrameWriter& w, const std::vector<ddt::Fingerprint>& keys) {
  for (const ddt::Fingerprint& key : keys) {
    w.U64(key.lo);
    w.U64(key.hi);
  }
}

void GetKeys(FrameReader& r, uint64_t n, std::vector<ddt::Fingerprint>& out) {
  out.reserve(out.size() + std::min<uint64_t>(n, 1 << 16));
  for (uint64_t k = 0; k < n && r.ok(); ++k) {
    ddt::Fingerprint key;
    key.lo = r.U64();
    key.hi = r.U64();
    out.push_back(key);
  }
}

void PutOccurrenceSums(FrameWriter& w, const estimate::OccurrenceSums& o) {
  w.U64(o.ne);
  for (double v : {o.lsize, o.lsize_ne, o.asize, o.emb_bytes}) w.F64(v);
  PutMoments(w, o.psize_per_u);
  PutMoments(w, o.dsize_per_u);
}

estimate::OccurrenceSums GetOccurrenceSums(FrameReader& r) {
  estimate::OccurrenceSums os;
  os.ne = r.U64();
  os.lsize = r.F64();
  os.lsize_ne = r.F64();
  os.asize = r.F64();
  os.emb_bytes = r.F64();
  os.psize_per_u = GetMoments(r);
  os.dsize_per_u = GetMoments(r);
  return os;
}

}  // namespace zsim::state
