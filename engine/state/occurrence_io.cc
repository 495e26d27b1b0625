#include "engine/state/occurrence_io.h"

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
